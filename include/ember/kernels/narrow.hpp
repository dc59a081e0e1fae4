// SPDX-License-Identifier: Apache-2.0
// Bytes to and from int32 lanes, a whole batch at a time (xsimd 8.1 has no widening load or
// narrowing store), one instruction or a short pack sequence per ISA instead of a loop per lane:
//   byte_lanes<Arch>::store_low(v, out)     out[t] = the low byte of lane t. The 8-bit outputs of
//       QuantizeLinear and of the INT8 GEMM's epilogue, whose lanes are already clamped to the
//       byte type's range (int8 as its two's complement), so the truncation is exact;
//   byte_lanes<Arch>::widen(in, is_signed)  lane t = in[t] as uint8, or as int8 (DequantizeLinear);
//   byte_lanes<Arch>::widen_evens(in)       lane t = in[2 t] as uint8, reading in[0, 2 W): the
//       stride-2 rows of the INT8 depthwise kernel (the pairs of bytes as uint16 lanes, the high
//       byte masked off).
// Each specialisation belongs to its own arch, and nothing here is a plain inline function
// (STYLE.md 4.7).
#pragma once

#include <cstdint>
#include <cstring>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/unroll.hpp"  // EMBER_DETAIL_INLINE

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

EMBER_NAMESPACE_BEGIN
namespace kernels {

template <class Arch, class = void>
struct byte_lanes {
    static constexpr bool available = false;  // callers store lane by lane
};

#if defined(__SSE2__)
template <>
struct byte_lanes<xsimd::sse2> {
    static constexpr bool available = true;
    static EMBER_DETAIL_INLINE void store_low(xsimd::batch<std::int32_t, xsimd::sse2> v, std::uint8_t* out) noexcept {
        const __m128i b = _mm_and_si128(v, _mm_set1_epi32(0xff));  // 0..255: both packs are exact
        const __m128i w = _mm_packs_epi32(b, b);
        const std::int32_t word = _mm_cvtsi128_si32(_mm_packus_epi16(w, w));
        std::memcpy(out, &word, 4);
    }
    static EMBER_DETAIL_INLINE xsimd::batch<std::int32_t, xsimd::sse2> widen(const std::uint8_t* in, bool is_signed) noexcept {
        std::int32_t word;
        std::memcpy(&word, in, 4);
        const __m128i b = _mm_cvtsi32_si128(word), z = _mm_setzero_si128();
        if (is_signed) return _mm_srai_epi32(_mm_unpacklo_epi16(z, _mm_unpacklo_epi8(z, b)), 24);  // byte in the top, shifted down
        return _mm_unpacklo_epi16(_mm_unpacklo_epi8(b, z), z);
    }
    static EMBER_DETAIL_INLINE xsimd::batch<std::int32_t, xsimd::sse2> widen_evens(const std::uint8_t* in) noexcept {
        const __m128i pairs = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in));
        return _mm_and_si128(_mm_unpacklo_epi16(pairs, _mm_setzero_si128()), _mm_set1_epi32(0xff));
    }
};
#endif
#if defined(__AVX2__) && defined(__FMA__)
template <>
struct byte_lanes<xsimd::fma3<xsimd::avx2>> {
    static constexpr bool available = true;
    static EMBER_DETAIL_INLINE void store_low(xsimd::batch<std::int32_t, xsimd::fma3<xsimd::avx2>> v, std::uint8_t* out) noexcept {
        const __m256i b = _mm256_and_si256(v, _mm256_set1_epi32(0xff));
        const __m256i w = _mm256_packs_epi32(b, b);  // per 128-bit lane
        const __m256i p = _mm256_packus_epi16(w, w);  // lane 0: bytes 0..3 repeated, lane 1: 4..7
        const __m128i lo = _mm256_castsi256_si128(p), hi = _mm256_extracti128_si256(p, 1);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi32(lo, hi));
    }
    static EMBER_DETAIL_INLINE xsimd::batch<std::int32_t, xsimd::fma3<xsimd::avx2>> widen(const std::uint8_t* in, bool is_signed) noexcept {
        const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in));
        return is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    }
    static EMBER_DETAIL_INLINE xsimd::batch<std::int32_t, xsimd::fma3<xsimd::avx2>> widen_evens(const std::uint8_t* in) noexcept {
        const __m256i pairs = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
        return _mm256_and_si256(pairs, _mm256_set1_epi32(0xff));
    }
};
#endif
#if defined(__AVX512F__)
template <>
struct byte_lanes<xsimd::avx512f> {
    static constexpr bool available = true;
    static EMBER_DETAIL_INLINE void store_low(xsimd::batch<std::int32_t, xsimd::avx512f> v, std::uint8_t* out) noexcept {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(v));
    }
    static EMBER_DETAIL_INLINE xsimd::batch<std::int32_t, xsimd::avx512f> widen(const std::uint8_t* in, bool is_signed) noexcept {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
        return is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    }
    static EMBER_DETAIL_INLINE xsimd::batch<std::int32_t, xsimd::avx512f> widen_evens(const std::uint8_t* in) noexcept {
        const __m512i pairs = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)));
        return _mm512_and_si512(pairs, _mm512_set1_epi32(0xff));
    }
};
#endif
#if defined(__aarch64__)
template <>
struct byte_lanes<xsimd::neon64> {
    static constexpr bool available = true;
    static EMBER_DETAIL_INLINE void store_low(xsimd::batch<std::int32_t, xsimd::neon64> v, std::uint8_t* out) noexcept {
        const uint16x4_t h = vmovn_u32(vreinterpretq_u32_s32(v));
        const std::uint32_t word = vget_lane_u32(vreinterpret_u32_u8(vmovn_u16(vcombine_u16(h, h))), 0);
        std::memcpy(out, &word, 4);
    }
    static EMBER_DETAIL_INLINE xsimd::batch<std::int32_t, xsimd::neon64> widen(const std::uint8_t* in, bool is_signed) noexcept {
        std::uint32_t word;
        std::memcpy(&word, in, 4);
        const uint8x8_t b = vreinterpret_u8_u32(vdup_n_u32(word));
        if (is_signed) return vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(b))));
        return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(b))));
    }
    static EMBER_DETAIL_INLINE xsimd::batch<std::int32_t, xsimd::neon64> widen_evens(const std::uint8_t* in) noexcept {
        const uint8x8_t pairs = vld1_u8(in);  // four (even, odd) pairs; the even bytes are the low halves
        return vreinterpretq_s32_u32(vmovl_u16(vand_u16(vreinterpret_u16_u8(pairs), vdup_n_u16(0xff))));
    }
};
#endif

} // namespace kernels
EMBER_NAMESPACE_END
