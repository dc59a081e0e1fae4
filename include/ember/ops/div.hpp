// SPDX-License-Identifier: Apache-2.0
// Div (ONNX opset 7+, numpy broadcasting): y = a / b. Integer division truncates toward zero, as
// in ONNX Runtime; an integer division by zero gives 0 here instead of undefined behaviour.
#pragma once

#include <type_traits>

#include "ember/ops/binary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct div_fn {
    template <class T>
    T operator()(T a, T b) const noexcept {
        if constexpr (std::is_integral_v<T>) {
            if (b == 0) return T(0);
            if constexpr (std::is_signed_v<T>)
                if (b == T(-1)) return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(a));  // INT_MIN / -1 wraps
        }
        return a / b;
    }
};

EMBER_DETAIL_BINARY_OP(div, "Div", div_fn);

} // namespace ops
EMBER_NAMESPACE_END
