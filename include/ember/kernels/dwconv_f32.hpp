// SPDX-License-Identifier: Apache-2.0
// Depthwise convolution (one filter per channel, NCHW) over xsimd, with the conv epilogue
// act(y + bias + residual). Planes (image, channel) are split over the executor; each is summed in
// a fixed order, so the bits do not depend on the thread count. Max pooling has its own separable
// kernel (kernels/maxpool_f32.hpp), which falls back to this file's row path (Max = true); the
// padded path's Max branch is no longer called.
//
// The padded path (the one that runs whenever its workspace is given): each plane is first copied
// into a padded buffer (zeros, or -inf for max pooling) split into stride_h x stride_w phase
// planes, phase (a, b) holding the padded input's rows a, a + sh, ... and columns b, b + sw, ....
// Tap (r, q) of output (oh, ow) is then element (oh + r*dh/sh, ow + q*dw/sw) of phase
// (r*dh % sh, q*dw % sw), and with a phase row as wide as an output row plus the taps' reach
// (wq), the whole plane is one 1-D convolution over the flattened index oh * wq + ow: every
// output, borders, narrow 7x7 rows and strided windows included, is a full vector lane with
// contiguous loads. The wq - out_w extra columns per row are computed and dropped when the result
// is copied out. The masked path (below, in the padded path's workspace): stride 1 over small
// planes whose output rows are as wide as the input's, summed straight from the input with the
// border taps masked off; it replaces the padded path there, whose per-plane copies cost more
// than the sums. The row path (no workspace, or a plane too large for it): the columns whose
// whole window lies inside the input run as vectors, the few at the borders as scalars.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/activation.hpp"
#include "ember/kernels/copy.hpp"
#include "ember/kernels/unroll.hpp"
#include "ember/runtime/executor.hpp"

