// SPDX-License-Identifier: Apache-2.0
// The quantized convolutions (ONNX opset 10+), reference kernels, with Conv's attributes and
// geometry (1 to 3 spatial dimensions, groups, pads, strides, dilations, auto_pad):
//
//   ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32
//       Y[n, m] = sum over m's group's channels c and kernel positions k of
//                 (X[n, c, pos] - x_zp) * (W[m, c, k] - w_zp[m])
//   QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?) -> y_zp's type
//       y = saturate(round((that sum + B[m]) * (x_scale * w_scale[m] / y_scale)) + y_zp)
//
// Positions in the padding hold x_zp, so they contribute 0. x and w are uint8 or int8; x's
// scale and zero point are per tensor, w's per tensor or per output channel ([M]); B is int32.
// The accumulator is exact (int64) and converts to int32 for ConvInteger; round is half to
// even, saturate clamps to uint8 / int8.
#pragma once

#include <algorithm>
#include <cstddef>
#include <climits>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ember/kernels/dwconv_u8.hpp"
#include "ember/kernels/gemm_u8s8.hpp"
#include "ember/ops/epilogue.hpp"
#include "ember/ops/fast_gemm.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/quantize_linear.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace qconv_detail {

struct attributes {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

struct geometry {
    std::int64_t batch = 0;
    std::int64_t in_channels = 0;   // per group
    std::int64_t out_channels = 0;  // all groups together (M)
    std::int64_t group = 1;
    window_geometry geo;
};

/// Checks x (input xi) and w (input wi) as Conv does, and fills g.
inline status plan(const attributes& a, infer_context& ctx, std::size_t xi, std::size_t wi, geometry& g) {
    for (std::size_t i : {xi, wi})
        if (status s = ctx.expect_type(i, {dtype::uint8, dtype::int8}); s != status::ok) return s;
    const shape& x = ctx.input_shape(xi);
    const shape& w = ctx.input_shape(wi);
    const window_spec spec{a.auto_pad, a.pads, a.strides, a.dilations, false};
    if (status s = plan_conv_window(ctx, x, w, nullptr, a.group, a.kernel_shape, spec, "x", "w", g.geo); s != status::ok) return s;
    g.batch = x[0];
    g.in_channels = w[1];
    g.out_channels = w[0];
    g.group = a.group;
    return status::ok;
}

/// A per-tensor parameter: one value.
inline status expect_single(infer_context& ctx, std::size_t i, const char* what) {
    if (ctx.has_input(i) && !quant_detail::is_single(ctx.input_shape(i)))
        return ctx.fail(status::shape_mismatch, "{} must be a scalar (per-tensor), got shape {}", what, ctx.input_shape(i));
    return status::ok;
}
/// A per-tensor or per-output-channel parameter: one value or [M]; per_channel says which.
inline status expect_per_channel(infer_context& ctx, std::size_t i, const char* what, std::int64_t M, bool& per_channel) {
    per_channel = false;
    if (!ctx.has_input(i)) return status::ok;
    const shape& s = ctx.input_shape(i);
    if (quant_detail::is_single(s)) return status::ok;
    if (s.rank() == 1 && s[0] == M) {
        per_channel = true;
        return status::ok;
    }
    return ctx.fail(status::shape_mismatch, "{} must be a scalar or [M] = [{}] (per output channel), got shape {}", what, M, s);
}

/// What QLinearConv and FusedQConv check alike: x (0) and w (3) as Conv, x_scale (1) and
/// w_scale (4) float32, x_zero_point (2) per tensor and of x's dtype, w_scale and w_zero_point (5)
/// per tensor or per output channel, and the optional int32 bias B (input b) of [M].
inline status plan_quantized(const attributes& a, infer_context& ctx, std::size_t b, geometry& g, bool& w_scale_per_channel,
                             bool& w_zp_per_channel) {
    if (status s = plan(a, ctx, 0, 3, g); s != status::ok) return s;
    for (std::size_t i : {1, 4})
        if (status s = ctx.expect_type(i, {dtype::float32}); s != status::ok) return s;
    if (ctx.input_type(2) != ctx.input_type(0))
        return ctx.fail(status::invalid_model, "x_zero_point has dtype {}, expected {} like x", ctx.input_type(2), ctx.input_type(0));
    if (ctx.input_type(5) != ctx.input_type(3))
        return ctx.fail(status::invalid_model, "w_zero_point has dtype {}, expected {} like w", ctx.input_type(5), ctx.input_type(3));
    if (status s = expect_single(ctx, 1, "x_scale"); s != status::ok) return s;
    if (status s = expect_single(ctx, 2, "x_zero_point"); s != status::ok) return s;
    const std::int64_t M = g.out_channels;
    if (status s = expect_per_channel(ctx, 4, "w_scale", M, w_scale_per_channel); s != status::ok) return s;
    if (status s = expect_per_channel(ctx, 5, "w_zero_point", M, w_zp_per_channel); s != status::ok) return s;
    if (ctx.has_input(b)) {
        if (status s = ctx.expect_type(b, {dtype::int32}); s != status::ok) return s;
        const shape& bs = ctx.input_shape(b);
        if (bs.rank() != 1 || bs[0] != M)
            return ctx.fail(status::shape_mismatch, "B must be [M] = [{}] (one int32 bias per output channel), got {}", M, bs);
    }
    return status::ok;
}

/// The shared loop: out(index, m, acc) for each output element, acc the exact sum of
/// (x - x_zp) * (w - w_zp[m]) over the window, padding skipped (it holds x_zp). Output planes
/// (n, m) are split over the executor; out() writes only its own element.
template <class X, class W, class Out>
void accumulate(const geometry& g, const X* x, std::int64_t x_zp, const W* w, const W* w_zp, bool w_per_channel, Out out,
                const executor* ex) noexcept {
    const window_geometry& G = g.geo;
    const std::int64_t in_size = G.in_size(), out_size = G.out_size(), k_size = G.kernel_size();
    const std::int64_t M = g.out_channels, C = g.in_channels, per_group = M / g.group;
    parallel_for(ex, static_cast<std::size_t>(g.batch * M), [&](std::size_t begin, std::size_t end) {
        for (auto plane = static_cast<std::int64_t>(begin); plane < static_cast<std::int64_t>(end); ++plane) {
            const std::int64_t n = plane / M, m = plane % M, grp = m / per_group;
            const X* xg = x + (n * g.group + grp) * C * in_size;  // first channel of m's group
            const W* wm = w + m * C * k_size;
            const std::int64_t wz = w_zp ? static_cast<std::int64_t>(w_zp[w_per_channel ? m : 0]) : 0;
            for_each_window_output(G, [&](std::int64_t o0, std::int64_t o1, std::int64_t o2) {
                std::int64_t acc = 0;
                for (std::int64_t c = 0; c < C; ++c)
                    for_each_window_tap(G, o0, o1, o2, [&](auto i0, auto i1, auto i2, auto k0, auto k1, auto k2) {
                        const std::int64_t xv = xg[c * in_size + (i0 * G.in[1] + i1) * G.in[2] + i2];
                        const std::int64_t wv = wm[c * k_size + (k0 * G.kernel[1] + k1) * G.kernel[2] + k2];
                        acc += (xv - x_zp) * (wv - wz);
                    });
                out(plane * out_size + (o0 * G.out[1] + o1) * G.out[2] + o2, m, acc);
            });
        }
    });
}


// -- the fast path (kernels/gemm_u8s8.hpp): per image and group, the INT8 GEMM of the weights
// [M/group, C*kh*kw] (converted to int8 and packed once at compile) against the input's implicit
// im2col matrix. A depthwise convolution (one input and one output channel per group) runs on
// kernels/dwconv_u8.hpp instead, with the same int8 weights (as floats) and epilogue. It needs
// x, w, their zero points and (QLinearConv) every scale and the bias constant, a weight zero
// point of 0 (int8) or 128 (uint8: then w - 128 is int8 with zero point 0), and 1 or 2 spatial
// dimensions. int8 activations are read as uint8 (x ^ 0x80 = x + 128, zero point likewise),
// which leaves every difference x - x_zp as it is.

struct fast_args {
    const simd::kernel_table* table = nullptr;
    operand x, y, workspace;
    const std::int32_t* packed_w = nullptr;  // per group, packed_group_words apart
    std::int64_t packed_group_words = 0;
    // offset [M]: B[m] - x_zp * sum_k w[m, k]; scale [M]: x_scale * w_scale[m] / y_scale (8-bit
    // output), x_scale * w_scale[m] (float); the output's kind, zero point and clamps. c and
    // residual are set per run.
    kernels::qgemm_epilogue post;
    // float output (FusedQConv): the residual, and the activation applied after the GEMM
    // (`after`) when post's clamp cannot express it (none, Relu, Clip can)
    operand z;
    bool has_z = false;
    activation after = activation::none;
    activation_params after_params;
    std::int64_t batch = 0, group = 1, in_channels = 0, out_per_group = 0, out_size = 0, slots = 1;
    bool pointwise = false;
    std::uint8_t flip = 0;
    kernels::qconv_source src;  // x set per image and group
    bool depthwise = false;     // dwconv_u8, geometry and taps in dw (x and post set per run)
    kernels::dwconv_u8_problem dw;
};

/// The constant int64 value of a uint8 / int8 / int32 tensor's element i.
inline std::int64_t int_at(const tensor& t, std::int64_t i) noexcept {
    switch (t.type()) {
    case dtype::uint8: return t.data<std::uint8_t>()[i];
    case dtype::int8: return t.data<std::int8_t>()[i];
    case dtype::int32: return t.data<std::int32_t>()[i];
    default: return 0;
    }
}

/// The inputs the fast path reads at compile: x_zp, w_zp, bias and (8-bit output) the scales.
/// A null tensor is an absent optional input (zero point 0, no bias).
struct fast_constants {
    const tensor* x_zp = nullptr;
    const tensor* w = nullptr;
    const tensor* w_zp = nullptr;
    const tensor* bias = nullptr;
    const tensor* x_scale = nullptr;  // null: int32 output (ConvInteger)
    const tensor* w_scale = nullptr;
    const tensor* y_scale = nullptr;
    const tensor* y_zp = nullptr;
};

/// QLinearConv's and FusedQConv's constants: x_scale (1), x_zero_point (2), w (3), w_scale (4),
/// w_zero_point (5) and the bias (input b); `usable` when the fast path can bind with them.
inline fast_constants quantized_constants(const bind_context& ctx, std::size_t b, bool& usable) {
    fast_constants c;
    c.x_scale = ctx.input_constant(1);
    c.x_zp = ctx.input_constant(2);
    c.w = ctx.input_constant(3);
    c.w_scale = ctx.input_constant(4);
    c.w_zp = ctx.input_constant(5);
    c.bias = ctx.input_constant(b);
    usable = c.x_zp && c.w_zp && (!ctx.has_input(b) || c.bias);
    return c;
}

/// Where QLinearConv's and FusedQConv's shared operands live (the reference path): x, x_scale,
/// x_zero_point, w, w_scale, w_zero_point (inputs 0 to 5) and the optional bias (input b).
template <class Args>
void bind_quantized_operands(const bind_context& ctx, std::size_t b, Args& g) {
    g.x = ctx.input(0);
    g.x_scale = ctx.input(1);
    g.x_zp = ctx.input(2);
    g.w = ctx.input(3);
    g.w_scale = ctx.input(4);
    g.w_zp = ctx.input(5);
    g.has_b = ctx.has_input(b);
    if (g.has_b) g.b = ctx.input(b);
}

/// Whether a convolution of geometry g runs on the INT8 depthwise kernel: one input and one
/// output channel per group, 1 or 2 spatial dimensions, a window its padded path takes; d: that
/// kernel's geometry.
inline bool depthwise_u8(const geometry& g, kernels::dwconv_f32_problem& d) noexcept {
    if (g.geo.rank == 0 || g.geo.rank > 2 || g.in_channels != 1 || g.out_channels != g.group) return false;
    d = plane_geometry(g.geo, g.batch * g.group, g.group);
    return kernels::dwconv_u8_workspace_floats(d) > 0;
}

inline std::size_t fast_workspace(const geometry& g, const infer_context& ctx) noexcept {
    const kernel_context* k = ctx.kernels();
    if (!k || g.geo.rank == 0 || g.geo.rank > 2) return 0;
    std::int64_t bytes = 0;
    if (k->table->gemm_u8s8) bytes = k->table->u8s8_workspace_bytes(g.in_channels * g.geo.kernel[1] * g.geo.kernel[2]);
    kernels::dwconv_f32_problem d;
    if (depthwise_u8(g, d)) bytes = std::max<std::int64_t>(bytes, kernels::dwconv_u8_workspace_floats(d) * 4);  // bind may take either
    return static_cast<std::size_t>(bytes * static_cast<std::int64_t>(k->slots));
}

inline void fast_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& f = *static_cast<const fast_args*>(p);
    const auto* x = ctx.at<const std::uint8_t>(f.x);
    std::byte* y = ctx.at<std::byte>(f.y);
    const std::int64_t in_size = f.src.in_h * f.src.in_w, M = f.out_per_group * f.group;
    const bool wide = f.post.out == kernels::qgemm_epilogue::output::int32 || f.post.out == kernels::qgemm_epilogue::output::float32;
    const std::size_t y_bytes = wide ? 4 : 1;
    const float* z = f.has_z ? ctx.at<const float>(f.z) : nullptr;
    if (f.depthwise) {
        kernels::dwconv_u8_problem d = f.dw;
        d.x = x;
        d.post.c = y;
        d.post.residual = z;
        f.table->dwconv_u8(d, ctx.at<float>(f.workspace), f.slots, ctx.exec);
    } else {
        for (std::int64_t n = 0; n < f.batch; ++n)
            for (std::int64_t grp = 0; grp < f.group; ++grp) {
                kernels::qconv_source src = f.src;
                src.x = x + (n * f.group + grp) * f.in_channels * in_size;
                kernels::gemm_u8s8_problem pr;
                pr.m = f.out_per_group;
                pr.n = f.out_size;
                pr.k = f.in_channels * f.src.kh * f.src.kw;
                pr.packed_w = f.packed_w + grp * f.packed_group_words;
                pr.x_flip = f.flip;
                if (f.pointwise) {
                    pr.x = src.x;
                    pr.x_rs = in_size;
                } else {
                    pr.conv = &src;
                }
                const std::int64_t first_row = n * M + grp * f.out_per_group;
                pr.post = f.post;
                pr.post.offset += grp * f.out_per_group;
                if (pr.post.scale) pr.post.scale += grp * f.out_per_group;
                pr.post.c = y + static_cast<std::size_t>(first_row * f.out_size) * y_bytes;
                pr.post.rs = f.out_size;
                pr.post.residual = z ? z + first_row * f.out_size : nullptr;
                f.table->gemm_u8s8(pr, ctx.at<std::byte>(f.workspace), f.slots, ctx.exec);
            }
    }
    if (f.after != activation::none)  // the residual is in already
        apply_epilogue(f.after, f.after_params, reinterpret_cast<float*>(y), static_cast<std::size_t>(f.batch * M),
                       static_cast<std::size_t>(f.out_size), nullptr, nullptr, ctx.exec);
}

