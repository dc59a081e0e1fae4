// SPDX-License-Identifier: Apache-2.0
// INT8 GEMM with requantization in the epilogue: C[M, N] = W[M, K] * X[K, N], W int8 weights
// (symmetric: zero point 0) packed once at compile, X uint8 activations (asymmetric) packed per
// column panel at run time from a strided matrix or straight from a convolution's NCHW input
// (im2col never materialised), int32 accumulation, then per row m (output channel)
//
//   v = acc + offset[m]                     offset = bias[m] - x_zp * sum_k W[m, k], made at compile
//   int32 output:  v
//   8-bit output:  clamp(nearbyint(float(v) * scale[m]) + y_zp, lo, hi)   scale = x_scale * w_scale[m] / y_scale
//   float output:  clamp(float(v) * scale[m] + z, flo, fhi)               scale = x_scale * w_scale[m]
//
// The float output is a dequantized convolution (FusedQConv: the QDQ Conv whose output stays
// float) with its residual z (laid out like C, optional) and a Relu or Clip as the clamp.
//
// (the ONNX QLinearConv / ConvInteger definition with x_zp folded into the offset; lo > 0 fuses
// a ReLU). The multiply is in float, as ONNX Runtime's MLAS does: a value within float rounding of
// a half step may round the other way than the exact definition (one step, rarely).
//
// The dot product is the one thing each ISA does its own way, so it is a small traits struct,
// u8s8_dot<Arch>, and the rest is written once over xsimd's int32 batches:
//   - AVX-512 (the avx512 table requires VNNI): vpdpbusd, 4 byte products per int32 lane, the
//     operands packed as 4-byte groups along K;
//   - AVX2, SSE2, NEON: the bytes widened to int16 when packed and multiplied with vpmaddwd /
//     pmaddwd / smull+addp, 2 products per lane. Exact: the AVX2 alternative vpmaddubsw saturates
//     its int16 pair sums (255 * -128 * 2 < -32768), which would need 7-bit weights.
// Packed words are built with shifts, little-endian (x86-64, AArch64), never type-punned.
//
//   loops, per slot = a fixed range of NR-column panels:
//     for each panel:  X panel (K x NR) packed into the slot's workspace
//       for ir in M step MR: micro-kernel over all of K, epilogue straight from the registers
//
// K is not blocked: a packed panel of a ResNet-50 layer (K <= 4608) is at most 150 KiB, in L2,
// and every accumulator finishes in registers, so each output is one sum in one order whatever
// the thread count (bit-identical results).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/unroll.hpp"
#include "ember/kernels/narrow.hpp"
#include "ember/runtime/executor.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

EMBER_NAMESPACE_BEGIN
namespace kernels {

// Besides the dot product, each ISA moves 16 bytes at a time when X is packed: fill16 (o[t] = v),
// copy16 (o[t] = s[t] ^ flip) and copy16_stride2 (o[t] = s[2 t] ^ flip, reading s[0, 32)); and
// interleave8<G>(d, s, j, flip) makes the packed words of columns j .. j + 7 from those bytes of
// each of G rows s[0..G) (^ flip): G = 4, the rows' bytes in order (VNNI's words); G = 2, the two bytes
// zero-extended to int16 halves (pmaddwd's). Raw
// intrinsics, not 128-bit xsimd batches: those would instantiate xsimd's SSE2 functions in the
// AVX translation units too, the ODR hazard of STYLE.md 4.7; for the same reason the x86 ones
// are a base templated on the arch that inherits them, one copy per ISA.
#if defined(__SSE2__)
template <class Arch>
struct u8s8_x86_bytes {
    static EMBER_DETAIL_INLINE void fill16(std::uint8_t* o, std::uint8_t v) noexcept {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_set1_epi8(static_cast<char>(v)));
    }
    static EMBER_DETAIL_INLINE void copy16(std::uint8_t* o, const std::uint8_t* s, std::uint8_t flip) noexcept {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_xor_si128(v, _mm_set1_epi8(static_cast<char>(flip))));
    }
    static EMBER_DETAIL_INLINE void copy16_stride2(std::uint8_t* o, const std::uint8_t* s, std::uint8_t flip) noexcept {
        const __m128i even = _mm_set1_epi16(0xff);  // the even bytes as int16, then packed back to bytes
        const __m128i a = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)), even);
        const __m128i b = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16)), even);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_xor_si128(_mm_packus_epi16(a, b), _mm_set1_epi8(static_cast<char>(flip))));
    }
    template <int G>
    static EMBER_DETAIL_INLINE void interleave8(std::int32_t* d, const std::uint8_t* const* s, std::int64_t j, std::uint8_t flip) noexcept {
        const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
        const auto row = [&](int g) EMBER_DETAIL_INLINE { return _mm_xor_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s[g] + j)), f); };
        __m128i lo, hi;
        if constexpr (G == 4) {
            const __m128i ab = _mm_unpacklo_epi8(row(0), row(1)), cd = _mm_unpacklo_epi8(row(2), row(3));  // a0 b0 a1 b1 ..., c0 d0 ...
            lo = _mm_unpacklo_epi16(ab, cd);
            hi = _mm_unpackhi_epi16(ab, cd);
        } else {
            const __m128i z = _mm_setzero_si128();
            const __m128i a = _mm_unpacklo_epi8(row(0), z), b = _mm_unpacklo_epi8(row(1), z);  // as uint16
            lo = _mm_unpacklo_epi16(a, b);
            hi = _mm_unpackhi_epi16(a, b);
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), lo);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 4), hi);
    }
};
#endif

