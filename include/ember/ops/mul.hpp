// SPDX-License-Identifier: Apache-2.0
// Mul (ONNX opset 6+, numpy broadcasting from opset 7; before it the legacy broadcast/axis
// attributes): y = a * b. Integers wrap (two's complement) instead of overflowing.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/ops/add.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct mul_fn {
    static dtype_set types(std::int64_t opset) noexcept { return arithmetic_types(opset); }
    static constexpr dtype_set supported = arithmetic_supported;
    static constexpr kernels::binary_kind fast_float = kernels::binary_kind::mul;  // the float32 fast kernel
    template <class T>
    T operator()(T a, T b) const noexcept {
        if constexpr (std::is_integral_v<T>)
            return wrap_mul(a, b);
        else
            return a * b;
    }
};

struct mul : binary_op<mul_fn, true> {
    static constexpr std::string_view onnx_name = "Mul";
    static constexpr auto onnx_attributes = legacy_broadcast_attributes();
};

} // namespace ops
EMBER_NAMESPACE_END