EMBER_NAMESPACE_BEGIN
namespace kernels {

struct dwconv_f32_problem {
    const float* x = nullptr;         // [planes, in_h, in_w]
    const float* w = nullptr;         // [channels, kh, kw]
    const float* bias = nullptr;      // [channels] or null
    const float* residual = nullptr;  // like y, or null
    float* y = nullptr;               // [planes, out_h, out_w]
    std::int64_t planes = 0, channels = 0;  // planes = batch * channels
    std::int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0, kh = 0, kw = 0;
    std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
    activation_spec act;
};

namespace dwconv_detail {

// One plane of a depthwise convolution (Max = false: sum of w * x, + bias) or of a max pool
// (Max = true: the largest x in the window; taps in the padding are skipped, and a window wholly
// in the padding gives -inf; no weights, bias or activation).
template <class Arch, bool Max, class Act>
void plane(const dwconv_f32_problem& p, std::int64_t index, const Act& act) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    const std::int64_t c = index % p.channels;
    const float* x = p.x + index * p.in_h * p.in_w;
    const float* w = Max ? nullptr : p.w + c * p.kh * p.kw;
    const float bias = p.bias ? p.bias[c] : 0.0f;
    const float init = Max ? -std::numeric_limits<float>::infinity() : 0.0f;
    float* y = p.y + index * p.out_h * p.out_w;
    const float* res = p.residual ? p.residual + index * p.out_h * p.out_w : nullptr;
    // interior columns: ow * sw - pw >= 0 and ow * sw - pw + (kw - 1) * dw < in_w
    std::int64_t lo = (p.pad_w + p.stride_w - 1) / p.stride_w;
    const std::int64_t last_tap = p.in_w - 1 - (p.kw - 1) * p.dil_w + p.pad_w;  // ow * sw <= last_tap
    std::int64_t hi = last_tap < 0 ? 0 : last_tap / p.stride_w + 1;
    if (hi > p.out_w) hi = p.out_w;
    if (lo > hi) lo = hi;
    alignas(64) float lanes[64];
    for (std::int64_t oh = 0; oh < p.out_h; ++oh) {
        float* yrow = y + oh * p.out_w;
        const std::int64_t ih0 = oh * p.stride_h - p.pad_h;
        // a border column: taps outside the input are skipped
        auto border_at = [&](std::int64_t ow) {
            float acc = init;
            const std::int64_t iw0 = ow * p.stride_w - p.pad_w;
            for (std::int64_t r = 0; r < p.kh; ++r) {
                const std::int64_t ih = ih0 + r * p.dil_h;
                if (ih < 0 || ih >= p.in_h) continue;
                for (std::int64_t q = 0; q < p.kw; ++q) {
                    const std::int64_t iw = iw0 + q * p.dil_w;
                    if (iw < 0 || iw >= p.in_w) continue;
                    const float v = x[ih * p.in_w + iw];
                    if constexpr (Max) acc = v > acc ? v : acc;
                    else acc += v * w[r * p.kw + q];
                }
            }
            yrow[ow] = acc + bias;
        };
        // W interior columns from ow on, as one vector
        auto vector_at = [&](std::int64_t ow) {
            B acc(init);
            for (std::int64_t r = 0; r < p.kh; ++r) {
                const std::int64_t ih = ih0 + r * p.dil_h;
                if (ih < 0 || ih >= p.in_h) continue;
                const float* xrow = x + ih * p.in_w + ow * p.stride_w - p.pad_w;
                for (std::int64_t q = 0; q < p.kw; ++q) {
                    B v;
                    if (p.stride_w == 1) {
                        v = B::load_unaligned(xrow + q * p.dil_w);
                    } else {
                        for (std::int64_t l = 0; l < W; ++l) lanes[l] = xrow[l * p.stride_w + q * p.dil_w];
                        v = B::load_aligned(lanes);
                    }
                    if constexpr (Max) acc = xsimd::max(acc, v);
                    else acc = xsimd::fma(v, B(w[r * p.kw + q]), acc);
                }
            }
            (acc + B(bias)).store_unaligned(yrow + ow);
        };
        // interior columns of a row narrower than a vector: no bounds checks on the columns
        auto interior_at = [&](std::int64_t ow) {
            float acc = init;
            const std::int64_t iw0 = ow * p.stride_w - p.pad_w;
            for (std::int64_t r = 0; r < p.kh; ++r) {
                const std::int64_t ih = ih0 + r * p.dil_h;
                if (ih < 0 || ih >= p.in_h) continue;
                const float* xrow = x + ih * p.in_w + iw0;
                for (std::int64_t q = 0; q < p.kw; ++q) {
                    const float v = xrow[q * p.dil_w];
                    if constexpr (Max) acc = v > acc ? v : acc;
                    else acc += v * w[r * p.kw + q];
                }
            }
            yrow[ow] = acc + bias;
        };
        for (std::int64_t ow = 0; ow < lo; ++ow) border_at(ow);
        if (hi - lo >= W) {
            std::int64_t ow = lo;
            for (; ow + W <= hi; ow += W) vector_at(ow);
            if (ow < hi) vector_at(hi - W);  // overlaps the last full vector: those columns get the same bits again
        } else {
            for (std::int64_t ow = lo; ow < hi; ++ow) interior_at(ow);
        }
        for (std::int64_t ow = hi; ow < p.out_w; ++ow) border_at(ow);
        if constexpr (!Max) residual_activation<Arch>(yrow, res ? res + oh * p.out_w : nullptr, p.out_w, act);
    }
}

constexpr std::int64_t padded_slack = 64;  // one step of 4 vectors of the widest arch
constexpr std::int64_t padded_max_taps = 64;  // kernels up to 8x8
constexpr std::int64_t padded_max_phases = 16;
constexpr std::int64_t padded_max_slot_floats = std::int64_t(1) << 20;  // 4 MiB a slot; larger planes take the row path

/// Where the padded path puts a plane: phase planes of hq x wq floats (plus slack for the last
/// vector's overrun), then the flattened output of out_h x wq floats; and what every plane of a
/// call shares, worked out once (a plane of 14 x 14 outputs is a few hundred cycles of work, as
/// much as the divisions that find its taps).
struct padded_layout {
    std::int64_t hq = 0, wq = 0, phase_floats = 0, phases = 0, out_floats = 0;
    std::int64_t slot_floats = 0;  // 0: the padded path does not apply
    std::int64_t tap_offset[padded_max_taps] = {};  // tap (r, q)'s first element in the slot: its phase plane, row and column
    std::int64_t col_begin[padded_max_phases] = {}, col_end[padded_max_phases] = {};  // phase column b's columns inside the input
};

inline padded_layout layout_of(const dwconv_f32_problem& p) noexcept {
    padded_layout l;
    if (p.kh * p.kw > padded_max_taps || p.stride_h < 1 || p.stride_w < 1 || p.out_h < 1 || p.out_w < 1) return l;
    const std::int64_t reach_h = (p.kh - 1) * p.dil_h / p.stride_h, reach_w = (p.kw - 1) * p.dil_w / p.stride_w;
    l.hq = p.out_h + reach_h;
    l.wq = p.out_w + reach_w;
    l.phases = p.stride_h * p.stride_w;
    const auto round16 = [](std::int64_t n) { return (n + 15) / 16 * 16; };  // keeps each part 64-byte aligned
    l.phase_floats = round16(l.hq * l.wq + reach_w + padded_slack);  // the last step reads past row hq - 1 by reach_w + 4 vectors
    l.out_floats = round16(p.out_h * l.wq + padded_slack);
    const std::int64_t total = l.phases * l.phase_floats + l.out_floats;
    if (l.phases > padded_max_phases || total > padded_max_slot_floats) return l;
    l.slot_floats = total;
    for (std::int64_t r = 0; r < p.kh; ++r)
        for (std::int64_t q = 0; q < p.kw; ++q) {
            const std::int64_t dr = r * p.dil_h, dq = q * p.dil_w;
            l.tap_offset[r * p.kw + q] = ((dr % p.stride_h) * p.stride_w + dq % p.stride_w) * l.phase_floats + (dr / p.stride_h) * l.wq + dq / p.stride_w;
        }
    for (std::int64_t b = 0; b < p.stride_w; ++b) {
        // the j whose column is inside the input: 0 <= b + j*sw - pad_w < in_w
        const std::int64_t inside = p.pad_w > b ? (p.pad_w - b + p.stride_w - 1) / p.stride_w : 0;
        std::int64_t end = p.in_w - 1 + p.pad_w - b < 0 ? 0 : (p.in_w - 1 + p.pad_w - b) / p.stride_w + 1;
        if (end > l.wq) end = l.wq;
        l.col_begin[b] = inside < end ? inside : end;
        l.col_end[b] = end;
    }
    return l;
}

// Fills phase plane (a, b) of plane x: element (i, j) = x[a + i*sh - pad_h][b + j*sw - pad_w],
// or pad outside, for stride_w other than 2 (fill_phase_pair fills both phases of stride 2). The
// rows are filled in order, each left to right.
// The slack after the last row is read only for the extra outputs past out_h * wq, which are
// dropped: it is written (so that nothing reads uninitialised memory) on the slot's first plane
// only (`first`). Later planes of the same geometry find the padding in place: with stride_w 1
// only the values are copied (that copy writes nothing past them), otherwise the padding rows
// that follow a row of values (a vector step may have run into them) are rewritten too.
template <class Arch>
void fill_phase(const dwconv_f32_problem& p, const padded_layout& l, const float* x, std::int64_t a, std::int64_t b, float pad, bool first,
                float* dst) noexcept {
    const std::int64_t j0 = l.col_begin[b], end = l.col_end[b];
    const bool values_only = !first && p.stride_w == 1;
    bool after_values = false;
    for (std::int64_t i = 0; i < l.hq; ++i) {
        float* row = dst + i * l.wq;
        const std::int64_t ih = a + i * p.stride_h - p.pad_h;
        if (ih < 0 || ih >= p.in_h || j0 == end) {
            if (first || (after_values && !values_only))
                for (std::int64_t j = 0; j < l.wq; ++j) row[j] = pad;
            after_values = false;
            continue;
        }
        after_values = true;
        const float* src = x + ih * p.in_w + b - p.pad_w;  // src[j * sw] is column j's value
        if (values_only) {
            copy_floats<Arch>(src + j0, row + j0, end - j0);
            continue;
        }
        for (std::int64_t j = 0; j < j0; ++j) row[j] = pad;
        if (p.stride_w == 1)
            copy_floats<Arch>(src + j0, row + j0, end - j0);
        else  // stride 2 goes through fill_phase_pair
            for (std::int64_t j = j0; j < end; ++j) row[j] = src[j * p.stride_w];
        for (std::int64_t j = end; j < l.wq; ++j) row[j] = pad;
    }
    if (first)
        for (std::int64_t j = l.hq * l.wq; j < l.phase_floats; ++j) dst[j] = pad;
}

// fill_phase for both column phases of row phase a when stride_w is 2 (dst0: b = 0, dst1: b = 1):
// each input row is read once and split into its even and odd columns by deinterleave_floats, a
// vector of each per two loads, where fill_phase read it twice through take_evens, whose stores
// were half wasted and whose tail scalar (the two took MobileNetV2's stride-2 depthwise layers to
// 2-3x the time of stride-1 layers of the same output). Same contents as fill_phase. Nothing
// is written past a row's values, so the padding (columns, rows and the slack) is written on the
// slot's first plane only.
template <class Arch>
void fill_phase_pair(const dwconv_f32_problem& p, const padded_layout& l, const float* x, std::int64_t a, float pad, bool first, float* dst0,
                     float* dst1) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    float* const dst[2] = {dst0, dst1};
    // the columns where both phases hold input values go as vectors (the last one overlapping the
    // one before), the rest one by one
    const std::int64_t v0 = l.col_begin[0] > l.col_begin[1] ? l.col_begin[0] : l.col_begin[1];
    const std::int64_t v1 = l.col_end[0] < l.col_end[1] ? l.col_end[0] : l.col_end[1];
    const bool vectors = v1 - v0 >= W;
    for (std::int64_t i = 0; i < l.hq; ++i) {
        const std::int64_t ih = a + i * p.stride_h - p.pad_h;
        if (ih < 0 || ih >= p.in_h) {
            if (first)
                for (float* d : dst) fill_floats<Arch>(d + i * l.wq, pad, l.wq);
            continue;
        }
        const float* src = x + ih * p.in_w - p.pad_w;  // src[2 j + b] is phase b's column j
        for (std::int64_t b = 0; b < 2; ++b) {
            float* row = dst[b] + i * l.wq;
            const std::int64_t j0 = l.col_begin[b], end = l.col_end[b];
            if (first) {
                fill_floats<Arch>(row, pad, j0);
                fill_floats<Arch>(row + end, pad, l.wq - end);
            }
            const std::int64_t skip_begin = vectors ? v0 : end, skip_end = vectors ? v1 : end;
            for (std::int64_t j = j0; j < skip_begin; ++j) row[j] = src[2 * j + b];
            for (std::int64_t j = skip_end > j0 ? skip_end : j0; j < end; ++j) row[j] = src[2 * j + b];
        }
        if (vectors) {
            float* row0 = dst0 + i * l.wq;
            float* row1 = dst1 + i * l.wq;
            auto step = [&](std::int64_t j) EMBER_DETAIL_INLINE {  // reads src[2j, 2j + 2W): both phases' columns j .. j + W - 1
                B evens, odds;
                deinterleave_floats<Arch>(src + 2 * j, evens, odds);
                evens.store_unaligned(row0 + j);
                odds.store_unaligned(row1 + j);
            };
            std::int64_t j = v0;
            for (; j + W <= v1; j += W) step(j);
            if (j < v1) step(v1 - W);
        }
    }
    if (first)
        for (float* d : dst) fill_floats<Arch>(d + l.hq * l.wq, pad, l.phase_floats - l.hq * l.wq);
}