/// FusedQLinearConv's activation, in the quantized domain: QuantizeLinear is monotone, so the
/// quantized act(y) is the quantized y clamped. Relu: below at y_zp (read with y_zp at run time on
/// the reference path). Clip(min, max): between the quantized min and max, `lo` and `hi` (made
/// at bind from the constant y_scale and y_zp, quantized as QuantizeLinear does).
struct quantized_clamp {
    bool relu = false, clip = false;
    std::int32_t lo = 0, hi = 0;  // clip
};

/// The float output's epilogue (FusedQConv): its residual (input z_input, if present) and
/// activation.
struct float_epilogue {
    std::size_t z_input = 0;
    activation act = activation::none;
    activation_params params;
};

/// Binds the fast path when it applies (`bound`); x (input 0), y (output 0) and the constants as
/// described above. y_type: int32, uint8, int8 or float32 (then `post` is the epilogue, y_scale
/// and y_zp unused); act: the 8-bit output's clamp.
inline status bind_fast(const geometry& g, bind_context& ctx, const fast_constants& c, dtype x_type, dtype y_type, const quantized_clamp& act, bool& bound,
                        const float_epilogue* post = nullptr) {
    bound = false;
    const kernel_context* k = ctx.kernels();
    kernels::dwconv_f32_problem dw;
    const bool depthwise = k && depthwise_u8(g, dw);
    if (!k || (!k->table->gemm_u8s8 && !depthwise) || g.geo.rank == 0 || g.geo.rank > 2 || !c.w) return status::ok;
    const bool to_float = y_type == dtype::float32;
    const bool eight_bit = y_type != dtype::int32 && !to_float;
    if (eight_bit && (!c.x_scale || !c.w_scale || !c.y_scale || !c.y_zp)) return status::ok;
    if (to_float && (!c.x_scale || !c.w_scale || !post)) return status::ok;
    const std::int64_t M = g.out_channels, Mg = M / g.group, K = g.in_channels * g.geo.kernel[1] * g.geo.kernel[2];
    const bool w_unsigned = c.w->type() == dtype::uint8;
    const std::int64_t w_shift = w_unsigned ? 128 : 0;
    if (c.w_zp)
        for (std::int64_t m = 0; m < static_cast<std::int64_t>(c.w_zp->size()); ++m)
            if (int_at(*c.w_zp, m) != w_shift) return status::ok;  // a weight zero point the kernel does not take
    if (!c.w_zp && w_unsigned) return status::ok;                  // uint8 weights with zero point 0
    const bool x_signed = x_type == dtype::int8;
    const std::int64_t x_zp = (c.x_zp ? int_at(*c.x_zp, 0) : 0) + (x_signed ? 128 : 0);

    fast_args f;
    f.table = k->table;
    f.x = ctx.input(0);
    f.y = ctx.output(0);
    f.workspace = ctx.workspace();
    f.batch = g.batch;
    f.group = g.group;
    f.in_channels = g.in_channels;
    f.out_per_group = Mg;
    const window_geometry& G = g.geo;
    f.out_size = G.out[1] * G.out[2];
    f.slots = static_cast<std::int64_t>(k->slots);
    f.flip = x_signed ? 0x80 : 0;
    f.pointwise = set_conv_window(G, f.src);
    f.src.pad_value = static_cast<std::uint8_t>(x_zp);
    kernels::qgemm_epilogue& out = f.post;
    if (y_type == dtype::int32) {
        out.out = kernels::qgemm_epilogue::output::int32;
    } else if (to_float) {
        out.out = kernels::qgemm_epilogue::output::float32;
        f.has_z = ctx.has_input(post->z_input);
        if (f.has_z) f.z = ctx.input(post->z_input);
        if (post->act == activation::relu) {
            out.flo = 0.0f;
        } else if (post->act == activation::clip && !(post->params.alpha > post->params.beta)) {
            out.flo = post->params.alpha;
            out.fhi = post->params.beta;
        } else if (post->act != activation::none) {
            f.after = post->act;
            f.after_params = post->params;
        }
    } else {
        const bool y_signed = y_type == dtype::int8;
        out.out = y_signed ? kernels::qgemm_epilogue::output::int8 : kernels::qgemm_epilogue::output::uint8;
        out.zero_point = static_cast<std::int32_t>(int_at(*c.y_zp, 0));
        out.lo = act.relu ? out.zero_point : (y_signed ? -128 : 0);
        out.hi = y_signed ? 127 : 255;
        if (act.clip) {
            out.lo = std::max(out.lo, act.lo);
            out.hi = std::min(out.hi, act.hi);
            if (out.lo > out.hi) out.lo = out.hi;  // Clip with min > max gives max
        }
    }

    // the weights as int8, the offsets and the scales
    float* consts = ctx.packed_buffer(static_cast<std::size_t>(2 * M));
    aligned_buffer converted;
    if (!consts) return status::out_of_memory;
    if (!converted.allocate(static_cast<std::size_t>(M * K), k->alloc, false))
        return ctx.fail(status::out_of_memory, "allocator returned null for {} bytes of int8 weights", M * K);
    auto* w8 = reinterpret_cast<std::int8_t*>(converted.data());
    auto* offset = reinterpret_cast<std::int32_t*>(consts);
    float* scale = consts + M;
    for (std::int64_t m = 0; m < M; ++m) {
        std::int64_t sum = c.bias ? int_at(*c.bias, m) : 0;
        for (std::int64_t p = 0; p < K; ++p) {
            const auto v = static_cast<std::int8_t>(int_at(*c.w, m * K + p) - w_shift);
            w8[m * K + p] = v;
            sum -= x_zp * v;
        }
        if (sum < INT32_MIN || sum > INT32_MAX) return status::ok;  // beyond int32: the reference's exact sums take it
        offset[m] = static_cast<std::int32_t>(sum);
        if (eight_bit || to_float) {
            const float ws = c.w_scale->data<float>()[c.w_scale->size() == 1 ? 0 : m];
            // as the references compute their multipliers
            scale[m] = to_float ? c.x_scale->data<float>()[0] * ws : c.x_scale->data<float>()[0] * ws / c.y_scale->data<float>()[0];
        }
    }
    out.offset = offset;
    out.scale = eight_bit || to_float ? scale : nullptr;
    if (depthwise) {
        float* taps = ctx.packed_buffer(static_cast<std::size_t>(M * K));
        if (!taps) return status::out_of_memory;
        bool exact = true;  // every partial sum from the offset on is an integer below 2^24
        for (std::int64_t m = 0; m < M; ++m) {
            std::int64_t reach = offset[m] < 0 ? -static_cast<std::int64_t>(offset[m]) : offset[m];
            for (std::int64_t i = m * K; i < (m + 1) * K; ++i) {
                taps[i] = w8[i];
                reach += 255 * (w8[i] < 0 ? -w8[i] : w8[i]);
            }
            exact = exact && reach < (std::int64_t(1) << 24);
        }
        f.dw.offset_in_sums = exact;
        f.depthwise = true;
        f.dw.geo = dw;
        f.dw.geo.w = taps;
        f.dw.flip = f.flip;
        f.dw.x_zero_point = static_cast<std::uint8_t>(x_zp);
        f.dw.post = out;
        f.dw.post.rs = f.out_size;
    } else {
        const std::int64_t group_bytes = k->table->packed_u8s8_weight_bytes(Mg, K);
        f.packed_group_words = group_bytes / 4;
        float* packed = ctx.packed_buffer(static_cast<std::size_t>(f.packed_group_words * g.group));
        if (!packed) return status::out_of_memory;
        for (std::int64_t grp = 0; grp < g.group; ++grp)
            k->table->pack_u8s8_weights(w8 + grp * Mg * K, K, Mg, K, reinterpret_cast<std::int32_t*>(packed) + grp * f.packed_group_words);
        f.packed_w = reinterpret_cast<const std::int32_t*>(packed);
    }
    ctx.emit(&fast_kernel, f);
    bound = true;
    return status::ok;
}

} // namespace qconv_detail

