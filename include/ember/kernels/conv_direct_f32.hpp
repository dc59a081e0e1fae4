// SPDX-License-Identifier: Apache-2.0
// Direct convolution over xsimd: the GEMM of the packed weights [M, C*kh*kw] against the im2col
// matrix, with the im2col never packed. The input is copied once into padded phase planes (the
// depthwise kernel's layout: kernels/dwconv_f32.hpp, one set of stride_h x stride_w phase planes
// per input channel), where tap (c, r, q) of output (oh, ow) is element oh * wq + ow + offset(c,
// r, q) of one flat array. So column j of the im2col, taken over the flattened "wide" output index
// j = oh * wq + ow (wq = out_w plus the window's reach: each row has wq - out_w extra columns),
// is a contiguous vector load at j + offset(row) for every row of the im2col: the micro-kernel
// loads its B vectors straight from the phase planes, and sums the whole depth in registers.
//
// Why: the packed GEMM's im2col packing costs about as much as the multiplications when the
// output channels are few (each packed float feeds 2 * M flops): a 3-channel stem (ResNet's 7x7
// stride 2, MobileNet's and SqueezeNet's 3x3 stride 2) spent most of its time packing. Here the
// input is copied once (C * in_h * in_w floats, not C * kh * kw * out_h * out_w), and the copy
// is the depthwise kernel's vectorised fill.
//
// The extra columns of the wide index are computed and dropped at the store: a vector whose lanes
// all land in one output row (most of them on wide planes) is one store at its dense position; one
// that spans a row end, or several rows of a narrow plane, has its valid lanes, which are
// consecutive in the dense output, compressed into one run (vcompressps on AVX-512, a scalar copy
// elsewhere). Where each vector's lanes land is worked out once per call (lane_map).
//
// Work: units of one MR-row panel of the weights by one NR-column tile of the wide index, taken
// panel by panel (the panel's weights stay in cache across its tiles), split into fixed even
// shares of units, one per slot. Every output is the sum over the whole depth in one order, in
// one unit, so the bits do not depend on the slot count.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/activation.hpp"
#include "ember/kernels/dwconv_f32.hpp"
#include "ember/kernels/gemm_f32.hpp"
#include "ember/kernels/unroll.hpp"
#include "ember/runtime/executor.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

