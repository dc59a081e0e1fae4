// SPDX-License-Identifier: Apache-2.0
// Winograd F(4x4, 3x3) convolution of one image (3x3 kernel, stride 1, dilation 1, one group):
// each 4x4 tile of the output comes from a 6x6 tile of the input with 36 multiplications per
// channel pair instead of 144 (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2016; interpolation points 0, +-1, +-2, infinity):
//
//   Y = A^T [ (G g G^T) (.) (B^T d B) ] A      g: 3x3 kernel, d: 6x6 input tile, (.) element-wise
//
// Over all channels the element-wise products become 36 GEMMs, one per position xi of the 6x6
// transformed tile:  M_xi [K, T] = U_xi [K, C] * V_xi [C, T]  (K output channels, C input
// channels, T tiles), with U = G g G^T transformed and packed once at compile time
// (ops/conv.hpp) and V = B^T d B transformed per run. The steps, each split over the slots:
//
//   1. input transform: per channel, gather the 6x6 tiles (zeros in the padding) into a scratch
//      laid out [36][tiles], then transform vectors of tiles at once into V, 36 matrices
//      [C][tile_stride] written in gemm_f32's packed B layout;
//   2. the 36 GEMMs on gemm_f32 (both operands packed, no epilogue) into M;
//   3. output transform: per output channel, vectors of tiles of M to 16 values each (+ bias),
//      scattered into the output plane; residual and activation then run over the plane.
//
// On several slots each takes a share of the GEMM's column panels (tiles) through steps 1-3, so
// that its part of V and M stays in its own core's cache; with fewer panels than slots, the
// steps run in turn, split by input channel, by GEMM and by output channel.
//
// Each output value's sums run in the same order however the tiles, channels or GEMMs are split
// (gemm_f32's order over the depth does not depend on its column blocks), so results are the same
// bits for any number of slots.
// Everything here is templated on Arch (STYLE.md 4.7).
#pragma once

#include <cstddef>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/activation.hpp"
#include "ember/kernels/copy.hpp"
#include "ember/kernels/gemm_f32.hpp"
#include "ember/kernels/unroll.hpp"
#include "ember/runtime/executor.hpp"