#define EMBER_QCONV_ATTRIBUTES                                                                                                             \
    std::make_tuple(attr("auto_pad", &attributes::auto_pad), attr("dilations", &attributes::dilations), attr("group", &attributes::group), \
                    attr("kernel_shape", &attributes::kernel_shape), attr("pads", &attributes::pads), attr("strides", &attributes::strides))

// ---------------------------------------------------------------------------------------------

struct conv_integer {
    static constexpr std::string_view onnx_name = "ConvInteger";
    static constexpr op_flags flags = op_flags::none;

    using attributes = qconv_detail::attributes;
    static constexpr auto onnx_attributes = EMBER_QCONV_ATTRIBUTES;

    struct args {
        qconv_detail::geometry geo;
        operand x, w, x_zp, w_zp, y;
        bool has_x_zp = false, has_w_zp = false, w_per_channel = false;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (ctx.opset() < 10) return ctx.fail(status::unsupported_op, "ConvInteger exists from opset 10 on; the model's opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(2, 4); s != status::ok) return s;
        if (status s = qconv_detail::plan(a, ctx, 0, 1, g.geo); s != status::ok) return s;
        for (std::size_t i = 2; i < 4; ++i)
            if (ctx.has_input(i) && ctx.input_type(i) != ctx.input_type(i - 2))
                return ctx.fail(status::invalid_model, "{} has dtype {}, expected {} like {}", i == 2 ? "x_zero_point" : "w_zero_point",
                                ctx.input_type(i), ctx.input_type(i - 2), i == 2 ? "x" : "w");
        if (status s = qconv_detail::expect_single(ctx, 2, "x_zero_point"); s != status::ok) return s;
        return qconv_detail::expect_per_channel(ctx, 3, "w_zero_point", g.geo.out_channels, g.w_per_channel);
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, dtype::int32, window_output_shape(ctx.input_shape(0), g.geo.out_channels, g.geo.geo));
        return status::ok;
    }

