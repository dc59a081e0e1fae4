// SPDX-License-Identifier: Apache-2.0
// Conv (ONNX opset 1+), float32, 1 to 3 spatial dimensions: Y[n, m] = B[m] + sum over the
// channels c of m's group and the kernel positions k of X[n, c, out * stride - pad_begin +
// k * dilation] * W[m, c, k], positions in the padding contributing zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ops/op_support.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct conv {
    static constexpr std::string_view onnx_name = "Conv";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::string auto_pad = "NOTSET";
        std::vector<std::int64_t> dilations;     // empty: 1 per spatial dimension
        std::int64_t group = 1;
        std::vector<std::int64_t> kernel_shape;  // empty: taken from W
        std::vector<std::int64_t> pads;          // [x1_begin, x2_begin, ..., x1_end, x2_end]; empty: 0
        std::vector<std::int64_t> strides;       // empty: 1 per spatial dimension
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("auto_pad", &attributes::auto_pad), attr("dilations", &attributes::dilations), attr("group", &attributes::group),
                        attr("kernel_shape", &attributes::kernel_shape), attr("pads", &attributes::pads),
                        attr("strides", &attributes::strides));

    struct args {
        operand x, w, b, y;
        bool has_b = false;
        std::int64_t batch = 0;
        std::int64_t in_channels = 0;   // per group
        std::int64_t out_channels = 0;  // all groups together (M)
        std::int64_t group = 1;
        window_geometry geo;
    };

    /// Checks the inputs and computes the geometry; shared by infer() and bind().
    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (status s = ctx.expect_inputs(2, 3); s != status::ok) return s;
        for (std::size_t i = 0; i < ctx.input_count(); ++i)
            if (ctx.has_input(i))
                if (status s = ctx.expect_type(i, {dtype::float32}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        const shape& w = ctx.input_shape(1);
        const shape* b = ctx.has_input(2) ? &ctx.input_shape(2) : nullptr;
        const window_spec spec{a.auto_pad, a.pads, a.strides, a.dilations, false};
        if (status s = plan_conv_window(ctx, x, w, b, a.group, a.kernel_shape, spec, "X", "W", g.geo); s != status::ok) return s;
        g.batch = x[0];
        g.in_channels = w[1];
        g.out_channels = w[0];
        g.group = a.group;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, dtype::float32, window_output_shape(ctx.input_shape(0), g.out_channels, g.geo));
        return status::ok;
    }

    // The definition: a direct loop per output element over the group's input channels and the
    // kernel window, skipping positions in the padding; the bias is added to the finished sum.
    // Output planes (n, m) are split over the executor. b may be null.
    static void reference(const args& g, const float* x, const float* w, const float* b, float* y, const executor* ex) noexcept {
        const window_geometry& G = g.geo;
        const std::int64_t in_size = G.in_size(), out_size = G.out_size(), k_size = G.kernel_size();
        const std::int64_t M = g.out_channels, C = g.in_channels, per_group = M / g.group;
        parallel_for(ex, static_cast<std::size_t>(g.batch * M), [&](std::size_t begin, std::size_t end) {
            for (auto plane = static_cast<std::int64_t>(begin); plane < static_cast<std::int64_t>(end); ++plane) {
                const std::int64_t n = plane / M, m = plane % M, grp = m / per_group;
                const float* xg = x + (n * g.group + grp) * C * in_size;  // first channel of m's group
                const float* wm = w + m * C * k_size;
                float* yp = y + plane * out_size;
                for_each_window_output(G, [&](std::int64_t o0, std::int64_t o1, std::int64_t o2) {
                    float acc = 0.0f;
                    for (std::int64_t c = 0; c < C; ++c)
                        for_each_window_tap(G, o0, o1, o2, [&](auto i0, auto i1, auto i2, auto k0, auto k1, auto k2) {
                            acc += xg[c * in_size + (i0 * G.in[1] + i1) * G.in[2] + i2] *
                                   wm[c * k_size + (k0 * G.kernel[1] + k1) * G.kernel[2] + k2];
                        });
                    yp[(o0 * G.out[1] + o1) * G.out[2] + o2] = b ? acc + b[m] : acc;
                });
            }
        });
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.x), ctx.at<const float>(g.w), g.has_b ? ctx.at<const float>(g.b) : nullptr, ctx.at<float>(g.y),
                  ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.w = ctx.input(1);
        g.has_b = ctx.has_input(2);
        if (g.has_b) g.b = ctx.input(2);
        g.y = ctx.output(0);
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