/// Where the padded path's flattened output starts in a slot's workspace.
inline float* flat_of(const padded_layout& l, float* ws) noexcept { return ws + l.phases * l.phase_floats; }

// The loop of sum_taps over `taps` taps, known at run time.
template <class Arch, bool Max, class Store>
void sum_taps_loop(std::int64_t taps, const float* const* tap_at, const float* tap_w, std::int64_t n, float init, Store store) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    const B start(init);
    for (std::int64_t o = 0; o < n; o += 4 * W) {  // the last step may run past n, into the slack
        B acc0 = start, acc1 = start, acc2 = start, acc3 = start;
        for (std::int64_t t = 0; t < taps; ++t) {
            const float* src = tap_at[t] + o;
            if constexpr (Max) {
                acc0 = xsimd::max(acc0, B::load_unaligned(src));
                acc1 = xsimd::max(acc1, B::load_unaligned(src + W));
                acc2 = xsimd::max(acc2, B::load_unaligned(src + 2 * W));
                acc3 = xsimd::max(acc3, B::load_unaligned(src + 3 * W));
            } else {
                const B wt(tap_w[t]);
                acc0 = xsimd::fma(B::load_unaligned(src), wt, acc0);
                acc1 = xsimd::fma(B::load_unaligned(src + W), wt, acc1);
                acc2 = xsimd::fma(B::load_unaligned(src + 2 * W), wt, acc2);
                acc3 = xsimd::fma(B::load_unaligned(src + 3 * W), wt, acc3);
            }
        }
        store(acc0, o);
        store(acc1, o + W);
        store(acc2, o + 2 * W);
        store(acc3, o + 3 * W);
    }
}