EMBER_NAMESPACE_BEGIN
namespace kernels {

/// One image of a Winograd convolution; the pointers are set per run.
struct winograd_f32_problem {
    const float* x = nullptr;         // [channels, in_h, in_w]
    float* y = nullptr;               // [out_channels, out_h, out_w]
    const float* packed_u = nullptr;  // 36 matrices [out_channels, channels], each packed by pack_gemm_a, in turn
    std::int64_t channels = 0, out_channels = 0;
    std::int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0, pad_h = 0, pad_w = 0;
    gemm_epilogue post;  // bias per output channel; residual laid out like y (ld_residual unused)
};

/// Output tiles (4x4) of an out_h x out_w plane.
inline constexpr std::int64_t winograd_tiles(std::int64_t out_h, std::int64_t out_w) noexcept { return ((out_h + 3) / 4) * ((out_w + 3) / 4); }

/// Columns of the per-tile matrices: the tiles rounded up to the GEMM's column tile (NR).
template <class Arch>
constexpr std::int64_t winograd_tile_stride(std::int64_t tiles) noexcept {
    constexpr std::int64_t nr = gemm_blocking<Arch>::nr;
    return (tiles + nr - 1) / nr * nr;
}

/// Floats between the 36 matrices of V (and of M) beyond their size: with sizes a multiple of
/// 4 KiB (64 channels x 224 tiles x 4 bytes is 14 pages) the transforms' 36 streams would fall in
/// one L1 set and evict each other; 16 floats (a cache line) put each in a set of its own.
inline constexpr std::int64_t winograd_skew = 16;

namespace winograd_detail {

// B^T applied to a column (or row) of six: the input transform's 1-D step.
template <class V>
EMBER_DETAIL_INLINE inline void input_1d(const V (&d)[6], V (&o)[6]) noexcept {
    const V four(4.0f), five(5.0f), two(2.0f);
    o[0] = xsimd::fma(four, d[0], xsimd::fnma(five, d[2], d[4]));
    o[1] = xsimd::fnma(four, d[1] + d[2], d[3] + d[4]);
    o[2] = xsimd::fma(four, d[1] - d[2], d[4] - d[3]);
    o[3] = xsimd::fma(two, d[3] - d[1], d[4] - d[2]);
    o[4] = xsimd::fma(two, d[1] - d[3], d[4] - d[2]);
    o[5] = xsimd::fma(four, d[1], xsimd::fnma(five, d[3], d[5]));
}

// A^T applied to a column (or row) of six: the output transform's 1-D step, six to four.
template <class V>
EMBER_DETAIL_INLINE inline void output_1d(const V (&m)[6], V (&o)[4]) noexcept {
    const V s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4], d34 = m[3] - m[4];
    o[0] = m[0] + s12 + s34;
    o[1] = xsimd::fma(V(2.0f), d34, d12);
    o[2] = xsimd::fma(V(4.0f), s34, s12);
    o[3] = xsimd::fma(V(8.0f), d34, d12) + m[5];
}

// The gathered tiles' row stride: whole vectors of any ISA past the last tile (gather_tiles).
template <class Arch>
constexpr std::int64_t gather_stride(std::int64_t ts) noexcept {
    return ts + 16;
}

// Floats of one slot's scratch: the gathered tiles (36 rows of gather_stride), then the phase
// planes of gather_tiles ((4 tiles_h + 2) input rows x 4 phases x (tiles_w + 1), and a vector of
// slack).
template <class Arch>
constexpr std::int64_t scratch_floats(std::int64_t out_h, std::int64_t out_w) noexcept {
    const std::int64_t tiles_h = (out_h + 3) / 4, tiles_w = (out_w + 3) / 4;
    return 36 * gather_stride<Arch>(winograd_tile_stride<Arch>(tiles_h * tiles_w)) + (4 * tiles_h + 2) * 4 * (tiles_w + 1) + 16;
}

// Channel c's 6x6 input tiles t0 <= t < t1 into d[(r * 6 + s) * ds + t - t0] (ds =
// gather_stride(ts), ts: the columns of the slot's matrices), zeros in the padding and in the
// columns past t1. Tap (r, s) of the tiles in tile row ti is every fourth float of one input
// row, from column s - pad_w: the rows the tiles need are first split into their four column
// phases (ph[(row * 4 + q) * (tiles_w + 1) + j] = x[row - pad_h][4 j + q - pad_w], zero
// outside), and each tap of a tile row is then a copy of whole vectors: the part past the tile
// row's end lands where the next tile row (or the zeros past t1) is written after it.
template <class Arch>
void gather_tiles(const winograd_f32_problem& p, const float* plane, std::int64_t tiles_w, std::int64_t t0, std::int64_t t1, std::int64_t ts,
                  float* d, float* ph) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    const std::int64_t pw = tiles_w + 1, ds = gather_stride<Arch>(ts);
    const std::int64_t ti_first = t0 / tiles_w, ti_last = (t1 - 1) / tiles_w, row0 = 4 * ti_first;
    for (std::int64_t row = row0; row < 4 * ti_last + 6; ++row) {
        const std::int64_t ih = row - p.pad_h;
        float* out = ph + (row - row0) * 4 * pw;
        if (ih < 0 || ih >= p.in_h) {
            fill_floats<Arch>(out, 0.0f, 4 * pw);
            continue;
        }
        // input column iw = 4 j + q - pad_w: j in [j_lo, j_hi) has all four inside the row
        const float* src = plane + ih * p.in_w - p.pad_w;
        std::int64_t j_lo = (p.pad_w + 3) / 4, j_hi = (p.in_w + p.pad_w) / 4;
        if (j_hi > pw) j_hi = pw;
        if (j_lo > j_hi) j_lo = j_hi;
        float* o0 = out;
        float* o1 = out + pw;
        float* o2 = out + 2 * pw;
        float* o3 = out + 3 * pw;
        for (std::int64_t j = j_lo; j < j_hi; ++j) {
            const float* q = src + 4 * j;
            o0[j] = q[0];
            o1[j] = q[1];
            o2[j] = q[2];
            o3[j] = q[3];
        }
        auto edge = [&](std::int64_t j) noexcept {
            for (std::int64_t q = 0; q < 4; ++q) {
                const std::int64_t iw = 4 * j + q - p.pad_w;
                out[q * pw + j] = iw >= 0 && iw < p.in_w ? src[4 * j + q] : 0.0f;
            }
        };
        for (std::int64_t j = 0; j < j_lo; ++j) edge(j);
        for (std::int64_t j = j_hi; j < pw; ++j) edge(j);
    }
    for (std::int64_t ti = ti_first; ti <= ti_last; ++ti) {
        const std::int64_t first = ti * tiles_w;
        const std::int64_t a = (t0 > first ? t0 : first) - first, b = (t1 < first + tiles_w ? t1 : first + tiles_w) - first;
        const std::int64_t vectors = (b - a + W - 1) / W;
        for (std::int64_t r = 0; r < 6; ++r)
            for (std::int64_t s = 0; s < 6; ++s) {
                const float* from = ph + ((4 * (ti - ti_first) + r) * 4 + s % 4) * pw + s / 4 + a;
                float* to = d + (r * 6 + s) * ds + first + a - t0;
                for (std::int64_t v = 0; v < vectors; ++v) B::load_unaligned(from + v * W).store_unaligned(to + v * W);
            }
    }
    for (std::int64_t e = 0; e < 36; ++e) fill_floats<Arch>(d + e * ds + (t1 - t0), 0.0f, ts - (t1 - t0));
}

