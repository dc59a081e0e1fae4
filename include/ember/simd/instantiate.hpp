// SPDX-License-Identifier: Apache-2.0
// Defines kernel_table_for<Arch>(): the table of one arch's kernels. A runtime-dispatch build
// includes this from one translation unit per ISA, compiled with that ISA's flags:
//
//     // ember_dispatch_avx2.cpp, compiled with -mavx2 -mfma
//     #define EMBER_INSTANTIATE_ARCH xsimd::fma3<xsimd::avx2>
//     #include <ember/simd/instantiate.hpp>
//
// (ember_enable_dispatch() in CMake writes these files.) Only Arch-templated kernel code may be
// instantiated here: a plain inline function compiled with AVX flags could be picked by the
// linker for the baseline build too (STYLE.md 4.7).
#pragma once

#if defined(EMBER_INSTANTIATE_ARCH) && defined(__GNUC__) && !defined(__clang__)
// GCC 12's own avx512fintrin.h trips -Wmaybe-uninitialized (its _mm512_undefined_* idiom) once
// inlined into the kernels, and -Wuninitialized where an activation's exp (xsimd's nearbyint,
// to_int and shifts) is compiled out of line (the direct convolution's epilogue); the translation
// unit holds nothing but the kernels.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "ember/kernels/conv_direct_f32.hpp"
#include "ember/kernels/dwconv_f32.hpp"
#include "ember/kernels/dwconv_u8.hpp"
#include "ember/kernels/elementwise_f32.hpp"
#include "ember/kernels/gemm_f32.hpp"
#include "ember/kernels/gemm_u8s8.hpp"
#include "ember/kernels/maxpool_f32.hpp"
#include "ember/kernels/winograd_f32.hpp"
#include "ember/simd/kernel_table.hpp"

EMBER_NAMESPACE_BEGIN
namespace simd {

namespace detail {
template <class Arch>
constexpr kernel_table with_int8(kernel_table t) noexcept {
    if constexpr (kernels::u8s8_dot<Arch>::available) {
        t.int8_name = kernels::u8s8_dot<Arch>::name;
        t.packed_u8s8_weight_bytes = &kernels::packed_u8s8_weight_bytes<Arch>;
        t.u8s8_workspace_bytes = &kernels::u8s8_workspace_bytes<Arch>;
        t.pack_u8s8_weights = &kernels::pack_u8s8_weights<Arch>;
        t.gemm_u8s8 = &kernels::gemm_u8s8<Arch>;
    }
    return t;
}
} // namespace detail

template <class Arch>
const kernel_table& kernel_table_for() noexcept {
    static constexpr kernel_table table = detail::with_int8<Arch>(kernel_table{
        short_name<Arch>(),
        &kernels::packed_b_floats<Arch>,
        &kernels::gemm_workspace_floats<Arch>,
        &kernels::pack_gemm_a<Arch>,
        &kernels::pack_gemm_b<Arch>,
        &kernels::gemm_f32<Arch>,
        &kernels::dwconv_f32<Arch>,
        &kernels::maxpool_f32<Arch>,
        &kernels::dwconv_u8<Arch>,
        &kernels::winograd_workspace_floats<Arch>,
        &kernels::winograd_f32<Arch>,
        &kernels::conv_direct_workspace_floats<Arch>,
        &kernels::pack_conv_direct_weights<Arch>,
        &kernels::conv_direct_f32<Arch>,
        &kernels::binary_row_f32<Arch>,
        &kernels::activation_f32<Arch>,
        &kernels::row_mean_f32<Arch>,
        &kernels::softmax_rows_f32<Arch>,
        &kernels::layer_norm_rows_f32<Arch>,
        &kernels::quantize_f32<Arch>,
        &kernels::dequantize_8bit<Arch>,
        {}, nullptr, nullptr, nullptr, nullptr,  // INT8: with_int8() fills them where Arch has a dot product
    });
    return table;
}

#if defined(EMBER_INSTANTIATE_ARCH)
template const kernel_table& kernel_table_for<EMBER_INSTANTIATE_ARCH>() noexcept;
#endif

} // namespace simd
EMBER_NAMESPACE_END
