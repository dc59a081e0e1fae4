// SPDX-License-Identifier: Apache-2.0
// ConstantOfShape (ONNX opset 9+): a tensor of the shape given by input 0 (int64 1-D, known at
// compile time) filled with the one element of the `value` attribute (any dtype; float32 0 when
// absent). Its input is constant, so compile() folds it unless folding is off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/ops/layout.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct constant_of_shape {
    static constexpr std::string_view onnx_name = "ConstantOfShape";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::optional<tensor> value;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("value", &attributes::value));

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (ctx.input_type(0) != dtype::int64) return ctx.fail(status::invalid_model, "the shape input must be int64, got {}", ctx.input_type(0));
        std::vector<std::int64_t> dims;
        if (status s = constant_ints(ctx, 0, "shape", dims); s != status::ok) return s;
        if (!shape::valid_rank(dims.size()))
            return ctx.fail(status::unsupported_op, "output rank {} is more than EMBER_MAX_RANK ({})", dims.size(), max_rank);
        shape out;
        for (std::int64_t d : dims) {
            if (d < 0) return ctx.fail(status::invalid_model, "shape {} has a negative dimension", dims);
            out.push_back(d);
        }
        dtype type = dtype::float32;
        if (a.value) {
            if (a.value->size() != 1)
                return ctx.fail(status::invalid_model, "attribute 'value' must hold one element, it has shape {}", a.value->dims());
            type = a.value->type();
        }
        ctx.set_output(0, type, out);
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        const std::byte zero[8] = {};
        return emit_fill(ctx, 0, ctx.output_type(0), static_cast<std::size_t>(ctx.output_shape(0).elements()),
                         a.value ? a.value->bytes() : zero);
    }
};

} // namespace ops
EMBER_NAMESPACE_END