// The same for Taps taps known at compile time (3x3 windows): the tap loop unrolled (at -O2 too)
// with the weights in registers, and each vector summed in two chains, the even taps and the odd
// ones, added at the end: eight chains in flight, as many as two FMA ports with a latency of four
// keep busy (four chains of nine dependent FMAs left half the issue slots empty).
template <class Arch, bool Max, std::size_t Taps, class Store>
EMBER_DETAIL_INLINE inline void sum_taps_fixed(const float* const* tap_at, const float* tap_w, std::int64_t n, float init, Store store) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    const float* at[Taps];
    B wt[Taps];
    static_for<Taps>([&](auto t) EMBER_DETAIL_INLINE {
        at[t] = tap_at[t];
        wt[t] = B(tap_w[t]);
    });
    const B start(init), zero(Max ? init : 0.0f);
    for (std::int64_t o = 0; o < n; o += 4 * W) {  // the last step may run past n, into the slack
        B even[4] = {start, start, start, start}, odd[4] = {zero, zero, zero, zero};
        static_for<Taps>([&](auto t) EMBER_DETAIL_INLINE {
            B* acc = t % 2 == 0 ? even : odd;
            static_for<4>([&](auto v) EMBER_DETAIL_INLINE {
                const B x = B::load_unaligned(at[t] + o + static_cast<std::int64_t>(v) * W);
                acc[v] = Max ? xsimd::max(acc[v], x) : xsimd::fma(x, wt[t], acc[v]);
            });
        });
        static_for<4>([&](auto v) EMBER_DETAIL_INLINE {
            store(Max ? xsimd::max(even[v], odd[v]) : even[v] + odd[v], o + static_cast<std::int64_t>(v) * W);
        });
    }
}

