// SPDX-License-Identifier: Apache-2.0
// Shape (ONNX opset 1+; start/end from opset 15) and Size (opset 1+), any input dtype: the
// input's dimensions (int64 1-D) and element count (int64 scalar). Both are known once the input
// shape is, so they become compile-time constants and never a step; the shape subgraphs of
// exported models (Shape -> Gather -> Concat -> Reshape) fold away through them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct shape_op {
    static constexpr std::string_view onnx_name = "Shape";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t start = 0;
        std::optional<std::int64_t> end;  // absent: up to the rank
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("start", &attributes::start), attr("end", &attributes::end));

    /// ONNX's rule for start and end: negative counts from the back, then clamped to [0, rank].
    static std::int64_t clamp_index(std::int64_t i, std::int64_t rank) noexcept {
        if (i < 0) i += rank;
        return i < 0 ? 0 : (i > rank ? rank : i);
    }

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (ctx.opset() < 15 && (a.start != 0 || a.end))
            return ctx.fail(status::invalid_model, "attributes start and end need opset 15 or later, the model has opset {}", ctx.opset());
        const shape& in = ctx.input_shape(0);
        const auto rank = static_cast<std::int64_t>(in.rank());
        const std::int64_t begin = clamp_index(a.start, rank);
        const std::int64_t end = clamp_index(a.end.value_or(rank), rank);
        const std::int64_t n = end > begin ? end - begin : 0;
        result<tensor> t = tensor::create(dtype::int64, shape{n});
        if (!t) return ctx.fail(t.error().code, "{}", t.error().message);
        for (std::int64_t i = 0; i < n; ++i) t->data<std::int64_t>()[i] = in[static_cast<std::size_t>(begin + i)];
        ctx.set_output_constant(0, std::move(*t));
        return status::ok;
    }

    // infer() makes the output a compile-time constant, so compile() never binds this op.
    static status bind(const attributes&, bind_context& ctx) {
        return ctx.fail(status::invalid_model, "Shape has no step: its value is known at compile time");
    }
};

struct size_op {
    static constexpr std::string_view onnx_name = "Size";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        result<tensor> t = tensor::copy_of<std::int64_t>(shape(), {ctx.input_shape(0).elements()});
        if (!t) return ctx.fail(t.error().code, "{}", t.error().message);
        ctx.set_output_constant(0, std::move(*t));
        return status::ok;
    }

    static status bind(const attributes&, bind_context& ctx) {
        return ctx.fail(status::invalid_model, "Size has no step: its value is known at compile time");
    }
};

} // namespace ops
EMBER_NAMESPACE_END