/// The ISA's int8 dot product over packed int32 words: `group` 8-bit values per word, as bytes
/// (VNNI) or widened to int16 (pmaddwd). dot(acc, x, w) adds, per lane, the products of the
/// word's x values (unsigned) with the w values (signed). `mr` x `nv` is the register tile.
template <class Arch, class = void>
struct u8s8_dot {
    static constexpr bool available = false;
};

#if defined(__SSE2__)
template <>
struct u8s8_dot<xsimd::sse2> : u8s8_x86_bytes<xsimd::sse2> {
    static constexpr bool available = true;
    static constexpr int group = 2, mr = 4, nv = 2;
    using I = xsimd::batch<std::int32_t, xsimd::sse2>;
    static EMBER_DETAIL_INLINE I dot(I acc, I x, I w) noexcept { return _mm_add_epi32(acc, _mm_madd_epi16(x, w)); }
    static constexpr std::string_view name = "sse2 (pmaddwd)";
};
#endif
#if defined(__AVX2__) && defined(__FMA__)
template <>
struct u8s8_dot<xsimd::fma3<xsimd::avx2>> : u8s8_x86_bytes<xsimd::fma3<xsimd::avx2>> {
    static constexpr bool available = true;
    static constexpr int group = 2, mr = 4, nv = 2;
    using I = xsimd::batch<std::int32_t, xsimd::fma3<xsimd::avx2>>;
    static EMBER_DETAIL_INLINE I dot(I acc, I x, I w) noexcept { return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w)); }
    static constexpr std::string_view name = "avx2 (vpmaddwd)";
};
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
template <>
struct u8s8_dot<xsimd::avx512f> : u8s8_x86_bytes<xsimd::avx512f> {
    static constexpr bool available = true;
    static constexpr int group = 4, mr = 8, nv = 2;
    using I = xsimd::batch<std::int32_t, xsimd::avx512f>;
    static EMBER_DETAIL_INLINE I dot(I acc, I x, I w) noexcept { return _mm512_dpbusd_epi32(acc, x, w); }
    static constexpr std::string_view name = "avx512 (vpdpbusd)";
};
#endif
#if defined(__aarch64__)
template <>
struct u8s8_dot<xsimd::neon64> {
    static constexpr bool available = true;
    static constexpr int group = 2, mr = 4, nv = 2;
    using I = xsimd::batch<std::int32_t, xsimd::neon64>;
    static EMBER_DETAIL_INLINE I dot(I acc, I x, I w) noexcept {
        const int16x8_t a = vreinterpretq_s16_s32(x), b = vreinterpretq_s16_s32(w);
        const int32x4_t lo = vmull_s16(vget_low_s16(a), vget_low_s16(b)), hi = vmull_high_s16(a, b);
        return vaddq_s32(acc, vpaddq_s32(lo, hi));
    }
    static EMBER_DETAIL_INLINE void fill16(std::uint8_t* o, std::uint8_t v) noexcept { vst1q_u8(o, vdupq_n_u8(v)); }
    static EMBER_DETAIL_INLINE void copy16(std::uint8_t* o, const std::uint8_t* s, std::uint8_t flip) noexcept {
        vst1q_u8(o, veorq_u8(vld1q_u8(s), vdupq_n_u8(flip)));
    }
    static EMBER_DETAIL_INLINE void copy16_stride2(std::uint8_t* o, const std::uint8_t* s, std::uint8_t flip) noexcept {
        vst1q_u8(o, veorq_u8(vuzp1q_u8(vld1q_u8(s), vld1q_u8(s + 16)), vdupq_n_u8(flip)));
    }
    template <int G>
    static EMBER_DETAIL_INLINE void interleave8(std::int32_t* d, const std::uint8_t* const* s, std::int64_t j, std::uint8_t flip) noexcept {
        static_assert(G == 2, "NEON's words are pairs");
        const uint8x8_t f = vdup_n_u8(flip);
        uint16x8x2_t halves;  // vst2 interleaves them: word t = (a[t], b[t]) as int16
        halves.val[0] = vmovl_u8(veor_u8(vld1_u8(s[0] + j), f));
        halves.val[1] = vmovl_u8(veor_u8(vld1_u8(s[1] + j), f));
        vst2q_u16(reinterpret_cast<std::uint16_t*>(d), halves);
    }
    static constexpr std::string_view name = "neon (smull)";
};
#endif

