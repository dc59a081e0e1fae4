// SPDX-License-Identifier: Apache-2.0
// Sigmoid (ONNX opset 6+): y = 1 / (1 + exp(-x)). float16/float32/float64 (bfloat16 from 13).
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct sigmoid_fn {
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(types::floats, opset); }
    static constexpr dtype_set supported = types::floats | types::bf16;
    kernels::activation_spec fast_float() const noexcept { return {kernels::activation::sigmoid}; }
    // Split at 0 so that exp never overflows: for x < 0, e^x / (1 + e^x).
    template <class T>
    T operator()(T v) const noexcept {
        if (v >= T(0)) return T(1) / (T(1) + std::exp(-v));
        const T e = std::exp(v);
        return e / (T(1) + e);
    }
};

struct sigmoid : unary_op<sigmoid_fn, op_flags::elementwise | op_flags::in_place | op_flags::epilogue> {
    static constexpr std::string_view onnx_name = "Sigmoid";
};

} // namespace ops
EMBER_NAMESPACE_END