EMBER_NAMESPACE_BEGIN
namespace kernels {

/// One image's convolution, one group.
struct conv_direct_f32_problem {
    const float* x = nullptr;         // [channels, in_h, in_w]
    const float* packed_w = nullptr;  // pack_conv_direct_weights of the [out_channels, channels * kh * kw] weights
    float* y = nullptr;               // [out_channels, out_h, out_w]
    gemm_epilogue post;               // bias per output channel (bias_per_row), residual laid out like y
    std::int64_t channels = 0, out_channels = 0;
    dwconv_f32_problem window;  // one channel's geometry: sizes, kernel, stride, padding, dilation (its pointers unused)
};

namespace conv_direct_detail {

// Where things are in the workspace (floats), shared by the slots: the tap offsets (one int32 per
// row of the im2col), the lane map (a mask and a dense position per vector of the wide index),
// then each input channel's phase planes.
struct layout {
    dwconv_detail::padded_layout planes;  // one channel's phase planes
    std::int64_t channel_floats = 0, depth = 0, columns = 0, tiles = 0, vectors = 0;
    std::int64_t offsets_at = 0, lanes_at = 0, input_at = 0, floats = 0;  // floats 0: the kernel does not apply
};

template <class Arch>
layout layout_for(const conv_direct_f32_problem& p) noexcept {
    constexpr std::int64_t W = static_cast<std::int64_t>(xsimd::batch<float, Arch>::size), NR = gemm_blocking<Arch>::nr;
    static_assert(NR <= dwconv_detail::padded_slack, "a tile's last loads stay inside a phase plane's slack");
    layout l;
    l.planes = dwconv_detail::layout_of(p.window);
    if (l.planes.slot_floats == 0 || p.channels < 1 || p.out_channels < 1) return l;
    const auto round16 = [](std::int64_t n) { return (n + 15) / 16 * 16; };
    l.channel_floats = l.planes.phases * l.planes.phase_floats;
    l.depth = p.channels * p.window.kh * p.window.kw;
    l.columns = (p.window.out_h - 1) * l.planes.wq + p.window.out_w;
    l.tiles = (l.columns + NR - 1) / NR;
    l.vectors = l.tiles * (NR / W);
    l.offsets_at = 0;
    l.lanes_at = round16(l.depth);
    l.input_at = l.lanes_at + round16(2 * l.vectors);
    // the offsets are int32
    if (p.channels * l.channel_floats >= (std::int64_t{1} << 31)) return l;
    l.floats = l.input_at + p.channels * l.channel_floats;
    return l;
}

/// How many bits of m are set.
constexpr std::uint32_t bits_set(std::uint32_t m) noexcept {
    m = m - ((m >> 1) & 0x55555555u);
    m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
    return (((m + (m >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

/// The lanes of v, those set in mask, loaded from consecutive floats at src (the others zero).
template <class Arch>
EMBER_DETAIL_INLINE inline xsimd::batch<float, Arch> expand_floats(const float* src, std::uint32_t mask) noexcept {
    using B = xsimd::batch<float, Arch>;
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) {
        return _mm512_maskz_expandloadu_ps(static_cast<__mmask16>(mask), src);
    } else
#endif
    {
        alignas(64) float lanes[B::size];
        for (std::size_t l = 0; l < B::size; ++l) lanes[l] = mask >> l & 1u ? *src++ : 0.0f;
        return B::load_aligned(lanes);
    }
}

/// The lanes of v set in mask, stored to consecutive floats at dst.
template <class Arch>
EMBER_DETAIL_INLINE inline void compress_floats(const xsimd::batch<float, Arch>& v, std::uint32_t mask, float* dst) noexcept {
    using B = xsimd::batch<float, Arch>;
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) {
        // the register form and a masked store of the run: the memory form of vcompressps is
        // microcoded on Intel
        const std::uint32_t run = bits_set(mask);
        _mm512_mask_storeu_ps(dst, static_cast<__mmask16>((1u << run) - 1u), _mm512_maskz_compress_ps(static_cast<__mmask16>(mask), v));
    } else
#endif
    {
        alignas(64) float lanes[B::size];
        v.store_aligned(lanes);
        for (std::size_t l = 0; l < B::size; ++l)
            if (mask >> l & 1u) *dst++ = lanes[l];
    }
}

// The lane map of vectors [v0, v1): for the vector at wide index j = v * W, the mask of its lanes
// that are outputs (column < out_w, index < columns) and the dense position of its first one.
template <class Arch>
void map_lanes(const conv_direct_f32_problem& p, const layout& l, std::int64_t v0, std::int64_t v1, std::int32_t* lanes) noexcept {
    constexpr std::int64_t W = static_cast<std::int64_t>(xsimd::batch<float, Arch>::size);
    const std::int64_t wq = l.planes.wq, out_w = p.window.out_w;
    for (std::int64_t v = v0; v < v1; ++v) {
        std::int64_t j = v * W, row = j / wq, col = j % wq;
        std::uint32_t mask = 0;
        std::int64_t first = 0;
        for (std::int64_t lane = 0; lane < W; ++lane, ++j) {
            if (j < l.columns && col < out_w) {
                if (mask == 0) first = row * out_w + col;
                mask |= 1u << lane;
            }
            if (++col == wq) {
                col = 0;
                ++row;
            }
        }
        lanes[2 * v] = static_cast<std::int32_t>(mask);
        lanes[2 * v + 1] = static_cast<std::int32_t>(first);
    }
}

// Channels [c0, c1) into their phase planes, and the tap offsets of their im2col rows.
template <class Arch>
void fill_channels(const conv_direct_f32_problem& p, const layout& l, std::int64_t c0, std::int64_t c1, float* ws) noexcept {
    const dwconv_f32_problem& g = p.window;
    const std::int64_t taps = g.kh * g.kw, plane = g.in_h * g.in_w;
    auto* offsets = reinterpret_cast<std::int32_t*>(ws + l.offsets_at);
    for (std::int64_t c = c0; c < c1; ++c) {
        float* phases = ws + l.input_at + c * l.channel_floats;
        const float* x = p.x + c * plane;
        // every channel has planes of its own: each writes its padding (first = true)
        for (std::int64_t a = 0; a < g.stride_h; ++a) {
            float* row_phase = phases + a * g.stride_w * l.planes.phase_floats;
            if (g.stride_w == 2)
                dwconv_detail::fill_phase_pair<Arch>(g, l.planes, x, a, 0.0f, true, row_phase, row_phase + l.planes.phase_floats);
            else
                for (std::int64_t b = 0; b < g.stride_w; ++b)
                    dwconv_detail::fill_phase<Arch>(g, l.planes, x, a, b, 0.0f, true, row_phase + b * l.planes.phase_floats);
        }
        for (std::int64_t t = 0; t < taps; ++t)
            offsets[c * taps + t] = static_cast<std::int32_t>(l.input_at + c * l.channel_floats + l.planes.tap_offset[t]);
    }
}

// One unit: rows [row0, row0 + MR) of the output (packed panel a) by the NR wide columns from j0.
template <class Arch, int MR, int NV, class Act>
void tile(const conv_direct_f32_problem& p, const layout& l, const float* EMBER_RESTRICT a, const float* ws, std::int64_t row0, std::int64_t j0,
          const Act& act) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr int W = static_cast<int>(B::size);
    const std::int32_t* EMBER_RESTRICT offsets = reinterpret_cast<const std::int32_t*>(ws + l.offsets_at);
    const float* x = ws + j0;
    B acc[MR][NV];
    static_for<MR>([&](auto i) EMBER_DETAIL_INLINE { static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] = B(0.0f); }); });
    for (std::int64_t k = 0; k < l.depth; ++k) {
        const float* b = x + offsets[k];
        B bv[NV];
        static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { bv[v] = B::load_unaligned(b + v * W); });
        static_for<MR>([&](auto i) EMBER_DETAIL_INLINE {
            const B ai(a[k * MR + i]);
            static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] = gemm_detail::madd(ai, bv[v], acc[i][v]); });
        });
    }
    const std::int32_t* lanes = reinterpret_cast<const std::int32_t*>(ws + l.lanes_at) + 2 * (j0 / W);
    const std::int64_t plane = p.window.out_h * p.window.out_w;
    constexpr std::uint32_t all = W == 32 ? ~0u : (1u << W) - 1u;
    static_for<MR>([&](auto i) EMBER_DETAIL_INLINE {
        const std::int64_t row = row0 + static_cast<std::int64_t>(i);
        float* y = p.y + row * plane;
        const float* res = p.post.residual ? p.post.residual + row * plane : nullptr;
        const B bias(p.post.bias ? p.post.bias[row] : 0.0f);
        static_for<NV>([&](auto v) EMBER_DETAIL_INLINE {
            const std::uint32_t mask = static_cast<std::uint32_t>(lanes[2 * v]);
            const std::int64_t at = lanes[2 * v + 1];
            B r = acc[i][v] + bias;
            if (mask == all) {
                if (res) r += B::load_unaligned(res + at);
                act(r).store_unaligned(y + at);
            } else if (mask != 0) {
                if (res) r += expand_floats<Arch>(res + at, mask);
                compress_floats<Arch>(act(r), mask, y + at);
            }
        });
    });
}

