// SPDX-License-Identifier: Apache-2.0
// Packed, cache-blocked SGEMM over xsimd: C[M, N] = A[M, K] * B[K, N], then the epilogue
// act(C + bias + residual). Written once over batch<float, Arch>; the register tile per arch is
// gemm_tile<Arch>. Everything here is templated on Arch (STYLE.md 4.7), so a translation unit
// compiled for one ISA emits no code another ISA's build could pick up.
//
//   loops (BLIS order), per task = one MC x NC block of C:
//     for pc in K step KC:      A block (MC x kc) packed into MR-row panels, or read pre-packed
//       for jr in NC step NR:   B panel (kc x NR) packed, or read pre-packed (weights)
//         for ir in MC step MR: micro-kernel: MR x NR accumulators over kc
//
//   packed A panel: a[p * mr + i] (mr = MR, or fewer in the last panel: no padding)
//   packed B panel: b[p * NR + j] (columns past N are zero)
//
// Every element of C is summed in the same order (pc blocks in turn, p inside a block) whatever
// the partition into tasks, so results are bit-identical for any thread count.
//
// Transposed output (gemm_f32_problem::out): the caller asks for out = C^T, computed as the GEMM
// C = B^T A^T with the roles swapped, for a C whose columns would waste the register tile: a conv
// with a 7x7 output has 49 columns, two 32-wide tiles at 77% use, while its 512 or 2048 output
// channels fill every tile. The tile is then written through a scratch C, transposed with the
// epilogue once a block's sums are done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/activation.hpp"
#include "ember/kernels/copy.hpp"
#include "ember/kernels/unroll.hpp"
#include "ember/runtime/executor.hpp"

