// SPDX-License-Identifier: Apache-2.0
// AveragePool (ONNX opset 1+), float32, 1 to 3 spatial dimensions: the mean of each (dilated)
// window. With count_include_pad = 0 (the default) the sum is divided by the number of window
// positions inside the input; with 1, by the number inside the padded input, so a last window
// that ceil_mode lets run past the end padding counts only up to it (as PyTorch and ONNX Runtime
// do).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ops/op_support.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct average_pool {
    static constexpr std::string_view onnx_name = "AveragePool";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::string auto_pad = "NOTSET";
        bool ceil_mode = false;
        bool count_include_pad = false;
        std::vector<std::int64_t> dilations;     // opset 19; empty: 1 per spatial dimension
        std::vector<std::int64_t> kernel_shape;  // required
        std::vector<std::int64_t> pads;          // [x1_begin, x2_begin, ..., x1_end, x2_end]; empty: 0
        std::vector<std::int64_t> strides;       // empty: 1 per spatial dimension
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("auto_pad", &attributes::auto_pad), attr("ceil_mode", &attributes::ceil_mode),
                        attr("count_include_pad", &attributes::count_include_pad), attr("dilations", &attributes::dilations),
                        required_attr("kernel_shape", &attributes::kernel_shape), attr("pads", &attributes::pads),
                        attr("strides", &attributes::strides));

    struct args {
        operand x, y;
        std::int64_t planes = 0;  // N * C
        bool count_include_pad = false;
        window_geometry geo;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        if (status s = expect_window_input(ctx, x, "X"); s != status::ok) return s;
        const std::size_t S = x.rank() - 2;
        if (a.kernel_shape.size() != S)
            return ctx.fail(status::invalid_model, "kernel_shape {} has {} values, expected {} (one per spatial dimension of X {})", a.kernel_shape,
                            a.kernel_shape.size(), S, x);
        const window_spec spec{a.auto_pad, a.pads, a.strides, a.dilations, a.ceil_mode};
        if (status s = make_window_geometry(ctx, x, a.kernel_shape.data(), spec, g.geo); s != status::ok) return s;
        g.planes = x[0] * x[1];
        g.count_include_pad = a.count_include_pad;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, dtype::float32, window_output_shape(ctx.input_shape(0), ctx.input_shape(0)[1], g.geo));
        return status::ok;
    }

    // The definition: sum the window's positions inside the input, count the positions inside
    // the input (or inside the padded input, with count_include_pad) and divide. A window with
    // nothing to count gives 0. Planes (n, c) are split over the executor.
    static void reference(const args& g, const float* x, float* y, const executor* ex) noexcept {
        const window_geometry& G = g.geo;
        const std::int64_t in_size = G.in_size(), out_size = G.out_size();
        // positions along dimension d that count for a window starting at `start`
        auto counted = [&](std::size_t d, std::int64_t start) {
            const std::int64_t lo = g.count_include_pad ? -G.pad_begin[d] : 0;
            const std::int64_t hi = g.count_include_pad ? G.in[d] + G.pad_end[d] : G.in[d];
            std::int64_t n = 0;
            for (std::int64_t k = 0; k < G.kernel[d]; ++k) {
                const std::int64_t i = start + k * G.dilation[d];
                n += i >= lo && i < hi ? 1 : 0;
            }
            return n;
        };
        parallel_for(ex, static_cast<std::size_t>(g.planes), [&](std::size_t begin, std::size_t end) {
            for (auto plane = static_cast<std::int64_t>(begin); plane < static_cast<std::int64_t>(end); ++plane) {
                const float* xp = x + plane * in_size;
                float* yp = y + plane * out_size;
                for_each_window_output(G, [&](std::int64_t o0, std::int64_t o1, std::int64_t o2) {
                    float sum = 0.0f;
                    for_each_window_tap(G, o0, o1, o2, [&](auto i0, auto i1, auto i2, auto, auto, auto) {
                        sum += xp[(i0 * G.in[1] + i1) * G.in[2] + i2];
                    });
                    const std::int64_t s0 = o0 * G.stride[0] - G.pad_begin[0];
                    const std::int64_t s1 = o1 * G.stride[1] - G.pad_begin[1];
                    const std::int64_t s2 = o2 * G.stride[2] - G.pad_begin[2];
                    const std::int64_t count = counted(0, s0) * counted(1, s1) * counted(2, s2);
                    yp[(o0 * G.out[1] + o1) * G.out[2] + o2] = count > 0 ? sum / static_cast<float>(count) : 0.0f;
                });
            }
        });
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.x), ctx.at<float>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