    // The definition: exact integer sums converted to int32. x_zp / w_zp may be null (0).
    template <class X, class W>
    static void reference(const args& g, const X* x, const W* w, const X* x_zp, const W* w_zp, std::int32_t* y, const executor* ex) noexcept {
        qconv_detail::accumulate(
            g.geo, x, x_zp ? static_cast<std::int64_t>(*x_zp) : 0, w, w_zp, g.w_per_channel,
            [&](std::int64_t i, std::int64_t, std::int64_t acc) { y[i] = static_cast<std::int32_t>(acc); }, ex);
    }

    template <class X, class W>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<X, W>(g, ctx.at<const X>(g.x), ctx.at<const W>(g.w), g.has_x_zp ? ctx.at<const X>(g.x_zp) : nullptr,
                        g.has_w_zp ? ctx.at<const W>(g.w_zp) : nullptr, ctx.at<std::int32_t>(g.y), ctx.exec);
    }

    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        args g;
        if (plan(a, const_cast<infer_context&>(ctx), g) != status::ok) return 0;
        return qconv_detail::fast_workspace(g.geo, ctx);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        qconv_detail::fast_constants c;
        c.w = ctx.input_constant(1);
        c.x_zp = ctx.input_constant(2);
        c.w_zp = ctx.input_constant(3);
        if ((!ctx.has_input(2) || c.x_zp) && (!ctx.has_input(3) || c.w_zp)) {
            bool bound = false;
            if (status s = qconv_detail::bind_fast(g.geo, ctx, c, ctx.input_type(0), dtype::int32, {}, bound); s != status::ok || bound) return s;
        }
        g.x = ctx.input(0);
        g.w = ctx.input(1);
        g.has_x_zp = ctx.has_input(2);
        g.has_w_zp = ctx.has_input(3);
        if (g.has_x_zp) g.x_zp = ctx.input(2);
        if (g.has_w_zp) g.w_zp = ctx.input(3);
        g.y = ctx.output(0);
        const dtype tw = ctx.input_type(1);
        ctx.emit(quant_detail::pick_u8_i8(ctx.input_type(0),
                                          [&](auto xt) {
                                              return quant_detail::pick_u8_i8(tw, [&](auto wt) -> kernel_fn {
                                                  return &kernel<decltype(xt), decltype(wt)>;
                                              });
                                          }),
                 g);
        return status::ok;
    }
};