// The gathered tiles of one channel (d) to that channel's row of each V_xi (at v + xi * v_stride),
// written straight into gemm_f32's packed B layout (pack_gemm_b): row c of a (C x ts) matrix is
// in depth block c / KC (kc rows), and within it each NR-column panel holds kc rows of NR.
template <class Arch>
void transform_input(const float* d, std::int64_t ds, std::int64_t ts, std::int64_t c, std::int64_t channels, float* v, std::int64_t v_stride) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    constexpr std::int64_t KC = gemm_blocking<Arch>::kc, NR = gemm_blocking<Arch>::nr;
    const std::int64_t p0 = c / KC * KC, kc = channels - p0 < KC ? channels - p0 : KC;
    float* row = v + p0 * ts + (c - p0) * NR;  // panel 0 of row c; panel j is j * NR * kc further
    for (std::int64_t t = 0; t < ts; t += W) {
        float* dst = row + t / NR * NR * kc + t % NR;
        B tmp[6][6];
        for (int s = 0; s < 6; ++s) {
            B col[6], out[6];
            for (int r = 0; r < 6; ++r) col[r] = B::load_unaligned(d + (r * 6 + s) * ds + t);
            input_1d(col, out);
            for (int r = 0; r < 6; ++r) tmp[r][s] = out[r];
        }
        for (int r = 0; r < 6; ++r) {
            B out[6];
            input_1d(tmp[r], out);
            for (int s = 0; s < 6; ++s) out[s].store_unaligned(dst + (r * 6 + s) * v_stride);
        }
    }
}

// Where output column x of a tile row's row r comes from in o (16 rows of ts, from the tile
// range's first tile): o[(4 r + x % 4) * ts + x / 4]. Gather offsets, worked out once per call of
// the output step: `row` for any run of one row (loaded from x on), and `block` for the whole
// tile row (its up to four rows are one contiguous run of the plane) where it has at most
// block_max values.
template <class Arch>
struct output_offsets {
    static constexpr std::int64_t block_max = 256, row_max = 1024;
    alignas(64) std::int32_t row[row_max];
    alignas(64) std::int32_t block[block_max];
    std::int64_t row_len = 0, block_len = 0;  // 0: not used (too wide, or no gather on Arch)

    output_offsets(std::int64_t out_w, std::int64_t ts) noexcept {
        // AVX-512 only: on AVX2 the gathers gave wrong results under QEMU 7.2 (Debian 12's, which
        // runs our AVX2 tests in CI) though right on the hardware, and its 8-lane gathers gain less
        if (!native_gather<Arch>() || xsimd::batch<float, Arch>::size < 16) return;
        if (out_w <= row_max) {
            row_len = out_w;
            for (std::int64_t x = 0; x < out_w; ++x) row[x] = static_cast<std::int32_t>(x % 4 * ts + x / 4);
        }
        if (4 * out_w <= block_max) {
            block_len = 4 * out_w;
            for (std::int64_t i = 0; i < block_len; ++i) block[i] = static_cast<std::int32_t>(i / out_w * 4 * ts + row[i % out_w]);
        }
    }
};

// dst[0, n) = src[offsets[0, n)], a vector of W at a time, the last one overlapping (n >= W).
template <class Arch>
EMBER_DETAIL_INLINE inline void gather_run(const float* src, const std::int32_t* offsets, std::int64_t n, float* dst) noexcept {
    using B = xsimd::batch<float, Arch>;
    using I = xsimd::batch<std::int32_t, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    for (std::int64_t x = 0;; x += W) {
        const std::int64_t at = x + W < n ? x : n - W;
        gather_floats<Arch>(src, I::load_unaligned(offsets + at)).store_unaligned(dst + at);
        if (at == n - W) return;
    }
}

