// SPDX-License-Identifier: Apache-2.0
// Max pooling, 2-D NCHW (1-D as planes of one row), float32, over xsimd. Planes (image, channel)
// are split over the executor's work slots; max is exact, so the bits depend on neither the
// split nor the order.
//
// The window max is separable, so each output row is two passes over a row of the slot's
// workspace, which stays in L1:
//
//   1. vertical:   row[i] = max over the window's rows ih inside the input of x[ih][i], for all
//                  in_w columns, as contiguous vector loads (no row inside: the output row is -inf)
//   2. horizontal: y[ow] = max over q of row[ow * stride_w - pad_w + q * dil_w]
//
//   workspace row:  | -inf ... | x0 x1 ... x(in_w-1) | -inf ... (the last windows and vectors) |
//                     pad_w      ^ row (16 floats in)
//
// The -inf on both sides make every window plain, borders and ceil_mode windows that run past the
// input included, so no output takes a scalar border path. Stride 1 computes W outputs per
// vector step; stride 2 computes the window max at 2W consecutive positions and keeps the even
// ones (two swizzles and a blend); larger strides compute it at every position into the
// workspace and pick every stride_w-th. A 3x3 window is 2 + 2 max per position computed instead
// of 8 (at stride 2 both passes compute twice the output's columns: as many max as the direct
// loop, but all of them on contiguous loads, and the input is read once, with no copy of it into
// phase planes as the depthwise kernel's padded path makes). The -inf padding is written once per
// call per slot: the vertical pass writes only the in_w values between.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/activation.hpp"
#include "ember/kernels/copy.hpp"
#include "ember/kernels/dwconv_f32.hpp"
#include "ember/kernels/unroll.hpp"
#include "ember/runtime/executor.hpp"

