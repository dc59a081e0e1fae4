// SPDX-License-Identifier: Apache-2.0
// Constant (ONNX opset 1+; value_float/value_int/value_floats/value_ints from 12): output 0 is
// the attribute's tensor. Known at compile time, so it never becomes a step.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct constant {
    static constexpr std::string_view onnx_name = "Constant";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::optional<tensor> value;
        std::optional<float> value_float;
        std::optional<std::int64_t> value_int;
        std::optional<std::vector<float>> value_floats;
        std::optional<std::vector<std::int64_t>> value_ints;
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("value", &attributes::value), attr("value_float", &attributes::value_float), attr("value_int", &attributes::value_int),
                        attr("value_floats", &attributes::value_floats), attr("value_ints", &attributes::value_ints));

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(0, 0); s != status::ok) return s;
        const int given = int{a.value.has_value()} + int{a.value_float.has_value()} + int{a.value_int.has_value()} +
                          int{a.value_floats.has_value()} + int{a.value_ints.has_value()};
        if (given != 1) return ctx.fail(status::invalid_model, "exactly one value attribute must be given, got {}", given);
        result<tensor> t = make(a);
        if (!t) return ctx.fail(t.error().code, "{}", t.error().message);
        ctx.set_output_constant(0, std::move(*t));
        return status::ok;
    }

    // infer() makes the output a compile-time constant, so compile() never binds this op.
    static status bind(const attributes&, bind_context& ctx) {
        return ctx.fail(status::invalid_model, "Constant has no step: its value is known at compile time");
    }

private:
    static result<tensor> make(const attributes& a) {
        if (a.value) return *a.value;
        if (a.value_float) return tensor::copy_of<float>(shape(), {*a.value_float});
        if (a.value_int) return tensor::copy_of<std::int64_t>(shape(), {*a.value_int});
        if (a.value_floats)
            return tensor::copy_of<float>(shape{static_cast<std::int64_t>(a.value_floats->size())},
                                          span<const float>(a.value_floats->data(), a.value_floats->size()));
        return tensor::copy_of<std::int64_t>(shape{static_cast<std::int64_t>(a.value_ints->size())},
                                             span<const std::int64_t>(a.value_ints->data(), a.value_ints->size()));
    }
};

} // namespace ops
EMBER_NAMESPACE_END