EMBER_NAMESPACE_BEGIN
namespace kernels {

/// Register tile of the micro-kernel: mr rows of A broadcast against nv vectors of B.
template <class Arch>
struct gemm_tile {
    // SSE2 (16 xmm, no FMA) and the default: 6 x 2 vectors = 12 accumulators + 2 B + 1 A.
    static constexpr int mr = 6;
    static constexpr int nv = 2;
};
// AVX2: 16 ymm: 6 rows x 16 columns = 12 accumulators + 2 B loads + 1 broadcast = 15.
template <>
struct gemm_tile<xsimd::fma3<xsimd::avx2>> {
    static constexpr int mr = 6;
    static constexpr int nv = 2;
};
// AVX-512: 32 zmm: 14 rows x 32 columns = 28 accumulators + 2 B loads + 1 broadcast = 31; the
// broadcasts fold into the FMAs as {1to16} memory operands.
template <>
struct gemm_tile<xsimd::avx512f> {
    static constexpr int mr = 14;
    static constexpr int nv = 2;
};
// NEON: 32 q registers: 8 x 12 = 24 accumulators + 3 B + 1 broadcast.
template <>
struct gemm_tile<xsimd::neon64> {
    static constexpr int mr = 8;
    static constexpr int nv = 3;
};

template <class Arch>
struct gemm_blocking {
    static constexpr int mr = gemm_tile<Arch>::mr;
    static constexpr int nr = gemm_tile<Arch>::nv * static_cast<int>(xsimd::batch<float, Arch>::size);
    // Measured on Zen 5 (48 KiB L1d, 1 MiB L2) at 1024^3 and ResNet-50 conv shapes; 128-384 for kc
    // and 120-240 for mc were within noise of each other.
    static constexpr std::int64_t kc = 256;                       // a B panel (kc x nr) stays in L1
    static constexpr std::int64_t mc = mr * ((120 + mr - 1) / mr);  // an A block (mc x kc) stays in L2
    static constexpr std::int64_t nc = nr * 16;
};

/// Where the epilogue's extra operands are. bias: per row (conv: per output channel) or per
/// column (Gemm's C row vector); residual: a matrix laid out like C.
struct gemm_epilogue {
    activation_spec act;
    const float* bias = nullptr;
    bool bias_per_row = false;
    const float* residual = nullptr;
    std::int64_t ld_residual = 0;
};

/// A strided matrix: element (r, c) at data[r * rs + c * cs].
struct strided_matrix {
    const float* data = nullptr;
    std::int64_t rs = 0, cs = 0;
};

/// B = the im2col matrix of one image's channels in NCHW, never materialised: row p = (c, kh, kw)
/// of the kernel window, column j = (oh, ow) of the output; the packer reads the input directly.
struct conv_source {
    const float* x = nullptr;  // first channel of the group, of one image
    std::int64_t in_h = 0, in_w = 0, out_w = 0;
    std::int64_t kh = 0, kw = 0;
    std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
};

/// Floats of the pre-packed form of a (rows x depth) A operand: no padding.
inline constexpr std::int64_t packed_a_floats(std::int64_t m, std::int64_t k) noexcept { return m * k; }

/// Floats of the pre-packed form of a (depth x cols) B operand for Arch: columns padded to NR.
template <class Arch>
constexpr std::int64_t packed_b_floats(std::int64_t k, std::int64_t n) noexcept {
    constexpr std::int64_t nr = gemm_blocking<Arch>::nr;
    return k * ((n + nr - 1) / nr) * nr;
}

namespace gemm_detail {

template <class Arch>
EMBER_DETAIL_INLINE inline xsimd::batch<float, Arch> madd(xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b, xsimd::batch<float, Arch> c) noexcept {
    return xsimd::fma(a, b, c);  // xsimd emulates it with mul + add where the ISA has no FMA
}

// Packs rows [i0, i0 + mc) x depth [p0, p0 + kc) of A into MR-row panels at dst.
template <class Arch>
void pack_a(const strided_matrix& a, std::int64_t i0, std::int64_t mc, std::int64_t p0, std::int64_t kc, float* dst) noexcept {
    constexpr int MR = gemm_blocking<Arch>::mr;
    for (std::int64_t r = 0; r < mc; r += MR) {
        const std::int64_t mr = mc - r < MR ? mc - r : MR;
        const float* src = a.data + (i0 + r) * a.rs + p0 * a.cs;
        if (a.cs == 1 && mr == MR) {
            // a full panel: MR row streams, written in order (the compiler keeps the MR row
            // pointers in registers and the writes are one contiguous stream)
            const float* rows[MR];
            for (int i = 0; i < MR; ++i) rows[i] = src + i * a.rs;
            for (std::int64_t p = 0; p < kc; ++p)
                static_for<MR>([&](auto i) EMBER_DETAIL_INLINE { dst[p * MR + i] = rows[i][p]; });
        } else if (a.cs == 1) {
            for (std::int64_t i = 0; i < mr; ++i) {
                const float* row = src + i * a.rs;
                for (std::int64_t p = 0; p < kc; ++p) dst[p * mr + i] = row[p];
            }
        } else if (a.rs == 1) {
            // A is the transpose of a row-major matrix (the swapped GEMM of a transposed output):
            // each packed row is a contiguous slice of one of its rows
            for (std::int64_t p = 0; p < kc; ++p) copy_floats<Arch>(src + p * a.cs, dst + p * mr, mr);
        } else {
            for (std::int64_t p = 0; p < kc; ++p)
                for (std::int64_t i = 0; i < mr; ++i) dst[p * mr + i] = src[i * a.rs + p * a.cs];
        }
        dst += mr * kc;
    }
}

// Packs depth [p0, p0 + kc) x columns [j0, j0 + nr) of a strided B into one NR-wide panel.
template <class Arch>
void pack_b_panel(const strided_matrix& b, std::int64_t p0, std::int64_t kc, std::int64_t j0, std::int64_t nr, float* dst) noexcept {
    constexpr int NR = gemm_blocking<Arch>::nr;
    const float* src = b.data + p0 * b.rs + j0 * b.cs;
    for (std::int64_t p = 0; p < kc; ++p) {
        float* d = dst + p * NR;
        const float* s = src + p * b.rs;
        if (b.cs == 1) {
            copy_floats<Arch>(s, d, nr);
        } else {
            for (std::int64_t j = 0; j < nr; ++j) d[j] = s[j * b.cs];
        }
        fill_floats<Arch>(d + nr, 0.0f, NR - nr);
    }
}

// Packs rows [p0, p0 + kc) x columns [j0, j0 + nr) of the implicit im2col matrix of x, row p at
// dst + p * ld (ld >= nr; columns [nr, ld) are zero): a B panel (ld = NR), or with the roles
// swapped an A panel of the transposed matrix (PW = MR, ld = nr). Within the panel, columns
// sharing an output row form a run; the runs depend on the panel only, so they are found once, and
// each packed row is then a few copies. A run of a stride-1 window is a slice of one input row,
// with zeros where it hangs over the padding.
template <class Arch, int PW>
void pack_conv_panel(const conv_source& s, std::int64_t p0, std::int64_t kc, std::int64_t j0, std::int64_t nr, std::int64_t ld,
                     float* dst) noexcept {
    struct run_t {
        std::int64_t j, len, ih0, iw0;  // first column in the panel, columns, input row and column at tap (0, 0)
    };
    run_t runs[PW];
    int run_count = 0;
    for (std::int64_t j = 0, oh = j0 / s.out_w, ow = j0 % s.out_w; j < nr; ++oh, ow = 0) {
        const std::int64_t len = (s.out_w - ow) < (nr - j) ? (s.out_w - ow) : (nr - j);
        runs[run_count++] = run_t{j, len, oh * s.stride_h - s.pad_h, ow * s.stride_w - s.pad_w};
        j += len;
    }
    const std::int64_t window = s.kh * s.kw;
    std::int64_t c = p0 / window, r = (p0 % window) / s.kw, q = p0 % s.kw;
    for (std::int64_t p = 0; p < kc; ++p) {
        float* d = dst + p * ld;
        const float* plane = s.x + c * s.in_h * s.in_w;
        for (int t = 0; t < run_count; ++t) {
            const run_t& run = runs[t];
            const std::int64_t ih = run.ih0 + r * s.dil_h;
            float* out = d + run.j;
            if (ih < 0 || ih >= s.in_h) {
                fill_floats<Arch>(out, 0.0f, run.len);
                continue;
            }
            const float* row = plane + ih * s.in_w;
            const std::int64_t iw0 = run.iw0 + q * s.dil_w;
            if (s.stride_w == 1) {
                // columns u with 0 <= iw0 + u < in_w come from the row, the rest are padding
                std::int64_t lo = iw0 < 0 ? -iw0 : 0;
                std::int64_t hi = s.in_w - iw0;
                if (lo > run.len) lo = run.len;
                if (hi > run.len) hi = run.len;
                if (hi < lo) hi = lo;
                fill_floats<Arch>(out, 0.0f, lo);
                copy_floats<Arch>(row + iw0 + lo, out + lo, hi - lo);
                fill_floats<Arch>(out + hi, 0.0f, run.len - hi);
            } else if (s.stride_w == 2) {
                // columns u with 0 <= iw0 + 2u < in_w; take_evens writes up to W / 2 floats past
                // hi, which the fill after it, the next run, the next row, the next panel or the
                // workspace's slack (gemm_workspace_floats) takes
                std::int64_t lo = iw0 < 0 ? (1 - iw0) / 2 : 0;
                std::int64_t hi = s.in_w - iw0 <= 0 ? 0 : (s.in_w - iw0 + 1) / 2;
                if (lo > run.len) lo = run.len;
                if (hi > run.len) hi = run.len;
                if (hi < lo) hi = lo;
                fill_floats<Arch>(out, 0.0f, lo);
                take_evens<Arch>(row + iw0 + 2 * lo, out + lo, 0, hi - lo);
                fill_floats<Arch>(out + hi, 0.0f, run.len - hi);
            } else {
                for (std::int64_t u = 0; u < run.len; ++u) {
                    const std::int64_t iw = iw0 + u * s.stride_w;
                    out[u] = iw >= 0 && iw < s.in_w ? row[iw] : 0.0f;
                }
            }
        }
        fill_floats<Arch>(d + nr, 0.0f, ld - nr);
        if (++q == s.kw) {
            q = 0;
            if (++r == s.kh) {
                r = 0;
                ++c;
            }
        }
    }
}

template <class Arch>
void pack_b_panel(const conv_source& s, std::int64_t p0, std::int64_t kc, std::int64_t j0, std::int64_t nr, float* dst) noexcept {
    constexpr int NR = gemm_blocking<Arch>::nr;
    pack_conv_panel<Arch, NR>(s, p0, kc, j0, nr, NR, dst);
}

// Packs rows [i0, i0 + mc) x depth [p0, p0 + kc) of the transposed im2col matrix of x (row i =
// output position i) into MR-row panels, as pack_a does for a strided A.
template <class Arch>
void pack_a(const conv_source& s, std::int64_t i0, std::int64_t mc, std::int64_t p0, std::int64_t kc, float* dst) noexcept {
    constexpr int MR = gemm_blocking<Arch>::mr;
    for (std::int64_t r = 0; r < mc; r += MR) {
        const std::int64_t mr = mc - r < MR ? mc - r : MR;
        pack_conv_panel<Arch, MR>(s, p0, kc, i0 + r, mr, mr, dst);
        dst += mr * kc;
    }
}

// The micro-kernel: C tile (mr x nr, at c with leading dimension ldc) = or += a * b over kc, with
// the epilogue applied when `last`. mr == MR is a compile-time constant; narrower last panels of
// A get their own instantiation (MR = 1 is the GEMV of a batch-1 Gemm). pf, when set: a cache line
// from pf + 16 p is prefetched at step p (the weights the next calls read, gemm_f32 says which).
template <class Arch, int MR, int NV, class Act>
void micro(std::int64_t kc, const float* EMBER_RESTRICT a, const float* EMBER_RESTRICT b, float* c, std::int64_t ldc, std::int64_t nr,
           bool accumulate, bool last, const gemm_epilogue& post, std::int64_t row0, std::int64_t col0, const Act& act,
           const float* pf) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr int W = static_cast<int>(B::size);
    constexpr int NR = NV * W;
    B acc[MR][NV];
    static_for<MR>([&](auto i) EMBER_DETAIL_INLINE { static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] = B(0.0f); }); });
    for (std::int64_t p = 0; p < kc; ++p) {
        if (pf) EMBER_DETAIL_PREFETCH(pf + 16 * p);
        B bv[NV];
        // Unaligned: a panel packed at run time lives in the arena, whose start the caller aligns
        // only to plan::arena_alignment() (16), not to the vector width.
        static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { bv[v] = B::load_unaligned(b + p * NR + v * W); });
        static_for<MR>([&](auto i) EMBER_DETAIL_INLINE {
            const B ai(a[p * MR + i]);
            static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] = madd(ai, bv[v], acc[i][v]); });
        });
    }
    const bool full = nr == NR;
    alignas(64) float tile[NR];
    static_for<MR>([&](auto i) EMBER_DETAIL_INLINE {
        float* crow = c + static_cast<std::int64_t>(i) * ldc;
        if (accumulate) {
            if (full) {
                static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] += B::load_unaligned(crow + v * W); });
            } else {
                for (std::int64_t j = 0; j < NR; ++j) tile[j] = j < nr ? crow[j] : 0.0f;
                static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] += B::load_aligned(tile + v * W); });
            }
        }
        if (last) {
            if (post.bias) {
                if (post.bias_per_row) {
                    const B bias(post.bias[row0 + static_cast<std::int64_t>(i)]);
                    static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] += bias; });
                } else if (full) {
                    static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] += B::load_unaligned(post.bias + col0 + v * W); });
                } else {
                    for (std::int64_t j = 0; j < NR; ++j) tile[j] = j < nr ? post.bias[col0 + j] : 0.0f;
                    static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] += B::load_aligned(tile + v * W); });
                }
            }
            if (post.residual) {
                const float* res = post.residual + (row0 + static_cast<std::int64_t>(i)) * post.ld_residual + col0;
                if (full) {
                    static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] += B::load_unaligned(res + v * W); });
                } else {
                    for (std::int64_t j = 0; j < NR; ++j) tile[j] = j < nr ? res[j] : 0.0f;
                    static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] += B::load_aligned(tile + v * W); });
                }
            }
            static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] = act(acc[i][v]); });
        }
        if (full) {
            static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v].store_unaligned(crow + v * W); });
        } else {
            static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v].store_aligned(tile + v * W); });
            for (std::int64_t j = 0; j < nr; ++j) crow[j] = tile[j];
        }
    });
}

