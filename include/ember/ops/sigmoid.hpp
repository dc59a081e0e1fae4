// SPDX-License-Identifier: Apache-2.0
// Sigmoid (ONNX opset 6+): y = 1 / (1 + exp(-x)).
#pragma once

#include <cmath>
#include <cstddef>

#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct sigmoid {
    static constexpr std::string_view onnx_name = "Sigmoid";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place | op_flags::epilogue;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    static status infer(const attributes&, infer_context& ctx) { return infer_unary_f32(ctx); }

    // Split at 0 so that exp never overflows: for x < 0, e^x / (1 + e^x).
    static void reference(const attributes&, const float* x, float* y, std::size_t n) noexcept {
        for (std::size_t i = 0; i < n; ++i) {
            const float v = x[i];
            if (v >= 0.0f) {
                y[i] = 1.0f / (1.0f + std::exp(-v));
            } else {
                const float e = std::exp(v);
                y[i] = e / (1.0f + e);
            }
        }
    }

    static status bind(const attributes& a, bind_context& ctx) { return bind_unary_f32<sigmoid>(a, ctx); }
};

} // namespace ops
EMBER_NAMESPACE_END