// ---------------------------------------------------------------------------------------------

struct qlinear_conv {
    static constexpr std::string_view onnx_name = "QLinearConv";
    static constexpr op_flags flags = op_flags::none;

    using attributes = qconv_detail::attributes;
    static constexpr auto onnx_attributes = EMBER_QCONV_ATTRIBUTES;

    struct args {
        qconv_detail::geometry geo;
        operand x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, b, y;
        bool has_b = false, w_scale_per_channel = false, w_zp_per_channel = false;
        qconv_detail::quantized_clamp act;  // FusedQLinearConv's activation
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (ctx.opset() < 10) return ctx.fail(status::unsupported_op, "QLinearConv exists from opset 10 on; the model's opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(8, 9); s != status::ok) return s;
        if (status s = qconv_detail::plan_quantized(a, ctx, 8, g.geo, g.w_scale_per_channel, g.w_zp_per_channel); s != status::ok) return s;
        if (status s = ctx.expect_type(6, {dtype::float32}); s != status::ok) return s;
        if (status s = ctx.expect_type(7, {dtype::uint8, dtype::int8}); s != status::ok) return s;
        if (status s = qconv_detail::expect_single(ctx, 6, "y_scale"); s != status::ok) return s;
        return qconv_detail::expect_single(ctx, 7, "y_zero_point");
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(7), window_output_shape(ctx.input_shape(0), g.geo.out_channels, g.geo.geo));
        return status::ok;
    }