template <class Arch>
struct u8s8_blocking {
    using D = u8s8_dot<Arch>;
    static constexpr int group = D::group, mr = D::mr;
    static constexpr int nr = D::nv * static_cast<int>(xsimd::batch<std::int32_t, Arch>::size);
};

/// X = the im2col matrix of one image's channels in NCHW (uint8), never materialised: row
/// p = (c, kh, kw), column j = (oh, ow). Taps in the padding read pad_value (x's zero point, so
/// that they add nothing). Every byte read is XORed with `flip` (0x80 turns int8 into uint8).
struct qconv_source {
    const std::uint8_t* x = nullptr;
    std::int64_t in_h = 0, in_w = 0, out_w = 0;
    std::int64_t kh = 0, kw = 0;
    std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
    std::uint8_t pad_value = 0;
};

/// The epilogue's operands; element (i, j) of C (and of the residual) is at c + i * rs + j * cs
/// (in elements).
struct qgemm_epilogue {
    enum class output : std::uint8_t { int32, uint8, int8, float32 };
    const std::int32_t* offset = nullptr;  // [M], never null
    const float* scale = nullptr;          // [M], 8-bit and float output
    output out = output::uint8;
    std::int32_t zero_point = 0, lo = 0, hi = 255;   // 8-bit output
    const float* residual = nullptr;                 // float output: z, optional
    float flo = -std::numeric_limits<float>::infinity(), fhi = std::numeric_limits<float>::infinity();  // float output
    void* c = nullptr;
    std::int64_t rs = 0, cs = 1;
};

/// The epilogue of one row of C with its constants in registers: what every INT8 kernel (the GEMM's
/// micro-kernel, the depthwise convolution) does to an exact int32 sum `acc`.
template <class Arch>
struct qgemm_row {
    using I = xsimd::batch<std::int32_t, Arch>;
    using F = xsimd::batch<float, Arch>;
    I offset, zp, lo, hi;
    F scale, flo, fhi;
    /// Row `row` of post's offsets and scales.
    qgemm_row(const qgemm_epilogue& post, std::int64_t row) noexcept
        : offset(post.offset[row]), zp(post.zero_point), lo(post.lo), hi(post.hi), scale(post.scale ? post.scale[row] : 0.0f), flo(post.flo),
          fhi(post.fhi) {}
    /// int32 output: the sum plus the offset.
    EMBER_DETAIL_INLINE I wide(I acc) const noexcept { return acc + offset; }
    /// 8-bit output (as int32 lanes): requantized, rounded half to even, shifted, clamped.
    EMBER_DETAIL_INLINE I narrow(I acc) const noexcept { return narrow_sum(xsimd::to_float(acc + offset)); }
    /// The same from the sum with the offset already in, as a float (exact).
    EMBER_DETAIL_INLINE I narrow_sum(F sum) const noexcept { return xsimd::min(xsimd::max(xsimd::nearbyint_as_int(sum * scale) + zp, lo), hi); }
    /// float output before the residual and the clamp.
    EMBER_DETAIL_INLINE F real(I acc) const noexcept { return xsimd::to_float(acc + offset) * scale; }
    EMBER_DETAIL_INLINE F clamp(F y) const noexcept { return xsimd::min(xsimd::max(y, flo), fhi); }
};

