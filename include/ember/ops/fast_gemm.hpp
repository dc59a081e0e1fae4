// SPDX-License-Identifier: Apache-2.0
// The fast path of Gemm, MatMul and Conv (and their fused forms): one step that resolves its
// operands and calls the kernel table's packed GEMM, with the weights packed once at compile time
// and the epilogue (bias, residual, activation) applied on the tile in registers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/kernels/activation.hpp"
#include "ember/kernels/gemm_f32.hpp"
#include "ember/kernels/maxpool_f32.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// The epilogue's operands, as arena operands (resolved per run).
struct fast_epilogue {
    kernels::activation_spec act;
    bool has_bias = false, bias_per_row = false;
    operand bias;
    bool has_residual = false;
    operand residual;
};

/// A batch of GEMMs C_b = A_b * B_b with one epilogue: A is a strided operand (or weights packed
/// at compile time), B likewise. Batch index b offsets A, B, C (and the residual, like C) through
/// up to max_rank broadcast batch dimensions.
struct fast_gemm_args {
    const simd::kernel_table* table = nullptr;
    std::int64_t m = 0, n = 0, k = 0;
    operand a, b, c;
    std::int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, ldc = 0;
    const float* packed_a = nullptr;  ///< plan-owned, when A is constant
    const float* packed_b = nullptr;  ///< plan-owned, when B is constant
    fast_epilogue post;
    std::uint32_t batch_rank = 0;
    std::int64_t batch_count = 1;
    std::int64_t batch_dims[max_rank] = {};
    std::int64_t a_batch_strides[max_rank] = {};
    std::int64_t b_batch_strides[max_rank] = {};
    operand workspace;
    std::int64_t slots = 1;
};

/// Element offsets of batch index `batch` into A and B, through the broadcast batch dims of g
/// (MatMul's args or fast_gemm_args: both name them batch_rank, batch_dims, a/b_batch_strides).
template <class Batched>
inline void batch_offsets(const Batched& g, std::int64_t batch, std::int64_t& a_off, std::int64_t& b_off) noexcept {
    a_off = 0;
    b_off = 0;
    for (std::size_t d = g.batch_rank; d-- > 0;) {
        const std::int64_t idx = batch % g.batch_dims[d];
        batch /= g.batch_dims[d];
        a_off += idx * g.a_batch_strides[d];
        b_off += idx * g.b_batch_strides[d];
    }
}

/// A 1- or 2-D window's geometry (right-aligned in window_geometry) as the plane kernels take it
/// (dwconv_f32, maxpool_f32); the pointers are set per run.
inline kernels::dwconv_f32_problem plane_geometry(const window_geometry& G, std::int64_t planes, std::int64_t channels) noexcept {
    kernels::dwconv_f32_problem d;
    d.planes = planes;
    d.channels = channels;
    d.in_h = G.in[1];
    d.in_w = G.in[2];
    d.out_h = G.out[1];
    d.out_w = G.out[2];
    d.kh = G.kernel[1];
    d.kw = G.kernel[2];
    d.stride_h = G.stride[1];
    d.stride_w = G.stride[2];
    d.pad_h = G.pad_begin[1];
    d.pad_w = G.pad_begin[2];
    d.dil_h = G.dilation[1];
    d.dil_w = G.dilation[2];
    return d;
}

/// Workspace bytes of the depthwise kernel's padded path (dwconv_f32) on every slot.
inline std::size_t plane_workspace(const kernel_context& k, const kernels::dwconv_f32_problem& d) noexcept {
    return static_cast<std::size_t>(kernels::dwconv_workspace_floats(d)) * sizeof(float) * k.slots;
}

/// Workspace bytes of the max-pooling kernel's separable path (maxpool_f32) on every slot.
inline std::size_t maxpool_plane_workspace(const kernel_context& k, const kernels::dwconv_f32_problem& d) noexcept {
    return static_cast<std::size_t>(kernels::maxpool_workspace_floats(d)) * sizeof(float) * k.slots;
}

