// SPDX-License-Identifier: Apache-2.0
// Cast (ONNX opset 6+; bfloat16 from 13) and CastLike (opset 15): element-wise conversion to the
// dtype named by `to` (an ONNX TensorProto.DataType) or to input 1's dtype, between every pair of
// ember dtypes. String casts are not supported (ember has no string tensors).
//
// Conversions follow ONNX Runtime on x86-64: float to integer truncates toward zero; a NaN or
// out-of-range value gives the "integer indefinite" of a 32-bit (int32, and narrower types
// through int32, so 0 for them) or 64-bit conversion (int64: INT64_MIN; uint32 through int64);
// to bool is x != 0 (NaN is true); from bool is 0 or 1; integers wrap as two's complement;
// float16 and bfloat16 round to nearest even (from float64 through float32).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ember/detail/onnx_dtype.hpp"
#include "ember/ops/copy.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// The ember dtype of an ONNX TensorProto.DataType number, dtype::undefined for types ember
/// lacks (string, complex, float8, 4-bit).
constexpr dtype dtype_of_onnx_type(std::int64_t onnx_type) noexcept { return ember::detail::dtype_of_onnx_type(onnx_type); }

/// Checks an ONNX dtype attribute (Cast's `to`, EyeLike's `dtype`) and gives its ember dtype.
inline status dtype_attribute(infer_context& ctx, std::string_view name, std::int64_t onnx_type, dtype& out) {
    out = dtype_of_onnx_type(onnx_type);
    if (out != dtype::undefined) return status::ok;
    if (onnx_type == 8) return ctx.fail(status::unsupported_op, "attribute '{}' is STRING (8): string tensors are not supported", name);
    return ctx.fail(status::unsupported_op, "attribute '{}' is ONNX data type {}, which ember does not support", name, onnx_type);
}

template <class To>
To convert_float_to_int(double d) noexcept {
    constexpr double two63 = 9223372036854775808.0, two31 = 2147483648.0;
    if constexpr (sizeof(To) == 8) {
        if constexpr (std::is_unsigned_v<To>)
            if (d >= two63 && d < 2.0 * two63) return static_cast<To>(d);
        const std::int64_t i = d >= -two63 && d < two63 ? static_cast<std::int64_t>(d) : std::numeric_limits<std::int64_t>::min();
        return static_cast<To>(i);
    } else if constexpr (sizeof(To) == 4 && std::is_unsigned_v<To>) {
        const std::int64_t i = d >= -two63 && d < two63 ? static_cast<std::int64_t>(d) : std::numeric_limits<std::int64_t>::min();
        return static_cast<To>(static_cast<std::uint64_t>(i));
    } else {
        const std::int32_t i = d >= -two31 && d < two31 ? static_cast<std::int32_t>(d) : std::numeric_limits<std::int32_t>::min();
        return static_cast<To>(static_cast<std::uint32_t>(i));
    }
}

/// One element From -> To, as the header comment says.
template <class To, class From>
To convert_element(From v) noexcept {
    if constexpr (std::is_same_v<From, To>) {
        return v;
    } else if constexpr (std::is_same_v<From, float16> || std::is_same_v<From, bfloat16>) {
        return convert_element<To>(static_cast<float>(v));
    } else if constexpr (std::is_same_v<To, float16> || std::is_same_v<To, bfloat16>) {
        return To(convert_element<float>(v));
    } else if constexpr (std::is_same_v<To, bool>) {
        return v != From(0);
    } else if constexpr (std::is_same_v<From, bool>) {
        return static_cast<To>(v ? 1 : 0);
    } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
        return convert_float_to_int<To>(static_cast<double>(v));
    } else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>) {
        return static_cast<To>(static_cast<std::make_unsigned_t<To>>(v));  // two's complement wrap
    } else {
        return static_cast<To>(v);
    }
}

struct cast_args {
    operand x, y;
    std::size_t n = 0;
};

// The definition. x and y may alias when the element sizes match (planned in place): each
// element is read before the one at its place is written.
template <class From, class To>
void cast_reference(const std::byte* x, std::byte* y, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        From v;
        std::memcpy(&v, x + i * sizeof(From), sizeof(From));
        const To r = convert_element<To>(v);
        std::memcpy(y + i * sizeof(To), &r, sizeof(To));
    }
}

template <class From, class To>
void cast_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& a = *static_cast<const cast_args*>(p);
    cast_reference<From, To>(ctx.at<const std::byte>(a.x), ctx.at<std::byte>(a.y), a.n);
}

/// Emits the conversion of input 0 into output 0's dtype (a plain copy when they are the same).
inline status bind_cast(bind_context& ctx) {
    const dtype from = ctx.input_type(0), to = ctx.output_type(0);
    if (from == to) return bind_copy(ctx);
    kernel_fn fn = nullptr;
    visit_dtype(from, [&](auto f) {
        visit_dtype(to, [&](auto t) { fn = &cast_kernel<decltype(f), decltype(t)>; });
    });
    if (!fn) return ctx.fail(status::unsupported_op, "cannot cast {} to {}", from, to);
    ctx.emit(fn, cast_args{ctx.input(0), ctx.output(0), static_cast<std::size_t>(ctx.input_shape(0).elements())});
    return status::ok;
}

struct cast {
    static constexpr std::string_view onnx_name = "Cast";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;

    struct attributes {
        std::int64_t to = 0;
    };
    static constexpr auto onnx_attributes = std::make_tuple(required_attr("to", &attributes::to));

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (ctx.opset() < 6)
            return ctx.fail(status::unsupported_op, "Cast before opset 6 (`to` as a string) is not supported; opset is {}", ctx.opset());
        dtype to = dtype::undefined;
        if (status s = dtype_attribute(ctx, "to", a.to, to); s != status::ok) return s;
        if (to == dtype::bfloat16 && ctx.opset() < 13)
            return ctx.fail(status::invalid_model, "casting to bfloat16 needs opset 13 or later, the model has opset {}", ctx.opset());
        ctx.set_output(0, to, ctx.input_shape(0));
        return status::ok;
    }

    static status bind(const attributes&, bind_context& ctx) { return bind_cast(ctx); }
};

struct cast_like {
    static constexpr std::string_view onnx_name = "CastLike";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(1), ctx.input_shape(0));
        return status::ok;
    }

    static status bind(const attributes&, bind_context& ctx) { return bind_cast(ctx); }
};

} // namespace ops
EMBER_NAMESPACE_END
