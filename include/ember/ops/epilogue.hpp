// SPDX-License-Identifier: Apache-2.0
// The epilogue of the fused ops (ops/fused.hpp): y = act(y + bias + z), applied in place to the
// output of a Conv, Gemm or MatMul kernel. Each activation is defined once here, as a scalar, with
// the arithmetic of the standalone op it replaces (Relu, Clip, LeakyRelu, HardSigmoid, HardSwish,
// Sigmoid, and the Sigmoid/Mul and Erf patterns of SiLU and GELU), so a fused graph computes what
// the unfused one does, to rounding. Fast kernels implement these same semantics.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "ember/config.hpp"
#include "ember/kernels/activation.hpp"
#include "ember/runtime/executor.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// The activation at the end of a fused op: the fast kernels' enum (kernels/activation.hpp), so
/// the two never drift. Its name (activation_name) is the value of the fused ops' `activation`
/// attribute. none: y = x; relu: max(x, 0), NaN passes; clip: min(max(x, alpha), beta), NaN stays
/// NaN, alpha > beta gives beta; leaky_relu: x >= 0 ? x : alpha * x; hard_sigmoid: max(0, min(1,
/// alpha * x + beta)); hard_swish: x * max(0, min(1, x / 6 + 1/2)); sigmoid: 1 / (1 + e^-x); silu:
/// x * sigmoid(x); gelu: x / 2 * (1 + erf(x / sqrt(2))), the exact erf form.
using kernels::activation;

/// The parameters of an activation; unused ones are ignored.
struct activation_params {
    float alpha = 0.0f;  ///< LeakyRelu, HardSigmoid: alpha; Clip: the lower bound
    float beta = 0.0f;   ///< HardSigmoid: beta; Clip: the upper bound
};

inline constexpr activation all_activations[] = {activation::none,         activation::relu,       activation::clip,
                                                 activation::leaky_relu,   activation::hard_sigmoid, activation::hard_swish,
                                                 activation::sigmoid,      activation::silu,       activation::gelu};

/// The attribute spelling: "" (none), "Relu", "Clip", "LeakyRelu", "HardSigmoid", "HardSwish",
/// "Sigmoid", "Silu", "Gelu".
[[nodiscard]] constexpr std::string_view activation_name(activation a) noexcept {
    switch (a) {
        case activation::none: return "";
        case activation::relu: return "Relu";
        case activation::clip: return "Clip";
        case activation::leaky_relu: return "LeakyRelu";
        case activation::hard_sigmoid: return "HardSigmoid";
        case activation::hard_swish: return "HardSwish";
        case activation::sigmoid: return "Sigmoid";
        case activation::silu: return "Silu";
        case activation::gelu: return "Gelu";
    }
    return "";
}

/// The activation with this attribute spelling; false for an unknown name.
[[nodiscard]] constexpr bool parse_activation(std::string_view name, activation& out) noexcept {
    for (activation a : all_activations)
        if (activation_name(a) == name) {
            out = a;
            return true;
        }
    return false;
}

/// How many activation_params the activation takes (its full form; 0 always means the ONNX
/// defaults, see default_params).
[[nodiscard]] constexpr std::size_t param_count(activation a) noexcept {
    switch (a) {
        case activation::clip:
        case activation::hard_sigmoid: return 2;
        case activation::leaky_relu: return 1;
        default: return 0;
    }
}

/// The ONNX defaults: Clip lowest..max of float (its opset 6 attribute defaults; ONNX says
/// numeric_limits lowest/max, not infinities), LeakyRelu alpha 0.01, HardSigmoid 0.2 and 0.5.
[[nodiscard]] constexpr activation_params default_params(activation a) noexcept {
    switch (a) {
        case activation::clip: return {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max()};
        case activation::leaky_relu: return {0.01f, 0.0f};
        case activation::hard_sigmoid: return {0.2f, 0.5f};
        default: return {};
    }
}

namespace epilogue_detail {
// Split at 0 as ops/sigmoid.hpp does, so that exp never overflows.
inline float sigmoid(float x) noexcept {
    if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
    const float e = std::exp(x);
    return e / (1.0f + e);
}
inline float clamp01(float v) noexcept { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }
} // namespace epilogue_detail

/// The definition of every activation, one element at a time.
[[nodiscard]] inline float apply(activation a, const activation_params& p, float x) noexcept {
    switch (a) {
        case activation::none: return x;
        case activation::relu: return x < 0.0f ? 0.0f : x;  // NaN passes, as ops/relu.hpp
        case activation::clip: {
            float v = x < p.alpha ? p.alpha : x;
            return v > p.beta ? p.beta : v;
        }
        case activation::leaky_relu: return x >= 0.0f ? x : p.alpha * x;
        case activation::hard_sigmoid: return epilogue_detail::clamp01(p.alpha * x + p.beta);
        case activation::hard_swish: return x * epilogue_detail::clamp01(x / 6.0f + 0.5f);
        case activation::sigmoid: return epilogue_detail::sigmoid(x);
        case activation::silu: return x * epilogue_detail::sigmoid(x);
        case activation::gelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    }
    return x;
}

/// The epilogue over a [rows, cols] output y, in place: y[r, c] = act(y[r, c] + bias[c] +
/// z[r, c]). bias (cols values) and z (rows * cols values, y's layout) may be null. The additions
/// happen in the order of the unfused graph (bias, then z), so results match it exactly up to
/// the activation. Rows are split over the executor.
inline void apply_epilogue(activation a, const activation_params& p, float* y, std::size_t rows, std::size_t cols, const float* bias,
                           const float* z, const executor* ex) noexcept {
    if (a == activation::none && !bias && !z) return;
    parallel_for(ex, rows, [&](std::size_t begin, std::size_t end) {
        for (std::size_t r = begin; r < end; ++r) {
            float* yr = y + r * cols;
            const float* zr = z ? z + r * cols : nullptr;
            for (std::size_t c = 0; c < cols; ++c) {
                float v = yr[c];
                if (bias) v += bias[c];
                if (zr) v += zr[c];
                yr[c] = apply(a, p, v);
            }
        }
    });
}

} // namespace ops
EMBER_NAMESPACE_END
