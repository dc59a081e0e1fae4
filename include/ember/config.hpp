// SPDX-License-Identifier: Apache-2.0
// Every EMBER_* knob with its default. A project may define them in <ember_user_config.hpp>,
// which is picked up when the compiler can find it, so no global -D flags are needed.
#pragma once

#if defined(__has_include)
#if __has_include(<ember_user_config.hpp>)
#include <ember_user_config.hpp>
#endif
#endif

#include "ember/version.hpp"

/// Largest tensor rank ember handles. Shapes are stored inline (no allocation) up to this rank;
/// a model with a higher rank fails to compile with a clear error.
#ifndef EMBER_MAX_RANK
#define EMBER_MAX_RANK 8
#endif

/// Alignment of every value in the arena and of the plan's weight buffer, in bytes.
#ifndef EMBER_ALIGNMENT
#define EMBER_ALIGNMENT 64
#endif

/// Per-step profiling: session::set_profile_hook() and the trace recorder (runtime/profile.hpp).
/// 1 (default): run() checks once per run whether a hook is set; with one, it times each step
/// (two steady_clock reads) and calls the hook; without, its loop is the unprofiled one.
/// run_for() checks per step (it times every step anyway). 0: compiled out: the hook API is
/// still declared and set_profile_hook() stores the hook, but no run calls it and neither loop
/// has a branch for it. Give every translation unit of a program the same value.
#ifndef EMBER_ENABLE_PROFILING
#define EMBER_ENABLE_PROFILING 1
#endif

// Exceptions: detected from the compiler, forced off with EMBER_NO_EXCEPTIONS. The library never
// throws; only the opt-in convenience wrappers (value_or_throw) need them.
#ifndef EMBER_HAS_EXCEPTIONS
#if defined(EMBER_NO_EXCEPTIONS)
#define EMBER_HAS_EXCEPTIONS 0
#elif defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define EMBER_HAS_EXCEPTIONS 1
#else
#define EMBER_HAS_EXCEPTIONS 0
#endif
#endif

// Where the built-in op table is compiled. ops::find_builtin() (and the If/Loop/Scan lookup)
// instantiate every op's kernels: about a minute of -O2 compile time per translation unit with
// ~160 ops. By default they are inline, so each TU that calls compile() pays for it. Define
// EMBER_OP_TABLE_IN_ONE_TU for the whole target and EMBER_OP_TABLE_IMPLEMENTATION before the
// first ember include in exactly one .cpp: the lookups are then compiled in that file only.
#if defined(EMBER_OP_TABLE_IN_ONE_TU) && !defined(EMBER_OP_TABLE_IMPLEMENTATION)
#define EMBER_DETAIL_OP_TABLE_DECLARE_ONLY 1
#define EMBER_DETAIL_OP_TABLE_LINKAGE
#elif defined(EMBER_OP_TABLE_IN_ONE_TU)
#define EMBER_DETAIL_OP_TABLE_DECLARE_ONLY 0
#define EMBER_DETAIL_OP_TABLE_LINKAGE
#else
#define EMBER_DETAIL_OP_TABLE_DECLARE_ONLY 0
#define EMBER_DETAIL_OP_TABLE_LINKAGE inline
#endif

// Programmer errors (an index out of range, a broken planner invariant) go to EMBER_ASSERT:
// on in debug builds, off with NDEBUG, replaceable by defining it before including ember.
#ifndef EMBER_ASSERT
#if defined(NDEBUG)
#define EMBER_ASSERT(cond, msg) ((void)0)
#else
#define EMBER_ASSERT(cond, msg) \
    ((cond) ? (void)0 : ::ember::detail::assert_failed(#cond, msg, __FILE__, __LINE__))
#endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#define EMBER_UNREACHABLE() __builtin_unreachable()
#define EMBER_RESTRICT __restrict__
#elif defined(_MSC_VER)
#define EMBER_UNREACHABLE() __assume(0)
#define EMBER_RESTRICT __restrict
#else
#define EMBER_UNREACHABLE() ((void)0)
#define EMBER_RESTRICT
#endif

// Marks the few geometry helpers that the CUDA extension's kernels share with the CPU's
// (window_geometry's sizes): __host__ __device__ under nvcc, nothing elsewhere. Not for templates
// that call a callable: nvcc then refuses the host lambdas the CPU passes them (they are constexpr).
#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif

namespace ember {
inline namespace v0_1 {
namespace detail {

/// Called by the default EMBER_ASSERT. Writes nothing itself: a host that wants the message sets
/// assert_hook (for instance to its logger); then the program aborts.
using assert_hook_fn = void (*)(const char* cond, const char* msg, const char* file, int line);

inline assert_hook_fn& assert_hook() noexcept {
    static assert_hook_fn hook = nullptr;
    return hook;
}

[[noreturn]] void assert_failed(const char* cond, const char* msg, const char* file, int line) noexcept;

} // namespace detail
} // namespace v0_1
} // namespace ember

#include <cstdlib>

namespace ember {
inline namespace v0_1 {
namespace detail {
[[noreturn]] inline void assert_failed(const char* cond, const char* msg, const char* file, int line) noexcept {
    if (assert_hook_fn hook = assert_hook()) hook(cond, msg, file, line);
    std::abort();
}
} // namespace detail
} // namespace v0_1
} // namespace ember