inline kernels::gemm_epilogue resolve_epilogue(const fast_epilogue& e, const run_context& ctx, std::int64_t ld_residual,
                                               std::int64_t residual_offset) noexcept {
    kernels::gemm_epilogue post;
    post.act = e.act;
    if (e.has_bias) {
        post.bias = ctx.at<const float>(e.bias);
        post.bias_per_row = e.bias_per_row;
    }
    if (e.has_residual) {
        post.residual = ctx.at<const float>(e.residual) + residual_offset;
        post.ld_residual = ld_residual;
    }
    return post;
}

inline void fast_gemm_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& g = *static_cast<const fast_gemm_args*>(p);
    const float* A = ctx.at<const float>(g.a);
    const float* B = g.packed_b ? nullptr : ctx.at<const float>(g.b);
    float* C = ctx.at<float>(g.c);
    float* ws = ctx.at<float>(g.workspace);
    for (std::int64_t batch = 0; batch < g.batch_count; ++batch) {
        std::int64_t a_off = 0, b_off = 0;
        batch_offsets(g, batch, a_off, b_off);
        kernels::gemm_f32_problem pr;
        pr.m = g.m;
        pr.n = g.n;
        pr.k = g.k;
        pr.packed_a = g.packed_a;
        if (!g.packed_a) pr.a = kernels::strided_matrix{A + a_off, g.a_rs, g.a_cs};
        pr.packed_b = g.packed_b;
        if (!g.packed_b) pr.b = kernels::strided_matrix{B + b_off, g.b_rs, g.b_cs};
        pr.c = C + batch * g.m * g.ldc;
        pr.ldc = g.ldc;
        pr.post = resolve_epilogue(g.post, ctx, g.ldc, batch * g.m * g.ldc);
        g.table->gemm_f32(pr, ws, g.slots, ctx.exec);
    }
}

/// Workspace bytes a fast GEMM step needs (A and/or B packed per block at run time).
inline std::size_t fast_gemm_workspace(const kernel_context& k, bool pack_a_at_run, bool pack_b_at_run) noexcept {
    return static_cast<std::size_t>(k.table->gemm_workspace_floats(pack_a_at_run, pack_b_at_run)) * sizeof(float) * k.slots;
}

/// Emits the fast GEMM step of a node whose inputs 0 and 1 are A and B and output 0 is C, with
/// f's geometry and epilogue filled in: constant B (and A, when pack_a) are packed once into
/// plan-owned buffers; the rest is packed per block at run time. The choice must match the
/// workspace asked for (fast_gemm_workspace).
inline status emit_fast_gemm(bind_context& ctx, fast_gemm_args f, bool pack_a, bool pack_b) {
    const kernel_context& k = *ctx.kernels();
    f.a = ctx.input(0);
    f.b = ctx.input(1);
    f.c = ctx.output(0);
    f.workspace = ctx.workspace();
    if (pack_b) {
        float* dst = ctx.packed_buffer(static_cast<std::size_t>(k.table->packed_b_floats(f.k, f.n)));
        if (!dst) return status::out_of_memory;
        k.table->pack_gemm_b(kernels::strided_matrix{ctx.input_constant(1)->data<float>(), f.b_rs, f.b_cs}, f.k, f.n, dst);
        f.packed_b = dst;
    }
    if (pack_a) {
        float* dst = ctx.packed_buffer(static_cast<std::size_t>(kernels::packed_a_floats(f.m, f.k)));
        if (!dst) return status::out_of_memory;
        k.table->pack_gemm_a(kernels::strided_matrix{ctx.input_constant(0)->data<float>(), f.a_rs, f.a_cs}, f.m, f.k, dst);
        f.packed_a = dst;
    }
    ctx.emit(&fast_gemm_kernel, f);
    return status::ok;
}

} // namespace ops
EMBER_NAMESPACE_END
