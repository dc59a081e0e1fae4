// SPDX-License-Identifier: Apache-2.0
// MatMul (ONNX opset 1+, numpy.matmul semantics), float32: [..., M, K] x [..., K, N] -> [..., M, N].
// A 1-D A is promoted to [1, K] and a 1-D B to [K, 1], and the added dimension is removed from
// the result; the batch dimensions (all but the last two) broadcast as in numpy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/ops/binary.hpp"
#include "ember/ops/fast_gemm.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct matmul {
    static constexpr std::string_view onnx_name = "MatMul";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    /// One [M, K] x [K, N] product per batch index; the batch dims broadcast through strides
    /// (in elements, 0 where that operand is broadcast). A, B and Y are contiguous row-major.
    struct args {
        operand a, b, y;
        std::int64_t m = 0, n = 0, k = 0;
        std::uint32_t batch_rank = 0;
        std::int64_t batch_dims[max_rank] = {};
        std::int64_t a_batch_strides[max_rank] = {};
        std::int64_t b_batch_strides[max_rank] = {};
        std::int64_t batch_count = 1;
    };

    /// The operands as matrices stacks: 1-D operands promoted, batch dims broadcast. Fills the
    /// output shape (promoted dims removed) and, when g is given, the iteration plan.
    static bool plan_shapes(const shape& lhs, const shape& rhs, shape& out, args* g) noexcept {
        shape a = lhs, b = rhs;
        if (a.rank() == 1) a = shape{1, lhs[0]};
        if (b.rank() == 1) b = shape{rhs[0], 1};
        if (a[a.rank() - 1] != b[b.rank() - 2]) return false;
        shape a_batch, b_batch, batch;
        for (std::size_t i = 0; i + 2 < a.rank(); ++i) a_batch.push_back(a[i]);
        for (std::size_t i = 0; i + 2 < b.rank(); ++i) b_batch.push_back(b[i]);
        if (!broadcast_shapes(a_batch, b_batch, batch)) return false;
        out = batch;
        if (lhs.rank() != 1) out.push_back(a[a.rank() - 2]);
        if (rhs.rank() != 1) out.push_back(b[b.rank() - 1]);
        if (g) {
            g->m = a[a.rank() - 2];
            g->k = a[a.rank() - 1];
            g->n = b[b.rank() - 1];
            g->batch_rank = static_cast<std::uint32_t>(batch.rank());
            g->batch_count = batch.elements();
            std::int64_t sa[max_rank] = {}, sb[max_rank] = {};
            broadcast_strides(a_batch, batch, sa);
            broadcast_strides(b_batch, batch, sb);
            for (std::size_t i = 0; i < batch.rank(); ++i) {
                g->batch_dims[i] = batch[i];
                g->a_batch_strides[i] = sa[i] * g->m * g->k;  // matrices -> elements
                g->b_batch_strides[i] = sb[i] * g->k * g->n;
            }
        }
        return true;
    }

    /// plan_shapes() with infer()'s errors: operands of rank 0, inner dimensions that differ,
    /// batch dimensions that do not broadcast. Shared with MatMulInteger and QLinearMatMul.
    static status check_shapes(infer_context& ctx, const shape& lhs, const shape& rhs, shape& out, args* g) {
        if (lhs.rank() == 0 || rhs.rank() == 0)
            return ctx.fail(status::shape_mismatch, "operands must have rank >= 1, got {} and {}", lhs, rhs);
        const std::int64_t k_lhs = lhs[lhs.rank() - 1];
        const std::int64_t k_rhs = rhs.rank() == 1 ? rhs[0] : rhs[rhs.rank() - 2];
        if (k_lhs != k_rhs)
            return ctx.fail(status::shape_mismatch, "inner dimensions differ: {} vs {} ({} x {})", k_lhs, k_rhs, lhs, rhs);
        if (!plan_shapes(lhs, rhs, out, g))
            return ctx.fail(status::shape_mismatch, "batch dimensions of {} and {} do not broadcast", lhs, rhs);
        return status::ok;
    }

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        for (std::size_t i = 0; i < 2; ++i)
            if (status s = ctx.expect_type(i, {dtype::float32}); s != status::ok) return s;
        shape out;
        if (status s = check_shapes(ctx, ctx.input_shape(0), ctx.input_shape(1), out, nullptr); s != status::ok) return s;
        ctx.set_output(0, dtype::float32, out);
        return status::ok;
    }

    // The definition: per batch index, a plain triple loop with one float accumulator per
    // output; the batch_count * M output rows are split over the executor.
    static void reference(const args& g, const float* A, const float* B, float* Y, const executor* ex) noexcept {
        const std::int64_t M = g.m, N = g.n, K = g.k;
        if (M == 0 || N == 0) return;
        parallel_for(ex, static_cast<std::size_t>(g.batch_count * M), [&](std::size_t begin, std::size_t end) {
            for (auto row = static_cast<std::int64_t>(begin); row < static_cast<std::int64_t>(end); ++row) {
                const std::int64_t batch = row / M, i = row % M;
                std::int64_t a_off = 0, b_off = 0;
                batch_offsets(g, batch, a_off, b_off);
                const float* a = A + a_off + i * K;
                const float* b = B + b_off;
                float* y = Y + row * N;
                for (std::int64_t j = 0; j < N; ++j) {
                    float acc = 0.0f;
                    for (std::int64_t p = 0; p < K; ++p) acc += a[p] * b[p * N + j];
                    y[j] = acc;
                }
            }
        });
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.a), ctx.at<const float>(g.b), ctx.at<float>(g.y), ctx.exec);
    }

    /// The packed GEMM's geometry for a float32 MatMul (false: the reference kernel). When B is
    /// one matrix for every batch index and A is not broadcast, the batch folds into M: one GEMM
    /// of batch * M rows against B packed once.
    static bool fast_plan(const infer_context& ctx, fast_gemm_args& f) noexcept {
        const kernel_context* k = ctx.kernels();
        if (!k || ctx.input_type(0) != dtype::float32) return false;
        args geo;
        shape out;
        if (!plan_shapes(ctx.input_shape(0), ctx.input_shape(1), out, &geo)) return false;
        f.table = k->table;
        f.m = geo.m;
        f.n = geo.n;
        f.k = geo.k;
        f.a_rs = geo.k;
        f.a_cs = 1;
        f.b_rs = geo.n;
        f.b_cs = 1;
        f.ldc = geo.n;
        f.slots = static_cast<std::int64_t>(k->slots);
        bool b_shared = true;
        for (std::uint32_t d = 0; d < geo.batch_rank; ++d) b_shared = b_shared && geo.b_batch_strides[d] == 0;
        const bool a_whole = ctx.input_shape(0).elements() == geo.batch_count * geo.m * geo.k;
        if (b_shared && a_whole) {
            f.m = geo.batch_count * geo.m;
            return true;
        }
        f.batch_rank = geo.batch_rank;
        f.batch_count = geo.batch_count;
        for (std::uint32_t d = 0; d < geo.batch_rank; ++d) {
            f.batch_dims[d] = geo.batch_dims[d];
            f.a_batch_strides[d] = geo.a_batch_strides[d];
            f.b_batch_strides[d] = geo.b_batch_strides[d];
        }
        return true;
    }
    static bool prepacks_b(const infer_context& ctx, const fast_gemm_args& f) noexcept {
        return ctx.input_constant(1) != nullptr && f.batch_count == 1;
    }

    static std::size_t workspace_bytes(const attributes&, const infer_context& ctx) {
        fast_gemm_args f;
        if (!fast_plan(ctx, f)) return 0;
        return fast_gemm_workspace(*ctx.kernels(), true, !prepacks_b(ctx, f));
    }

    static status bind(const attributes&, bind_context& ctx) {
        fast_gemm_args f;
        if (fast_plan(ctx, f)) return emit_fast_gemm(ctx, f, false, prepacks_b(ctx, f));
        args g;
        g.a = ctx.input(0);
        g.b = ctx.input(1);
        g.y = ctx.output(0);
        shape out;
        if (!plan_shapes(ctx.input_shape(0), ctx.input_shape(1), out, &g))
            return ctx.fail(status::shape_mismatch, "shapes {} and {} do not multiply", ctx.input_shape(0), ctx.input_shape(1));
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
