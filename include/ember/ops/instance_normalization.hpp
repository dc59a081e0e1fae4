// SPDX-License-Identifier: Apache-2.0
// InstanceNormalization (ONNX opset 1+; the consumed_inputs attribute of opset 1 is not
// supported), float32, float64 and float16: each (n, c) plane of X [N, C, D1, ...] is normalised
// with its own mean and population variance,
//     y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c].
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "ember/ops/norm_support.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct instance_normalization {
    static constexpr std::string_view onnx_name = "InstanceNormalization";
    static constexpr op_flags flags = op_flags::in_place;

    struct attributes {
        float epsilon = 1e-5f;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("epsilon", &attributes::epsilon));

    struct args {
        operand x, scale, b, y;
        std::int64_t batch = 0, channels = 0, plane = 0;
        double epsilon = 0.0;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (status s = ctx.expect_inputs(3, 3); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16}); s != status::ok) return s;
        for (std::size_t i = 1; i < 3; ++i)
            if (ctx.input_type(i) != ctx.input_type(0))
                return ctx.fail(status::invalid_model, "input {} has dtype {}, input 0 has {}", i, ctx.input_type(i), ctx.input_type(0));
        const shape& x = ctx.input_shape(0);
        if (x.rank() < 2) return ctx.fail(status::shape_mismatch, "input must be [N, C, D1, ...], got {}", x);
        for (std::size_t i = 1; i < 3; ++i) {
            const shape& s = ctx.input_shape(i);
            if (s.rank() != 1 || s[0] != x[1])
                return ctx.fail(status::shape_mismatch, "{} must be [{}] (one per channel of input {}), got {}", i == 1 ? "scale" : "B", x[1],
                                x, s);
        }
        norm_detail::split_nc_plane(x, g.batch, g.channels, g.plane);
        g.epsilon = a.epsilon;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) { return norm_detail::infer_like_input<instance_normalization>(a, ctx); }

    // The definition: mean and variance of each plane in double, then the plane. x and y may
    // alias: a plane is read whole before it is written.
    template <class T>
    static void reference(const args& g, const T* x, const T* scale, const T* b, T* y, const executor* ex) noexcept {
        using reduce_detail::narrow;
        using reduce_detail::to_double;
        parallel_for(ex, static_cast<std::size_t>(g.batch * g.channels), [&](std::size_t begin, std::size_t end) {
            for (auto p = static_cast<std::int64_t>(begin); p < static_cast<std::int64_t>(end); ++p) {
                const T* xp = x + p * g.plane;
                T* yp = y + p * g.plane;
                double sum = 0.0;
                for (std::int64_t i = 0; i < g.plane; ++i) sum += to_double(xp[i]);
                const double mu = sum / static_cast<double>(g.plane);
                double sq = 0.0;
                for (std::int64_t i = 0; i < g.plane; ++i) {
                    const double d = to_double(xp[i]) - mu;
                    sq += d * d;
                }
                const std::int64_t c = p % g.channels;
                const double k = to_double(scale[c]) / std::sqrt(sq / static_cast<double>(g.plane) + g.epsilon);
                const double bias = to_double(b[c]);
                for (std::int64_t i = 0; i < g.plane; ++i) yp[i] = narrow<T>((to_double(xp[i]) - mu) * k + bias);
            }
        });
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<const T>(g.scale), ctx.at<const T>(g.b), ctx.at<T>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.scale = ctx.input(1);
        g.b = ctx.input(2);
        g.y = ctx.output(0);
        norm_detail::emit_floating<instance_normalization>(ctx, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