// The padded path's sums for channel c over the phase planes in the slot's workspace ws (layout
// l, filled): calls store(v, o) with v = init + the sum over the taps of w[tap] * x (Max: the
// largest x, init -inf) for the flattened outputs o, o + 1, ... (a vector; o = oh * wq + ow). The
// last vectors run past out_h * wq by up to 4 vectors, which the layout's slack covers. 3x3
// windows (MobileNet's depthwise convolutions, most pools) take an unrolled loop. Inlined into
// the plane, with the store: a call per plane cost a copy of the store's captures (the INT8
// epilogue's constants) and a stalled store-to-load forward, per plane of 7 x 7 outputs.
template <class Arch, bool Max, class Store>
EMBER_DETAIL_INLINE inline void sum_taps(const dwconv_f32_problem& p, const padded_layout& l, std::int64_t c, float* ws, float init, Store store) noexcept {
    static_assert(4 * static_cast<std::int64_t>(xsimd::batch<float, Arch>::size) <= padded_slack, "the slack covers a 4-vector step");
    // the taps: where each starts in the phase planes, and its weight
    const float* tap_at[padded_max_taps];
    float tap_w[padded_max_taps];
    const std::int64_t taps = p.kh * p.kw;
    for (std::int64_t t = 0; t < taps; ++t) {
        tap_at[t] = ws + l.tap_offset[t];
        tap_w[t] = Max ? 0.0f : p.w[c * taps + t];
    }
    const std::int64_t n = p.out_h * l.wq;
    if (taps == 9)
        sum_taps_fixed<Arch, Max, 9>(tap_at, tap_w, n, init, store);
    else
        sum_taps_loop<Arch, Max>(taps, tap_at, tap_w, n, init, store);
}

// One plane on the padded path, in the slot's workspace ws (layout l); first: the slot's first
// plane of this run (the padding is written).
template <class Arch, bool Max, class Act>
void padded_plane(const dwconv_f32_problem& p, const padded_layout& l, std::int64_t index, float* ws, bool first, const Act& act) noexcept {
    using B = xsimd::batch<float, Arch>;
    const std::int64_t c = index % p.channels;
    const float pad = Max ? -std::numeric_limits<float>::infinity() : 0.0f;
    const float* x = p.x + index * p.in_h * p.in_w;
    for (std::int64_t a = 0; a < p.stride_h; ++a) {
        float* phases = ws + a * p.stride_w * l.phase_floats;
        if (p.stride_w == 2)
            fill_phase_pair<Arch>(p, l, x, a, pad, first, phases, phases + l.phase_floats);
        else
            for (std::int64_t b = 0; b < p.stride_w; ++b) fill_phase<Arch>(p, l, x, a, b, pad, first, phases + b * l.phase_floats);
    }
    // the sum starts at the bias; the activation is applied in registers unless a residual comes first
    const float* res = p.residual ? p.residual + index * p.out_h * p.out_w : nullptr;
    const float init = Max ? pad : p.bias ? p.bias[c] : 0.0f;
    float* flat = flat_of(l, ws);
    // flat is workspace in the arena, aligned only to plan::arena_alignment(): unaligned stores.
    // Captures by value, as the INT8 kernel's stores do (a store through a captured reference
    // may alias what it captured, which then reloads per vector)
    const auto store = [=](const B& v, std::int64_t o) EMBER_DETAIL_INLINE {  // flat, res, act (the last two unused by Max)
        if constexpr (Max) v.store_unaligned(flat + o);
        else (res ? v : act(v)).store_unaligned(flat + o);
    };
    sum_taps<Arch, Max>(p, l, c, ws, init, store);
    // out: drop the wq - out_w extra columns of each row, then act(y + residual) where there is one
    float* y = p.y + index * p.out_h * p.out_w;
    for (std::int64_t oh = 0; oh < p.out_h; ++oh) copy_floats<Arch>(flat + oh * l.wq, y + oh * p.out_w, p.out_w);
    if (res) residual_activation<Arch>(y, res, p.out_h * p.out_w, act);
}

// The masked path: stride 1 and output rows as wide as the input's ("same" padding in width:
// MobileNet's and EfficientNet's stride-1 depthwise layers). Output o = oh * out_w + ow's tap
// (r, q) is then x[o + off] with one offset per tap, off = (r*dh - pad_h) * in_w + q*dw - pad_w,
// when the tap is inside the input, so the plane is one 1-D convolution over the unpadded input:
// no copy in, no copy out, the output stored where it belongs. A tap outside the input reads 0
// through a mask per (vector, tap), built once per call: the taps of a border row or column
// point at the plane's other edge, at the plane before or after, or past the tensor; AVX-512
// loads through a mask register (the masked-off lanes read nothing, so every plane takes the
// path), the other archs load the whole vector and AND it with a mask of W floats (every byte
// read must then be inside the tensor: the planes whose reads reach past either end take the
// padded path, which are the first and last plane or two). A plane of 7 x 7 outputs is 4
// vectors x 9 taps of loads and FMAs and 4 stores, where the padded path spent most of its
// ~250 cycles filling the phase planes (rows of 7 floats: two overlapping 4-float moves each,
// which the sums' 16-float loads then wait for, no store forwarding them) and copying the rows
// out. MobileNetV2's 3x3 layers at 1 thread, AVX-512: 7 x 7 x 960 80 -> 31 us, 14 x 14 x 576
// 100 -> 56, 14 x 14 x 384 67 -> 40, 28 x 28 x 192 ~95 -> 84. It does not split channels across
// the lanes (NCHWc): a plane's vectors are its own outputs, the gather and transpose of 16
// planes in and out are not needed, and a plane keeps its summation order whatever the split.
constexpr std::int64_t masked_max_taps = 25;  // kernels up to 5x5
// The planes that take it, by output size. With mask registers up to 28 x 28 (3x3, 1 thread:
// 192 planes of 28 x 28 98 -> 80 us; 144 of 56 x 56 no faster, 275 us either way); with the
// mask vectors up to 14 x 14 (AVX2, the same: 28 x 28 107 -> 102, 56 x 56 309 -> 400 us; SSE
// 28 x 28 138 -> 146): there the masks are a load and an AND per FMA, and the table outgrows L1.
constexpr std::int64_t masked_max_outputs_k = 28 * 28;
constexpr std::int64_t masked_max_outputs_v = 14 * 14;

