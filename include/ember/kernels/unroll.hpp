// SPDX-License-Identifier: Apache-2.0
// Loops unrolled at compile time for the kernels' register tiles: static_for<N>(f) calls
// f(integral_constant<0>) ... f(integral_constant<N - 1>). Every lambda given to it and the loop
// itself must inline, or the accumulators leave the registers: EMBER_DETAIL_INLINE on the
// lambdas. (The compiler's own unrolling does not do it at -O2, the build most users ship.)
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "ember/config.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define EMBER_DETAIL_INLINE __attribute__((always_inline))
// a read of p expected soon, into the caches short of L1 (prefetcht1 / prfm pldl2keep)
#define EMBER_DETAIL_PREFETCH(p) __builtin_prefetch((p), 0, 2)
#else
#define EMBER_DETAIL_INLINE
#define EMBER_DETAIL_PREFETCH(p) ((void)(p))
#endif

EMBER_NAMESPACE_BEGIN
namespace kernels {

template <class F, std::size_t... I>
EMBER_DETAIL_INLINE inline void static_for_impl(F&& f, std::index_sequence<I...>) noexcept {
    (f(std::integral_constant<std::size_t, I>{}), ...);
}
template <std::size_t N, class F>
EMBER_DETAIL_INLINE inline void static_for(F&& f) noexcept {
    static_for_impl(std::forward<F>(f), std::make_index_sequence<N>{});
}

} // namespace kernels
EMBER_NAMESPACE_END
