// SPDX-License-Identifier: Apache-2.0
// Short copies and fills inside the kernels (rows of a padded plane, runs of an im2col panel) and
// the stride-2 gather (take_evens, over xsimd's swizzle). A row of a few dozen floats through
// memcpy's call costs more than the copy itself, so copy_floats moves fixed-size chunks that the
// compiler turns into vector moves. Templates on Arch, like every kernel: an inline non-template
// function compiled with an ISA's flags could be merged by the linker into the baseline build
// (STYLE.md 4.7).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/unroll.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

EMBER_NAMESPACE_BEGIN
namespace kernels {

/// dst[0, n) = src[0, n); the ranges do not overlap.
template <class Arch>
void copy_floats(const float* src, float* dst, std::int64_t n) noexcept {
    // whole 16-float chunks, then the rest as two chunks of 8 or 4 that overlap in the middle (the
    // ranges are disjoint, so writing a float twice writes the same value): a row of 7, 14 or 28
    // floats is two or three moves, not a scalar tail
    if (n >= 16) {
        std::int64_t j = 0;
        for (; j + 16 <= n; j += 16) std::memcpy(dst + j, src + j, 16 * sizeof(float));
        if (j < n) std::memcpy(dst + n - 16, src + n - 16, 16 * sizeof(float));
    } else if (n >= 8) {
        std::memcpy(dst, src, 8 * sizeof(float));
        std::memcpy(dst + n - 8, src + n - 8, 8 * sizeof(float));
    } else if (n >= 4) {
        std::memcpy(dst, src, 4 * sizeof(float));
        std::memcpy(dst + n - 4, src + n - 4, 4 * sizeof(float));
    } else {
        for (std::int64_t j = 0; j < n; ++j) dst[j] = src[j];
    }
}

/// dst[0, n) = src[0, n) for bytes, as copy_floats: 16-byte chunks, then overlapping chunks.
template <class Arch>
void copy_bytes(const std::uint8_t* src, std::uint8_t* dst, std::int64_t n) noexcept {
    if (n >= 16) {
        std::int64_t j = 0;
        for (; j + 16 <= n; j += 16) std::memcpy(dst + j, src + j, 16);
        if (j < n) std::memcpy(dst + n - 16, src + n - 16, 16);
    } else if (n >= 8) {
        std::memcpy(dst, src, 8);
        std::memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4) {
        std::memcpy(dst, src, 4);
        std::memcpy(dst + n - 4, src + n - 4, 4);
    } else {
        for (std::int64_t j = 0; j < n; ++j) dst[j] = src[j];
    }
}

// Lane orders for a batch's even-indexed elements first (and then the odd ones).
struct evens_first {
    static constexpr unsigned get(unsigned i, unsigned n) noexcept { return i < n / 2 ? 2 * i : 2 * (i - n / 2) + 1; }
};

/// dst[j] = src[2 j] for j in [begin, end), reading src[2 begin, 2 end - 1) only, as vectors where it
/// can: each vector step writes W / 2 floats past what it fills, which the next step (or the
/// caller's fill after the last one) overwrites.
template <class Arch>
void take_evens(const float* src, float* dst, std::int64_t begin, std::int64_t end) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    constexpr auto order = xsimd::make_batch_constant<xsimd::batch<std::uint32_t, Arch>, evens_first>();
    std::int64_t j = begin;
    for (; j + W < end; j += W) {  // reads src[2j, 2j + 2W), all below 2 (end - 1)
        xsimd::swizzle(B::load_unaligned(src + 2 * j), order).store_unaligned(dst + j);
        xsimd::swizzle(B::load_unaligned(src + 2 * j + W), order).store_unaligned(dst + j + W / 2);
    }
    for (; j < end; ++j) dst[j] = src[2 * j];
}

/// The even- and odd-indexed floats of src[0, 2W), each as one vector: two loads and two
/// two-source shuffles (vpermt2ps on AVX-512, shufps + vpermpd on AVX2, shufps on SSE, uzp on
/// NEON); lane by lane on other archs.
template <class Arch>
EMBER_DETAIL_INLINE inline void deinterleave_floats(const float* src, xsimd::batch<float, Arch>& evens, xsimd::batch<float, Arch>& odds) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    const B lo = B::load_unaligned(src), hi = B::load_unaligned(src + W);
    // one if-constexpr chain, so that no branch leaves unreachable code behind it (nvcc rejects that)
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) {
        const __m512i even_index = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        evens = _mm512_permutex2var_ps(lo, even_index, hi);
        odds = _mm512_permutex2var_ps(lo, _mm512_add_epi32(even_index, _mm512_set1_epi32(1)), hi);
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (std::is_same_v<Arch, xsimd::fma3<xsimd::avx2>>) {
        // within each 128-bit half: [lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6]; then the middle 64-bit pairs swap
        evens = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xd8));
        odds = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xdd)), 0xd8));
    } else
#endif
#if defined(__SSE2__)
    if constexpr (std::is_same_v<Arch, xsimd::sse2>) {
        evens = _mm_shuffle_ps(lo, hi, 0x88);
        odds = _mm_shuffle_ps(lo, hi, 0xdd);
    } else
#endif
#if defined(__aarch64__)
    if constexpr (std::is_same_v<Arch, xsimd::neon64>) {
        evens = vuzp1q_f32(lo, hi);
        odds = vuzp2q_f32(lo, hi);
    } else
#endif
    {
        alignas(64) float both[2 * W], e[W], o[W];
        lo.store_aligned(both);
        hi.store_aligned(both + W);
        for (std::size_t l = 0; l < W; ++l) {
            e[l] = both[2 * l];
            o[l] = both[2 * l + 1];
        }
        evens = B::load_aligned(e);
        odds = B::load_aligned(o);
    }
}

/// dst[0, n) = v.
template <class Arch>
void fill_floats(float* dst, float v, std::int64_t n) noexcept {
    for (std::int64_t j = 0; j < n; ++j) dst[j] = v;
}

/// Whether gather_floats is one instruction on Arch (elsewhere it is W scalar loads, and a
/// plain scalar loop is as fast).
template <class Arch>
constexpr bool native_gather() noexcept {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) return true;
#endif
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (std::is_same_v<Arch, xsimd::fma3<xsimd::avx2>>) return true;
#endif
    return false;
}

/// Lane t = src[offsets[t]]: vgatherdps on AVX-512 and AVX2 (xsimd 8.1's gather inserts lane by
/// lane there), W scalar loads elsewhere.
template <class Arch>
xsimd::batch<float, Arch> gather_floats(const float* src, xsimd::batch<std::int32_t, Arch> offsets) noexcept {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) return _mm512_i32gather_ps(offsets, src, 4);
#endif
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (std::is_same_v<Arch, xsimd::fma3<xsimd::avx2>>) return _mm256_i32gather_ps(src, offsets, 4);
#endif
    constexpr std::size_t W = xsimd::batch<float, Arch>::size;
    alignas(64) std::int32_t at[W];
    alignas(64) float lanes[W];
    offsets.store_aligned(at);
    for (std::size_t t = 0; t < W; ++t) lanes[t] = src[at[t]];
    return xsimd::batch<float, Arch>::load_aligned(lanes);
}

} // namespace kernels
EMBER_NAMESPACE_END