/// Whether Arch loads through mask registers (the masked-off lanes read nothing).
template <class Arch>
constexpr bool mask_registers() noexcept {
#if defined(__AVX512F__)
    return std::is_same_v<Arch, xsimd::avx512f>;
#else
    return false;
#endif
}

/// The masked path's geometry for vectors of W floats (vectors = 0: it does not apply). The
/// vectors start at 0, W, 2W, ... and the last at n - W, overlapping the one before (whose
/// overlapping outputs it computes again to the same bits): no partial vector, no tail.
struct masked_layout {
    std::int64_t n = 0, vectors = 0, taps = 0;
    std::int64_t read_lo = 0, read_hi = 0;  // a plane's whole-vector loads read its floats [read_lo, read_hi)
    std::int64_t offset[masked_max_taps] = {};
};

inline masked_layout masked_layout_of(const dwconv_f32_problem& p, std::int64_t W, std::int64_t max_outputs) noexcept {
    masked_layout l;
    const std::int64_t n = p.out_h * p.out_w;
    if (p.stride_h != 1 || p.stride_w != 1 || p.out_w != p.in_w || p.kh * p.kw > masked_max_taps || n < W || n > max_outputs) return l;
    l.n = n;
    l.vectors = (n + W - 1) / W;
    l.taps = p.kh * p.kw;
    std::int64_t lo = 0, hi = 0;
    for (std::int64_t r = 0; r < p.kh; ++r)
        for (std::int64_t q = 0; q < p.kw; ++q) {
            const std::int64_t off = (r * p.dil_h - p.pad_h) * p.in_w + q * p.dil_w - p.pad_w;
            l.offset[r * p.kw + q] = off;
            lo = off < lo ? off : lo;
            hi = off > hi ? off : hi;
        }
    l.read_lo = lo;
    l.read_hi = n + hi;
    return l;
}

/// Floats of one (vector, tap) entry of the mask table on Arch: a 16-bit mask, or W floats.
template <class Arch>
constexpr std::int64_t mask_entry_floats() noexcept {
    return mask_registers<Arch>() ? 1 : static_cast<std::int64_t>(xsimd::batch<float, Arch>::size);
}

/// The largest plane (outputs) that takes the masked path on Arch.
template <class Arch>
constexpr std::int64_t masked_max_outputs() noexcept {
    return mask_registers<Arch>() ? masked_max_outputs_k : masked_max_outputs_v;
}

/// Floats of the masked path's mask table, for any arch: ceil(n / W) vectors x taps entries of W
/// floats (at most (n + 15) x taps), or of one float with mask registers (16 lanes).
inline std::int64_t masked_table_floats(const dwconv_f32_problem& p) noexcept {
    const masked_layout l = masked_layout_of(p, 1, masked_max_outputs_k);
    if (l.vectors == 0) return 0;
    const std::int64_t vectors16 = (l.n + 15) / 16;
    return l.n <= masked_max_outputs_v ? (vectors16 + 1) * 16 * l.taps : (vectors16 * l.taps + 15) / 16 * 16;
}

