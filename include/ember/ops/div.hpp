// SPDX-License-Identifier: Apache-2.0
// Div (ONNX opset 6+, numpy broadcasting from opset 7; before it the legacy broadcast/axis
// attributes): y = a / b. Integer division truncates toward zero, as in ONNX Runtime; an integer
// division by zero gives 0 here (instead of undefined behaviour), and the most negative value
// divided by -1 wraps to itself.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/ops/add.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct div_fn {
    static dtype_set types(std::int64_t opset) noexcept { return arithmetic_types(opset); }
    static constexpr dtype_set supported = arithmetic_supported;
    static constexpr kernels::binary_kind fast_float = kernels::binary_kind::div;  // the float32 fast kernel
    template <class T>
    T operator()(T a, T b) const noexcept {
        if constexpr (std::is_integral_v<T>) {
            if (b == 0) return T(0);
            if constexpr (std::is_signed_v<T>)
                if (b == T(-1)) return wrap_neg(a);  // INT_MIN / -1 wraps
            return static_cast<T>(a / b);
        } else {
            return a / b;
        }
    }
};

struct div : binary_op<div_fn, true> {
    static constexpr std::string_view onnx_name = "Div";
    static constexpr auto onnx_attributes = legacy_broadcast_attributes();
};

} // namespace ops
EMBER_NAMESPACE_END
