// SPDX-License-Identifier: Apache-2.0
// Gemm (ONNX opset 7+): Y = alpha * op(A) * op(B) + beta * C, op() transposing when transA /
// transB is set; C (optional since opset 11) broadcasts unidirectionally to [M, N].
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/ops/binary.hpp"
#include "ember/ops/fast_gemm.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct gemm {
    static constexpr std::string_view onnx_name = "Gemm";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        float alpha = 1.0f;
        float beta = 1.0f;
        bool trans_a = false;
        bool trans_b = false;
        bool broadcast = false;  // opset < 7 only; accepted and ignored (broadcasting is always on)
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("alpha", &attributes::alpha), attr("beta", &attributes::beta), attr("transA", &attributes::trans_a),
                        attr("transB", &attributes::trans_b), attr("broadcast", &attributes::broadcast));

    struct args {
        operand a, b, c, y;
        bool has_c = false;
        std::int64_t m = 0, n = 0, k = 0;
        std::int64_t c_row_stride = 0, c_col_stride = 0;  // 0 where C is broadcast
        attributes attrs;
    };

    /// Checks the inputs and gives the output shape; FusedGemm passes max_inputs = 4 (its
    /// residual Z comes last).
    static status check_shapes(const attributes& a, infer_context& ctx, shape& out, std::size_t max_inputs = 3) {
        if (status s = ctx.expect_inputs(2, max_inputs); s != status::ok) return s;
        for (std::size_t i = 0; i < ctx.input_count(); ++i)
            if (ctx.has_input(i))
                if (status s = ctx.expect_type(i, {dtype::float32}); s != status::ok) return s;
        const shape& lhs = ctx.input_shape(0);
        const shape& rhs = ctx.input_shape(1);
        if (lhs.rank() != 2 || rhs.rank() != 2)
            return ctx.fail(status::shape_mismatch, "A and B must be matrices, got {} and {}", lhs, rhs);
        const std::int64_t k_lhs = a.trans_a ? lhs[0] : lhs[1];
        const std::int64_t k_rhs = a.trans_b ? rhs[1] : rhs[0];
        if (k_lhs != k_rhs)
            return ctx.fail(status::shape_mismatch, "inner dimensions differ: {} vs {} ({} x {})", k_lhs, k_rhs, lhs, rhs);
        out = shape{a.trans_a ? lhs[1] : lhs[0], a.trans_b ? rhs[0] : rhs[1]};
        if (ctx.has_input(2)) {
            shape joint;
            if (ctx.input_shape(2).rank() > 2 || !broadcast_shapes(ctx.input_shape(2), out, joint) || joint != out)
                return ctx.fail(status::shape_mismatch, "C of shape {} does not broadcast to {}", ctx.input_shape(2), out);
        }
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        shape out;
        if (status s = check_shapes(a, ctx, out); s != status::ok) return s;
        ctx.set_output(0, dtype::float32, out);
        return status::ok;
    }

    // The definition: a plain triple loop with a float accumulator per output, rows split over
    // the executor.
    static void reference(const args& g, const float* A, const float* B, const float* C, float* Y, const executor* ex) noexcept {
        const std::int64_t M = g.m, N = g.n, K = g.k;
        const std::int64_t a_row = g.attrs.trans_a ? 1 : K, a_col = g.attrs.trans_a ? M : 1;
        const std::int64_t b_row = g.attrs.trans_b ? 1 : N, b_col = g.attrs.trans_b ? K : 1;
        parallel_for(ex, static_cast<std::size_t>(M), [&](std::size_t begin, std::size_t end) {
            for (auto i = static_cast<std::int64_t>(begin); i < static_cast<std::int64_t>(end); ++i)
                for (std::int64_t j = 0; j < N; ++j) {
                    float acc = 0.0f;
                    for (std::int64_t p = 0; p < K; ++p) acc += A[i * a_row + p * a_col] * B[p * b_row + j * b_col];
                    float y = g.attrs.alpha * acc;
                    if (C) y += g.attrs.beta * C[i * g.c_row_stride + j * g.c_col_stride];
                    Y[i * N + j] = y;
                }
        });
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.a), ctx.at<const float>(g.b), g.has_c ? ctx.at<const float>(g.c) : nullptr,
                  ctx.at<float>(g.y), ctx.exec);
    }

    /// Whether the packed GEMM runs this node: float32 with alpha = 1 and beta = 1 (or no C), C
    /// (when given) a row vector (bias per column), a column vector (bias per row) or a full
    /// [M, N] matrix (added like a residual). Fills the fast step's geometry when g is given.
    static bool fast_plan(const attributes& a, const infer_context& ctx, fast_gemm_args* g = nullptr) noexcept {
        const kernel_context* k = ctx.kernels();
        if (!k || a.alpha != 1.0f || (ctx.has_input(2) && a.beta != 1.0f)) return false;
        const shape& out = ctx.output_shape(0);
        const std::int64_t M = out[0], N = out[1];
        const shape& lhs = ctx.input_shape(0);
        const shape& rhs = ctx.input_shape(1);
        fast_epilogue post;
        if (ctx.has_input(2)) {
            const shape& c = ctx.input_shape(2);
            const std::int64_t rows = c.rank() == 2 ? c[0] : 1, cols = c.rank() >= 1 ? c[c.rank() - 1] : 1;
            if (rows == M && cols == N && c.rank() == 2) {
                post.has_residual = true;
            } else if (rows == 1 && cols == N) {
                post.has_bias = true;
            } else if (c.rank() == 2 && rows == M && cols == 1) {
                post.has_bias = true;
                post.bias_per_row = true;
            } else {
                return false;  // a scalar C: the reference kernel
            }
        }
        if (g) {
            g->table = k->table;
            g->m = M;
            g->n = N;
            g->k = a.trans_a ? lhs[0] : lhs[1];
            g->a_rs = a.trans_a ? 1 : lhs[1];
            g->a_cs = a.trans_a ? lhs[1] : 1;
            g->b_rs = a.trans_b ? 1 : rhs[1];
            g->b_cs = a.trans_b ? rhs[1] : 1;
            g->ldc = N;
            g->post = post;
            g->slots = static_cast<std::int64_t>(k->slots);
        }
        return true;
    }

    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        if (!fast_plan(a, ctx)) return 0;
        return fast_gemm_workspace(*ctx.kernels(), ctx.input_constant(0) == nullptr, ctx.input_constant(1) == nullptr);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        fast_gemm_args f;
        if (fast_plan(a, ctx, &f)) {
            if (f.post.has_bias) f.post.bias = ctx.input(2);
            if (f.post.has_residual) f.post.residual = ctx.input(2);
            return emit_fast_gemm(ctx, f, ctx.input_constant(0) != nullptr, ctx.input_constant(1) != nullptr);
        }
        args g;
        g.a = ctx.input(0);
        g.b = ctx.input(1);
        g.y = ctx.output(0);
        g.attrs = a;
        const shape& out = ctx.output_shape(0);
        g.m = out[0];
        g.n = out[1];
        g.k = a.trans_a ? ctx.input_shape(0)[0] : ctx.input_shape(0)[1];
        if (ctx.has_input(2)) {
            g.has_c = true;
            g.c = ctx.input(2);
            std::int64_t strides[max_rank] = {};
            broadcast_strides(ctx.input_shape(2), out, strides);
            g.c_row_stride = strides[0];
            g.c_col_stride = strides[1];
        }
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