// The mask table: entry (v, t) says which lanes of vector v's tap t lie inside the input.
template <class Arch>
void build_masks(const dwconv_f32_problem& p, const masked_layout& l, float* table) noexcept {
    constexpr std::int64_t W = static_cast<std::int64_t>(xsimd::batch<float, Arch>::size);
    for (std::int64_t v = 0; v < l.vectors; ++v) {
        const std::int64_t start = v * W + W <= l.n ? v * W : l.n - W;
        // each lane's output row and column, stepped from the vector's first (one division a
        // vector: the table is built on every call, and a division a lane and tap was a few
        // microseconds of a 14 x 14 layer's 40)
        std::int64_t lane_h[W], lane_w[W];
        for (std::int64_t lane = 0, oh = start / p.out_w, ow = start % p.out_w; lane < W; ++lane) {
            lane_h[lane] = oh;
            lane_w[lane] = ow;
            if (++ow == p.out_w) {
                ow = 0;
                ++oh;
            }
        }
        for (std::int64_t r = 0; r < p.kh; ++r)
            for (std::int64_t q = 0; q < p.kw; ++q) {
                float* entry = table + (v * l.taps + r * p.kw + q) * mask_entry_floats<Arch>();
                std::uint32_t bits = 0;
                for (std::int64_t lane = 0; lane < W; ++lane) {
                    const std::int64_t ih = lane_h[lane] + r * p.dil_h - p.pad_h, iw = lane_w[lane] + q * p.dil_w - p.pad_w;
                    const bool inside = ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w;
                    if constexpr (mask_registers<Arch>()) {
                        bits |= static_cast<std::uint32_t>(inside) << lane;
                    } else {
                        const std::uint32_t all = inside ? ~std::uint32_t{0} : 0;
                        std::memcpy(entry + lane, &all, sizeof all);
                    }
                }
                if constexpr (mask_registers<Arch>()) std::memcpy(entry, &bits, sizeof bits);
            }
    }
}

// x[0, W) where entry's lanes are set, 0 elsewhere. The 16-bit mask goes from memory straight
// into a mask register (kmovw k, m16: a load; through a general register it took a shuffle-port
// uop beside each FMA).
template <class Arch>
EMBER_DETAIL_INLINE inline xsimd::batch<float, Arch> masked_load(const float* x, const float* entry) noexcept {
    using B = xsimd::batch<float, Arch>;
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) {
        return _mm512_maskz_loadu_ps(_load_mask16(reinterpret_cast<__mmask16*>(const_cast<float*>(entry))), x);
    } else
#endif
    {
        return B::load_unaligned(x) & B::load_unaligned(entry);
    }
}

// U vectors of a plane on the masked path, at x + start + u * W (u < U; the last vector of a
// plane whose size is no multiple of W comes alone, at n - W) with their masks from entries on:
// the sum over the taps (Taps of them, or l.taps when Taps is 0) from the bias, each vector in
// two chains (even and odd taps) when the taps are known, then act(sum + residual) stored. The
// addresses are a tap's pointer plus a constant, the masks at constant offsets from entries.
template <class Arch, std::size_t Taps, std::size_t U, class Act>
EMBER_DETAIL_INLINE inline void masked_vectors(const masked_layout& l, const float* entries, const float* x, const float* wt, float bias,
                                               const float* res, float* y, std::int64_t start, const Act& act) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    constexpr std::int64_t E = mask_entry_floats<Arch>();
    B even[U], odd[U];
    static_for<U>([&](auto u) EMBER_DETAIL_INLINE {
        even[u] = B(bias);
        odd[u] = B(0.0f);
    });
    const float* const xs = x + start;
    if constexpr (Taps != 0) {
        static_for<Taps>([&](auto t) EMBER_DETAIL_INLINE {
            const B w(wt[t]);
            const float* const at = xs + l.offset[t];
            B* acc = t % 2 == 0 ? even : odd;
            static_for<U>([&](auto u) EMBER_DETAIL_INLINE {
                const float* entry = entries + (static_cast<std::int64_t>(u) * static_cast<std::int64_t>(Taps) + static_cast<std::int64_t>(t)) * E;
                acc[u] = xsimd::fma(masked_load<Arch>(at + static_cast<std::int64_t>(u) * W, entry), w, acc[u]);
            });
        });
    } else {
        for (std::int64_t t = 0; t < l.taps; ++t) {
            const B w(wt[t]);
            const float* const at = xs + l.offset[t];
            static_for<U>([&](auto u) EMBER_DETAIL_INLINE {
                const float* entry = entries + (static_cast<std::int64_t>(u) * l.taps + t) * E;
                even[u] = xsimd::fma(masked_load<Arch>(at + static_cast<std::int64_t>(u) * W, entry), w, even[u]);
            });
        }
    }
    static_for<U>([&](auto u) EMBER_DETAIL_INLINE {
        const std::int64_t o = start + static_cast<std::int64_t>(u) * W;
        B s = Taps != 0 ? even[u] + odd[u] : even[u];
        if (res) s += B::load_unaligned(res + o);
        act(s).store_unaligned(y + o);
    });
}