template <class Arch, int NV, class Act, int... M>
void micro_any(int mr, std::int64_t kc, const float* a, const float* b, float* c, std::int64_t ldc, std::int64_t nr, bool accumulate, bool last,
               const gemm_epilogue& post, std::int64_t row0, std::int64_t col0, const Act& act, const float* pf,
               std::integer_sequence<int, M...>) noexcept {
    (void)((mr == M + 1 ? (micro<Arch, M + 1, NV>(kc, a, b, c, ldc, nr, accumulate, last, post, row0, col0, act, pf), true) : false) || ...);
}

} // namespace gemm_detail

/// Packs a whole (rows x depth) A operand for gemm_f32 (weights, at compile time).
template <class Arch>
void pack_gemm_a(const strided_matrix& a, std::int64_t m, std::int64_t k, float* dst) noexcept {
    constexpr std::int64_t KC = gemm_blocking<Arch>::kc;
    for (std::int64_t p0 = 0; p0 < k; p0 += KC) {
        const std::int64_t kc = k - p0 < KC ? k - p0 : KC;
        gemm_detail::pack_a<Arch>(a, 0, m, p0, kc, dst + p0 * m);
    }
}

/// Packs a whole (depth x cols) B operand for gemm_f32 (weights, at compile time).
template <class Arch>
void pack_gemm_b(const strided_matrix& b, std::int64_t k, std::int64_t n, float* dst) noexcept {
    constexpr std::int64_t KC = gemm_blocking<Arch>::kc, NR = gemm_blocking<Arch>::nr;
    const std::int64_t panels = (n + NR - 1) / NR;
    for (std::int64_t p0 = 0; p0 < k; p0 += KC) {
        const std::int64_t kc = k - p0 < KC ? k - p0 : KC;
        for (std::int64_t jp = 0; jp < panels; ++jp) {
            const std::int64_t j0 = jp * NR, nr = n - j0 < NR ? n - j0 : NR;
            gemm_detail::pack_b_panel<Arch>(b, p0, kc, j0, nr, dst + p0 * panels * NR + jp * NR * kc);
        }
    }
}