/// One problem: W pre-packed (pack_u8s8_weights), X from a strided uint8 matrix (element (p, j)
/// at x[p * x_rs + j * x_cs], each byte XORed with x_flip) or from a convolution.
struct gemm_u8s8_problem {
    std::int64_t m = 0, n = 0, k = 0;
    const std::int32_t* packed_w = nullptr;
    const std::uint8_t* x = nullptr;
    std::int64_t x_rs = 0, x_cs = 1;
    std::uint8_t x_flip = 0;
    const qconv_source* conv = nullptr;
    qgemm_epilogue post;
};

/// Bytes of W (m x k) packed for Arch: row panels of MR (the last padded with zero rows), K in
/// words of `group` values.
template <class Arch>
constexpr std::int64_t packed_u8s8_weight_bytes(std::int64_t m, std::int64_t k) noexcept {
    using BL = u8s8_blocking<Arch>;
    return (m + BL::mr - 1) / BL::mr * BL::mr * ((k + BL::group - 1) / BL::group) * 4;
}

/// Bytes of workspace one slot needs for depth k (one packed X panel).
template <class Arch>
constexpr std::int64_t u8s8_workspace_bytes(std::int64_t k) noexcept {
    using BL = u8s8_blocking<Arch>;
    return ((k + BL::group - 1) / BL::group) * BL::nr * 4 + 64;
}

