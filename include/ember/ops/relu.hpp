// SPDX-License-Identifier: Apache-2.0
// Relu (ONNX opset 6+): y = max(x, 0).
#pragma once

#include <cstddef>

#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct relu {
    static constexpr std::string_view onnx_name = "Relu";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place | op_flags::epilogue;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    static status infer(const attributes&, infer_context& ctx) { return infer_unary_f32(ctx); }

    // The definition; x and y may alias. Written so that NaN passes through, as in ONNX Runtime.
    static void reference(const attributes&, const float* x, float* y, std::size_t n) noexcept {
        for (std::size_t i = 0; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
    }

    static status bind(const attributes& a, bind_context& ctx) { return bind_unary_f32<relu>(a, ctx); }
};

} // namespace ops
EMBER_NAMESPACE_END
