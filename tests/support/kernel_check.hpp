// SPDX-License-Identifier: Apache-2.0
// Helpers for the kernel tests: aligned buffers, random data, the epilogue activations in double
// (the oracle). Closeness checks: check.hpp's check_close.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <xsimd/xsimd.hpp>

#include <ember/ember.hpp>

#include "support/check.hpp"

namespace ember::test {

using aligned_floats = std::vector<float, xsimd::aligned_allocator<float, 64>>;

/// n values uniform in [lo, hi) (check.hpp's random_f32, as a vector).
inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    return values_f32(random_f32(shape{static_cast<std::int64_t>(n)}, seed, lo, hi));
}

inline double apply_activation(const kernels::activation_spec& a, double x) {
    using kernels::activation;
    switch (a.kind) {
        case activation::relu: return x > 0 ? x : 0;
        case activation::clip: return x < a.p0 ? a.p0 : (x > a.p1 ? a.p1 : x);
        case activation::leaky_relu: return x >= 0 ? x : a.p0 * x;
        case activation::hard_sigmoid: return std::fmax(0.0, std::fmin(1.0, a.p0 * x + a.p1));
        case activation::hard_swish: return x * std::fmax(0.0, std::fmin(1.0, x / 6.0 + 0.5));
        case activation::sigmoid: return 1.0 / (1.0 + std::exp(-x));
        case activation::silu: return x / (1.0 + std::exp(-x));
        case activation::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
        case activation::none: break;
    }
    return x;
}

/// A plane kernel's geometry (kernels/dwconv_f32.hpp, dwconv_u8.hpp): planes, channels, input,
/// kernel, strides, pads (top, left, bottom, right), dilations.
struct plane_case {
    std::int64_t planes, channels, in_h, in_w, kh, kw, sh, sw, pad_top, pad_left, pad_bottom, pad_right, dh, dw;
};

/// The problem's geometry: output extent from the padded input (pads on both sides).
inline kernels::dwconv_f32_problem plane_geometry(const plane_case& c) {
    kernels::dwconv_f32_problem p;
    p.planes = c.planes;
    p.channels = c.channels;
    p.in_h = c.in_h;
    p.in_w = c.in_w;
    p.kh = c.kh;
    p.kw = c.kw;
    p.stride_h = c.sh;
    p.stride_w = c.sw;
    p.pad_h = c.pad_top;
    p.pad_w = c.pad_left;
    p.dil_h = c.dh;
    p.dil_w = c.dw;
    p.out_h = (c.in_h + c.pad_top + c.pad_bottom - (c.kh - 1) * c.dh - 1) / c.sh + 1;
    p.out_w = (c.in_w + c.pad_left + c.pad_right - (c.kw - 1) * c.dw - 1) / c.sw + 1;
    return p;
}

inline std::string table_names() {
    std::string names;
    for (const simd::kernel_table* t : simd::available_kernel_tables()) names += (names.empty() ? "" : ", ") + std::string(t->name);
    return names;
}

} // namespace ember::test
