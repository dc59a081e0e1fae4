// SPDX-License-Identifier: Apache-2.0
// Dropout (ONNX opset 7+) for inference: the output is the input and the optional mask is all
// ones (bool from opset 10, the data's dtype before). The ratio (an attribute before opset 12,
// an optional input from 12) does not matter then. From opset 12 the optional training_mode
// input must be a compile-time false, or true with a compile-time ratio of 0 (nothing dropped):
// training-mode dropout (random masks) is not supported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ember/ops/cast.hpp"
#include "ember/ops/copy.hpp"
#include "ember/ops/layout.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct dropout {
    static constexpr std::string_view onnx_name = "Dropout";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;

    struct attributes {
        float ratio = 0.5f;     // opset < 12
        std::int64_t seed = 0;  // opset 12+, unused in inference
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("ratio", &attributes::ratio), attr("seed", &attributes::seed));

    static dtype mask_type(std::int64_t opset, dtype data) noexcept { return opset < 10 ? data : dtype::boolean; }

    /// Whether the ratio input is a compile-time 0 (training mode then keeps every element).
    /// A ratio that is an input not known at compile time fails with the standard message.
    static bool zero_ratio(infer_context& ctx) {
        if (!ctx.has_input(1)) return false;  // the default ratio is 0.5
        const tensor* r = ctx.require_constant(1, "ratio, with training_mode true");
        if (!r) return false;
        bool zero = false;
        visit_dtype(r->type(), [&](auto t) {
            using T = decltype(t);
            if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
                zero = static_cast<float>(r->data<T>()[0]) == 0.0f;
        });
        return zero;
    }

    static status infer(const attributes&, infer_context& ctx) {
        if (ctx.opset() < 7) return ctx.fail(status::unsupported_op, "Dropout before opset 7 (is_test) is not supported; opset is {}", ctx.opset());
        if (ctx.output_count() < 1 || ctx.output_count() > 2)
            return ctx.fail(status::invalid_model, "expected 1 or 2 outputs, got {}", ctx.output_count());
        if (!ctx.has_output(0)) return ctx.fail(status::invalid_model, "output 0 is required");
        if (ctx.opset() < 12) {
            if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        } else {
            if (status s = ctx.expect_inputs(1, 3); s != status::ok) return s;
            if (ctx.has_input(1)) {
                if (!is_floating(ctx.input_type(1)))
                    return ctx.fail(status::invalid_model, "input 1 (ratio) must be floating point, got {}", ctx.input_type(1));
                if (ctx.input_shape(1).elements() != 1)
                    return ctx.fail(status::invalid_model, "input 1 (ratio) must be a scalar, got shape {}", ctx.input_shape(1));
            }
            if (ctx.has_input(2)) {
                if (ctx.input_type(2) != dtype::boolean || ctx.input_shape(2).elements() != 1)
                    return ctx.fail(status::invalid_model, "input 2 (training_mode) must be a bool scalar, got {} of shape {}", ctx.input_type(2),
                                    ctx.input_shape(2));
                const tensor* t = ctx.require_constant(2, "training_mode");
                if (!t) return status::unsupported_op;
                if (t->data<bool>()[0] && !zero_ratio(ctx)) {
                    if (ctx.diag().failed()) return status::unsupported_op;
                    return ctx.fail(status::unsupported_op,
                                    "training_mode is true: training-mode dropout is not supported, only inference (or ratio 0)");
                }
            }
        }
        ctx.set_output(0, ctx.input_type(0), ctx.input_shape(0));
        ctx.set_output(1, mask_type(ctx.opset(), ctx.input_type(0)), ctx.input_shape(0));
        return status::ok;
    }

    static status bind(const attributes&, bind_context& ctx) {
        if (status s = bind_copy(ctx); s != status::ok) return s;
        if (!ctx.has_output(1)) return status::ok;
        std::byte one[8] = {};
        visit_dtype(ctx.output_type(1), [&](auto t) {
            const auto v = convert_element<decltype(t)>(std::int32_t{1});
            std::memcpy(one, &v, sizeof v);
        });
        return emit_fill(ctx, 1, ctx.output_type(1), static_cast<std::size_t>(ctx.input_shape(0).elements()), one);
    }
};

} // namespace ops
EMBER_NAMESPACE_END
