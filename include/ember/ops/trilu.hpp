// SPDX-License-Identifier: Apache-2.0
// Trilu (ONNX opset 14), any dtype: keeps the upper (upper=1, the default) or lower triangle of
// each matrix in the last two dimensions and zeroes the rest. The optional int64 scalar input k
// shifts the diagonal (k > 0 above the main diagonal, k < 0 below); it may be a runtime input.
// Row i keeps columns j >= i + k (upper) or j <= i + k (lower).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct trilu {
    static constexpr std::string_view onnx_name = "Trilu";
    static constexpr op_flags flags = op_flags::in_place;

    struct attributes {
        bool upper = true;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("upper", &attributes::upper));

    /// The input as `matrices` matrices of rows x cols elements of elem_bytes each.
    struct args {
        operand x, k, y;
        bool has_k = false;
        bool upper = true;
        std::int64_t matrices = 0, rows = 0, cols = 0;
        std::size_t elem_bytes = 0;
    };

    static status infer(const attributes&, infer_context& ctx) {
        if (ctx.opset() < 14) return ctx.fail(status::invalid_model, "Trilu needs opset 14 or later, the model has opset {}", ctx.opset());
        if (status s = ctx.expect_inputs(1, 2); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        if (in.rank() < 2) return ctx.fail(status::shape_mismatch, "input must have rank >= 2, got shape {}", in);
        if (ctx.has_input(1)) {
            if (ctx.input_type(1) != dtype::int64) return ctx.fail(status::invalid_model, "input 1 (k) must be int64, got {}", ctx.input_type(1));
            if (ctx.input_shape(1).elements() != 1)
                return ctx.fail(status::shape_mismatch, "input 1 (k) must be a scalar, got shape {}", ctx.input_shape(1));
        }
        if (size_of(ctx.input_type(0)) == 0) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.set_output(0, ctx.input_type(0), in);
        return status::ok;
    }

    // The definition. Each row keeps one contiguous run of columns and zeroes the rest (all-zero
    // bytes are 0 in every dtype). x and y may alias: rows are moved with memmove.
    static void reference(const args& g, std::int64_t k, const std::byte* x, std::byte* y) noexcept {
        const std::int64_t R = g.rows, C = g.cols;
        if (g.matrices == 0 || R == 0 || C == 0) return;
        // beyond +-(R + C) every row is all kept or all zeroed; clamping avoids overflow of i + k
        const std::int64_t bound = R + C;
        k = k < -bound ? -bound : (k > bound ? bound : k);
        const std::size_t row_bytes = static_cast<std::size_t>(C) * g.elem_bytes;
        for (std::int64_t m = 0; m < g.matrices; ++m) {
            for (std::int64_t i = 0; i < R; ++i) {
                const std::size_t at = static_cast<std::size_t>(m * R + i) * row_bytes;
                if (x != y) std::memmove(y + at, x + at, row_bytes);
                // columns [keep_begin, keep_end) survive
                std::int64_t keep_begin = g.upper ? i + k : 0;
                std::int64_t keep_end = g.upper ? C : i + k + 1;
                keep_begin = keep_begin < 0 ? 0 : (keep_begin > C ? C : keep_begin);
                keep_end = keep_end < keep_begin ? keep_begin : (keep_end > C ? C : keep_end);
                std::byte* row = y + at;
                std::memset(row, 0, static_cast<std::size_t>(keep_begin) * g.elem_bytes);
                std::memset(row + static_cast<std::size_t>(keep_end) * g.elem_bytes, 0, static_cast<std::size_t>(C - keep_end) * g.elem_bytes);
            }
        }
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        std::int64_t k = 0;
        if (g.has_k) std::memcpy(&k, ctx.at<const std::byte>(g.k), sizeof k);
        reference(g, k, ctx.at<const std::byte>(g.x), ctx.at<std::byte>(g.y));
    }

    static status bind(const attributes& a, bind_context& ctx) {
        const shape& in = ctx.input_shape(0);
        args g;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        g.has_k = ctx.has_input(1);
        if (g.has_k) g.k = ctx.input(1);
        g.upper = a.upper;
        g.rows = in[in.rank() - 2];
        g.cols = in[in.rank() - 1];
        g.matrices = indexing::product(in, 0, in.rank() - 2);
        g.elem_bytes = size_of(ctx.input_type(0));
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
