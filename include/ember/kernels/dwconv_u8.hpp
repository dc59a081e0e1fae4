// SPDX-License-Identifier: Apache-2.0
// INT8 depthwise convolution (one filter per channel, NCHW, uint8 input): the FP32 depthwise
// kernel's padded path (kernels/dwconv_f32.hpp) on the bytes, with the INT8 GEMM's epilogue
// (qgemm_row: 8-bit requantized, int32 or float output).
//
// Each plane's bytes are widened to floats as the phase planes are filled (x ^ flip, exact), the
// padding holds the zero point and the taps are the int8 weights as floats, so the same FMA loop
// sums exactly what the integer convolution sums: every product and partial sum is an integer
// below 64 taps * 255 * 128 < 2^24, which a float holds exactly whatever the order. The offset
// B[c] - x_zp * sum(w[c]) (as the GEMM path has it) is the sums' starting value where that keeps
// them below 2^24 too (offset_in_sums), else it is added to the sum read back as int32; the
// GEMM's epilogue (qgemm_row) then requantizes in registers and stores bytes. A MobileNet's depthwise layers (3x3, 9 taps per output)
// are too shallow for the INT8 GEMM (nothing to amortise its packing over); on this path they
// read and write bytes, a quarter of the FP32 kernel's traffic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/activation.hpp"
#include "ember/kernels/copy.hpp"
#include "ember/kernels/dwconv_f32.hpp"
#include "ember/kernels/gemm_u8s8.hpp"
#include "ember/runtime/executor.hpp"