template <class Arch, int NV, class Act, int... M>
void tile_any(int mr, const conv_direct_f32_problem& p, const layout& l, const float* a, const float* ws, std::int64_t row0, std::int64_t j0,
              const Act& act, std::integer_sequence<int, M...>) noexcept {
    (void)((mr == M + 1 ? (tile<Arch, M + 1, NV>(p, l, a, ws, row0, j0, act), true) : false) || ...);
}

} // namespace conv_direct_detail

/// Floats of workspace the kernel needs for p (shared by the slots), or 0 where it does not apply
/// (kernels larger than 8x8, strides above 4, planes past the depthwise layout's bounds).
template <class Arch>
std::int64_t conv_direct_workspace_floats(const conv_direct_f32_problem& p) noexcept {
    return conv_direct_detail::layout_for<Arch>(p).floats;
}

/// Packs the weights [m, depth] (row-major) for conv_direct_f32: MR-row panels over the whole
/// depth, m * depth floats.
template <class Arch>
void pack_conv_direct_weights(const float* w, std::int64_t m, std::int64_t depth, float* dst) noexcept {
    gemm_detail::pack_a<Arch>(strided_matrix{w, depth, 1}, 0, m, 0, depth, dst);
}

/// One image's convolution on up to `slots` workers of ex; workspace: conv_direct_workspace_floats(p)
/// floats (non-zero) aligned to 16 bytes at least.
template <class Arch>
void conv_direct_f32(const conv_direct_f32_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept {
    using BL = gemm_blocking<Arch>;
    constexpr int MR = BL::mr, NR = BL::nr, NV = gemm_tile<Arch>::nv;
    const conv_direct_detail::layout l = conv_direct_detail::layout_for<Arch>(p);
    if (l.floats == 0) return;
    if (slots < 1) slots = 1;
    // the input's phase planes, the offsets and the lane map, split over the slots; then the units
    const std::int64_t fill_slots = slots < p.channels ? slots : p.channels;
    for_each_slot(ex, fill_slots, [&](std::int64_t s) noexcept {
        conv_direct_detail::fill_channels<Arch>(p, l, p.channels * s / fill_slots, p.channels * (s + 1) / fill_slots, workspace);
        conv_direct_detail::map_lanes<Arch>(p, l, l.vectors * s / fill_slots, l.vectors * (s + 1) / fill_slots,
                                            reinterpret_cast<std::int32_t*>(workspace + l.lanes_at));
    });
    const std::int64_t panels = (p.out_channels + MR - 1) / MR, units = panels * l.tiles;
    const std::int64_t unit_slots = slots < units ? slots : units;
    visit_activation(p.post.act, [&](auto act) {
        for_each_slot(ex, unit_slots, [&](std::int64_t s) noexcept {
            for (std::int64_t u = units * s / unit_slots, end = units * (s + 1) / unit_slots; u < end; ++u) {
                const std::int64_t panel = u / l.tiles, j0 = u % l.tiles * NR, row0 = panel * MR;
                const int mr = p.out_channels - row0 < MR ? static_cast<int>(p.out_channels - row0) : MR;
                const float* a = p.packed_w + row0 * l.depth;
                if (mr == MR)
                    conv_direct_detail::tile<Arch, MR, NV>(p, l, a, workspace, row0, j0, act);
                else
                    conv_direct_detail::tile_any<Arch, NV>(mr, p, l, a, workspace, row0, j0, act, std::make_integer_sequence<int, MR - 1>{});
            }
        });
    });
}

} // namespace kernels
EMBER_NAMESPACE_END
