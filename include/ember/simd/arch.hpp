// SPDX-License-Identifier: Apache-2.0
// The instruction sets ember has kernels for, best first, as xsimd arch tags (never a parallel
// enum), and whether this CPU and its OS can run each one. Baseline TUs include this: nothing
// here is compiled with an ISA's flags.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN
namespace simd {

/// The arches the kernel tables are built for on this target, best first. x86-64: AVX-512 (F, BW,
/// DQ, VL and VNNI in a dispatch build),
/// AVX2 with FMA, SSE2 (every x86-64 CPU has it). AArch64: NEON. The baseline of the target is
/// last, so a binary always has a table it can run.
template <class... Archs>
struct arch_list {};

#if defined(__x86_64__) || defined(_M_X64)
using dispatch_archs = arch_list<xsimd::avx512f, xsimd::fma3<xsimd::avx2>, xsimd::sse2>;
#elif defined(__aarch64__) || defined(_M_ARM64)
using dispatch_archs = arch_list<xsimd::neon64>;
#else
#error "ember's kernels need x86-64 or AArch64"
#endif

namespace detail {

#if defined(__x86_64__) || defined(_M_X64)
struct cpuid_regs {
    std::uint32_t a = 0, b = 0, c = 0, d = 0;
};
inline cpuid_regs cpuid(std::uint32_t leaf, std::uint32_t sub = 0) noexcept {
    cpuid_regs r;
#if defined(__GNUC__) || defined(__clang__)
    __asm__("cpuid" : "=a"(r.a), "=b"(r.b), "=c"(r.c), "=d"(r.d) : "a"(leaf), "c"(sub));
#endif
    return r;
}
// XCR0: which register states the OS saves on a context switch. xsimd's check reads the CPU's
// flags only; a CPU with AVX-512 under an OS that does not save zmm state must not use it.
inline std::uint64_t xcr0() noexcept {
#if defined(__GNUC__) || defined(__clang__)
    std::uint32_t lo = 0, hi = 0;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (std::uint64_t{hi} << 32) | lo;
#else
    return 0;
#endif
}
#endif

} // namespace detail

/// Whether this CPU (and its OS) can run Arch's instructions.
template <class Arch>
bool cpu_runs() noexcept {
#if defined(__x86_64__) || defined(_M_X64)
    const detail::cpuid_regs one = detail::cpuid(1);
    if constexpr (std::is_same_v<Arch, xsimd::sse2>) {
        return (one.d >> 26 & 1) != 0;
    } else {
        const bool osxsave = (one.c >> 27 & 1) != 0;
        if (!osxsave) return false;
        const std::uint64_t xcr = detail::xcr0();
        const bool ymm = (xcr & 0x6) == 0x6;     // SSE + AVX state
        const bool zmm = (xcr & 0xe6) == 0xe6;   // + opmask, ZMM_Hi256, Hi16_ZMM
        const detail::cpuid_regs seven = detail::cpuid(7);
        const bool fma = (one.c >> 12 & 1) != 0, avx = (one.c >> 28 & 1) != 0;
        const bool avx2 = (seven.b >> 5 & 1) != 0, avx512f = (seven.b >> 16 & 1) != 0;
        if constexpr (std::is_same_v<Arch, xsimd::fma3<xsimd::avx2>>) return ymm && avx && avx2 && fma;
        if constexpr (std::is_same_v<Arch, xsimd::avx512f>) {
            // A dispatch build compiles the avx512 table with BW, DQ, VL and VNNI too (the INT8
            // kernels' vpdpbusd): Ice Lake, Zen 4 and later; Skylake-X runs the AVX2 table.
            // A header-only build needs what its own flags enabled.
            bool extras = true;
#if defined(EMBER_DISPATCH) || defined(__AVX512BW__)
            extras = extras && (seven.b >> 30 & 1) != 0;
#endif
#if defined(EMBER_DISPATCH) || defined(__AVX512DQ__)
            extras = extras && (seven.b >> 17 & 1) != 0;
#endif
#if defined(EMBER_DISPATCH) || defined(__AVX512VL__)
            extras = extras && (seven.b >> 31 & 1) != 0;
#endif
#if defined(EMBER_DISPATCH) || defined(__AVX512VNNI__)
            extras = extras && (seven.c >> 11 & 1) != 0;
#endif
            return zmm && avx && avx2 && fma && avx512f && extras;
        }
        return false;
    }
#else
    return std::is_same_v<Arch, xsimd::neon64>;
#endif
}

/// The short name users give to force an arch (compile_options::isa, EMBER_ISA): "avx512",
/// "avx2", "sse2", "neon".
template <class Arch>
constexpr std::string_view short_name() noexcept {
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) return "avx512";
    else if constexpr (std::is_same_v<Arch, xsimd::fma3<xsimd::avx2>>) return "avx2";
    else if constexpr (std::is_same_v<Arch, xsimd::sse2>) return "sse2";
    else if constexpr (std::is_same_v<Arch, xsimd::neon64>) return "neon";
    else return Arch::name();
}

} // namespace simd
EMBER_NAMESPACE_END
