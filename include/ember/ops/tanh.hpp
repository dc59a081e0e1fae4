// SPDX-License-Identifier: Apache-2.0
// Tanh (ONNX opset 6+): y = tanh(x). float16/float32/float64 (bfloat16 from opset 13).
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct tanh_fn {
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(types::floats, opset); }
    static constexpr dtype_set supported = types::floats | types::bf16;
    template <class T>
    T operator()(T x) const noexcept {
        return std::tanh(x);
    }
};

struct tanh : unary_op<tanh_fn, op_flags::elementwise | op_flags::in_place | op_flags::epilogue> {
    static constexpr std::string_view onnx_name = "Tanh";
};

} // namespace ops
EMBER_NAMESPACE_END
