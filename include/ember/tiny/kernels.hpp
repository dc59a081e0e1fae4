// SPDX-License-Identifier: Apache-2.0
// The tiny networks' kernels, for sizes known at compile time: y = act(b + x W) and an
// element-wise loop, over xsimd batches of the widest instruction set that the translation
// unit's own flags enable and whose width divides the row (plain loops when none does). No
// dispatch and no table: the includer's -march decides, as for any inline code.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN
namespace tiny::detail {

/// Plain float loops: no arch of the list fits the size.
struct scalar_arch {};

template <class... Archs>
struct arch_candidates {};

// Widest first. xsimd's Arch::supported() is true when the TU's flags enable that ISA.
#if defined(__x86_64__) || defined(_M_X64)
using candidate_archs = arch_candidates<xsimd::avx512f, xsimd::fma3<xsimd::avx2>, xsimd::avx, xsimd::sse2>;
#elif defined(__aarch64__) || defined(_M_ARM64)
using candidate_archs = arch_candidates<xsimd::neon64>;
#else
using candidate_archs = arch_candidates<>;
#endif

template <std::size_t N>
constexpr scalar_arch pick_arch(arch_candidates<>) noexcept { return {}; }

template <std::size_t N, class First, class... Rest>
constexpr auto pick_arch(arch_candidates<First, Rest...>) noexcept {
    if constexpr (First::supported() && N % (First::alignment() / sizeof(float)) == 0)
        return First{};
    else
        return pick_arch<N>(arch_candidates<Rest...>{});
}

/// The arch whose float batches tile a row of N floats exactly, or scalar_arch.
template <std::size_t N>
using arch_for = decltype(pick_arch<N>(candidate_archs{}));

/// A row of N floats as Arch's batches: V is float for scalar_arch.
template <class Arch>
struct lane {
    using type = xsimd::batch<float, Arch>;
};
template <>
struct lane<scalar_arch> {
    using type = float;
};
template <std::size_t N>
using lane_for = typename lane<arch_for<N>>::type;

template <class V>
V load(const float* p) noexcept {
    if constexpr (std::is_same_v<V, float>)
        return *p;
    else
        return V::load_unaligned(p);
}

template <class V>
void store(float* p, const V& v) noexcept {
    if constexpr (std::is_same_v<V, float>)
        *p = v;
    else
        v.store_unaligned(p);
}

template <class V>
constexpr std::size_t width_of() noexcept {
    if constexpr (std::is_same_v<V, float>)
        return 1;
    else
        return V::size;
}

/// Calls fn(V{}, i) for i = 0, w, 2w, ... < N, where V is lane_for<N> and w its width: the body
/// loads, computes and stores w floats at i with load<V>/store.
template <std::size_t N, class Fn>
void for_each_lane(Fn&& fn) noexcept {
    using V = lane_for<N>;
    for (std::size_t i = 0; i < N; i += width_of<V>()) fn(V{}, i);
}

// The loops over the accumulators run at compile time: every lambda and the loop must inline,
// or the accumulators leave the registers (at -O2 GCC kept them on the stack: 2.8x slower).
#if defined(__GNUC__) || defined(__clang__)
#define EMBER_DETAIL_TINY_INLINE __attribute__((always_inline))
#else
#define EMBER_DETAIL_TINY_INLINE
#endif

template <class F, std::size_t... I>
EMBER_DETAIL_TINY_INLINE inline void static_for_impl(F&& f, std::index_sequence<I...>) noexcept {
    (f(std::integral_constant<std::size_t, I>{}), ...);
}

/// f(integral_constant<0>), ..., f(integral_constant<N - 1>), unrolled.
template <std::size_t N, class F>
EMBER_DETAIL_TINY_INLINE inline void static_for(F&& f) noexcept {
    static_for_impl(f, std::make_index_sequence<N>{});
}

// One block of Block vectors of the output row, through all In inputs.
//
//     y[0 .. Block*w) = act(b + sum_i x[i] * w[i][0 .. Block*w))
//
// Partial sums: an FMA takes 4 cycles and two start per cycle, so about 8 independent chains
// keep the unit busy. With Block < 8 accumulators, `partial` interleaved sums over i (i mod
// partial) make up the rest; they are added at the end, so the sum's order is not the plain
// loop's (within a few ULP of it).
template <class Batch, std::size_t In, std::size_t Out, std::size_t Block, class Act>
void affine_block(const float* w, const float* b, const float* x, float* y, const Act& act) noexcept {
    constexpr std::size_t width = Batch::size;
    constexpr std::size_t wanted = Block >= 8 ? 1 : 8 / Block;
    constexpr std::size_t partial = wanted < In ? wanted : In;
    Batch acc[partial][Block];
    static_for<Block>([&](auto k) EMBER_DETAIL_TINY_INLINE {
        acc[0][k] = Batch::load_unaligned(b + k * width);
        static_for<partial - 1>([&](auto p) EMBER_DETAIL_TINY_INLINE { acc[p + 1][k] = Batch(0.0f); });
    });
    // acc[p] += x[i] * w[i] for the Block vectors of row i.
    const auto madd = [&](std::size_t p, std::size_t i) EMBER_DETAIL_TINY_INLINE {
        const Batch xi(x[i]);
        const float* row = w + i * Out;
        static_for<Block>([&](auto k) EMBER_DETAIL_TINY_INLINE { acc[p][k] = xsimd::fma(xi, Batch::load_unaligned(row + k * width), acc[p][k]); });
    };
    constexpr std::size_t whole = In / partial * partial;
    for (std::size_t i = 0; i < whole; i += partial)
        static_for<partial>([&](auto p) EMBER_DETAIL_TINY_INLINE { madd(p, i + p); });
    static_for<In - whole>([&](auto i) EMBER_DETAIL_TINY_INLINE { madd(0, whole + i); });
    static_for<Block>([&](auto k) EMBER_DETAIL_TINY_INLINE {
        Batch sum = acc[0][k];
        static_for<partial - 1>([&](auto p) EMBER_DETAIL_TINY_INLINE { sum += acc[p + 1][k]; });
        act(sum).store_unaligned(y + k * width);
    });
}

/// y[o] = act(b[o] + sum_i x[i] * w[i * Out + o]) for o < Out: w is row-major [In][Out] (ONNX
/// Gemm's B without transB, MatMul's B). Blocks of at most 8 vectors of the row, each through
/// every input, keep the accumulators in registers (8 of the 16 ymm or 32 zmm registers).
/// x and y must not overlap; no alignment needed.
template <std::size_t In, std::size_t Out, class Act>
void affine(const float* w, const float* b, const float* x, float* y, const Act& act) noexcept {
    using Arch = arch_for<Out>;
    if constexpr (std::is_same_v<Arch, scalar_arch>) {
        float acc[Out];
        for (std::size_t o = 0; o < Out; ++o) acc[o] = b[o];
        for (std::size_t i = 0; i < In; ++i)
            for (std::size_t o = 0; o < Out; ++o) acc[o] += x[i] * w[i * Out + o];
        for (std::size_t o = 0; o < Out; ++o) y[o] = act(acc[o]);
    } else {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t width = batch::size, vectors = Out / width;
        constexpr std::size_t block = vectors < 8 ? vectors : 8, whole = vectors / block * block;
        for (std::size_t v = 0; v < whole; v += block)
            affine_block<batch, In, Out, block>(w + v * width, b + v * width, x, y + v * width, act);
        if constexpr (whole < vectors)
            affine_block<batch, In, Out, vectors - whole>(w + whole * width, b + whole * width, x, y + whole * width, act);
    }
}

} // namespace tiny::detail
EMBER_NAMESPACE_END

#undef EMBER_DETAIL_TINY_INLINE
