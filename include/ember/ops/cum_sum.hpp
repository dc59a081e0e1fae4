// SPDX-License-Identifier: Apache-2.0
// CumSum (ONNX opset 11, 14 adds float16/bfloat16), numeric dtypes: running sums along the axis
// given by input 1 (an int32 or int64 scalar, known at compile time; negative counts from the
// end). exclusive=1 leaves out the element itself (the first sum is 0), reverse=1 sums from the
// end. Integers wrap around on overflow; float16/bfloat16 accumulate in float.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct cum_sum {
    static constexpr std::string_view onnx_name = "CumSum";
    static constexpr op_flags flags = op_flags::in_place;

    struct attributes {
        bool exclusive = false;
        bool reverse = false;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("exclusive", &attributes::exclusive), attr("reverse", &attributes::reverse));

    /// The input seen as [outer, axis_len, inner]: outer * inner lines of axis_len values.
    struct args {
        operand x, y;
        std::int64_t outer = 0, axis_len = 0, inner = 0;
        bool exclusive = false, reverse = false;
    };

    /// The axis from input 1, normalised; fails with a message when it is unknown or bad.
    static status resolve_axis(infer_context& ctx, std::size_t& axis) {
        const tensor* t = ctx.require_constant(1, "axis");
        if (!t) return status::unsupported_op;
        std::vector<std::int64_t> v;
        if (!infer_context::ints_of(*t, v) || v.size() != 1)
            return ctx.fail(status::invalid_model, "input 1 (axis) must be an int32 or int64 scalar, got {} of shape {}", t->type(), t->dims());
        const shape& in = ctx.input_shape(0);
        if (!normalize_axis(v[0], in.rank(), axis))
            return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {} (rank {})", v[0], in, in.rank());
        return status::ok;
    }

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        const dtype t = ctx.input_type(0);
        if (t == dtype::boolean || size_of(t) == 0 || ((t == dtype::float16 || t == dtype::bfloat16) && ctx.opset() < 14))
            return ctx.fail(status::unsupported_op, "input 0 has dtype {}, which CumSum does not support at opset {}", t, ctx.opset());
        if (ctx.input_shape(0).rank() == 0) return ctx.fail(status::shape_mismatch, "input must have rank >= 1, got a scalar");
        std::size_t axis = 0;
        if (status s = resolve_axis(ctx, axis); s != status::ok) return s;
        ctx.set_output(0, t, ctx.input_shape(0));
        return status::ok;
    }

    // The definition. x and y may alias: each x is read before the y at its place is written.
    template <class T>
    static void reference(const args& g, const T* x, T* y) noexcept {
        using acc_t = std::conditional_t<indexing::is_half_float_v<T>, float, T>;
        const std::int64_t L = g.axis_len, S = g.inner;
        for (std::int64_t line = 0; line < g.outer * S; ++line) {
            const std::int64_t base = (line / S) * L * S + line % S;
            acc_t sum = acc_t(0);
            for (std::int64_t j = 0; j < L; ++j) {
                const std::int64_t at = base + (g.reverse ? L - 1 - j : j) * S;
                const acc_t v = static_cast<acc_t>(x[at]);
                if (!g.exclusive) sum = indexing::add(sum, v);
                y[at] = static_cast<T>(sum);
                if (g.exclusive) sum = indexing::add(sum, v);
            }
        }
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<T>(g.y));
    }

    static status bind(const attributes& a, bind_context& ctx) {
        std::size_t axis = 0;
        if (status s = resolve_axis(ctx, axis); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        args g;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        g.outer = indexing::product(in, 0, axis);
        g.axis_len = in[axis];
        g.inner = indexing::product(in, axis + 1, in.rank());
        g.exclusive = a.exclusive;
        g.reverse = a.reverse;
        kernel_fn fn = nullptr;
        visit_dtype(ctx.input_type(0), [&](auto tag) {
            using T = decltype(tag);
            if constexpr (!std::is_same_v<T, bool>) fn = &kernel<T>;
        });
        if (!fn) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.emit(fn, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
