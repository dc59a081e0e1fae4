// SPDX-License-Identifier: Apache-2.0
// Identity (ONNX opset 1+): y = x, any dtype. Planned in place, so it usually costs nothing.
#pragma once

#include "ember/ops/copy.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct identity {
    static constexpr std::string_view onnx_name = "Identity";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    static status infer(const attributes&, infer_context& ctx) { return infer_same_shape(ctx); }
    static status bind(const attributes&, bind_context& ctx) { return bind_copy(ctx); }
};

} // namespace ops
EMBER_NAMESPACE_END
