// SPDX-License-Identifier: Apache-2.0
// Add (ONNX opset 6+, numpy broadcasting from opset 7; before it the legacy broadcast/axis
// attributes): y = a + b. Integers wrap (two's complement) instead of overflowing.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/ops/binary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// The dtypes of Add, Sub, Mul and Div: 8- and 16-bit integers from opset 14, bfloat16 from 13.
inline dtype_set arithmetic_types(std::int64_t opset) noexcept {
    return types::with_bf16(opset >= 14 ? types::numeric : types::arithmetic_7, opset);
}
inline constexpr dtype_set arithmetic_supported = types::numeric | types::bf16;

struct add_fn {
    static dtype_set types(std::int64_t opset) noexcept { return arithmetic_types(opset); }
    static constexpr dtype_set supported = arithmetic_supported;
    static constexpr kernels::binary_kind fast_float = kernels::binary_kind::add;  // the float32 fast kernel
    template <class T>
    T operator()(T a, T b) const noexcept {
        if constexpr (std::is_integral_v<T>)
            return wrap_add(a, b);
        else
            return a + b;
    }
};

struct add : binary_op<add_fn, true> {
    static constexpr std::string_view onnx_name = "Add";
    static constexpr auto onnx_attributes = legacy_broadcast_attributes();
};

} // namespace ops
EMBER_NAMESPACE_END