// Output channel k, tiles t0 <= t < t1: its 36 rows of M (m + xi * m_stride, from column t0;
// ts columns, a whole number of vectors) to the output plane, plus bias; o: 16 rows of ts.
template <class Arch>
void transform_output(const winograd_f32_problem& p, const float* m, std::int64_t m_stride, float bias, std::int64_t tiles_w,
                      std::int64_t t0, std::int64_t t1, std::int64_t ts, const output_offsets<Arch>& at, float* o, float* plane) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    const B vbias(bias);
    for (std::int64_t t = 0; t < ts; t += W) {
        B tmp[4][6];
        for (int s = 0; s < 6; ++s) {
            B col[6], out[4];
            for (int r = 0; r < 6; ++r) col[r] = B::load_unaligned(m + (r * 6 + s) * m_stride + t);
            output_1d(col, out);
            for (int r = 0; r < 4; ++r) tmp[r][s] = out[r];
        }
        for (int r = 0; r < 4; ++r) {
            B out[4];
            output_1d(tmp[r], out);
            for (int s = 0; s < 4; ++s) (out[s] + vbias).store_unaligned(o + (r * 4 + s) * ts + t);
        }
    }
    // Each output row interleaves four rows of o (output_offsets). On AVX-512, a vector
    // of W columns is one gather: four scalar loads and stores per tile were most of this
    // function's time (SqueezeNet's and ResNet's Winograd layers); a whole tile row of a narrow
    // plane (14x14: four rows of 14) is one run. Runs narrower than a vector go one by one.
    for (std::int64_t ti = t0 / tiles_w; ti <= (t1 - 1) / tiles_w; ++ti) {
        const std::int64_t first = ti * tiles_w;
        const std::int64_t a = (t0 > first ? t0 : first) - first, b = (t1 < first + tiles_w ? t1 : first + tiles_w) - first;
        const std::int64_t x_begin = 4 * a, x_end = 4 * b < p.out_w ? 4 * b : p.out_w;
        const std::int64_t rows = p.out_h - 4 * ti < 4 ? p.out_h - 4 * ti : 4;
        const float* src = o + first - t0;
        float* out = plane + 4 * ti * p.out_w;
        if (at.block_len != 0 && x_begin == 0 && x_end == p.out_w && rows * p.out_w >= W) {
            gather_run<Arch>(src, at.block, rows * p.out_w, out);
            continue;
        }
        for (std::int64_t r = 0; r < rows; ++r, src += 4 * ts, out += p.out_w) {
            if (at.row_len != 0 && x_end - x_begin >= W) {
                gather_run<Arch>(src, at.row + x_begin, x_end - x_begin, out + x_begin);
                continue;
            }
            for (std::int64_t x = x_begin; x < x_end; ++x) out[x] = src[x % 4 * ts + x / 4];
        }
    }
}

// [0, count) split into `slots` fixed ranges: slot's share.
inline void share(std::int64_t count, std::int64_t slots, std::int64_t slot, std::int64_t& begin, std::int64_t& end) noexcept {
    begin = count * slot / slots;
    end = count * (slot + 1) / slots;
}

} // namespace winograd_detail

/// Floats of workspace winograd_f32 needs on `slots` slots (64-byte aligned).
template <class Arch>
constexpr std::int64_t winograd_workspace_floats(std::int64_t channels, std::int64_t out_channels, std::int64_t out_h, std::int64_t out_w,
                                                 std::int64_t slots) noexcept {
    const std::int64_t ts = winograd_tile_stride<Arch>(winograd_tiles(out_h, out_w));
    return 36 * (ts * (channels + out_channels) + 2 * winograd_skew) + slots * winograd_detail::scratch_floats<Arch>(out_h, out_w);
}

