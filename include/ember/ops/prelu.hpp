// SPDX-License-Identifier: Apache-2.0
// PRelu: y = x < 0 ? slope * x : x, with slope broadcast to x's shape (unidirectional numpy
// broadcasting, opset 7+; the output has x's shape). Before opset 7 slope is one value or one
// per channel (shape [C] against x of shape [N, C, ...]). Dtypes: floats; int32, int64, uint32,
// uint64 from opset 9; bfloat16 from 16. Integers wrap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ember/ops/binary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct prelu_fn {
    static dtype_set types(std::int64_t opset) noexcept {
        dtype_set s = types::floats;
        if (opset >= 9) s |= set_of(dtype::int32, dtype::int64, dtype::uint32, dtype::uint64);
        return types::with_bf16(s, opset, 16);
    }
    static constexpr dtype_set supported = types::floats | types::bf16 | set_of(dtype::int32, dtype::int64, dtype::uint32, dtype::uint64);
    template <class T>
    T operator()(T x, T slope) const noexcept {
        if constexpr (std::is_unsigned_v<T>)
            return x;
        else if constexpr (std::is_integral_v<T>)
            return x < 0 ? wrap_mul(x, slope) : x;
        else
            return x < T(0) ? slope * x : x;
    }
};

struct prelu {
    static constexpr std::string_view onnx_name = "PRelu";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;
    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    /// slope's shape as numpy broadcasting against x sees it.
    static status slope_shape(infer_context& ctx, shape& out) {
        const shape& x = ctx.input_shape(0);
        out = ctx.input_shape(1);
        if (ctx.opset() < 7 && out.elements() != 1) {
            if (out.rank() != 1 || x.rank() < 2 || x[1] != out[0])
                return ctx.fail(status::shape_mismatch, "slope of shape {} must have one value or one per channel of x {} (opset {})", out, x,
                                ctx.opset());
            shape per_channel{out[0]};
            for (std::size_t i = 2; i < x.rank(); ++i) per_channel.push_back(1);
            out = per_channel;
        }
        shape y;
        if (!broadcast_shapes(x, out, y) || y != x)
            return ctx.fail(status::shape_mismatch, "slope of shape {} does not broadcast to x of shape {}", ctx.input_shape(1), x);
        return status::ok;
    }

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (status s = expect_dtype(ctx, 0, prelu_fn::types(ctx.opset())); s != status::ok) return s;
        if (ctx.input_type(1) != ctx.input_type(0))
            return ctx.fail(status::shape_mismatch, "slope has dtype {}, x has {}", ctx.input_type(1), ctx.input_type(0));
        shape slope;
        if (status s = slope_shape(ctx, slope); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), ctx.input_shape(0));
        return status::ok;
    }

    static status bind(const attributes&, bind_context& ctx) {
        shape slope;
        if (status s = slope_shape(ctx, slope); s != status::ok) return s;
        kernel_fn k = nullptr;
        visit_dtype(ctx.input_type(0), [&](auto tag) {
            using T = decltype(tag);
            if constexpr ((prelu_fn::supported & bit_of_type<T>) != 0) k = &binary_kernel<prelu_fn, T, T, T>;
        });
        if (!k) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.emit(k, binary_args<prelu_fn>{make_broadcast_args(ctx, ctx.input_shape(0), slope), prelu_fn{}});
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
