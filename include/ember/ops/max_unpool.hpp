// SPDX-License-Identifier: Apache-2.0
// MaxUnpool (ONNX opset 9, 11), float32, float64 and float16, 1 to 3 spatial dimensions: the
// partial inverse of MaxPool. Y starts as zeros of the pooled-from shape ((in - 1) * stride +
// kernel - pad_begin - pad_end per spatial dimension), each X[j] goes to the flat position I[j]
// there (MaxPool's Indices: batch and channel included), and an output_shape input (a
// compile-time constant, at least that large) pads the result at the end of each dimension, as
// ONNX's reference does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/ops/op_support.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct max_unpool {
    static constexpr std::string_view onnx_name = "MaxUnpool";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::vector<std::int64_t> kernel_shape;  // required
        std::vector<std::int64_t> pads;          // [x1_begin, x2_begin, ..., x1_end, x2_end]; empty: 0
        std::vector<std::int64_t> strides;       // empty: 1 per spatial dimension
    };
    static constexpr auto onnx_attributes = std::make_tuple(required_attr("kernel_shape", &attributes::kernel_shape),
                                                            attr("pads", &attributes::pads), attr("strides", &attributes::strides));

    struct args {
        operand x, indices, y;
        std::size_t rank = 0;
        std::int64_t count = 0;               // X's elements
        std::int64_t unpooled[max_rank] = {};  // the pooled-from shape the indices refer to
        std::int64_t out_stride[max_rank] = {};
        std::int64_t unpooled_total = 0, out_total = 0;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g, shape& out) {
        if (status s = ctx.expect_inputs(2, 3); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16}); s != status::ok) return s;
        if (status s = ctx.expect_type(1, {dtype::int64}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        if (status s = expect_window_input(ctx, x, "X"); s != status::ok) return s;
        if (ctx.input_shape(1) != x)
            return ctx.fail(status::shape_mismatch, "I (the indices) must have X's shape {}, got {}", x, ctx.input_shape(1));
        const std::size_t S = x.rank() - 2;
        if (a.kernel_shape.size() != S)
            return ctx.fail(status::invalid_model, "kernel_shape {} has {} values, expected {} (one per spatial dimension of X {})", a.kernel_shape,
                            a.kernel_shape.size(), S, x);
        if (!a.strides.empty() && a.strides.size() != S)
            return ctx.fail(status::invalid_model, "strides {} has {} values, expected {}", a.strides, a.strides.size(), S);
        if (!a.pads.empty() && a.pads.size() != 2 * S)
            return ctx.fail(status::invalid_model, "pads {} has {} values, expected {}", a.pads, a.pads.size(), 2 * S);
        shape unpooled = x;
        for (std::size_t i = 0; i < S; ++i) {
            const std::int64_t k = a.kernel_shape[i], s = a.strides.empty() ? 1 : a.strides[i];
            const std::int64_t pb = a.pads.empty() ? 0 : a.pads[i], pe = a.pads.empty() ? 0 : a.pads[S + i];
            if (k < 1) return ctx.fail(status::invalid_model, "kernel_shape {} has a value below 1", a.kernel_shape);
            if (s < 1) return ctx.fail(status::invalid_model, "strides {} has a value below 1", a.strides);
            if (pb < 0 || pe < 0) return ctx.fail(status::invalid_model, "pads {} has a negative value", a.pads);
            unpooled[2 + i] = (x[2 + i] - 1) * s + k - pb - pe;
            if (unpooled[2 + i] < 1)
                return ctx.fail(status::shape_mismatch, "spatial dimension {} of the output would be {} (X {}, kernel_shape {}, pads {})", i,
                                unpooled[2 + i], x, a.kernel_shape, a.pads);
        }
        out = unpooled;
        if (ctx.has_input(2)) {
            if (status s = ctx.expect_type(2, {dtype::int64}); s != status::ok) return s;
            const tensor* t = ctx.require_constant(2, "output_shape");
            if (!t) return status::unsupported_op;
            std::vector<std::int64_t> v;
            infer_context::ints_of(*t, v);
            if (v.size() != x.rank())
                return ctx.fail(status::invalid_model, "output_shape {} has {} values, expected {} (X {})", v, v.size(), x.rank(), x);
            for (std::size_t d = 0; d < x.rank(); ++d)
                if (v[d] < unpooled[d] || (d < 2 && v[d] != unpooled[d]))
                    return ctx.fail(status::shape_mismatch, "output_shape {} is smaller than the unpooled shape {} (or changes N or C)", v, unpooled);
            out = shape(span<const std::int64_t>(v.data(), v.size()));
        }
        g.rank = x.rank();
        g.count = x.elements();
        for (std::size_t d = 0; d < g.rank; ++d) g.unpooled[d] = unpooled[d];
        contiguous_strides(out, g.out_stride);
        g.unpooled_total = unpooled.elements();
        g.out_total = out.elements();
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    // The definition: zero Y, then each X[j] to I[j] in the unpooled shape, placed at the same
    // coordinates of Y. An index outside the unpooled shape fails the run (invalid_argument)
    // without writing there. Two equal indices: the later one wins.
    template <class T>
    static void reference(const args& g, const T* x, const std::int64_t* indices, T* y, const run_context& ctx) noexcept {
        for (std::int64_t i = 0; i < g.out_total; ++i) y[i] = T(0.0f);
        for (std::int64_t j = 0; j < g.count; ++j) {
            std::int64_t idx = indices[j];
            if (idx < 0 || idx >= g.unpooled_total) {
                ctx.fail(static_cast<std::uint8_t>(status::invalid_argument));
                return;
            }
            std::int64_t off = 0;
            for (std::size_t d = g.rank; d-- > 0;) {
                off += (idx % g.unpooled[d]) * g.out_stride[d];
                idx /= g.unpooled[d];
            }
            y[off] = x[j];
        }
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<const std::int64_t>(g.indices), ctx.at<T>(g.y), ctx);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        g.x = ctx.input(0);
        g.indices = ctx.input(1);
        g.y = ctx.output(0);
        if (ctx.input_type(0) == dtype::float64) ctx.emit(&kernel<double>, g);
        else if (ctx.input_type(0) == dtype::float16) ctx.emit(&kernel<float16>, g);
        else ctx.emit(&kernel<float>, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
