// SPDX-License-Identifier: Apache-2.0
// LogSoftmax (ONNX opset 1+), float32 and float64: y = x - max - log(sum(exp(x - max))) over
// the same lines as Softmax (ops/softmax.hpp, whose axis semantics it shares: before opset 13
// the input is coerced to 2-D at `axis`, default 1; from 13 on the single dimension `axis`,
// default -1).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "ember/ops/op_support.hpp"
#include "ember/ops/softmax.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// infer() of the softmax-like ops (Softmax's axis rules, output = input): checks the dtype
/// against `allowed` and the axis against the input's rank.
inline status infer_softmax_like(const std::optional<std::int64_t>& axis_attr, infer_context& ctx, std::initializer_list<dtype> allowed) {
    if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
    if (status s = ctx.expect_type(0, allowed); s != status::ok) return s;
    const shape& in = ctx.input_shape(0);
    const std::int64_t axis = axis_attr.value_or(softmax::default_axis(ctx.opset()));
    std::size_t k = 0;
    if (in.rank() == 0 || !normalize_axis(axis, in.rank(), k))
        return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {} (rank {})", axis, in, in.rank());
    ctx.set_output(0, ctx.input_type(0), in);
    return status::ok;
}

struct log_softmax {
    static constexpr std::string_view onnx_name = "LogSoftmax";
    static constexpr op_flags flags = op_flags::in_place;

    struct attributes {
        std::optional<std::int64_t> axis;  // absent: 1 before opset 13, -1 from opset 13
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));

    static status infer(const attributes& a, infer_context& ctx) {
        return infer_softmax_like(a.axis, ctx, {dtype::float32, dtype::float64});
    }

    // The definition, over Softmax's [outer, axis_len, inner] lines. The sum of exp(x - max) is
    // >= 1, so its log is finite. x and y may alias: a line's x are all read (max and sum) before
    // its y are written.
    template <class T>
    static void reference(const softmax::args& g, const T* x, T* y, const executor* ex) noexcept {
        const std::int64_t L = g.axis_len, S = g.inner;
        if (L == 0) return;
        parallel_for(ex, static_cast<std::size_t>(g.outer * S), [&](std::size_t begin, std::size_t end) {
            for (auto line = static_cast<std::int64_t>(begin); line < static_cast<std::int64_t>(end); ++line) {
                const std::int64_t base = (line / S) * L * S + line % S;
                const T* xl = x + base;
                T* yl = y + base;
                T max = xl[0];
                for (std::int64_t j = 1; j < L; ++j) max = xl[j * S] > max ? xl[j * S] : max;
                double sum = 0.0;
                for (std::int64_t j = 0; j < L; ++j) sum += std::exp(static_cast<double>(xl[j * S] - max));
                const T log_sum = static_cast<T>(std::log(sum));
                for (std::int64_t j = 0; j < L; ++j) yl[j * S] = xl[j * S] - max - log_sum;
            }
        });
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const softmax::args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<T>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        softmax::args g = softmax::plan_shape(softmax::attributes{a.axis}, ctx.input_shape(0), ctx.opset());
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        ctx.emit(ctx.input_type(0) == dtype::float64 ? &kernel<double> : &kernel<float>, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