    // The definition: the exact integer sum plus the bias, scaled by x_scale * w_scale[m] /
    // y_scale (float), rounded half to even, shifted by y_zp, clamped (with the quantized Relu or
    // Clip of FusedQLinearConv). b may be null.
    template <class X, class W, class Y>
    static void reference(const args& g, const X* x, float x_scale, X x_zp, const W* w, const float* w_scale, const W* w_zp, float y_scale,
                          Y y_zp, const std::int32_t* b, Y* y, const executor* ex) noexcept {
        qconv_detail::accumulate(
            g.geo, x, static_cast<std::int64_t>(x_zp), w, w_zp, g.w_zp_per_channel,
            [&](std::int64_t i, std::int64_t m, std::int64_t acc) {
                const float multiplier = x_scale * w_scale[g.w_scale_per_channel ? m : 0] / y_scale;
                const double real = static_cast<double>(acc + (b ? b[m] : 0)) * static_cast<double>(multiplier);
                const Y q = quant_detail::saturate<Y>(quant_detail::round_half_even(real) + static_cast<double>(y_zp), y_zp);
                std::int32_t v = q;
                if (g.act.relu && v < y_zp) v = y_zp;
                if (g.act.clip) v = std::min(std::max(v, g.act.lo), g.act.hi);
                y[i] = static_cast<Y>(v);
            },
            ex);
    }

