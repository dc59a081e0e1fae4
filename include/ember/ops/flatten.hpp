// SPDX-License-Identifier: Apache-2.0
// Flatten (ONNX opset 1+), any dtype: [d0, ..., dn-1] -> [d0 * ... * d(axis-1), d(axis) * ... * dn-1].
// axis defaults to 1, may be negative (opset 11) and may equal the rank (the output is [N, 1]).
// Only moves bytes, and is planned in place, so it usually costs nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/ops/copy.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct flatten {
    static constexpr std::string_view onnx_name = "Flatten";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;

    struct attributes {
        std::int64_t axis = 1;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        const auto r = static_cast<std::int64_t>(in.rank());
        if (a.axis < -r || a.axis > r)
            return ctx.fail(status::invalid_model, "axis {} is out of range [{}, {}] for input of shape {}", a.axis, -r, r, in);
        const auto axis = static_cast<std::size_t>(a.axis < 0 ? a.axis + r : a.axis);
        std::int64_t outer = 1, inner = 1;
        for (std::size_t i = 0; i < in.rank(); ++i) (i < axis ? outer : inner) *= in[i];
        ctx.set_output(0, ctx.input_type(0), shape{outer, inner});
        return status::ok;
    }

    static status bind(const attributes&, bind_context& ctx) { return bind_copy(ctx); }
};

} // namespace ops
EMBER_NAMESPACE_END