EMBER_NAMESPACE_BEGIN
namespace kernels {

struct dwconv_u8_problem {
    // planes (batch * channels), channels and the window; geo.w: the taps as floats [channels, kh,
    // kw] (int8 weights minus their zero point); geo.x / y / bias / residual / act unused
    dwconv_f32_problem geo;
    const std::uint8_t* x = nullptr;  // [planes, in_h, in_w], each byte read XORed with flip
    std::uint8_t flip = 0;
    std::uint8_t x_zero_point = 0;  // the padding's value, after the flip
    // offset and scale per channel; row i of C (and of the residual) is plane i, rs = out_h * out_w
    qgemm_epilogue post;
    // the sums start at the offset, as floats: every |offset| + 255 * sum |w| is below 2^24, so
    // that they stay exact (the epilogue then skips the round trip through int32)
    bool offset_in_sums = false;
};

namespace dwconv_u8_detail {

// Fills phase plane (a, b) of the plane that starts `base` bytes into the input x (`total` bytes),
// as fill_phase does for floats: element (i, j) = x[a + i*sh - pad_h][b + j*sw - pad_w] ^ flip, or
// pad outside. The padding rows, each row's padding columns and the slack are written on the
// slot's first plane (`first`) only; after that a row is its run of values, W at a time (W bytes
// for stride 1, 2W for stride 2 whose even ones widen_evens keeps), the last vector writing past
// the run, and then a vector of padding from the run's end over what that vector wrote past it
// (into the slack, after the last row): the next rows are filled after, so nothing else is lost. No
// per-lane select: a row of 14 or 28 values is one or two vectors and the padding store. A vector whose
// bytes would end past x, and the rows of other strides, are filled lane by lane.
template <class Arch>
void fill_phase(const dwconv_f32_problem& p, const dwconv_detail::padded_layout& l, const std::uint8_t* x, std::int64_t base, std::int64_t total,
                std::uint8_t flip, std::int64_t a, std::int64_t b, float pad, bool first, float* dst) noexcept {
    using F = xsimd::batch<float, Arch>;
    using I = xsimd::batch<std::int32_t, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(F::size);
    const std::int64_t j0 = l.col_begin[b], end = l.col_end[b], sw = p.stride_w, wq = l.wq;
    const F pad_v(pad);
    const I f(flip);
    if (first)
        for (std::int64_t k = 0; k < l.phase_floats; k += W) pad_v.store_unaligned(dst + k);
    if (j0 == end) return;
    for (std::int64_t i = 0; i < l.hq; ++i) {
        const std::int64_t ih = a + i * p.stride_h - p.pad_h;
        if (ih < 0 || ih >= p.in_h) continue;
        float* run = dst + i * wq + j0;
        const std::int64_t n = end - j0, src = base + ih * p.in_w + b - p.pad_w + j0 * sw;  // x[src + j * sw]: the run's value j
        std::int64_t j = 0;
        if constexpr (byte_lanes<Arch>::available) {
            if (sw == 1)
                for (; j < n && src + j + W <= total; j += W) xsimd::to_float(byte_lanes<Arch>::widen(x + src + j, false) ^ f).store_unaligned(run + j);
            else if (sw == 2)
                for (; j < n && src + 2 * (j + W) <= total; j += W) xsimd::to_float(byte_lanes<Arch>::widen_evens(x + src + 2 * j) ^ f).store_unaligned(run + j);
        }
        for (; j < n; ++j) run[j] = static_cast<float>(x[src + j * sw] ^ flip);
        pad_v.store_unaligned(run + n);
    }
}

template <class Arch>
void plane(const dwconv_u8_problem& p, const dwconv_detail::padded_layout& l, std::int64_t index, float* ws, bool first) noexcept {
    using B = xsimd::batch<float, Arch>;
    using I = xsimd::batch<std::int32_t, Arch>;
    const dwconv_f32_problem& g = p.geo;
    const qgemm_epilogue& post = p.post;
    const std::int64_t c = index % g.channels, in_size = g.in_h * g.in_w;
    const float pad = static_cast<float>(p.x_zero_point);
    for (std::int64_t a = 0; a < g.stride_h; ++a)
        for (std::int64_t b = 0; b < g.stride_w; ++b)
            fill_phase<Arch>(g, l, p.x, index * in_size, g.planes * in_size, p.flip, a, b, pad, first, ws + (a * g.stride_w + b) * l.phase_floats);
    float* flat = dwconv_detail::flat_of(l, ws);
    const qgemm_row<Arch> r(post, c);
    const std::int64_t at = index * post.rs;
    const float init = p.offset_in_sums ? static_cast<float>(post.offset[c]) : 0.0f;
    // the exact sum with the offset in, as a float. The stores below capture what they use by
    // value: after a byte store through a captured reference (p's fields, say), every value read
    // through one would be reloaded (uint8_t may alias anything)
    const bool in_sums = p.offset_in_sums;
    const auto total = [r, in_sums](const B& v) EMBER_DETAIL_INLINE { return in_sums ? v : xsimd::to_float(xsimd::to_int(v) + r.offset); };
    switch (post.out) {
    case qgemm_epilogue::output::uint8:
    case qgemm_epilogue::output::int8: {
        auto* bytes = reinterpret_cast<std::uint8_t*>(flat);
        const auto store = [r, total, bytes](const B& v, std::int64_t o) EMBER_DETAIL_INLINE {
            const I q = r.narrow_sum(total(v));
            if constexpr (byte_lanes<Arch>::available) {
                byte_lanes<Arch>::store_low(q, bytes + o);
            } else {
                alignas(64) std::int32_t tile[I::size];
                q.store_aligned(tile);
                for (std::size_t t = 0; t < I::size; ++t) bytes[o + static_cast<std::int64_t>(t)] = static_cast<std::uint8_t>(tile[t]);
            }
        };
        dwconv_detail::sum_taps<Arch, false>(g, l, c, ws, init, store);
        auto* y = static_cast<std::uint8_t*>(post.c) + at;
        for (std::int64_t oh = 0; oh < g.out_h; ++oh) copy_bytes<Arch>(bytes + oh * l.wq, y + oh * g.out_w, g.out_w);
        return;
    }
    case qgemm_epilogue::output::int32: {
        auto* words = reinterpret_cast<std::int32_t*>(flat);
        const auto store = [r, in_sums, words](const B& v, std::int64_t o) EMBER_DETAIL_INLINE {
            const I sum = xsimd::to_int(v);  // exact; the offset added as int32 where it is not in already
            (in_sums ? sum : r.wide(sum)).store_unaligned(words + o);
        };
        dwconv_detail::sum_taps<Arch, false>(g, l, c, ws, init, store);
        auto* y = static_cast<std::int32_t*>(post.c) + at;
        for (std::int64_t oh = 0; oh < g.out_h; ++oh) std::memcpy(y + oh * g.out_w, words + oh * l.wq, static_cast<std::size_t>(g.out_w) * 4);
        return;
    }
    case qgemm_epilogue::output::float32: {
        const float* z = post.residual ? post.residual + at : nullptr;
        const auto store = [r, total, z, flat](const B& v, std::int64_t o) EMBER_DETAIL_INLINE {
            const B y = total(v) * r.scale;
            (z ? y : r.clamp(y)).store_unaligned(flat + o);
        };
        dwconv_detail::sum_taps<Arch, false>(g, l, c, ws, init, store);
        float* y = static_cast<float*>(post.c) + at;
        for (std::int64_t oh = 0; oh < g.out_h; ++oh) copy_floats<Arch>(flat + oh * l.wq, y + oh * g.out_w, g.out_w);
        if (z) residual_activation<Arch>(y, z, g.out_h * g.out_w, [&](const B& v) EMBER_DETAIL_INLINE { return r.clamp(v); });
        return;
    }
    }
}

} // namespace dwconv_u8_detail

/// Floats of workspace one slot needs (0: the geometry does not fit the padded path, and
/// dwconv_u8 must not be called; the INT8 GEMM takes the convolution).
inline std::int64_t dwconv_u8_workspace_floats(const dwconv_f32_problem& geo) noexcept { return dwconv_detail::layout_of(geo).slot_floats; }

/// INT8 depthwise convolution on up to `slots` workers of ex. workspace: slots *
/// dwconv_u8_workspace_floats(p.geo) floats, 64-byte aligned.
template <class Arch>
void dwconv_u8(const dwconv_u8_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept {
    const dwconv_detail::padded_layout l = dwconv_detail::layout_of(p.geo);
    const std::int64_t per_slot = l.slot_floats;
    if (slots > p.geo.planes) slots = p.geo.planes;
    if (slots < 1) slots = 1;
    auto run_slot = [&](std::int64_t s) noexcept {
        float* ws = workspace + s * per_slot;
        const std::int64_t begin = p.geo.planes * s / slots, end = p.geo.planes * (s + 1) / slots;
        for (std::int64_t i = begin; i < end; ++i) dwconv_u8_detail::plane<Arch>(p, l, i, ws, i == begin);
    };
    for_each_slot(ex, slots, run_slot);
}

} // namespace kernels
EMBER_NAMESPACE_END
