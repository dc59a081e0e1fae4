// SPDX-License-Identifier: Apache-2.0
// ConvTranspose (ONNX opset 1+), float32 and float64, 1 to 3 spatial dimensions: the gradient of
// Conv with respect to its input. Each input element X[n, c, i] adds X * W[c, m, k] to
// Y[n, g * M/group + m, i * stride + k * dilation - pad_begin] (c in group g), positions outside Y
// being dropped; Y starts from the bias B[m] (or 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ops/op_support.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct conv_transpose {
    static constexpr std::string_view onnx_name = "ConvTranspose";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::string auto_pad = "NOTSET";
        std::vector<std::int64_t> dilations;       // empty: 1 per spatial dimension
        std::int64_t group = 1;
        std::vector<std::int64_t> kernel_shape;    // empty: taken from W
        std::vector<std::int64_t> output_padding;  // empty: 0 per spatial dimension
        std::vector<std::int64_t> output_shape;    // empty: computed from the other attributes
        std::vector<std::int64_t> pads;            // [x1_begin, x2_begin, ..., x1_end, x2_end]; empty: 0
        std::vector<std::int64_t> strides;         // empty: 1 per spatial dimension
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("auto_pad", &attributes::auto_pad), attr("dilations", &attributes::dilations), attr("group", &attributes::group),
                        attr("kernel_shape", &attributes::kernel_shape), attr("output_padding", &attributes::output_padding),
                        attr("output_shape", &attributes::output_shape), attr("pads", &attributes::pads),
                        attr("strides", &attributes::strides));

    struct args {
        operand x, w, b, y;
        bool has_b = false;
        std::int64_t batch = 0;
        std::int64_t in_channels = 0;   // per group (C / group)
        std::int64_t out_channels = 0;  // per group (W's second dimension)
        std::int64_t group = 1;
        window_geometry geo;            // in: X's spatial size, out: Y's; pad_begin: the crop at the start
    };

    /// Checks the inputs and computes the geometry; shared by infer() and bind().
    /// Output size per dimension (ONNX): with output_shape given, that size, and the total
    /// padding stride * (in - 1) + output_padding + extent - out split evenly, the odd one at the
    /// end for SAME_UPPER and at the beginning otherwise (the spec's wording; a negative total
    /// pads nothing, so the extra positions at the end hold the bias only, as ONNX Runtime
    /// does). Otherwise SAME_*: out = in * stride, padding split the same way; NOTSET/VALID:
    /// out = stride * (in - 1) + output_padding + extent - pad_begin - pad_end.
    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (status s = ctx.expect_inputs(2, 3); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64}); s != status::ok) return s;
        for (std::size_t i = 1; i < ctx.input_count(); ++i)
            if (ctx.has_input(i) && ctx.input_type(i) != ctx.input_type(0))
                return ctx.fail(status::invalid_model, "input {} has dtype {}, expected {} like X", i, ctx.input_type(i), ctx.input_type(0));
        const shape& x = ctx.input_shape(0);
        const shape& w = ctx.input_shape(1);
        if (status s = expect_window_input(ctx, x, "X"); s != status::ok) return s;
        const std::size_t S = x.rank() - 2;
        if (w.rank() != x.rank())
            return ctx.fail(status::shape_mismatch, "W must be [C, M/group, kernel...] of rank {} like X {}, got {}", x.rank(), x, w);
        if (a.group < 1) return ctx.fail(status::invalid_model, "group is {}, expected >= 1", a.group);
        if (x[1] != w[0]) return ctx.fail(status::shape_mismatch, "X {} has {} channels, but W {} expects {}", x, x[1], w, w[0]);
        if (x[1] % a.group != 0)
            return ctx.fail(status::shape_mismatch, "X {} has {} channels, not a multiple of group {}", x, x[1], a.group);
        const std::int64_t M = w[1] * a.group;
        if (ctx.has_input(2)) {
            const shape& b = ctx.input_shape(2);
            if (b.rank() != 1 || b[0] != M)
                return ctx.fail(status::shape_mismatch, "B must be [{}] (one bias per output channel: W {} with group {}), got {}", M, w,
                                a.group, b);
        }
        if (!a.kernel_shape.empty()) {
            bool same = a.kernel_shape.size() == S;
            for (std::size_t i = 0; same && i < S; ++i) same = a.kernel_shape[i] == w[2 + i];
            if (!same) return ctx.fail(status::shape_mismatch, "kernel_shape {} does not match W {}", a.kernel_shape, w);
        }
        using mode = window_pad_mode;
        mode pad_mode = mode::notset;
        if (status s = parse_auto_pad(ctx, a.auto_pad, pad_mode); s != status::ok) return s;
        auto per_dim = [&](const std::vector<std::int64_t>& v, std::string_view name, std::size_t count) {
            if (v.empty() || v.size() == count) return status::ok;
            return ctx.fail(status::invalid_model, "{} {} has {} values, expected {} for input X {}", name, v, v.size(), count, x);
        };
        if (status s = per_dim(a.strides, "strides", S); s != status::ok) return s;
        if (status s = per_dim(a.dilations, "dilations", S); s != status::ok) return s;
        if (status s = per_dim(a.output_padding, "output_padding", S); s != status::ok) return s;
        // output_shape is spatial; a full [N, M, spatial...] is accepted too (as ONNX Runtime does)
        const std::size_t out_skip = a.output_shape.size() == S + 2 ? 2 : 0;
        if (out_skip == 0)
            if (status s = per_dim(a.output_shape, "output_shape", S); s != status::ok) return s;
        if (status s = per_dim(a.pads, "pads", 2 * S); s != status::ok) return s;
        if (status s = check_pads(ctx, a.pads, a.auto_pad, pad_mode); s != status::ok) return s;

        window_geometry& G = g.geo;
        G = window_geometry{};
        G.rank = S;
        const std::size_t lead = max_window_rank - S;
        for (std::size_t i = 0; i < S; ++i) {
            const std::size_t d = lead + i;
            const std::int64_t in = x[2 + i], k = w[2 + i];
            const std::int64_t s = a.strides.empty() ? 1 : a.strides[i];
            const std::int64_t dil = a.dilations.empty() ? 1 : a.dilations[i];
            const std::int64_t adj = a.output_padding.empty() ? 0 : a.output_padding[i];
            if (s < 1) return ctx.fail(status::invalid_model, "strides {} has a value below 1", a.strides);
            if (dil < 1) return ctx.fail(status::invalid_model, "dilations {} has a value below 1", a.dilations);
            if (adj < 0) return ctx.fail(status::invalid_model, "output_padding {} has a negative value", a.output_padding);
            const std::int64_t full = s * (in - 1) + adj + dil * (k - 1) + 1;  // the uncropped output
            std::int64_t pb = 0, pe = 0, out = 0;
            if (!a.output_shape.empty() || pad_mode == mode::same_upper || pad_mode == mode::same_lower) {
                out = !a.output_shape.empty() ? a.output_shape[out_skip + i] : in * s;
                if (out < 1) return ctx.fail(status::invalid_model, "output_shape {} has a value below 1", a.output_shape);
                const std::int64_t total = full - out > 0 ? full - out : 0;
                pb = pad_mode == mode::same_upper ? total / 2 : total - total / 2;
                pe = total - pb;
            } else {
                if (pad_mode == mode::notset && !a.pads.empty()) {
                    pb = a.pads[i];
                    pe = a.pads[S + i];
                }
                out = full - pb - pe;
                if (out < 1)
                    return ctx.fail(status::shape_mismatch, "spatial dimension {} of the output would be {} (input {}, pads {} + {} crop all of {})",
                                    i, out, x, pb, pe, full);
            }
            G.in[d] = in;
            G.out[d] = out;
            G.kernel[d] = k;
            G.stride[d] = s;
            G.dilation[d] = dil;
            G.pad_begin[d] = pb;
            G.pad_end[d] = pe;
        }
        g.batch = x[0];
        g.in_channels = x[1] / a.group;
        g.out_channels = w[1];
        g.group = a.group;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), window_output_shape(ctx.input_shape(0), g.out_channels * g.group, g.geo));
        return status::ok;
    }

    // The definition: each output plane (n, m) starts from the bias and gathers the scatter of
    // every input position of m's group's channels through the kernel, so planes are
    // independent and split over the executor. b may be null.
    template <class T>
    static void reference(const args& g, const T* x, const T* w, const T* b, T* y, const executor* ex) noexcept {
        const window_geometry& G = g.geo;
        const std::int64_t in_size = G.in_size(), out_size = G.out_size(), k_size = G.kernel_size();
        const std::int64_t Mg = g.out_channels, C = g.in_channels, M = Mg * g.group;
        parallel_for(ex, static_cast<std::size_t>(g.batch * M), [&](std::size_t begin, std::size_t end) {
            for (auto plane = static_cast<std::int64_t>(begin); plane < static_cast<std::int64_t>(end); ++plane) {
                const std::int64_t n = plane / M, m = plane % M, grp = m / Mg, mg = m % Mg;
                T* yp = y + plane * out_size;
                for (std::int64_t o = 0; o < out_size; ++o) yp[o] = b ? b[m] : T(0);
                for (std::int64_t c = 0; c < C; ++c) {
                    const std::int64_t channel = grp * C + c;
                    const T* xc = x + (n * C * g.group + channel) * in_size;
                    const T* wc = w + (channel * Mg + mg) * k_size;
                    for (std::int64_t i0 = 0; i0 < G.in[0]; ++i0)
                        for (std::int64_t i1 = 0; i1 < G.in[1]; ++i1)
                            for (std::int64_t i2 = 0; i2 < G.in[2]; ++i2) {
                                const T v = xc[(i0 * G.in[1] + i1) * G.in[2] + i2];
                                for (std::int64_t k0 = 0; k0 < G.kernel[0]; ++k0) {
                                    const std::int64_t o0 = i0 * G.stride[0] + k0 * G.dilation[0] - G.pad_begin[0];
                                    if (o0 < 0 || o0 >= G.out[0]) continue;
                                    for (std::int64_t k1 = 0; k1 < G.kernel[1]; ++k1) {
                                        const std::int64_t o1 = i1 * G.stride[1] + k1 * G.dilation[1] - G.pad_begin[1];
                                        if (o1 < 0 || o1 >= G.out[1]) continue;
                                        for (std::int64_t k2 = 0; k2 < G.kernel[2]; ++k2) {
                                            const std::int64_t o2 = i2 * G.stride[2] + k2 * G.dilation[2] - G.pad_begin[2];
                                            if (o2 < 0 || o2 >= G.out[2]) continue;
                                            yp[(o0 * G.out[1] + o1) * G.out[2] + o2] += v * wc[(k0 * G.kernel[1] + k1) * G.kernel[2] + k2];
                                        }
                                    }
                                }
                            }
                }
            }
        });
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<const T>(g.w), g.has_b ? ctx.at<const T>(g.b) : nullptr, ctx.at<T>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.w = ctx.input(1);
        g.has_b = ctx.has_input(2);
        if (g.has_b) g.b = ctx.input(2);
        g.y = ctx.output(0);
        if (ctx.input_type(0) == dtype::float64) ctx.emit(&kernel<double>, g);
        else ctx.emit(&kernel<float>, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
