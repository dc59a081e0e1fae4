// SPDX-License-Identifier: Apache-2.0
// The activations a tiny layer applies to its output: each a functor over floats and xsimd
// batches, with its ONNX op name (what load() expects after the layer's Gemm, MatMul or Conv)
// and its attributes read from that node.
#pragma once

#include <cmath>
#include <string_view>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/graph/graph.hpp"

EMBER_NAMESPACE_BEGIN
namespace tiny {

/// No activation: the layer's output is its affine map. No ONNX node follows the layer.
struct identity {
    static constexpr std::string_view name = "identity";
    static constexpr std::string_view onnx_name = "";
    template <class V>
    V operator()(const V& x) const noexcept { return x; }
    void read_attributes(const node&) noexcept {}
};

/// ONNX Relu: max(x, 0).
struct relu {
    static constexpr std::string_view name = "relu";
    static constexpr std::string_view onnx_name = "Relu";
    float operator()(float x) const noexcept { return x > 0.0f ? x : 0.0f; }
    // A select rather than xsimd::max: GCC 12 at -O3 -march=native warns (-Wuninitialized) on
    // the _mm512_undefined_ps inside _mm512_max_ps.
    template <class Arch>
    xsimd::batch<float, Arch> operator()(const xsimd::batch<float, Arch>& x) const noexcept {
        const xsimd::batch<float, Arch> zero(0.0f);
        return xsimd::select(x > zero, x, zero);
    }
    void read_attributes(const node&) noexcept {}
};

// GCC 12 inlines the _mm512_undefined_* idiom of its own avx512fintrin.h into xsimd's exp and
// then warns (-Wuninitialized, a false positive) in the includer's code at -O2 -march=native; the
// pragma must surround the template's definition to reach its instantiations.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/// ONNX Tanh (xsimd's tanh on batches, within a few ULP of std::tanh).
struct tanh {
    static constexpr std::string_view name = "tanh";
    static constexpr std::string_view onnx_name = "Tanh";
    float operator()(float x) const noexcept { return std::tanh(x); }
    template <class Arch>
    xsimd::batch<float, Arch> operator()(const xsimd::batch<float, Arch>& x) const noexcept { return xsimd::tanh(x); }
    void read_attributes(const node&) noexcept {}
};

/// ONNX Sigmoid: 1 / (1 + e^-x).
struct sigmoid {
    static constexpr std::string_view name = "sigmoid";
    static constexpr std::string_view onnx_name = "Sigmoid";
    float operator()(float x) const noexcept { return 1.0f / (1.0f + std::exp(-x)); }
    template <class Arch>
    xsimd::batch<float, Arch> operator()(const xsimd::batch<float, Arch>& x) const noexcept {
        using batch = xsimd::batch<float, Arch>;
        return batch(1.0f) / (batch(1.0f) + xsimd::exp(-x));
    }
    void read_attributes(const node&) noexcept {}
};

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// ONNX LeakyRelu: x for x >= 0, alpha * x otherwise. alpha is a run-time value (C++17 has no
/// float template arguments): set it here, or load() reads the node's attribute.
struct leaky_relu {
    static constexpr std::string_view name = "leaky_relu";
    static constexpr std::string_view onnx_name = "LeakyRelu";
    float alpha = 0.01f;  ///< ONNX's default
    float operator()(float x) const noexcept { return x >= 0.0f ? x : alpha * x; }
    template <class Arch>
    xsimd::batch<float, Arch> operator()(const xsimd::batch<float, Arch>& x) const noexcept {
        using batch = xsimd::batch<float, Arch>;
        return xsimd::select(x >= batch(0.0f), x, x * batch(alpha));
    }
    void read_attributes(const node& n) noexcept {
        const attribute* a = n.find_attribute("alpha");
        alpha = a != nullptr && a->kind == attribute_kind::floating ? a->f : 0.01f;
    }
};

} // namespace tiny
EMBER_NAMESPACE_END
