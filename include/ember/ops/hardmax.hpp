// SPDX-License-Identifier: Apache-2.0
// Hardmax (ONNX opset 1+), float32, float64 and float16: 1 at the first largest element of each
// line and 0 elsewhere, over the same lines as Softmax (ops/softmax.hpp: before opset 13 the
// input coerced to 2-D at `axis`, default 1; from 13 on the single dimension `axis`, default -1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "ember/ops/log_softmax.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"
#include "ember/ops/softmax.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct hardmax {
    static constexpr std::string_view onnx_name = "Hardmax";
    static constexpr op_flags flags = op_flags::in_place;

    struct attributes {
        std::optional<std::int64_t> axis;  // absent: 1 before opset 13, -1 from opset 13
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));

    static status infer(const attributes& a, infer_context& ctx) {
        return infer_softmax_like(a.axis, ctx, {dtype::float32, dtype::float64, dtype::float16});
    }

    // The definition: find the first maximum of the line (a NaN is never chosen over a number
    // unless the line starts with it), then write the line. x and y may alias: the line is read
    // whole before it is written.
    template <class T>
    static void reference(const softmax::args& g, const T* x, T* y, const executor* ex) noexcept {
        using reduce_detail::to_double;
        const std::int64_t L = g.axis_len, S = g.inner;
        if (L == 0) return;
        parallel_for(ex, static_cast<std::size_t>(g.outer * S), [&](std::size_t begin, std::size_t end) {
            for (auto line = static_cast<std::int64_t>(begin); line < static_cast<std::int64_t>(end); ++line) {
                const std::int64_t base = (line / S) * L * S + line % S;
                std::int64_t best = 0;
                for (std::int64_t j = 1; j < L; ++j)
                    if (to_double(x[base + j * S]) > to_double(x[base + best * S])) best = j;
                for (std::int64_t j = 0; j < L; ++j) y[base + j * S] = reduce_detail::narrow<T>(j == best ? 1.0 : 0.0);
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
        const dtype t = ctx.input_type(0);
        ctx.emit(t == dtype::float64 ? &kernel<double> : t == dtype::float16 ? &kernel<float16> : &kernel<float>, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