    template <class X, class W, class Y>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<X, W, Y>(g, ctx.at<const X>(g.x), *ctx.at<const float>(g.x_scale), *ctx.at<const X>(g.x_zp), ctx.at<const W>(g.w),
                           ctx.at<const float>(g.w_scale), ctx.at<const W>(g.w_zp), *ctx.at<const float>(g.y_scale), *ctx.at<const Y>(g.y_zp),
                           g.has_b ? ctx.at<const std::int32_t>(g.b) : nullptr, ctx.at<Y>(g.y), ctx.exec);
    }

    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        args g;
        if (plan(a, const_cast<infer_context&>(ctx), g) != status::ok) return 0;
        return qconv_detail::fast_workspace(g.geo, ctx);
    }

    static status bind(const attributes& a, bind_context& ctx) { return bind_with(a, ctx, {}); }

    static status bind_with(const attributes& a, bind_context& ctx, const qconv_detail::quantized_clamp& act) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.act = act;
        bool usable = false;
        qconv_detail::fast_constants c = qconv_detail::quantized_constants(ctx, 8, usable);
        c.y_scale = ctx.input_constant(6);
        c.y_zp = ctx.input_constant(7);
        if (usable) {
            bool bound = false;
            if (status s = qconv_detail::bind_fast(g.geo, ctx, c, ctx.input_type(0), ctx.input_type(7), act, bound); s != status::ok || bound)
                return s;
        }
        qconv_detail::bind_quantized_operands(ctx, 8, g);
        g.y_scale = ctx.input(6);
        g.y_zp = ctx.input(7);
        g.y = ctx.output(0);
        const dtype tw = ctx.input_type(3), ty = ctx.input_type(7);
        ctx.emit(quant_detail::pick_u8_i8(ctx.input_type(0),
                                          [&](auto xt) {
                                              return quant_detail::pick_u8_i8(tw, [&](auto wt) {
                                                  return quant_detail::pick_u8_i8(ty, [&](auto yt) -> kernel_fn {
                                                      return &kernel<decltype(xt), decltype(wt), decltype(yt)>;
                                                  });
                                              });
                                          }),
                 g);
        return status::ok;
    }
};

#undef EMBER_QCONV_ATTRIBUTES

} // namespace ops
EMBER_NAMESPACE_END
