// SPDX-License-Identifier: Apache-2.0
// Tanh (ONNX opset 6+): y = tanh(x).
#pragma once

#include <cmath>
#include <cstddef>

#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct tanh {
    static constexpr std::string_view onnx_name = "Tanh";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place | op_flags::epilogue;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    static status infer(const attributes&, infer_context& ctx) { return infer_unary_f32(ctx); }

    static void reference(const attributes&, const float* x, float* y, std::size_t n) noexcept {
        for (std::size_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
    }

    static status bind(const attributes& a, bind_context& ctx) { return bind_unary_f32<tanh>(a, ctx); }
};

} // namespace ops
EMBER_NAMESPACE_END