/// Runs one image on up to `slots` workers of ex; workspace holds winograd_workspace_floats floats.
template <class Arch>
void winograd_f32(const winograd_f32_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept {
    namespace wd = winograd_detail;
    const std::int64_t C = p.channels, K = p.out_channels;
    if (K <= 0 || p.out_h <= 0 || p.out_w <= 0) return;
    if (slots < 1) slots = 1;
    const std::int64_t tiles_w = (p.out_w + 3) / 4, tiles = winograd_tiles(p.out_h, p.out_w), ts = winograd_tile_stride<Arch>(tiles);
    const std::int64_t v_stride = C * ts + winograd_skew, m_stride = K * ts + winograd_skew;
    float* v = workspace;  // 36 packed B operands (C x ts), v_stride apart
    float* m = v + 36 * v_stride;
    float* scratch = m + 36 * m_stride;
    auto over_slots = [&](auto&& body) noexcept { for_each_slot(ex, slots, body); };
    constexpr std::int64_t NR = gemm_blocking<Arch>::nr;
    const std::int64_t panels = ts / NR, slot_scratch = wd::scratch_floats<Arch>(p.out_h, p.out_w);
    // tiles [t0, t1) (whole GEMM column panels from t0; ts_s columns) through the three steps
    auto input = [&](std::int64_t c0, std::int64_t c1, std::int64_t t0, std::int64_t t1, std::int64_t ts_s, float* d) noexcept {
        for (std::int64_t c = c0; c < c1; ++c) {
            wd::gather_tiles<Arch>(p, p.x + c * p.in_h * p.in_w, tiles_w, t0, t1, ts_s, d, d + 36 * wd::gather_stride<Arch>(ts_s));
            wd::transform_input<Arch>(d, wd::gather_stride<Arch>(ts_s), ts_s, c, C, v + C * t0, v_stride);
        }
    };
    auto gemms = [&](std::int64_t x0, std::int64_t x1, std::int64_t t0, std::int64_t t1) noexcept {
        for (std::int64_t xi = x0; xi < x1; ++xi) {
            gemm_f32_problem pr;
            pr.m = K;
            pr.n = t1 - t0;
            pr.k = C;
            pr.packed_a = p.packed_u + xi * packed_a_floats(K, C);
            pr.packed_b = v + xi * v_stride + C * t0;
            pr.c = m + xi * m_stride + t0;
            pr.ldc = ts;
            gemm_f32<Arch>(pr, nullptr, 1, nullptr);  // both operands packed: no workspace; C == 0 writes zeros
        }
    };
    auto output = [&](std::int64_t k0, std::int64_t k1, std::int64_t t0, std::int64_t t1, std::int64_t ts_s, float* o) noexcept {
        const wd::output_offsets<Arch> at(p.out_w, ts_s);
        for (std::int64_t k = k0; k < k1; ++k)
            wd::transform_output<Arch>(p, m + k * ts + t0, m_stride, p.post.bias ? p.post.bias[k] : 0.0f, tiles_w, t0, t1, ts_s, at, o,
                                       p.y + k * p.out_h * p.out_w);
    };
    if (slots == 1 || panels >= 4 * slots) {
        // each slot takes whole column panels through all three steps: its V and M stay in its
        // own cache, and one wake-up does it all (one slot: all of them). Its V is a packed
        // (C x ts_s) matrix of its own at column t0. Not with fewer than 4 panels a slot: whole
        // panels split unevenly (a 27x27 output's 49 tiles are panels of 32 and 17 on 2 slots,
        // a 55x55's 196 are 128 and 68), and the steps in turn, split evenly, were 0.69-0.88x
        // the time on SqueezeNet's 27x27 and ResNet's 28x28 layers at 2 threads.
        over_slots([&](std::int64_t slot) noexcept {
            std::int64_t p0, p1;
            wd::share(panels, slots, slot, p0, p1);
            if (p0 == p1) return;
            const std::int64_t t0 = p0 * NR, t1 = p1 * NR < tiles ? p1 * NR : tiles, ts_s = (p1 - p0) * NR;
            float* d = scratch + slot * slot_scratch;
            input(0, C, t0, t1, ts_s, d);
            gemms(0, 36, t0, t1);
            output(0, K, t0, t1, ts_s, d);
        });
    } else {
        // few panels a slot (a 14x14 output is 16 tiles, one panel): the steps in turn, split by
        // input channel, by GEMM, by output channel
        over_slots([&](std::int64_t slot) noexcept {
            std::int64_t c0, c1;
            wd::share(C, slots, slot, c0, c1);
            input(c0, c1, 0, tiles, ts, scratch + slot * slot_scratch);
        });
        over_slots([&](std::int64_t slot) noexcept {
            std::int64_t x0, x1;
            wd::share(36, slots, slot, x0, x1);
            gemms(x0, x1, 0, tiles);
        });
        over_slots([&](std::int64_t slot) noexcept {
            std::int64_t k0, k1;
            wd::share(K, slots, slot, k0, k1);
            output(k0, k1, 0, tiles, ts, scratch + slot * slot_scratch);
        });
    }
    // residual and activation over the finished planes, split by output channel
    if (p.post.residual || p.post.act.kind != activation::none) {
        const std::int64_t plane_size = p.out_h * p.out_w;
        visit_activation(p.post.act, [&](auto act) noexcept {
            over_slots([&](std::int64_t slot) noexcept {
                std::int64_t k0, k1;
                wd::share(K, slots, slot, k0, k1);
                for (std::int64_t k = k0; k < k1; ++k)
                    residual_activation<Arch>(p.y + k * plane_size, p.post.residual ? p.post.residual + k * plane_size : nullptr, plane_size, act);
            });
        });
    }
}

} // namespace kernels
EMBER_NAMESPACE_END