EMBER_NAMESPACE_BEGIN
namespace kernels {
namespace maxpool_detail {

constexpr std::int64_t max_lanes = 16;                          // floats in the widest arch's vector (AVX-512)
constexpr std::int64_t max_slot_floats = std::int64_t(1) << 20;  // 4 MiB a slot; wider rows take the row path
constexpr std::int64_t rows_per_pass = 4;                       // input rows maxed per vertical pass

/// One slot's workspace for p: two padded rows (each lead floats of -inf before the values, then
/// in_w values, then -inf up to row_floats), and after them the horizontal pass's scratch
/// (tmp_floats: the window max at every position for strides of 3 or more, a plane's last row
/// when it is narrower than a vector). Parts are multiples of 16 floats: each starts 64-byte
/// aligned when the workspace does.
struct row_layout {
    std::int64_t lead = 0, row_floats = 0, tmp_floats = 0;
    std::int64_t slot_floats = 0;  // 0: the separable path does not apply (take the row path)
};

inline row_layout layout_of(const dwconv_f32_problem& p) noexcept {
    row_layout l;
    if (p.in_h < 1 || p.in_w < 1 || p.out_h < 1 || p.out_w < 1 || p.kh < 1 || p.kw < 1 || p.stride_h < 1 || p.stride_w < 1 || p.dil_h < 1 ||
        p.dil_w < 1 || p.pad_h < 0 || p.pad_w < 0)
        return l;
    // each part bounded first, so that none of the sums below can overflow
    const std::int64_t limit = max_slot_floats;
    if (p.in_w > limit || p.pad_w > limit || p.out_w > limit / p.stride_w || p.kw > limit || p.dil_w > limit / p.kw) return l;
    const auto round16 = [](std::int64_t n) { return (n + 15) / 16 * 16; };
    // The horizontal pass reads the padded row (index k is input column k - pad_w) below
    // stride_w * out_w + (kw - 1) * dil_w + 2 vectors: the last output's window, and for stride 2
    // the second vector of the last step (for stride 1 or 3+, one vector past the last position).
    const std::int64_t reach = p.stride_w * p.out_w + (p.kw - 1) * p.dil_w + 2 * max_lanes;
    const std::int64_t extent = reach > p.pad_w + p.in_w ? reach : p.pad_w + p.in_w;
    l.lead = round16(p.pad_w);
    l.row_floats = round16(l.lead - p.pad_w + extent);
    l.tmp_floats = round16(p.stride_w * p.out_w + 2 * max_lanes);
    const std::int64_t total = 2 * l.row_floats + l.tmp_floats;
    if (total > limit) return l;
    l.slot_floats = total;
    return l;
}

// Lane orders of the stride-2 pick: the even elements in the low half (evens_first, copy.hpp) and
// the even elements in the high half, so that a blend of the two halves is 2W positions' evens.
struct evens_last {
    static constexpr unsigned get(unsigned i, unsigned n) noexcept { return i < n / 2 ? 2 * i + 1 : 2 * (i - n / 2); }
};

// row[i] = max over the N rows src[t][i], for i in [0, n). The last vector overlaps the one before
// (max is idempotent: those columns get the same bits again), so nothing past row[n) is written
// and nothing past a source row's end read; src[0] may be row itself.
template <class Arch, std::size_t N>
void max_rows(const float* const* src, float* row, std::int64_t n) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    const float* at[N];
    static_for<N>([&](auto t) EMBER_DETAIL_INLINE { at[t] = src[t]; });
    auto step = [&](std::int64_t i) EMBER_DETAIL_INLINE {
        B m = B::load_unaligned(at[0] + i);
        static_for<N - 1>([&](auto t) EMBER_DETAIL_INLINE { m = xsimd::max(m, B::load_unaligned(at[t + 1] + i)); });
        m.store_unaligned(row + i);  // the arena aligns the workspace to 16 bytes only
    };
    if (n >= W) {
        std::int64_t i = 0;
        for (; i + W <= n; i += W) step(i);
        if (i < n) step(n - W);
        return;
    }
    for (std::int64_t i = 0; i < n; ++i) {
        float m = at[0][i];
        static_for<N - 1>([&](auto t) EMBER_DETAIL_INLINE {
            const float v = at[t + 1][i];
            m = v > m ? v : m;
        });
        row[i] = m;
    }
}

template <class Arch>
void max_rows_of(const float* const* src, std::int64_t count, float* row, std::int64_t n) noexcept {
    static_assert(rows_per_pass == 4, "one case per count");
    switch (count) {
        case 1: max_rows<Arch, 1>(src, row, n); break;
        case 2: max_rows<Arch, 2>(src, row, n); break;
        case 3: max_rows<Arch, 3>(src, row, n); break;
        default: max_rows<Arch, 4>(src, row, n); break;
    }
}

// The vertical pass of a window whose first row is ih0, any kh, any rows outside the input:
// row[0, in_w) = the max over the window's rows inside the input, rows_per_pass at a time (a
// taller window's later passes take row itself as one of their sources). False when no row of
// the window is inside the input.
template <class Arch>
bool clipped_vertical_pass(const dwconv_f32_problem& p, const float* x, std::int64_t ih0, float* row) noexcept {
    const float* src[rows_per_pass];
    std::int64_t count = 0;
    bool any = false;
    for (std::int64_t r = 0; r < p.kh; ++r) {
        const std::int64_t ih = ih0 + r * p.dil_h;
        if (ih < 0) continue;
        if (ih >= p.in_h) break;
        src[count++] = x + ih * p.in_w;
        if (count == rows_per_pass) {
            max_rows_of<Arch>(src, count, row, p.in_w);
            any = true;
            src[0] = row;
            count = 1;
        }
    }
    if (!any && count == 0) return false;
    if (!any || count > 1) max_rows_of<Arch>(src, count, row, p.in_w);
    return true;
}

// The vertical pass of output row oh (as clipped_vertical_pass). KH > 0: kh known at compile time
// (2x2 and 3x3 pools), and a window wholly inside the input, most of them, takes no per-row
// loop: the row set-up cost as much as the maxima on 27-wide rows.
template <class Arch, std::size_t KH>
EMBER_DETAIL_INLINE inline bool vertical_pass(const dwconv_f32_problem& p, const float* x, std::int64_t oh, float* row) noexcept {
    const std::int64_t ih0 = oh * p.stride_h - p.pad_h;
    if constexpr (KH > 0) {
        static_assert(KH <= static_cast<std::size_t>(rows_per_pass), "one pass");
        if (ih0 >= 0 && ih0 + static_cast<std::int64_t>(KH - 1) * p.dil_h < p.in_h) {
            const float* src[KH];
            static_for<KH>([&](auto r) EMBER_DETAIL_INLINE { src[r] = x + (ih0 + static_cast<std::int64_t>(r) * p.dil_h) * p.in_w; });
            max_rows<Arch, KH>(src, row, p.in_w);
            return true;
        }
    }
    return clipped_vertical_pass<Arch>(p, x, ih0, row);
}

// The max over a window of kw taps dil_w apart at W consecutive positions from at. KW > 0: kw
// known at compile time (2x2 and 3x3 pools), the taps unrolled.
template <class Arch, std::size_t KW>
EMBER_DETAIL_INLINE inline xsimd::batch<float, Arch> window_max(const float* at, std::int64_t kw, std::int64_t dil) noexcept {
    using B = xsimd::batch<float, Arch>;
    B m = B::load_unaligned(at);
    if constexpr (KW > 0) {
        static_for<KW - 1>([&](auto q) EMBER_DETAIL_INLINE { m = xsimd::max(m, B::load_unaligned(at + static_cast<std::int64_t>(q + 1) * dil)); });
    } else {
        for (std::int64_t q = 1; q < kw; ++q) m = xsimd::max(m, B::load_unaligned(at + q * dil));
    }
    return m;
}

// The horizontal pass of one output row: y[ow] = max over q of padded[ow * stride_w + q * dil_w]
// (padded: the workspace row, index k holding input column k - pad_w). A row narrower than a
// vector is stored whole where the overrun lands in the plane's later rows (written after this
// one), otherwise through tmp: nothing outside the plane's output is written. tmp: scratch of the
// layout's tmp_floats; low: lanes below W / 2 set (the stride-2 blend).
template <class Arch, std::size_t KW>
void horizontal_pass(const dwconv_f32_problem& p, const float* padded, float* y, bool room, float* tmp,
                     const xsimd::batch_bool<float, Arch>& low) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    const std::int64_t kw = p.kw, dil = p.dil_w, n = p.out_w;
    if (p.stride_w == 1) {
        // W outputs a step; the last step overlaps the one before
        if (n >= W) {
            std::int64_t o = 0;
            for (; o + W <= n; o += W) window_max<Arch, KW>(padded + o, kw, dil).store_unaligned(y + o);
            if (o < n) window_max<Arch, KW>(padded + n - W, kw, dil).store_unaligned(y + n - W);
        } else if (room) {
            window_max<Arch, KW>(padded, kw, dil).store_unaligned(y);
        } else {
            window_max<Arch, KW>(padded, kw, dil).store_unaligned(tmp);
            copy_floats<Arch>(tmp, y, n);
        }
        return;
    }
    if (p.stride_w == 2) {
        // W outputs a step from the window max at 2W positions: the evens of the first vector to
        // the low half, those of the second to the high half
        constexpr auto first = xsimd::make_batch_constant<xsimd::batch<std::uint32_t, Arch>, evens_first>();
        constexpr auto second = xsimd::make_batch_constant<xsimd::batch<std::uint32_t, Arch>, evens_last>();
        auto step = [&](std::int64_t o) EMBER_DETAIL_INLINE {
            const float* at = padded + 2 * o;
            return xsimd::select(low, xsimd::swizzle(window_max<Arch, KW>(at, kw, dil), first),
                                 xsimd::swizzle(window_max<Arch, KW>(at + W, kw, dil), second));
        };
        if (n >= W) {
            std::int64_t o = 0;
            for (; o + W <= n; o += W) step(o).store_unaligned(y + o);
            if (o < n) step(n - W).store_unaligned(y + n - W);
        } else if (room) {
            step(0).store_unaligned(y);
        } else {
            step(0).store_unaligned(tmp);
            copy_floats<Arch>(tmp, y, n);
        }
        return;
    }
    // stride 3 or more: the window max at every position up to the last output's, then every
    // stride_w-th of them
    const std::int64_t positions = (n - 1) * p.stride_w + 1;
    for (std::int64_t j = 0; j < positions; j += W) window_max<Arch, KW>(padded + j, kw, dil).store_unaligned(tmp + j);
    for (std::int64_t ow = 0; ow < n; ++ow) y[ow] = tmp[ow * p.stride_w];
}

