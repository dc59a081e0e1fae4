// SPDX-License-Identifier: Apache-2.0
// IsNaN (opset 9; float16/float32/float64, bfloat16 from 13) and IsInf (opset 10; float32,
// float64; detect_negative / detect_positive choose which infinities count): bool outputs.
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct is_nan_fn {
    static constexpr dtype output = dtype::boolean;
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(types::floats, opset); }
    static constexpr dtype_set supported = types::floats | types::bf16;
    template <class T>
    bool operator()(T x) const noexcept {
        return std::isnan(x);
    }
};

struct is_inf_fn {
    std::int64_t detect_negative = 1;
    std::int64_t detect_positive = 1;
    static constexpr dtype output = dtype::boolean;
    static dtype_set types(std::int64_t) noexcept { return set_of(dtype::float32, dtype::float64); }
    static constexpr dtype_set supported = set_of(dtype::float32, dtype::float64);
    template <class T>
    bool operator()(T x) const noexcept {
        return std::isinf(x) && (x > T(0) ? detect_positive != 0 : detect_negative != 0);
    }
};

struct is_nan : unary_op<is_nan_fn> {
    static constexpr std::string_view onnx_name = "IsNaN";
};
struct is_inf : unary_op<is_inf_fn> {
    static constexpr std::string_view onnx_name = "IsInf";
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("detect_negative", &is_inf_fn::detect_negative), attr("detect_positive", &is_inf_fn::detect_positive));
};

} // namespace ops
EMBER_NAMESPACE_END
