// SPDX-License-Identifier: Apache-2.0
// The logical ops on bool tensors (one byte each; any non-zero byte reads as true): Not (opset
// 1), and And, Or, Xor with numpy broadcasting (opset 7; before it the legacy broadcast/axis
// attributes). The structs are logical_not/_and/_or/_xor because not/and/or/xor are C++ keywords.
#pragma once

#include <cstdint>

#include "ember/ops/binary.hpp"
#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace logical_fn {
struct not_fn {
    static dtype_set types(std::int64_t) noexcept { return types::boolean; }
    static constexpr dtype_set supported = types::boolean;
    bool operator()(bool x) const noexcept { return !x; }
};
#define EMBER_DETAIL_LOGICAL_FN(name, expr)                                           \
    struct name {                                                                     \
        static constexpr dtype output = dtype::boolean;                               \
        static dtype_set types(std::int64_t) noexcept { return types::boolean; }      \
        static constexpr dtype_set supported = types::boolean;                        \
        bool operator()(bool a, bool b) const noexcept { return expr; }               \
    };
EMBER_DETAIL_LOGICAL_FN(and_fn, a && b)
EMBER_DETAIL_LOGICAL_FN(or_fn, a || b)
EMBER_DETAIL_LOGICAL_FN(xor_fn, a != b)
#undef EMBER_DETAIL_LOGICAL_FN
} // namespace logical_fn

// bool in, bool out: the output may reuse input 0's buffer.
struct logical_not : unary_op<logical_fn::not_fn, op_flags::elementwise | op_flags::in_place> {
    static constexpr std::string_view onnx_name = "Not";
};
struct logical_and : binary_op<logical_fn::and_fn, true, op_flags::elementwise | op_flags::in_place> {
    static constexpr std::string_view onnx_name = "And";
    static constexpr auto onnx_attributes = legacy_broadcast_attributes();
};
struct logical_or : binary_op<logical_fn::or_fn, true, op_flags::elementwise | op_flags::in_place> {
    static constexpr std::string_view onnx_name = "Or";
    static constexpr auto onnx_attributes = legacy_broadcast_attributes();
};
struct logical_xor : binary_op<logical_fn::xor_fn, true, op_flags::elementwise | op_flags::in_place> {
    static constexpr std::string_view onnx_name = "Xor";
    static constexpr auto onnx_attributes = legacy_broadcast_attributes();
};

} // namespace ops
EMBER_NAMESPACE_END
