// SPDX-License-Identifier: Apache-2.0
// Mul (ONNX opset 7+, numpy broadcasting): y = a * b.
#pragma once

#include <type_traits>

#include "ember/ops/binary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct mul_fn {
    template <class T>
    T operator()(T a, T b) const noexcept {
        if constexpr (std::is_integral_v<T>) {  // wraps like two's complement instead of UB
            using U = std::make_unsigned_t<T>;
            return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
        } else {
            return a * b;
        }
    }
};

EMBER_DETAIL_BINARY_OP(mul, "Mul", mul_fn);

} // namespace ops
EMBER_NAMESPACE_END
