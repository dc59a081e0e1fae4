// SPDX-License-Identifier: Apache-2.0
// Helpers for the kernel tests: aligned buffers, random data, the epilogue activations in double
// (the oracle), and closeness checks that name the first bad element.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <xsimd/xsimd.hpp>

#include <ember/ember.hpp>

namespace ember::test {

using aligned_floats = std::vector<float, xsimd::aligned_allocator<float, 64>>;

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
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

inline void expect_close(const std::vector<float>& actual, const std::vector<float>& expected, float atol, float rtol) {
    REQUIRE(actual.size() == expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const float e = expected[i], a = actual[i];
        if (!(std::fabs(a - e) <= atol + rtol * std::fabs(e))) {
            FAIL_CHECK("element " << i << ": got " << a << ", expected " << e);
            return;
        }
    }
}

inline std::string table_names() {
    std::string names;
    for (const simd::kernel_table* t : simd::available_kernel_tables()) names += (names.empty() ? "" : ", ") + std::string(t->name);
    return names;
}

} // namespace ember::test