namespace u8s8_detail {

// One packed word: values v[0..group) (the missing ones 0), as bytes or as int16. Everything
// here is templated on Arch (STYLE.md 4.7): a plain inline function compiled in the AVX-512
// translation unit was picked by the linker for the SSE2 path, and crashed a pre-AVX CPU.
template <class Arch, int Group>
inline std::int32_t word(const std::int32_t* v) noexcept {
    std::uint32_t w = 0;
    if constexpr (Group == 4) {
        for (int g = 0; g < 4; ++g) w |= (static_cast<std::uint32_t>(v[g]) & 0xffu) << (8 * g);
    } else {
        w = (static_cast<std::uint32_t>(v[0]) & 0xffffu) | ((static_cast<std::uint32_t>(v[1]) & 0xffffu) << 16);
    }
    return static_cast<std::int32_t>(w);
}

// One row p of the X panel, columns [j0, j0 + nr), as NR bytes: from a strided matrix, or from
// the convolution's input through the panel's runs (columns sharing an output row; a run is a
// slice of one input row, every stride_w-th byte, with the padding around it).
struct conv_run {
    std::int64_t j, len, ih0, iw0;  // first column in the panel, columns, input row and column at tap (0, 0)
};

// o[u] = src[u * step] ^ flip for u < len. Whole 16-byte copies (step 1 and 2) while the source
// stays below `end` (one past the last byte of X); the last one may write up to 15 bytes past
// len, which the caller's row has room for and overwrites or ignores (columns past nr).
template <class Arch>
void copy_run(std::uint8_t* o, const std::uint8_t* src, std::int64_t len, std::int64_t step, std::uint8_t flip,
              const std::uint8_t* end) noexcept {
    using D = u8s8_dot<Arch>;
    const std::int64_t avail = end - src;
    std::int64_t u = 0;
    if (step == 1)
        for (; u < len && u + 16 <= avail; u += 16) D::copy16(o + u, src + u, flip);
    else if (step == 2)
        for (; u < len && 2 * u + 32 <= avail; u += 16) D::copy16_stride2(o + u, src + 2 * u, flip);
    for (; u < len; ++u) o[u] = static_cast<std::uint8_t>(src[u * step] ^ flip);
}

// ceil(a / d) for a >= 0 and d >= 1, without a division for the usual strides 1 and 2 (this
// runs per run and row of every panel). Templated on Arch like everything here (STYLE.md 4.7).
template <class Arch>
EMBER_DETAIL_INLINE inline std::int64_t ceil_div_stride(std::int64_t a, std::int64_t d) noexcept {
    return d == 1 ? a : d == 2 ? (a + 1) >> 1 : (a + d - 1) / d;
}

// Row p of X; for a convolution, p is channel c's tap (r, q) (kept by the caller, no division).
// Padding is written 16 bytes at a time, like the copies, past the run's end where the row has
// room (later runs and the copy overwrite it, or it lands past nr).
template <class Arch>
void gather_row(const gemm_u8s8_problem& pr, const conv_run* runs, int run_count, std::int64_t p, std::int64_t c, std::int64_t r,
                std::int64_t q, std::int64_t j0, std::int64_t nr, const std::uint8_t* end, std::uint8_t* out) noexcept {
    using D = u8s8_dot<Arch>;
    const std::uint8_t flip = pr.x_flip;
    if (!pr.conv) {
        const std::uint8_t* x = pr.x + p * pr.x_rs + j0 * pr.x_cs;
        if (pr.x_cs == 1)
            copy_run<Arch>(out, x, nr, 1, flip, end);
        else
            for (std::int64_t j = 0; j < nr; ++j) out[j] = static_cast<std::uint8_t>(x[j * pr.x_cs] ^ flip);
        return;
    }
    const qconv_source& s = *pr.conv;
    const std::uint8_t* plane = s.x + c * s.in_h * s.in_w;
    const auto pad = [&](std::uint8_t* o, std::int64_t len) EMBER_DETAIL_INLINE {
        for (std::int64_t u = 0; u < len; u += 16) D::fill16(o + u, s.pad_value);
    };
    for (int t = 0; t < run_count; ++t) {
        const conv_run& run = runs[t];
        std::uint8_t* o = out + run.j;
        const std::int64_t ih = run.ih0 + r * s.dil_h;
        if (ih < 0 || ih >= s.in_h) {
            pad(o, run.len);
            continue;
        }
        const std::int64_t iw0 = run.iw0 + q * s.dil_w, sw = s.stride_w;
        // columns u with 0 <= iw0 + u * sw < in_w come from the row, the rest are padding
        std::int64_t lo = iw0 < 0 ? ceil_div_stride<Arch>(-iw0, sw) : 0;
        std::int64_t hi = s.in_w - iw0 <= 0 ? 0 : ceil_div_stride<Arch>(s.in_w - iw0, sw);
        if (lo > run.len) lo = run.len;
        if (hi > run.len) hi = run.len;
        if (hi < lo) hi = lo;
        pad(o, lo);
        if (hi > lo) copy_run<Arch>(o + lo, plane + ih * s.in_w + iw0 + lo * sw, hi - lo, sw, flip, end);
        pad(o + hi, run.len - hi);
    }
}

// Packs columns [j0, j0 + nr) of X into one NR-wide panel of words, dst[kk * NR + j]: `group`
// rows gathered as bytes, then interleaved into words (the loop vectorises); a whole panel of a
// plain matrix is interleaved straight from X's rows (interleave8).
template <class Arch>
void pack_x_panel(const gemm_u8s8_problem& pr, std::int64_t j0, std::int64_t nr, std::int32_t* dst) noexcept {
    using BL = u8s8_blocking<Arch>;
    constexpr int G = BL::group, NR = BL::nr;
    const std::int64_t kg = (pr.k + G - 1) / G;
    if (!pr.conv && pr.x_cs == 1 && j0 + NR <= pr.n) {
        // a whole panel of a plain matrix (a 1x1 convolution's input): the words straight from
        // X's rows, 8 columns at a time; rows past k read zeros (their weights are zero)
        static constexpr std::uint8_t zeros[NR] = {};
        for (std::int64_t kk = 0; kk < kg; ++kk) {
            const std::uint8_t* rows[G];
            for (int g = 0; g < G; ++g) rows[g] = kk * G + g < pr.k ? pr.x + (kk * G + g) * pr.x_rs + j0 : zeros;
            for (int j = 0; j < NR; j += 8) BL::D::template interleave8<G>(dst + kk * NR + j, rows, j, pr.x_flip);
        }
        return;
    }
    conv_run runs[NR];
    int run_count = 0;
    const std::uint8_t* end = nullptr;  // one past the last byte of X
    if (pr.conv) {
        const qconv_source& s = *pr.conv;
        for (std::int64_t j = 0, oh = j0 / s.out_w, ow = j0 % s.out_w; j < nr; ++oh, ow = 0) {
            const std::int64_t len = (s.out_w - ow) < (nr - j) ? (s.out_w - ow) : (nr - j);
            runs[run_count++] = conv_run{j, len, oh * s.stride_h - s.pad_h, ow * s.stride_w - s.pad_w};
            j += len;
        }
        end = s.x + pr.k / (s.kh * s.kw) * s.in_h * s.in_w;
    } else if (pr.k > 0) {
        end = pr.x + (pr.k - 1) * pr.x_rs + (pr.n - 1) * pr.x_cs + 1;
    }
    // room for copy_run's last 16 bytes past nr; columns past nr are never stored, so whatever
    // lands there is harmless
    constexpr int ROW = (NR + 16 + 63) / 64 * 64;
    alignas(64) std::uint8_t rows[G][ROW] = {};
    std::int64_t c = 0, r = 0, q = 0;  // the convolution tap of row p
    for (std::int64_t kk = 0; kk < kg; ++kk) {
        for (int g = 0; g < G; ++g) {
            const std::int64_t p = kk * G + g;
            if (p < pr.k) {
                gather_row<Arch>(pr, runs, run_count, p, c, r, q, j0, nr, end, rows[g]);
                if (pr.conv && ++q == pr.conv->kw) {
                    q = 0;
                    if (++r == pr.conv->kh) r = 0, ++c;
                }
            } else {
                for (int j = 0; j < NR; ++j) rows[g][j] = 0;
            }
        }
        std::uint32_t* d = reinterpret_cast<std::uint32_t*>(dst + kk * NR);
        if constexpr (G == 4) {
            for (int j = 0; j < NR; ++j)
                d[j] = std::uint32_t{rows[0][j]} | std::uint32_t{rows[1][j]} << 8 | std::uint32_t{rows[2][j]} << 16 | std::uint32_t{rows[3][j]} << 24;
        } else {
            for (int j = 0; j < NR; ++j) d[j] = std::uint32_t{rows[0][j]} | std::uint32_t{rows[1][j]} << 16;
        }
    }
}

// The micro-kernel: rows [i0, i0 + MR) of W (one packed panel, padded rows included) times one X
// panel over all of K, then the epilogue for the rows < m and columns < nr it owns.
template <class Arch>
void micro(std::int64_t kg, const std::int32_t* EMBER_RESTRICT w, const std::int32_t* EMBER_RESTRICT x, const qgemm_epilogue& post,
           std::int64_t i0, std::int64_t rows, std::int64_t j0, std::int64_t nr) noexcept {
    using D = u8s8_dot<Arch>;
    using I = xsimd::batch<std::int32_t, Arch>;
    using F = xsimd::batch<float, Arch>;
    constexpr int MR = D::mr, NV = D::nv, W = static_cast<int>(I::size), NR = NV * W;
    I acc[MR][NV];
    static_for<MR>([&](auto i) EMBER_DETAIL_INLINE {
        static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] = I(0); });
    });
    for (std::int64_t kk = 0; kk < kg; ++kk) {
        I xv[NV];
        static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { xv[v] = I::load_unaligned(x + kk * NR + v * W); });
        static_for<MR>([&](auto i) EMBER_DETAIL_INLINE {
            const I wi(w[kk * MR + i]);
            static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { acc[i][v] = D::dot(acc[i][v], xv[v], wi); });
        });
    }
    alignas(64) std::int32_t tile[NR];
    const bool eight_bit = post.out == qgemm_epilogue::output::uint8 || post.out == qgemm_epilogue::output::int8;
    static_for<MR>([&](auto i) EMBER_DETAIL_INLINE {
        if (static_cast<std::int64_t>(i) >= rows) return;
        const std::int64_t row = i0 + static_cast<std::int64_t>(i);
        const qgemm_row<Arch> r(post, row);
        if (post.out == qgemm_epilogue::output::float32) {
            const std::int64_t at = row * post.rs + j0 * post.cs;
            float* c = static_cast<float*>(post.c) + at;
            const float* z = post.residual ? post.residual + at : nullptr;
            if (nr == NR && post.cs == 1) {  // the common case: whole vectors, straight to C
                static_for<NV>([&](auto v) EMBER_DETAIL_INLINE {
                    F y = r.real(acc[i][v]);
                    if (z) y += F::load_unaligned(z + v * W);
                    r.clamp(y).store_unaligned(c + v * W);
                });
                return;
            }
            alignas(64) float ftile[NR];
            static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { r.real(acc[i][v]).store_aligned(ftile + v * W); });
            for (std::int64_t j = 0; j < nr; ++j) {
                float y = ftile[j];
                if (z) y += z[j * post.cs];
                c[j * post.cs] = y < post.flo ? post.flo : (y > post.fhi ? post.fhi : y);
            }
            return;
        }
        if (eight_bit) {
            // whole vectors narrow straight to C (the common case), else through the tile
            bool direct = false;
            if constexpr (byte_lanes<Arch>::available) direct = nr == NR && post.cs == 1;
            auto* c = static_cast<std::uint8_t*>(post.c) + row * post.rs + j0;
            static_for<NV>([&](auto v) EMBER_DETAIL_INLINE {
                const I q = r.narrow(acc[i][v]);
                if constexpr (byte_lanes<Arch>::available)
                    if (direct) return byte_lanes<Arch>::store_low(q, c + v * W);
                q.store_aligned(tile + v * W);
            });
            if (direct) return;
        } else {
            static_for<NV>([&](auto v) EMBER_DETAIL_INLINE { r.wide(acc[i][v]).store_aligned(tile + v * W); });
        }
        const std::int64_t at = row * post.rs + j0 * post.cs;
        switch (post.out) {
        case qgemm_epilogue::output::uint8: {
            std::uint8_t* c = static_cast<std::uint8_t*>(post.c) + at;
            for (std::int64_t j = 0; j < nr; ++j) c[j * post.cs] = static_cast<std::uint8_t>(tile[j]);
            break;
        }
        case qgemm_epilogue::output::int8: {
            std::int8_t* c = static_cast<std::int8_t*>(post.c) + at;
            for (std::int64_t j = 0; j < nr; ++j) c[j * post.cs] = static_cast<std::int8_t>(tile[j]);
            break;
        }
        case qgemm_epilogue::output::int32: {
            std::int32_t* c = static_cast<std::int32_t*>(post.c) + at;
            for (std::int64_t j = 0; j < nr; ++j) c[j * post.cs] = tile[j];
            break;
        }
        case qgemm_epilogue::output::float32: break;  // written above
        }
    });
}

} // namespace u8s8_detail

