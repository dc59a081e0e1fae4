// SPDX-License-Identifier: Apache-2.0
// MeanVarianceNormalization (ONNX opset 9+), float32, float64 and float16: over the `axes`
// (default [0, 2, 3]) of X, y = (x - mean) / (sqrt(var) + 1e-9) with the population variance,
// as ONNX's function definition of the op computes it (statistics in double here).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/ops/norm_support.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct mean_variance_normalization {
    static constexpr std::string_view onnx_name = "MeanVarianceNormalization";
    static constexpr op_flags flags = op_flags::in_place;

    struct attributes {
        std::vector<std::int64_t> axes = {0, 2, 3};
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axes", &attributes::axes));

    struct args {
        operand x, y;
        reduce_geometry geo;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (ctx.opset() < 9)
            return ctx.fail(status::unsupported_op, "MeanVarianceNormalization before opset 9 (across_channels) is not supported; opset is {}",
                            ctx.opset());
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16}); s != status::ok) return s;
        bool mask[max_rank] = {};
        if (status s = axes_mask(ctx, a.axes, ctx.input_shape(0).rank(), mask); s != status::ok) return s;
        g.geo = make_reduce_geometry(ctx.input_shape(0), mask);
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) { return norm_detail::infer_like_input<mean_variance_normalization>(a, ctx); }

    // The definition: per reduced set, mean and variance in double, then the set's elements.
    // x and y may alias: a set is read whole before it is written.
    template <class T>
    static void reference(const reduce_geometry& geo, const T* x, T* y, const executor* ex) noexcept {
        using reduce_detail::to_double;
        const auto n = static_cast<double>(geo.red_count);
        parallel_for(ex, static_cast<std::size_t>(geo.out_count), [&](std::size_t begin, std::size_t end) {
            for (auto o = static_cast<std::int64_t>(begin); o < static_cast<std::int64_t>(end); ++o) {
                const std::int64_t base = geo.base(o);
                double sum = 0.0;
                geo.for_each(base, [&](std::int64_t off) { sum += to_double(x[off]); });
                const double mu = sum / n;
                double sq = 0.0;
                geo.for_each(base, [&](std::int64_t off) {
                    const double d = to_double(x[off]) - mu;
                    sq += d * d;
                });
                const double den = std::sqrt(sq / n) + 1e-9;
                geo.for_each(base, [&](std::int64_t off) { y[off] = reduce_detail::narrow<T>((to_double(x[off]) - mu) / den); });
            }
        });
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g.geo, ctx.at<const T>(g.x), ctx.at<T>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        norm_detail::emit_floating<mean_variance_normalization>(ctx, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
