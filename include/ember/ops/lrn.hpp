// SPDX-License-Identifier: Apache-2.0
// LRN (ONNX opset 1+), float32, float64 and float16: local response normalisation across
// channels of X [N, C, D1, ...],
//     y = x / (bias + alpha / size * sum of x^2 over channels [c - floor((size-1)/2),
//                                                            c + ceil((size-1)/2)]) ^ beta.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "ember/ops/norm_support.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct lrn {
    static constexpr std::string_view onnx_name = "LRN";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        float alpha = 1e-4f;
        float beta = 0.75f;
        float bias = 1.0f;
        std::int64_t size = 0;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("alpha", &attributes::alpha), attr("beta", &attributes::beta),
                                                            attr("bias", &attributes::bias), required_attr("size", &attributes::size));

    struct args {
        operand x, y;
        std::int64_t batch = 0, channels = 0, plane = 0;
        std::int64_t before = 0, after = 0;  // channels summed below and above c
        double alpha = 0.0, beta = 0.0, bias = 0.0;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        if (x.rank() < 2) return ctx.fail(status::shape_mismatch, "input must be [N, C, D1, ...], got {}", x);
        if (a.size < 1) return ctx.fail(status::invalid_model, "size is {}, expected >= 1", a.size);
        norm_detail::split_nc_plane(x, g.batch, g.channels, g.plane);
        g.before = (a.size - 1) / 2;
        g.after = a.size - 1 - g.before;
        g.alpha = static_cast<double>(a.alpha) / static_cast<double>(a.size);
        g.beta = a.beta;
        g.bias = a.bias;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) { return norm_detail::infer_like_input<lrn>(a, ctx); }

    // The definition: a direct sum over the channel window of each element.
    template <class T>
    static void reference(const args& g, const T* x, T* y, const executor* ex) noexcept {
        using reduce_detail::to_double;
        parallel_for(ex, static_cast<std::size_t>(g.batch * g.channels), [&](std::size_t begin, std::size_t end) {
            for (auto p = static_cast<std::int64_t>(begin); p < static_cast<std::int64_t>(end); ++p) {
                const std::int64_t n = p / g.channels, c = p % g.channels;
                const std::int64_t lo = c - g.before < 0 ? 0 : c - g.before;
                const std::int64_t hi = c + g.after >= g.channels ? g.channels - 1 : c + g.after;
                for (std::int64_t i = 0; i < g.plane; ++i) {
                    double sq = 0.0;
                    for (std::int64_t k = lo; k <= hi; ++k) {
                        const double v = to_double(x[(n * g.channels + k) * g.plane + i]);
                        sq += v * v;
                    }
                    const std::int64_t at = p * g.plane + i;
                    y[at] = reduce_detail::narrow<T>(to_double(x[at]) / std::pow(g.bias + g.alpha * sq, g.beta));
                }
            }
        });
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<T>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        norm_detail::emit_floating<lrn>(ctx, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