/// One GEMM: the operands, each either pre-packed (pack_gemm_a/b) or read (and packed per block
/// into the workspace) from a strided matrix, or for B the implicit im2col of a convolution.
struct gemm_f32_problem {
    std::int64_t m = 0, n = 0, k = 0;
    const float* packed_a = nullptr;  // or:
    strided_matrix a;
    const float* packed_b = nullptr;  // or:
    strided_matrix b;
    const conv_source* conv = nullptr;  // B from a convolution's input (when packed_b is null)
    const conv_source* conv_a = nullptr;  // or A: the transposed im2col (when packed_a is null)
    float* c = nullptr;
    std::int64_t ldc = 0;
    gemm_epilogue post;  // of C, or of out when out is set
    // When set, the result is out = C^T (out[j * ld_out + i] = C[i][j]) and c is the caller's
    // scratch for C; post is then out's epilogue (bias per row of out, bias_per_row set: a conv's
    // channels; residual laid out like out), applied as each block is written over.
    float* out = nullptr;
    std::int64_t ld_out = 0;
};

namespace gemm_detail {

// out[j * ld_out + i] = epilogue(C[i][j]) for the block rows [i0, i0 + mc) x columns [j0, j0 + nc)
// of the scratch C: a row of out at a time, W positions per vector gathered down a column of C
// (the block was just written, so it is in cache; the caller pads ldc off a multiple of 4 KiB, or
// the column's lines would all fall in one L1 set). Gathers, also for the last partial vector and
// its residual (offsets past the end repeat a valid one): a vector load after scalar stores cannot
// be forwarded and stalls, which took a fifth of a 7x7 conv's time.
template <class Arch, class Act>
void store_transposed(const gemm_f32_problem& pr, std::int64_t i0, std::int64_t mc, std::int64_t j0, std::int64_t nc, const Act& act) noexcept {
    using B = xsimd::batch<float, Arch>;
    using I = xsimd::batch<std::int32_t, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    static_assert(static_cast<std::int64_t>(I::size) == W, "one int32 index per float lane");
    const gemm_epilogue& post = pr.post;
    const std::int64_t full = mc / W * W, tail = mc - full;
    // offsets, int32: ldc * W < 2^31 (the caller's scratch is far smaller)
    alignas(64) std::int32_t down[W], tail_down[W], tail_along[W];
    for (std::int64_t l = 0; l < W; ++l) {
        down[l] = static_cast<std::int32_t>(l * pr.ldc);
        tail_down[l] = static_cast<std::int32_t>((l < tail ? l : 0) * pr.ldc);
        tail_along[l] = static_cast<std::int32_t>(l < tail ? l : 0);
    }
    const I col = I::load_aligned(down), tail_col = I::load_aligned(tail_down), tail_row = I::load_aligned(tail_along);
    // the bias is per row of out (gemm_f32_problem::out)
    alignas(64) float tile[W];
    for (std::int64_t j = j0; j < j0 + nc; ++j) {
        float* out = pr.out + j * pr.ld_out;
        const float* res = post.residual ? post.residual + j * post.ld_residual : nullptr;
        const B row_bias(post.bias ? post.bias[j] : 0.0f);
        for (std::int64_t i = i0; i < i0 + full; i += W) {
            B v = gather_floats<Arch>(pr.c + i * pr.ldc + j, col) + row_bias;
            if (res) v += B::load_unaligned(res + i);
            act(v).store_unaligned(out + i);
        }
        if (tail) {
            const std::int64_t i = i0 + full;
            B v = gather_floats<Arch>(pr.c + i * pr.ldc + j, tail_col) + row_bias;
            if (res) v += gather_floats<Arch>(res + i, tail_row);
            act(v).store_aligned(tile);
            for (std::int64_t l = 0; l < tail; ++l) out[i + l] = tile[l];
        }
    }
}

} // namespace gemm_detail

