// SPDX-License-Identifier: Apache-2.0
// The comparisons, with numpy broadcasting and a bool output: Equal (bool, int32, int64; every
// numeric type from opset 11), Less and Greater (floats; every numeric type from opset 9), and
// LessOrEqual, GreaterOrEqual (opset 12, every numeric type). bfloat16 from opset 13 (16 for
// LessOrEqual/GreaterOrEqual). Before opset 7 Equal/Less/Greater take the legacy broadcast/axis
// attributes. Comparisons with NaN are false, except that NaN != everything.
#pragma once

#include <cstdint>

#include "ember/ops/binary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace compare_fn {
inline constexpr dtype_set numeric_supported = types::numeric | types::bf16;

struct equal {
    static constexpr dtype output = dtype::boolean;
    static constexpr dtype_set supported = numeric_supported | types::boolean;
    static dtype_set types(std::int64_t opset) noexcept {
        if (opset < 11) return set_of(dtype::boolean, dtype::int32, dtype::int64);
        return types::with_bf16(types::numeric | types::boolean, opset);
    }
    template <class T>
    bool operator()(T a, T b) const noexcept {
        return a == b;
    }
};

inline dtype_set ordered_types(std::int64_t opset) noexcept {
    return types::with_bf16(opset < 9 ? types::floats : types::numeric, opset);
}

#define EMBER_DETAIL_COMPARE_FN(name, types_expr, op)                               \
    struct name {                                                                   \
        static constexpr dtype output = dtype::boolean;                             \
        static constexpr dtype_set supported = numeric_supported;                   \
        static dtype_set types(std::int64_t opset) noexcept { return types_expr; }  \
        template <class T>                                                          \
        bool operator()(T a, T b) const noexcept {                                  \
            return a op b;                                                          \
        }                                                                           \
    };
EMBER_DETAIL_COMPARE_FN(less, ordered_types(opset), <)
EMBER_DETAIL_COMPARE_FN(greater, ordered_types(opset), >)
EMBER_DETAIL_COMPARE_FN(less_or_equal, types::with_bf16(types::numeric, opset, 16), <=)
EMBER_DETAIL_COMPARE_FN(greater_or_equal, types::with_bf16(types::numeric, opset, 16), >=)
#undef EMBER_DETAIL_COMPARE_FN
} // namespace compare_fn

struct equal : binary_op<compare_fn::equal, true> {
    static constexpr std::string_view onnx_name = "Equal";
    static constexpr auto onnx_attributes = legacy_broadcast_attributes();
};
struct less : binary_op<compare_fn::less, true> {
    static constexpr std::string_view onnx_name = "Less";
    static constexpr auto onnx_attributes = legacy_broadcast_attributes();
};
struct greater : binary_op<compare_fn::greater, true> {
    static constexpr std::string_view onnx_name = "Greater";
    static constexpr auto onnx_attributes = legacy_broadcast_attributes();
};
struct less_or_equal : binary_op<compare_fn::less_or_equal> {
    static constexpr std::string_view onnx_name = "LessOrEqual";
};
struct greater_or_equal : binary_op<compare_fn::greater_or_equal> {
    static constexpr std::string_view onnx_name = "GreaterOrEqual";
};

} // namespace ops
EMBER_NAMESPACE_END
