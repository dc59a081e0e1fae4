// SPDX-License-Identifier: Apache-2.0
// Relu (ONNX opset 6+): y = max(x, 0). float16/float32/float64 (bfloat16 from opset 13), and
// int8/int16/int32/int64 from opset 14. NaN passes through, as in ONNX Runtime.
#pragma once

#include <cstdint>

#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct relu_fn {
    static dtype_set types(std::int64_t opset) noexcept {
        return types::with_bf16(types::floats, opset) | (opset >= 14 ? types::signed_ints : 0);
    }
    static constexpr dtype_set supported = types::floats | types::bf16 | types::signed_ints;
    kernels::activation_spec fast_float() const noexcept { return {kernels::activation::relu}; }  // NaN gives 0 there
    template <class T>
    T operator()(T x) const noexcept {
        return x < T(0) ? T(0) : x;
    }
};

struct relu : unary_op<relu_fn, op_flags::elementwise | op_flags::in_place | op_flags::epilogue> {
    static constexpr std::string_view onnx_name = "Relu";
};

} // namespace ops
EMBER_NAMESPACE_END
