// SPDX-License-Identifier: Apache-2.0
// LpPool (ONNX opset 1+; ceil_mode and dilations from opset 18), float32 and float64, 1 to 3
// spatial dimensions: (sum over each window's positions inside X of |x|^p)^(1/p), padding
// contributing 0.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ops/op_support.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct lp_pool {
    static constexpr std::string_view onnx_name = "LpPool";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::string auto_pad = "NOTSET";
        bool ceil_mode = false;                  // opset 18
        std::vector<std::int64_t> dilations;     // opset 18; empty: 1 per spatial dimension
        std::vector<std::int64_t> kernel_shape;  // required
        float p = 2.0f;                          // a float in opset 1, an int since opset 2
        std::vector<std::int64_t> pads;          // [x1_begin, x2_begin, ..., x1_end, x2_end]; empty: 0
        std::vector<std::int64_t> strides;       // empty: 1 per spatial dimension
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("auto_pad", &attributes::auto_pad), attr("ceil_mode", &attributes::ceil_mode),
                        attr("dilations", &attributes::dilations), required_attr("kernel_shape", &attributes::kernel_shape),
                        attr("p", &attributes::p), attr("pads", &attributes::pads), attr("strides", &attributes::strides));

    struct args {
        operand x, y;
        std::int64_t planes = 0;  // N * C
        double p = 2.0;
        window_geometry geo;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        if (status s = expect_window_input(ctx, x, "X"); s != status::ok) return s;
        const std::size_t S = x.rank() - 2;
        if (a.kernel_shape.size() != S)
            return ctx.fail(status::invalid_model, "kernel_shape {} has {} values, expected {} (one per spatial dimension of X {})", a.kernel_shape,
                            a.kernel_shape.size(), S, x);
        if (!(a.p > 0.0f) || !std::isfinite(a.p)) return ctx.fail(status::invalid_model, "p is {}, expected a finite value > 0", a.p);
        const window_spec spec{a.auto_pad, a.pads, a.strides, a.dilations, a.ceil_mode};
        if (status s = make_window_geometry(ctx, x, a.kernel_shape.data(), spec, g.geo); s != status::ok) return s;
        g.planes = x[0] * x[1];
        g.p = a.p;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), window_output_shape(ctx.input_shape(0), ctx.input_shape(0)[1], g.geo));
        return status::ok;
    }

    // The definition: per window, the p-norm of its positions inside X (p = 1 and 2 exactly).
    template <class T>
    static void reference(const args& g, const T* x, T* y, const executor* ex) noexcept {
        const window_geometry& G = g.geo;
        const std::int64_t in_size = G.in_size(), out_size = G.out_size();
        parallel_for(ex, static_cast<std::size_t>(g.planes), [&](std::size_t begin, std::size_t end) {
            for (auto plane = static_cast<std::int64_t>(begin); plane < static_cast<std::int64_t>(end); ++plane) {
                const T* xp = x + plane * in_size;
                T* yp = y + plane * out_size;
                for_each_window_output(G, [&](std::int64_t o0, std::int64_t o1, std::int64_t o2) {
                    double sum = 0.0;
                    for_each_window_tap(G, o0, o1, o2, [&](auto i0, auto i1, auto i2, auto, auto, auto) {
                        const double v = std::fabs(static_cast<double>(xp[(i0 * G.in[1] + i1) * G.in[2] + i2]));
                        sum += g.p == 1.0 ? v : g.p == 2.0 ? v * v : std::pow(v, g.p);
                    });
                    const double r = g.p == 1.0 ? sum : g.p == 2.0 ? std::sqrt(sum) : std::pow(sum, 1.0 / g.p);
                    yp[(o0 * G.out[1] + o1) * G.out[2] + o2] = static_cast<T>(r);
                });
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
        if (ctx.input_type(0) == dtype::float64) ctx.emit(&kernel<double>, g);
        else ctx.emit(&kernel<float>, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
