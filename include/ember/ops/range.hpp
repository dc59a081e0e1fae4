// SPDX-License-Identifier: Apache-2.0
// Range (ONNX opset 11+): start, start + delta, ... up to but excluding limit, from three scalar
// inputs of one dtype (float32, float64, int16, int32, int64). The element count
// max(ceil((limit - start) / delta), 0) decides the output shape, so the inputs must be known at
// compile time, and the output then is a compile-time constant (no step).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct range {
    static constexpr std::string_view onnx_name = "Range";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    /// The element count, or -1 when delta is 0 or a value is not finite.
    template <class T>
    static std::int64_t count(T start, T limit, T delta) noexcept {
        if constexpr (std::is_integral_v<T>) {
            if (delta == 0) return -1;
            const auto s = static_cast<std::int64_t>(start), l = static_cast<std::int64_t>(limit), d = static_cast<std::int64_t>(delta);
            if ((d > 0 && l <= s) || (d < 0 && l >= s)) return 0;
            // distances in uint64 cannot overflow; neither can the rounded-up quotient
            const std::uint64_t dist = d > 0 ? static_cast<std::uint64_t>(l) - static_cast<std::uint64_t>(s)
                                             : static_cast<std::uint64_t>(s) - static_cast<std::uint64_t>(l);
            const std::uint64_t step = d > 0 ? static_cast<std::uint64_t>(d) : std::uint64_t{0} - static_cast<std::uint64_t>(d);
            return static_cast<std::int64_t>(dist / step + (dist % step != 0 ? 1 : 0));
        } else {
            if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) return -1;
            const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
            if (!(n > 0)) return 0;
            return n >= 9.0e15 ? -2 : static_cast<std::int64_t>(n);
        }
    }

    template <class T>
    static status compute(infer_context& ctx, const tensor& start, const tensor& limit, const tensor& delta) {
        const T s = start.data<T>()[0], l = limit.data<T>()[0], d = delta.data<T>()[0];
        const std::int64_t n = count<T>(s, l, d);
        if (n == -1) return ctx.fail(status::invalid_model, "delta must be nonzero and the inputs finite");
        if (n < 0 || n > (std::int64_t{1} << 40) / static_cast<std::int64_t>(sizeof(T)))
            return ctx.fail(status::shape_mismatch, "the range has too many elements");
        result<tensor> t = tensor::create(dtype_of<T>, shape{n});
        if (!t) return ctx.fail(t.error().code, "{}", t.error().message);
        T* y = t->data<T>();
        for (std::int64_t i = 0; i < n; ++i) {
            if constexpr (std::is_integral_v<T>)
                y[i] = static_cast<T>(static_cast<std::uint64_t>(s) + static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(d));  // wraps, never UB
            else
                y[i] = static_cast<T>(s + static_cast<T>(i) * d);
        }
        ctx.set_output_constant(0, std::move(*t));
        return status::ok;
    }

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(3, 3); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::int16, dtype::int32, dtype::int64}); s != status::ok) return s;
        static constexpr const char* names[] = {"start", "limit", "delta"};
        const tensor* in[3] = {};
        for (std::size_t i = 0; i < 3; ++i) {
            if (ctx.input_type(i) != ctx.input_type(0))
                return ctx.fail(status::invalid_model, "input {} ({}) has dtype {}, input 0 (start) has {}", i, names[i], ctx.input_type(i),
                                ctx.input_type(0));
            if (ctx.input_shape(i).elements() != 1 || ctx.input_shape(i).rank() > 1)
                return ctx.fail(status::invalid_model, "input {} ({}) must be a scalar, got shape {}", i, names[i], ctx.input_shape(i));
            in[i] = ctx.require_constant(i, names[i]);
            if (!in[i]) return status::unsupported_op;
        }
        switch (ctx.input_type(0)) {
            case dtype::float32: return compute<float>(ctx, *in[0], *in[1], *in[2]);
            case dtype::float64: return compute<double>(ctx, *in[0], *in[1], *in[2]);
            case dtype::int16: return compute<std::int16_t>(ctx, *in[0], *in[1], *in[2]);
            case dtype::int32: return compute<std::int32_t>(ctx, *in[0], *in[1], *in[2]);
            default: return compute<std::int64_t>(ctx, *in[0], *in[1], *in[2]);
        }
    }

    // infer() makes the output a compile-time constant, so compile() never binds this op.
    static status bind(const attributes&, bind_context& ctx) {
        return ctx.fail(status::invalid_model, "Range has no step: its value is known at compile time");
    }
};

} // namespace ops
EMBER_NAMESPACE_END
