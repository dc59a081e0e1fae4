// SPDX-License-Identifier: Apache-2.0
// Softmax (ONNX opset 1+), float32: y = exp(x - max) / sum(exp(x - max)). The axis means two
// different things: before opset 13 the input is coerced to 2-D at `axis` (default 1) and each
// row of the trailing block [axis, rank) is normalised as one; from opset 13 on, the values are
// normalised along the single dimension `axis` (default -1).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct softmax {
    static constexpr std::string_view onnx_name = "Softmax";
    static constexpr op_flags flags = op_flags::in_place;

    struct attributes {
        std::optional<std::int64_t> axis;  // absent: 1 before opset 13, -1 from opset 13
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));

    /// The input seen as [outer, axis_len, inner]; each of the outer * inner lines of axis_len
    /// values (stride inner) is normalised.
    struct args {
        operand x, y;
        std::int64_t outer = 0, axis_len = 0, inner = 0;
    };

    static std::int64_t default_axis(std::int64_t opset) noexcept { return opset < 13 ? 1 : -1; }

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32}); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        const std::int64_t axis = a.axis.value_or(default_axis(ctx.opset()));
        std::size_t k = 0;
        if (in.rank() == 0 || !normalize_axis(axis, in.rank(), k))
            return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {} (rank {})", axis, in, in.rank());
        ctx.set_output(0, dtype::float32, in);
        return status::ok;
    }

    /// The [outer, axis_len, inner] view of shape `in` for this opset's meaning of axis.
    static args plan_shape(const attributes& a, const shape& in, std::int64_t opset) noexcept {
        args g;
        std::size_t k = 0;
        normalize_axis(a.axis.value_or(default_axis(opset)), in.rank(), k);
        g.outer = 1;
        for (std::size_t i = 0; i < k; ++i) g.outer *= in[i];
        g.axis_len = 1;
        g.inner = 1;
        if (opset < 13) {
            for (std::size_t i = k; i < in.rank(); ++i) g.axis_len *= in[i];
        } else {
            g.axis_len = in[k];
            for (std::size_t i = k + 1; i < in.rank(); ++i) g.inner *= in[i];
        }
        return g;
    }

    // The definition. Subtracting the line's maximum keeps exp() from overflowing; the largest
    // term becomes exp(0) = 1, so the sum is >= 1. x and y may alias: each x is read before the
    // y at the same place is written.
    static void reference(const args& g, const float* x, float* y, const executor* ex) noexcept {
        const std::int64_t L = g.axis_len, S = g.inner;
        if (L == 0) return;
        parallel_for(ex, static_cast<std::size_t>(g.outer * S), [&](std::size_t begin, std::size_t end) {
            for (auto line = static_cast<std::int64_t>(begin); line < static_cast<std::int64_t>(end); ++line) {
                const std::int64_t base = (line / S) * L * S + line % S;
                const float* xl = x + base;
                float* yl = y + base;
                float max = xl[0];
                for (std::int64_t j = 1; j < L; ++j) max = xl[j * S] > max ? xl[j * S] : max;
                float sum = 0.0f;
                for (std::int64_t j = 0; j < L; ++j) {
                    const float e = std::exp(xl[j * S] - max);
                    yl[j * S] = e;
                    sum += e;
                }
                for (std::int64_t j = 0; j < L; ++j) yl[j * S] /= sum;
            }
        });
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.x), ctx.at<float>(g.y), ctx.exec);
    }

    // Lines that are contiguous (inner == 1, the usual last-axis softmax) run through the kernel
    // table's vector softmax, rows split over the executor in `pieces` parts.
    struct fast_args {
        args g;
        std::int64_t pieces = 1;
        decltype(simd::kernel_table::softmax_rows_f32) rows = nullptr;
    };

    static void fast_kernel(const void* p, const run_context& ctx) noexcept {
        const auto& f = *static_cast<const fast_args*>(p);
        const float* x = ctx.at<const float>(f.g.x);
        float* y = ctx.at<float>(f.g.y);
        const std::int64_t rows = f.g.outer, n = f.g.axis_len;
        for_each_piece(ctx.exec, rows, f.pieces, [&](std::int64_t begin, std::int64_t end) noexcept {
            f.rows(x + begin * n, y + begin * n, end - begin, n);
        });
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g = plan_shape(a, ctx.input_shape(0), ctx.opset());
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        if (ctx.kernels() && g.inner == 1 && g.axis_len > 0 && g.outer > 0) {
            ctx.emit(&fast_kernel, fast_args{g, row_pieces(g.outer, g.axis_len, ctx.kernels()->slots), ctx.kernels()->table->softmax_rows_f32});
            return status::ok;
        }
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