/// Packs W (m x k, int8, element (i, p) at w[i * rs + p]) for gemm_u8s8 (weights, at compile).
template <class Arch>
void pack_u8s8_weights(const std::int8_t* w, std::int64_t rs, std::int64_t m, std::int64_t k, std::int32_t* dst) noexcept {
    using BL = u8s8_blocking<Arch>;
    constexpr int G = BL::group, MR = BL::mr;
    const std::int64_t kg = (k + G - 1) / G;
    for (std::int64_t i0 = 0; i0 < m; i0 += MR)
        for (std::int64_t kk = 0; kk < kg; ++kk)
            for (int i = 0; i < MR; ++i) {
                std::int32_t v[G] = {};
                if (i0 + i < m)
                    for (int g = 0; g < G; ++g)
                        if (kk * G + g < k) v[g] = w[(i0 + i) * rs + kk * G + g];
                *dst++ = u8s8_detail::word<Arch, G>(v);
            }
}

/// Runs one problem on up to `slots` workers of ex; workspace holds slots * u8s8_workspace_bytes(k)
/// bytes (64-byte aligned). Slot s takes column panels [P * s / slots, P * (s + 1) / slots).
template <class Arch>
void gemm_u8s8(const gemm_u8s8_problem& pr, void* workspace, std::int64_t slots, const executor* ex) noexcept {
    using BL = u8s8_blocking<Arch>;
    constexpr int G = BL::group, MR = BL::mr, NR = BL::nr;
    if (pr.m <= 0 || pr.n <= 0) return;
    const std::int64_t panels = (pr.n + NR - 1) / NR, kg = (pr.k + G - 1) / G;
    if (slots > panels) slots = panels;
    if (slots < 1) slots = 1;
    const std::int64_t ws_bytes = u8s8_workspace_bytes<Arch>(pr.k);
    auto run_slot = [&](std::int64_t slot) noexcept {
        auto* xp = reinterpret_cast<std::int32_t*>(static_cast<char*>(workspace) + slot * ws_bytes);
        for (std::int64_t p = panels * slot / slots; p < panels * (slot + 1) / slots; ++p) {
            const std::int64_t j0 = p * NR, nr = pr.n - j0 < NR ? pr.n - j0 : NR;
            u8s8_detail::pack_x_panel<Arch>(pr, j0, nr, xp);
            for (std::int64_t i0 = 0; i0 < pr.m; i0 += MR)
                u8s8_detail::micro<Arch>(kg, pr.packed_w + i0 * kg, xp, pr.post, i0, pr.m - i0 < MR ? pr.m - i0 : MR, j0, nr);
        }
    };
    for_each_slot(ex, slots, run_slot);
}

} // namespace kernels
EMBER_NAMESPACE_END