// The planes [begin, end) in one slot's workspace ws (layout l). The vertical pass runs a row
// ahead of the horizontal one, into the other of the two workspace rows: the horizontal pass's
// loads straddle the vertical pass's vector stores, which cannot be forwarded to them, and a
// row later those stores have reached the cache (reading the row just written stalled 30% of
// the time on 27 x 27 planes).
template <class Arch, std::size_t KH, std::size_t KW>
void run_slot(const dwconv_f32_problem& p, const row_layout& l, std::int64_t begin, std::int64_t end, float* ws) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    static_assert(W <= max_lanes, "the layout's reach covers two vectors");
    constexpr float lowest = -std::numeric_limits<float>::infinity();
    float* rows[2] = {ws + l.lead, ws + l.row_floats + l.lead};
    float* tmp = ws + 2 * l.row_floats;
    // the padding on both sides of each row; the vertical passes write only the values between
    for (float* row : rows) {
        fill_floats<Arch>(row - l.lead, lowest, l.lead);
        fill_floats<Arch>(row + p.in_w, lowest, l.row_floats - l.lead - p.in_w);
    }
    alignas(64) float lane[max_lanes];
    for (std::int64_t t = 0; t < W; ++t) lane[t] = static_cast<float>(t);
    const auto low = B::load_aligned(lane) < B(static_cast<float>(W / 2));
    const std::int64_t plane_out = p.out_h * p.out_w;
    for (std::int64_t i = begin; i < end; ++i) {
        const float* x = p.x + i * p.in_h * p.in_w;
        float* y = p.y + i * plane_out;
        bool inside = vertical_pass<Arch, KH>(p, x, 0, rows[0]);
        for (std::int64_t oh = 0; oh < p.out_h; ++oh) {
            const bool next = oh + 1 < p.out_h && vertical_pass<Arch, KH>(p, x, oh + 1, rows[(oh + 1) & 1]);
            float* yrow = y + oh * p.out_w;
            if (inside)
                horizontal_pass<Arch, KW>(p, rows[oh & 1] - p.pad_w, yrow, oh * p.out_w + W <= plane_out, tmp, low);
            else
                fill_floats<Arch>(yrow, lowest, p.out_w);  // a window wholly in the padding
            inside = next;
        }
    }
}

} // namespace maxpool_detail

