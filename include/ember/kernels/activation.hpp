// SPDX-License-Identifier: Apache-2.0
// The activations a GEMM or convolution applies in its epilogue (and the element-wise kernels
// share): each a functor over xsimd batches, and visit_activation(), which turns the run-time tag
// into one of them once per kernel call, never per element. No scalar overloads: a non-template
// inline function compiled in an ISA's translation unit could be merged by the linker into the
// baseline build (STYLE.md 4.7); tails go through a padded batch instead.
#pragma once

#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN
namespace kernels {

enum class activation : std::uint8_t { none, relu, clip, leaky_relu, hard_sigmoid, hard_swish, sigmoid, silu, gelu };

/// An activation and its parameters: clip (p0 = min, p1 = max), leaky_relu (p0 = alpha),
/// hard_sigmoid (p0 = alpha, p1 = beta); the others take none.
struct activation_spec {
    activation kind = activation::none;
    float p0 = 0.0f;
    float p1 = 0.0f;
};

struct identity_fn {
    template <class Arch>
    xsimd::batch<float, Arch> operator()(xsimd::batch<float, Arch> x) const noexcept { return x; }
};

struct relu_fn {
    template <class Arch>
    xsimd::batch<float, Arch> operator()(xsimd::batch<float, Arch> x) const noexcept {
        return xsimd::max(x, xsimd::batch<float, Arch>(0.0f));
    }
};

struct clip_fn {
    float lo, hi;
    template <class Arch>
    xsimd::batch<float, Arch> operator()(xsimd::batch<float, Arch> x) const noexcept {
        return xsimd::min(xsimd::max(x, xsimd::batch<float, Arch>(lo)), xsimd::batch<float, Arch>(hi));
    }
};

struct leaky_relu_fn {
    float alpha;
    template <class Arch>
    xsimd::batch<float, Arch> operator()(xsimd::batch<float, Arch> x) const noexcept {
        return xsimd::select(x >= xsimd::batch<float, Arch>(0.0f), x, x * xsimd::batch<float, Arch>(alpha));
    }
};

// ONNX HardSigmoid: max(0, min(1, alpha * x + beta)).
struct hard_sigmoid_fn {
    float alpha, beta;
    template <class Arch>
    xsimd::batch<float, Arch> operator()(xsimd::batch<float, Arch> x) const noexcept {
        using B = xsimd::batch<float, Arch>;
        return xsimd::min(xsimd::max(x * B(alpha) + B(beta), B(0.0f)), B(1.0f));
    }
};

// ONNX HardSwish: x * max(0, min(1, x / 6 + 1 / 2)).
struct hard_swish_fn {
    template <class Arch>
    xsimd::batch<float, Arch> operator()(xsimd::batch<float, Arch> x) const noexcept {
        return x * hard_sigmoid_fn{1.0f / 6.0f, 0.5f}(x);
    }
};

// 1 / (1 + e^-x); xsimd's exp is within a few ULP of std::exp.
struct sigmoid_fn {
    template <class Arch>
    xsimd::batch<float, Arch> operator()(xsimd::batch<float, Arch> x) const noexcept {
        using B = xsimd::batch<float, Arch>;
        return B(1.0f) / (B(1.0f) + xsimd::exp(-x));
    }
};

// SiLU (swish): x * sigmoid(x), what EfficientNet's Sigmoid + Mul pair computes.
struct silu_fn {
    template <class Arch>
    xsimd::batch<float, Arch> operator()(xsimd::batch<float, Arch> x) const noexcept {
        return x * sigmoid_fn{}(x);
    }
};

// GELU, erf form (what torch exports): x / 2 * (1 + erf(x / sqrt 2)).
struct gelu_fn {
    template <class Arch>
    xsimd::batch<float, Arch> operator()(xsimd::batch<float, Arch> x) const noexcept {
        using B = xsimd::batch<float, Arch>;
        return B(0.5f) * x * (B(1.0f) + xsimd::erf(x * B(0.70710678118654752f)));
    }
};

/// Calls v(functor) with the functor for a's kind: the switch runs once per call.
template <class Visitor>
void visit_activation(const activation_spec& a, Visitor&& v) noexcept {
    switch (a.kind) {
        case activation::relu: v(relu_fn{}); return;
        case activation::clip: v(clip_fn{a.p0, a.p1}); return;
        case activation::leaky_relu: v(leaky_relu_fn{a.p0}); return;
        case activation::hard_sigmoid: v(hard_sigmoid_fn{a.p0, a.p1}); return;
        case activation::hard_swish: v(hard_swish_fn{}); return;
        case activation::sigmoid: v(sigmoid_fn{}); return;
        case activation::silu: v(silu_fn{}); return;
        case activation::gelu: v(gelu_fn{}); return;
        case activation::none: break;
    }
    v(identity_fn{});
}

/// y[0, n) = act(y + res) in place (res may be null), vectors then a padded last vector: the
/// epilogue of kernels that finish a row or plane after the sums (dwconv_f32, winograd_f32).
template <class Arch, class Act>
void residual_activation(float* y, const float* res, std::int64_t n, const Act& act) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    std::int64_t j = 0;
    for (; j + W <= n; j += W) {
        B v = B::load_unaligned(y + j);
        if (res) v += B::load_unaligned(res + j);
        act(v).store_unaligned(y + j);
    }
    if (j < n) {
        alignas(64) float tmp[64] = {};
        for (std::int64_t t = 0; t < n - j; ++t) tmp[t] = y[j + t] + (res ? res[j + t] : 0.0f);
        act(B::load_aligned(tmp)).store_aligned(tmp);
        for (std::int64_t t = 0; t < n - j; ++t) y[j + t] = tmp[t];
    }
}

} // namespace kernels
EMBER_NAMESPACE_END
