// SPDX-License-Identifier: Apache-2.0
// The kernel table: one per instruction set, holding a pointer to each fast kernel instantiated
// for that arch. compile() picks one table, once, and the ops copy its pointers into their steps;
// the run path never asks which ISA it is on.
//
// Where the tables come from:
// - By default (header-only, no set-up), simd/instantiate.hpp is included here and the tables of
//   every arch the compiler flags enable are instantiated where they are used: a build with
//   -march=native (or for arm64) gets its best ISA.
// - With runtime dispatch (EMBER_DISPATCH, what ember_enable_dispatch() in CMake sets up), one
//   small translation unit per ISA, compiled with that ISA's flags, defines that arch's table
//   (EMBER_INSTANTIATE_ARCH + simd/instantiate.hpp), and EMBER_DISPATCH_<ISA> tells the other
//   translation units which ones exist. A baseline x86-64 binary then runs AVX-512 where the CPU
//   has it, AVX2 where it has that, SSE2 elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ember/config.hpp"
#include "ember/core/span.hpp"
#include "ember/kernels/conv_direct_f32.hpp"
#include "ember/kernels/dwconv_f32.hpp"
#include "ember/kernels/dwconv_u8.hpp"
#include "ember/kernels/elementwise_f32.hpp"
#include "ember/kernels/gemm_f32.hpp"
#include "ember/kernels/gemm_u8s8.hpp"
#include "ember/kernels/maxpool_f32.hpp"
#include "ember/kernels/winograd_f32.hpp"
#include "ember/simd/arch.hpp"