/// Floats of workspace one slot of maxpool_f32 needs for p (0: p takes the row path, and the
/// kernel needs no workspace).
inline std::int64_t maxpool_workspace_floats(const dwconv_f32_problem& p) noexcept { return maxpool_detail::layout_of(p).slot_floats; }

/// Max pooling, 2-D NCHW, over a depthwise convolution's geometry (w, bias, residual and act
/// unused; channels = 1 is fine), on up to `slots` workers of ex. workspace: null, or slots *
/// maxpool_workspace_floats(p) floats, any float alignment (the separable path; without it, or
/// where p's rows are too wide for it, the depthwise kernel's row path). Matches MaxPool's
/// reference, a window wholly in the padding giving -inf, except for NaN: xsimd's max does not
/// propagate it (which element wins depends on the ISA and the position in the window).
template <class Arch>
void maxpool_f32(const dwconv_f32_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept {
    const maxpool_detail::row_layout l = workspace ? maxpool_detail::layout_of(p) : maxpool_detail::row_layout{};
    if (l.slot_floats == 0) {
        parallel_for(ex, static_cast<std::size_t>(p.planes), [&](std::size_t begin, std::size_t end) noexcept {
            for (std::size_t i = begin; i < end; ++i) dwconv_detail::plane<Arch, true>(p, static_cast<std::int64_t>(i), identity_fn{});
        });
        return;
    }
    if (slots > p.planes) slots = p.planes;
    if (slots < 1) slots = 1;
    // the window picked once per call: 2x2 and 3x3 pools (and 3- or 2-wide windows of other
    // heights) get their taps unrolled; 0 is known at run time only
    auto run = [&](auto kh, auto kw) noexcept {
        for_each_slot(ex, slots, [&](std::int64_t s) noexcept {
            const std::int64_t begin = p.planes * s / slots, end = p.planes * (s + 1) / slots;
            maxpool_detail::run_slot<Arch, decltype(kh)::value, decltype(kw)::value>(p, l, begin, end, workspace + s * l.slot_floats);
        });
    };
    using k0 = std::integral_constant<std::size_t, 0>;
    using k2 = std::integral_constant<std::size_t, 2>;
    using k3 = std::integral_constant<std::size_t, 3>;
    if (p.kw == 3)
        p.kh == 3 ? run(k3{}, k3{}) : run(k0{}, k3{});
    else if (p.kw == 2)
        p.kh == 2 ? run(k2{}, k2{}) : run(k0{}, k2{});
    else
        run(k0{}, k0{});
}

} // namespace kernels
EMBER_NAMESPACE_END
