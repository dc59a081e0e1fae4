// SPDX-License-Identifier: Apache-2.0
// BitShift (ONNX opset 11, uint8/uint16/uint32/uint64) with numpy broadcasting: y = x << s or
// x >> s by the required attribute direction ("LEFT" or "RIGHT"). A shift by the type's width or
// more gives 0 (C leaves it undefined).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "ember/ops/binary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct bit_shift_fn {
    std::string direction;
    static dtype_set types(std::int64_t) noexcept { return types::unsigned_ints; }
    static constexpr dtype_set supported = types::unsigned_ints;

    status check(infer_context& ctx) const {
        if (direction != "LEFT" && direction != "RIGHT")
            return ctx.fail(status::invalid_model, "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"{}\"", direction);
        return status::ok;
    }
};

/// The kernel's function object: the direction decided at bind time.
struct shift_fn {
    bool left = true;
    template <class T>
    T operator()(T x, T s) const noexcept {
        using U = wide_unsigned_t<T>;
        if (static_cast<std::uint64_t>(s) >= sizeof(T) * 8) return T(0);
        return static_cast<T>(left ? static_cast<U>(static_cast<U>(x) << s) : static_cast<U>(static_cast<U>(x) >> s));
    }
};

struct bit_shift : binary_op<bit_shift_fn> {
    static constexpr std::string_view onnx_name = "BitShift";
    static constexpr auto onnx_attributes = std::make_tuple(required_attr("direction", &bit_shift_fn::direction));

    static status bind(const attributes& attrs, bind_context& ctx) {
        shape a, b, out;
        if (status s = binary_shapes(attrs, false, ctx, a, b, out); s != status::ok) return s;
        kernel_fn k = nullptr;
        visit_dtype(ctx.input_type(0), [&](auto tag) {
            using T = decltype(tag);
            if constexpr ((types::unsigned_ints & bit_of_type<T>) != 0) k = &binary_kernel<shift_fn, T, T, T>;
        });
        if (!k) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.emit(k, binary_args<shift_fn>{make_broadcast_args(ctx, a, b), shift_fn{attrs.direction == "LEFT"}});
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