EMBER_NAMESPACE_BEGIN
namespace simd {

struct kernel_table {
    std::string_view name;  ///< short_name<Arch>(): "avx512", "avx2", "sse2", "neon"
    // GEMM (kernels/gemm_f32.hpp)
    std::int64_t (*packed_b_floats)(std::int64_t k, std::int64_t n) noexcept = nullptr;
    std::int64_t (*gemm_workspace_floats)(bool pack_a_at_run, bool pack_b_at_run) noexcept = nullptr;
    void (*pack_gemm_a)(const kernels::strided_matrix& a, std::int64_t m, std::int64_t k, float* dst) noexcept = nullptr;
    void (*pack_gemm_b)(const kernels::strided_matrix& b, std::int64_t k, std::int64_t n, float* dst) noexcept = nullptr;
    void (*gemm_f32)(const kernels::gemm_f32_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept = nullptr;
    // depthwise convolution (kernels/dwconv_f32.hpp) and max pooling (kernels/maxpool_f32.hpp)
    void (*dwconv_f32)(const kernels::dwconv_f32_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept = nullptr;
    void (*maxpool_f32)(const kernels::dwconv_f32_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept = nullptr;
    void (*dwconv_u8)(const kernels::dwconv_u8_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept = nullptr;
    // Winograd F(4x4, 3x3) convolution (kernels/winograd_f32.hpp)
    std::int64_t (*winograd_workspace_floats)(std::int64_t channels, std::int64_t out_channels, std::int64_t out_h, std::int64_t out_w,
                                              std::int64_t slots) noexcept = nullptr;
    void (*winograd_f32)(const kernels::winograd_f32_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept = nullptr;
    // direct convolution (kernels/conv_direct_f32.hpp)
    std::int64_t (*conv_direct_workspace_floats)(const kernels::conv_direct_f32_problem& p) noexcept = nullptr;
    void (*pack_conv_direct_weights)(const float* w, std::int64_t m, std::int64_t depth, float* dst) noexcept = nullptr;
    void (*conv_direct_f32)(const kernels::conv_direct_f32_problem& p, float* workspace, std::int64_t slots, const executor* ex) noexcept = nullptr;
    // element-wise, reductions, softmax (kernels/elementwise_f32.hpp)
    void (*binary_row_f32)(kernels::binary_kind op, const float* a, std::int64_t sa, const float* b, std::int64_t sb, float* y,
                           std::int64_t n) noexcept = nullptr;
    void (*activation_f32)(const kernels::activation_spec& act, const float* x, float* y, std::int64_t n) noexcept = nullptr;
    void (*row_mean_f32)(const float* x, std::int64_t rows, std::int64_t size, float* y) noexcept = nullptr;
    void (*softmax_rows_f32)(const float* x, float* y, std::int64_t rows, std::int64_t n) noexcept = nullptr;
    void (*layer_norm_rows_f32)(const float* x, const float* scale, const float* bias, float* y, float* mean, float* inv_std,
                                std::int64_t rows, std::int64_t n, float eps) noexcept = nullptr;
    void (*quantize_f32)(const float* x, std::int64_t n, float scale, std::int32_t zero_point, std::int32_t lo, std::int32_t hi,
                         std::uint8_t* y) noexcept = nullptr;
    void (*dequantize_8bit)(const std::uint8_t* x, std::int64_t n, bool is_signed, float scale, std::int32_t zero_point, float* y) noexcept = nullptr;
    // INT8 GEMM (kernels/gemm_u8s8.hpp); all null (and int8_name empty) where the arch has none
    std::string_view int8_name;
    std::int64_t (*packed_u8s8_weight_bytes)(std::int64_t m, std::int64_t k) noexcept = nullptr;
    std::int64_t (*u8s8_workspace_bytes)(std::int64_t k) noexcept = nullptr;
    void (*pack_u8s8_weights)(const std::int8_t* w, std::int64_t rs, std::int64_t m, std::int64_t k, std::int32_t* dst) noexcept = nullptr;
    void (*gemm_u8s8)(const kernels::gemm_u8s8_problem& p, void* workspace, std::int64_t slots, const executor* ex) noexcept = nullptr;
};

/// Arch's table. Defined in simd/instantiate.hpp: included below without dispatch, by one
/// per-ISA translation unit with it.
template <class Arch>
const kernel_table& kernel_table_for() noexcept;

// The lookup below is baseline code: a per-ISA translation unit (EMBER_INSTANTIATE_ARCH) leaves it
// out, so that no copy of it is compiled with that ISA's flags.
#if !defined(EMBER_INSTANTIATE_ARCH)
namespace detail {

#if defined(EMBER_DISPATCH)
template <class Arch>
constexpr bool in_binary() noexcept {
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) {
#if defined(EMBER_DISPATCH_AVX512)
        return true;
#endif
    } else if constexpr (std::is_same_v<Arch, xsimd::fma3<xsimd::avx2>>) {
#if defined(EMBER_DISPATCH_AVX2)
        return true;
#endif
    } else if constexpr (std::is_same_v<Arch, xsimd::sse2>) {
#if defined(EMBER_DISPATCH_SSE2)
        return true;
#endif
    } else if constexpr (std::is_same_v<Arch, xsimd::neon64>) {
#if defined(EMBER_DISPATCH_NEON)
        return true;
#endif
    }
    return false;
}
#else
template <class Arch>
constexpr bool in_binary() noexcept {
    return Arch::supported();  // enabled by this translation unit's compiler flags
}
#endif

struct table_list {
    const kernel_table* tables[8] = {};
    std::size_t count = 0;
    std::string_view compiled[8] = {};
    std::size_t compiled_count = 0;
};

template <class... Archs>
table_list make_table_list(arch_list<Archs...>) noexcept {
    table_list list;
    auto add = [&](auto arch) {
        using Arch = decltype(arch);
        if constexpr (in_binary<Arch>()) {
            list.compiled[list.compiled_count++] = short_name<Arch>();
            if (cpu_runs<Arch>()) list.tables[list.count++] = &kernel_table_for<Arch>();
        }
    };
    (add(Archs{}), ...);
    return list;
}

inline const table_list& tables() noexcept {
    static const table_list list = make_table_list(dispatch_archs{});
    return list;
}

} // namespace detail

/// The tables this binary has and this CPU runs, best first (never empty on x86-64 or AArch64
/// unless a dispatch build left out its baseline).
inline span<const kernel_table* const> available_kernel_tables() noexcept {
    return {detail::tables().tables, detail::tables().count};
}

/// The ISAs this binary has tables for, runnable here or not (for messages).
inline span<const std::string_view> compiled_isas() noexcept {
    return {detail::tables().compiled, detail::tables().compiled_count};
}

/// The table called `name` ("avx512", "avx2", "sse2", "neon"), or the best one for "": null when
/// this binary lacks it or this CPU cannot run it.
inline const kernel_table* find_kernel_table(std::string_view name) noexcept {
    for (const kernel_table* t : available_kernel_tables())
        if (name.empty() || t->name == name) return t;
    return nullptr;
}
#endif  // !EMBER_INSTANTIATE_ARCH

} // namespace simd
EMBER_NAMESPACE_END

#if !defined(EMBER_DISPATCH)
#include "ember/simd/instantiate.hpp"
#endif
