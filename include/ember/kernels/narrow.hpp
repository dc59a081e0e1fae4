// SPDX-License-Identifier: Apache-2.0
// low_bytes<Arch>::store(v, out): out[t] = the low byte of int32 lane t of v, for every lane. The
// 8-bit outputs of QuantizeLinear and of the INT8 GEMM's epilogue, whose lanes are already
// clamped to the byte type's range (int8 as its two's complement), so truncation is exact. One
// narrowing instruction or a short pack sequence per ISA instead of a byte store per lane; xsimd
// 8.1 has no narrowing conversion. Each specialisation belongs to its own arch, and nothing here
// is a plain inline function (STYLE.md 4.7).
#pragma once

#include <cstdint>
#include <cstring>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/gemm_f32.hpp"  // EMBER_DETAIL_INLINE

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

EMBER_NAMESPACE_BEGIN
namespace kernels {

template <class Arch, class = void>
struct low_bytes {
    static constexpr bool available = false;  // callers store lane by lane
};

#if defined(__SSE2__)
template <>
struct low_bytes<xsimd::sse2> {
    static constexpr bool available = true;
    static EMBER_DETAIL_INLINE void store(xsimd::batch<std::int32_t, xsimd::sse2> v, std::uint8_t* out) noexcept {
        const __m128i b = _mm_and_si128(v, _mm_set1_epi32(0xff));  // 0..255: both packs are exact
        const __m128i w = _mm_packs_epi32(b, b);
        const std::int32_t word = _mm_cvtsi128_si32(_mm_packus_epi16(w, w));
        std::memcpy(out, &word, 4);
    }
};
#endif
#if defined(__AVX2__) && defined(__FMA__)
template <>
struct low_bytes<xsimd::fma3<xsimd::avx2>> {
    static constexpr bool available = true;
    static EMBER_DETAIL_INLINE void store(xsimd::batch<std::int32_t, xsimd::fma3<xsimd::avx2>> v, std::uint8_t* out) noexcept {
        const __m256i b = _mm256_and_si256(v, _mm256_set1_epi32(0xff));
        const __m256i w = _mm256_packs_epi32(b, b);  // per 128-bit lane
        const __m256i p = _mm256_packus_epi16(w, w);  // lane 0: bytes 0..3 repeated, lane 1: 4..7
        const __m128i lo = _mm256_castsi256_si128(p), hi = _mm256_extracti128_si256(p, 1);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi32(lo, hi));
    }
};
#endif
#if defined(__AVX512F__)
template <>
struct low_bytes<xsimd::avx512f> {
    static constexpr bool available = true;
    static EMBER_DETAIL_INLINE void store(xsimd::batch<std::int32_t, xsimd::avx512f> v, std::uint8_t* out) noexcept {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(v));
    }
};
#endif
#if defined(__aarch64__)
template <>
struct low_bytes<xsimd::neon64> {
    static constexpr bool available = true;
    static EMBER_DETAIL_INLINE void store(xsimd::batch<std::int32_t, xsimd::neon64> v, std::uint8_t* out) noexcept {
        const uint16x4_t h = vmovn_u32(vreinterpretq_u32_s32(v));
        const std::uint32_t word = vget_lane_u32(vreinterpret_u32_u8(vmovn_u16(vcombine_u16(h, h))), 0);
        std::memcpy(out, &word, 4);
    }
};
#endif

} // namespace kernels
EMBER_NAMESPACE_END