// One plane on the masked path.
template <class Arch, std::size_t Taps, class Act>
void masked_plane(const dwconv_f32_problem& p, const masked_layout& l, const float* table, std::int64_t index, const Act& act) noexcept {
    constexpr std::int64_t W = static_cast<std::int64_t>(xsimd::batch<float, Arch>::size);
    constexpr std::int64_t E = mask_entry_floats<Arch>();
    const std::int64_t c = index % p.channels;
    const float* x = p.x + index * p.in_h * p.in_w;
    const float* w = p.w + c * l.taps;
    const float bias = p.bias ? p.bias[c] : 0.0f;
    const float* res = p.residual ? p.residual + index * l.n : nullptr;
    float* y = p.y + index * l.n;
    const std::int64_t full = l.n / W;  // whole vectors from 0; then one at n - W if n is no multiple of W
    const std::int64_t entry_floats = l.taps * E;  // a vector's masks
    std::int64_t v = 0;
    for (; v + 4 <= full; v += 4) masked_vectors<Arch, Taps, 4>(l, table + v * entry_floats, x, w, bias, res, y, v * W, act);
    switch (full - v) {
    case 3: masked_vectors<Arch, Taps, 3>(l, table + v * entry_floats, x, w, bias, res, y, v * W, act); break;
    case 2: masked_vectors<Arch, Taps, 2>(l, table + v * entry_floats, x, w, bias, res, y, v * W, act); break;
    case 1: masked_vectors<Arch, Taps, 1>(l, table + v * entry_floats, x, w, bias, res, y, v * W, act); break;
    default: break;
    }
    if (full < l.vectors) masked_vectors<Arch, Taps, 1>(l, table + full * entry_floats, x, w, bias, res, y, l.n - W, act);
}

template <class Arch, bool Max, class Act>
void run_planes(const dwconv_f32_problem& p, float* workspace, std::int64_t slots, const executor* ex, const Act& act) noexcept {
    const padded_layout l = workspace ? layout_of(p) : padded_layout{};
    if (l.slot_floats == 0) {
        parallel_for(ex, static_cast<std::size_t>(p.planes), [&](std::size_t begin, std::size_t end) noexcept {
            for (std::size_t i = begin; i < end; ++i) plane<Arch, Max>(p, static_cast<std::int64_t>(i), act);
        });
        return;
    }
    if (slots > p.planes) slots = p.planes;
    if (slots < 1) slots = 1;
    constexpr std::int64_t W = static_cast<std::int64_t>(xsimd::batch<float, Arch>::size);
    const masked_layout m = Max ? masked_layout{} : masked_layout_of(p, W, masked_max_outputs<Arch>());
    if (m.vectors == 0) {
        auto run_slot = [&](std::int64_t s) noexcept {
            float* ws = workspace + s * l.slot_floats;
            const std::int64_t begin = p.planes * s / slots, end = p.planes * (s + 1) / slots;
            for (std::int64_t i = begin; i < end; ++i) padded_plane<Arch, Max>(p, l, i, ws, i == begin, act);
        };
        for_each_slot(ex, slots, run_slot);
        return;
    }
    // the mask table first (shared by the slots), then each slot's padded workspace for the planes
    // whose loads would leave the tensor (none with mask registers)
    float* const table = workspace;
    float* const padded = workspace + masked_table_floats(p);
    build_masks<Arch>(p, m, table);
    const std::int64_t plane_in = p.in_h * p.in_w;
    std::int64_t safe_begin = 0, safe_end = p.planes;  // the planes whose loads stay inside the tensor
    if constexpr (!mask_registers<Arch>()) {
        safe_begin = m.read_lo < 0 ? (-m.read_lo + plane_in - 1) / plane_in : 0;
        const std::int64_t past = m.read_hi - plane_in;  // floats read past the plane's end
        safe_end = past > 0 ? p.planes - (past + plane_in - 1) / plane_in : p.planes;
    }
    auto run_slot = [&](std::int64_t s) noexcept {
        float* ws = padded + s * l.slot_floats;
        const std::int64_t begin = p.planes * s / slots, end = p.planes * (s + 1) / slots;
        bool first = true;
        for (std::int64_t i = begin; i < end; ++i) {
            if (i >= safe_begin && i < safe_end) {
                if (m.taps == 9) masked_plane<Arch, 9>(p, m, table, i, act);
                else if (m.taps == 25) masked_plane<Arch, 25>(p, m, table, i, act);
                else masked_plane<Arch, 0>(p, m, table, i, act);
            } else {
                padded_plane<Arch, Max>(p, l, i, ws, first, act);
                first = false;
            }
        }
    };
    for_each_slot(ex, slots, run_slot);
}

} // namespace dwconv_detail

/// Floats of workspace one slot needs for the padded path of p and the masked path's mask table
/// (0: p takes the row path, and the kernels need no workspace).
inline std::int64_t dwconv_workspace_floats(const dwconv_f32_problem& p) noexcept {
    const std::int64_t padded = dwconv_detail::layout_of(p).slot_floats;
    return padded == 0 ? 0 : padded + dwconv_detail::masked_table_floats(p);
}

/// Depthwise convolution on up to `slots` workers of ex. workspace: null, or slots *
/// dwconv_workspace_floats(p) floats, 64-byte aligned (the padded and masked paths).
template <class Arch>
void dwconv_f32(const dwconv_f32_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept {
    visit_activation(p.act, [&](auto act) { dwconv_detail::run_planes<Arch, false>(p, workspace, slots, ex, act); });
}

} // namespace kernels
EMBER_NAMESPACE_END