/// Floats of workspace one slot needs for a problem whose A / B are packed at run time.
template <class Arch>
constexpr std::int64_t gemm_workspace_floats(bool pack_a_at_run, bool pack_b_at_run) noexcept {
    using BL = gemm_blocking<Arch>;
    // B's panel has NR floats of slack after it: a stride-2 im2col row writes up to half a vector
    // past its end (pack_b_panel)
    // NR floats of slack after A's block too: an A packed from an im2col (pack_a's conv_source
    // form) writes up to half a vector past its last row the same way
    return (pack_a_at_run ? BL::mc * BL::kc + BL::nr : 0) + (pack_b_at_run ? BL::kc * BL::nr + BL::nr : 0);
}

/// Runs one problem on up to `slots` workers of ex; workspace holds slots * gemm_workspace_floats
/// floats (64-byte aligned). Each slot takes a fixed share of the MC x NC blocks.
template <class Arch>
void gemm_f32(const gemm_f32_problem& pr, float* workspace, std::int64_t slots, const executor* ex) noexcept {
    using BL = gemm_blocking<Arch>;
    constexpr int MR = BL::mr, NR = BL::nr, NV = gemm_tile<Arch>::nv;
    constexpr std::int64_t KC = BL::kc, MC = BL::mc, NC = BL::nc;
    if (pr.m <= 0 || pr.n <= 0) return;
    // Column blocks of up to NC, as many as a multiple of the slots where there are several (7
    // blocks of a 56x56 conv's 3136 columns on 2 slots would leave one slot a block to itself),
    // each a share of the NR-column panels that differs from the others' by one panel at most
    // (784 columns as 512 + 272 held 2 slots to 1.5x one); column blocking never changes the
    // order of any sum.
    const std::int64_t b_panels = (pr.n + NR - 1) / NR;
    std::int64_t n_blocks = (pr.n + NC - 1) / NC;
    if (slots > 1 && n_blocks > 1) n_blocks = (n_blocks + slots - 1) / slots * slots;
    // Rows per block: MC when A is packed here (its workspace holds MC rows); with A pre-packed,
    // as many as keep every slot busy, up to MC_MAX, so that each B panel (packed per block) is
    // packed fewer times. The blocking never changes the order of any sum.
    std::int64_t row_block = MC;
    if (pr.packed_a) {
        constexpr std::int64_t MC_MAX = MR * ((480 + MR - 1) / MR);
        const std::int64_t want_m_blocks = slots > n_blocks ? (slots + n_blocks - 1) / n_blocks : 1;
        std::int64_t rows = (pr.m + want_m_blocks - 1) / want_m_blocks;
        rows = (rows + MR - 1) / MR * MR;
        row_block = rows < MR ? MR : (rows > MC_MAX ? MC_MAX : rows);
    }
    // as many blocks of rows as row_block gives, each an even share of the MR-row panels (no
    // more than row_block rows: 196 rows in MC = 126 were 126 + 70, one slot's work 1.8x the
    // other's)
    const std::int64_t a_panels = (pr.m + MR - 1) / MR, m_blocks = (pr.m + row_block - 1) / row_block;
    // too few blocks for the slots (a transposed problem has a few dozen rows and A packed
    // here): narrower column blocks
    if (slots > m_blocks * n_blocks) n_blocks = (slots + m_blocks - 1) / m_blocks;
    if (n_blocks > b_panels) n_blocks = b_panels;
    const std::int64_t blocks = m_blocks * n_blocks;
    if (slots > blocks) slots = blocks;
    if (slots < 1) slots = 1;
    // k == 0 packs nothing: no workspace is used then (a caller may pass null for it, and null
    // for an empty packed operand)
    const bool runtime_a = pr.packed_a == nullptr && pr.k > 0, runtime_b = pr.packed_b == nullptr && pr.k > 0;
    const std::int64_t ws_floats = gemm_workspace_floats<Arch>(runtime_a, runtime_b);
    // a transposed output takes the epilogue when its block is written over, not in the tile
    const bool tile_epilogue = pr.out == nullptr;
    visit_activation(pr.post.act, [&](auto act) {
        auto run_slot = [&](std::int64_t slot) noexcept {
            // with A and B both packed at compile there is no workspace (it may be null)
            float* ws_a = ws_floats == 0 ? workspace : workspace + slot * ws_floats;
            float* ws_b = ws_a + (runtime_a ? MC * KC + NR : 0);
            for (std::int64_t blk = slot; blk < blocks; blk += slots) {
                // rows and columns of the block: even shares of the MR-row and NR-column panels
                const std::int64_t row = blk / n_blocks, col = blk % n_blocks;
                const std::int64_t i0 = row * a_panels / m_blocks * MR, i1 = (row + 1) * a_panels / m_blocks * MR;
                const std::int64_t j0 = col * b_panels / n_blocks * NR, j1 = (col + 1) * b_panels / n_blocks * NR;
                const std::int64_t mc = (i1 < pr.m ? i1 : pr.m) - i0, nc = (j1 < pr.n ? j1 : pr.n) - j0;
                // k == 0 still makes one pass: C is then the epilogue of zero
                const std::int64_t k_steps = pr.k == 0 ? 1 : (pr.k + KC - 1) / KC;
                for (std::int64_t step = 0; step < k_steps; ++step) {
                    const std::int64_t p0 = step * KC, kc = pr.k - p0 < KC ? pr.k - p0 : KC;
                    const bool first = step == 0, last = step + 1 == k_steps;
                    const float* a_block;
                    if (runtime_a) {
                        if (pr.conv_a)
                            gemm_detail::pack_a<Arch>(*pr.conv_a, i0, mc, p0, kc, ws_a);
                        else
                            gemm_detail::pack_a<Arch>(pr.a, i0, mc, p0, kc, ws_a);
                        a_block = ws_a;
                    } else {
                        a_block = pr.packed_a + p0 * pr.m + i0 * kc;
                    }
                    for (std::int64_t j = j0; j < j0 + nc; j += NR) {
                        const std::int64_t nr = j0 + nc - j < NR ? j0 + nc - j : NR;
                        const float* b_panel;
                        if (runtime_b) {
                            if (pr.conv)
                                gemm_detail::pack_b_panel<Arch>(*pr.conv, p0, kc, j, nr, ws_b);
                            else
                                gemm_detail::pack_b_panel<Arch>(pr.b, p0, kc, j, nr, ws_b);
                            b_panel = ws_b;
                        } else {
                            b_panel = pr.packed_b + p0 * b_panels * NR + (j / NR) * NR * kc;
                        }
                        for (std::int64_t i = 0; i < mc; i += MR) {
                            const int mr = mc - i < MR ? static_cast<int>(mc - i) : MR;
                            const float* a_panel = a_block + i * kc;
                            float* c = pr.c + (i0 + i) * pr.ldc + j;
                            // Weights arrive from memory once per run (a ResNet-50's 100 MB do not
                            // stay in any cache), at the rate the FMAs eat them; fetched one panel
                            // ahead, at a line per step, they come in while the tile computes.
                            // Packed A (conv and Winograd weights): while the block's first column
                            // panel runs, the next row panel, or the next depth block's first;
                            // packed B (Gemm's weights, a transposed conv's): the next panel
                            // (packed in the order the loop takes them) over the first row panels.
                            const float* pf = nullptr;
                            if (!runtime_a) {
                                if (j == j0 && i + MR < mc)
                                    pf = a_panel + MR * kc;
                                else if (j == j0 && step + 1 < k_steps)
                                    pf = pr.packed_a + (p0 + KC) * pr.m + i0 * (pr.k - p0 - KC < KC ? pr.k - p0 - KC : KC);
                            } else if (!runtime_b) {
                                const std::int64_t ahead = (i / MR) * 16 * kc;
                                if (ahead < NR * kc) pf = b_panel + NR * kc + ahead;
                            }
                            if (mr == MR)
                                gemm_detail::micro<Arch, MR, NV>(kc, a_panel, b_panel, c, pr.ldc, nr, !first, last && tile_epilogue, pr.post,
                                                                 i0 + i, j, act, pf);
                            else
                                gemm_detail::micro_any<Arch, NV>(mr, kc, a_panel, b_panel, c, pr.ldc, nr, !first, last && tile_epilogue,
                                                                 pr.post, i0 + i, j, act, pf, std::make_integer_sequence<int, MR - 1>{});
                        }
                    }
                }
                if (!tile_epilogue) gemm_detail::store_transposed<Arch>(pr, i0, mc, j0, nc, act);
            }
        };
        for_each_slot(ex, slots, run_slot);
    });
}

} // namespace kernels
EMBER_NAMESPACE_END
