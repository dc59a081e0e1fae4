// SPDX-License-Identifier: Apache-2.0
// The quantized convolutions (ONNX opset 10+), reference kernels, with Conv's attributes and
// geometry (1 to 3 spatial dimensions, groups, pads, strides, dilations, auto_pad):
//
//   ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32
//       Y[n, m] = sum over m's group's channels c and kernel positions k of
//                 (X[n, c, pos] - x_zp) * (W[m, c, k] - w_zp[m])
//   QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?) -> y_zp's type
//       y = saturate(round((that sum + B[m]) * (x_scale * w_scale[m] / y_scale)) + y_zp)
//
// Positions in the padding hold x_zp, so they contribute 0. x and w are uint8 or int8; x's
// scale and zero point are per tensor, w's per tensor or per output channel ([M]); B is int32.
// The accumulator is exact (int64) and converts to int32 for ConvInteger; round is half to
// even, saturate clamps to uint8 / int8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ops/op_support.hpp"
#include "ember/ops/quantize_linear.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace qconv_detail {

struct attributes {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

struct geometry {
    std::int64_t batch = 0;
    std::int64_t in_channels = 0;   // per group
    std::int64_t out_channels = 0;  // all groups together (M)
    std::int64_t group = 1;
    window_geometry geo;
};

/// Checks x (input xi) and w (input wi) as Conv does, and fills g.
inline status plan(const attributes& a, infer_context& ctx, std::size_t xi, std::size_t wi, geometry& g) {
    for (std::size_t i : {xi, wi})
        if (status s = ctx.expect_type(i, {dtype::uint8, dtype::int8}); s != status::ok) return s;
    const shape& x = ctx.input_shape(xi);
    const shape& w = ctx.input_shape(wi);
    const window_spec spec{a.auto_pad, a.pads, a.strides, a.dilations, false};
    if (status s = plan_conv_window(ctx, x, w, nullptr, a.group, a.kernel_shape, spec, "x", "w", g.geo); s != status::ok) return s;
    g.batch = x[0];
    g.in_channels = w[1];
    g.out_channels = w[0];
    g.group = a.group;
    return status::ok;
}

/// A per-tensor parameter: one value.
inline status expect_single(infer_context& ctx, std::size_t i, const char* what) {
    if (ctx.has_input(i) && !quant_detail::is_single(ctx.input_shape(i)))
        return ctx.fail(status::shape_mismatch, "{} must be a scalar (per-tensor), got shape {}", what, ctx.input_shape(i));
    return status::ok;
}
/// A per-tensor or per-output-channel parameter: one value or [M]; per_channel says which.
inline status expect_per_channel(infer_context& ctx, std::size_t i, const char* what, std::int64_t M, bool& per_channel) {
    per_channel = false;
    if (!ctx.has_input(i)) return status::ok;
    const shape& s = ctx.input_shape(i);
    if (quant_detail::is_single(s)) return status::ok;
    if (s.rank() == 1 && s[0] == M) {
        per_channel = true;
        return status::ok;
    }
    return ctx.fail(status::shape_mismatch, "{} must be a scalar or [M] = [{}] (per output channel), got shape {}", what, M, s);
}

/// The shared loop: out(index, m, acc) for each output element, acc the exact sum of
/// (x - x_zp) * (w - w_zp[m]) over the window, padding skipped (it holds x_zp). Output planes
/// (n, m) are split over the executor; out() writes only its own element.
template <class X, class W, class Out>
void accumulate(const geometry& g, const X* x, std::int64_t x_zp, const W* w, const W* w_zp, bool w_per_channel, Out out,
                const executor* ex) noexcept {
    const window_geometry& G = g.geo;
    const std::int64_t in_size = G.in_size(), out_size = G.out_size(), k_size = G.kernel_size();
    const std::int64_t M = g.out_channels, C = g.in_channels, per_group = M / g.group;
    parallel_for(ex, static_cast<std::size_t>(g.batch * M), [&](std::size_t begin, std::size_t end) {
        for (auto plane = static_cast<std::int64_t>(begin); plane < static_cast<std::int64_t>(end); ++plane) {
            const std::int64_t n = plane / M, m = plane % M, grp = m / per_group;
            const X* xg = x + (n * g.group + grp) * C * in_size;  // first channel of m's group
            const W* wm = w + m * C * k_size;
            const std::int64_t wz = w_zp ? static_cast<std::int64_t>(w_zp[w_per_channel ? m : 0]) : 0;
            for_each_window_output(G, [&](std::int64_t o0, std::int64_t o1, std::int64_t o2) {
                std::int64_t acc = 0;
                for (std::int64_t c = 0; c < C; ++c)
                    for_each_window_tap(G, o0, o1, o2, [&](auto i0, auto i1, auto i2, auto k0, auto k1, auto k2) {
                        const std::int64_t xv = xg[c * in_size + (i0 * G.in[1] + i1) * G.in[2] + i2];
                        const std::int64_t wv = wm[c * k_size + (k0 * G.kernel[1] + k1) * G.kernel[2] + k2];
                        acc += (xv - x_zp) * (wv - wz);
                    });
                out(plane * out_size + (o0 * G.out[1] + o1) * G.out[2] + o2, m, acc);
            });
        }
    });
}

} // namespace qconv_detail

#define EMBER_QCONV_ATTRIBUTES                                                                                                             \
    std::make_tuple(attr("auto_pad", &attributes::auto_pad), attr("dilations", &attributes::dilations), attr("group", &attributes::group), \
                    attr("kernel_shape", &attributes::kernel_shape), attr("pads", &attributes::pads), attr("strides", &attributes::strides))

// ---------------------------------------------------------------------------------------------

struct conv_integer {
    static constexpr std::string_view onnx_name = "ConvInteger";
    static constexpr op_flags flags = op_flags::none;

    using attributes = qconv_detail::attributes;
    static constexpr auto onnx_attributes = EMBER_QCONV_ATTRIBUTES;

    struct args {
        qconv_detail::geometry geo;
        operand x, w, x_zp, w_zp, y;
        bool has_x_zp = false, has_w_zp = false, w_per_channel = false;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (ctx.opset() < 10) return ctx.fail(status::unsupported_op, "ConvInteger exists from opset 10 on; the model's opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(2, 4); s != status::ok) return s;
        if (status s = qconv_detail::plan(a, ctx, 0, 1, g.geo); s != status::ok) return s;
        for (std::size_t i = 2; i < 4; ++i)
            if (ctx.has_input(i) && ctx.input_type(i) != ctx.input_type(i - 2))
                return ctx.fail(status::invalid_model, "{} has dtype {}, expected {} like {}", i == 2 ? "x_zero_point" : "w_zero_point",
                                ctx.input_type(i), ctx.input_type(i - 2), i == 2 ? "x" : "w");
        if (status s = qconv_detail::expect_single(ctx, 2, "x_zero_point"); s != status::ok) return s;
        return qconv_detail::expect_per_channel(ctx, 3, "w_zero_point", g.geo.out_channels, g.w_per_channel);
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, dtype::int32, window_output_shape(ctx.input_shape(0), g.geo.out_channels, g.geo.geo));
        return status::ok;
    }

    // The definition: exact integer sums converted to int32. x_zp / w_zp may be null (0).
    template <class X, class W>
    static void reference(const args& g, const X* x, const W* w, const X* x_zp, const W* w_zp, std::int32_t* y, const executor* ex) noexcept {
        qconv_detail::accumulate(
            g.geo, x, x_zp ? static_cast<std::int64_t>(*x_zp) : 0, w, w_zp, g.w_per_channel,
            [&](std::int64_t i, std::int64_t, std::int64_t acc) { y[i] = static_cast<std::int32_t>(acc); }, ex);
    }

    template <class X, class W>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<X, W>(g, ctx.at<const X>(g.x), ctx.at<const W>(g.w), g.has_x_zp ? ctx.at<const X>(g.x_zp) : nullptr,
                        g.has_w_zp ? ctx.at<const W>(g.w_zp) : nullptr, ctx.at<std::int32_t>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.w = ctx.input(1);
        g.has_x_zp = ctx.has_input(2);
        g.has_w_zp = ctx.has_input(3);
        if (g.has_x_zp) g.x_zp = ctx.input(2);
        if (g.has_w_zp) g.w_zp = ctx.input(3);
        g.y = ctx.output(0);
        const dtype tw = ctx.input_type(1);
        ctx.emit(quant_detail::pick_u8_i8(ctx.input_type(0),
                                          [&](auto xt) {
                                              return quant_detail::pick_u8_i8(tw, [&](auto wt) -> kernel_fn {
                                                  return &kernel<decltype(xt), decltype(wt)>;
                                              });
                                          }),
                 g);
        return status::ok;
    }
};

// ---------------------------------------------------------------------------------------------

struct qlinear_conv {
    static constexpr std::string_view onnx_name = "QLinearConv";
    static constexpr op_flags flags = op_flags::none;

    using attributes = qconv_detail::attributes;
    static constexpr auto onnx_attributes = EMBER_QCONV_ATTRIBUTES;

    struct args {
        qconv_detail::geometry geo;
        operand x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, b, y;
        bool has_b = false, w_scale_per_channel = false, w_zp_per_channel = false;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (ctx.opset() < 10) return ctx.fail(status::unsupported_op, "QLinearConv exists from opset 10 on; the model's opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(8, 9); s != status::ok) return s;
        if (status s = qconv_detail::plan(a, ctx, 0, 3, g.geo); s != status::ok) return s;
        for (std::size_t i : {1, 4, 6})
            if (status s = ctx.expect_type(i, {dtype::float32}); s != status::ok) return s;
        if (status s = ctx.expect_type(7, {dtype::uint8, dtype::int8}); s != status::ok) return s;
        if (ctx.input_type(2) != ctx.input_type(0))
            return ctx.fail(status::invalid_model, "x_zero_point has dtype {}, expected {} like x", ctx.input_type(2), ctx.input_type(0));
        if (ctx.input_type(5) != ctx.input_type(3))
            return ctx.fail(status::invalid_model, "w_zero_point has dtype {}, expected {} like w", ctx.input_type(5), ctx.input_type(3));
        if (status s = qconv_detail::expect_single(ctx, 1, "x_scale"); s != status::ok) return s;
        if (status s = qconv_detail::expect_single(ctx, 2, "x_zero_point"); s != status::ok) return s;
        if (status s = qconv_detail::expect_single(ctx, 6, "y_scale"); s != status::ok) return s;
        if (status s = qconv_detail::expect_single(ctx, 7, "y_zero_point"); s != status::ok) return s;
        const std::int64_t M = g.geo.out_channels;
        if (status s = qconv_detail::expect_per_channel(ctx, 4, "w_scale", M, g.w_scale_per_channel); s != status::ok) return s;
        if (status s = qconv_detail::expect_per_channel(ctx, 5, "w_zero_point", M, g.w_zp_per_channel); s != status::ok) return s;
        if (ctx.has_input(8)) {
            if (status s = ctx.expect_type(8, {dtype::int32}); s != status::ok) return s;
            const shape& b = ctx.input_shape(8);
            if (b.rank() != 1 || b[0] != M) return ctx.fail(status::shape_mismatch, "B must be [M] = [{}] (one int32 bias per output channel), got {}", M, b);
        }
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(7), window_output_shape(ctx.input_shape(0), g.geo.out_channels, g.geo.geo));
        return status::ok;
    }

    // The definition: the exact integer sum plus the bias, scaled by x_scale * w_scale[m] /
    // y_scale (float), rounded half to even, shifted by y_zp, clamped. b may be null.
    template <class X, class W, class Y>
    static void reference(const args& g, const X* x, float x_scale, X x_zp, const W* w, const float* w_scale, const W* w_zp, float y_scale,
                          Y y_zp, const std::int32_t* b, Y* y, const executor* ex) noexcept {
        qconv_detail::accumulate(
            g.geo, x, static_cast<std::int64_t>(x_zp), w, w_zp, g.w_zp_per_channel,
            [&](std::int64_t i, std::int64_t m, std::int64_t acc) {
                const float multiplier = x_scale * w_scale[g.w_scale_per_channel ? m : 0] / y_scale;
                const double real = static_cast<double>(acc + (b ? b[m] : 0)) * static_cast<double>(multiplier);
                y[i] = quant_detail::saturate<Y>(quant_detail::round_half_even(real) + static_cast<double>(y_zp), y_zp);
            },
            ex);
    }

    template <class X, class W, class Y>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<X, W, Y>(g, ctx.at<const X>(g.x), *ctx.at<const float>(g.x_scale), *ctx.at<const X>(g.x_zp), ctx.at<const W>(g.w),
                           ctx.at<const float>(g.w_scale), ctx.at<const W>(g.w_zp), *ctx.at<const float>(g.y_scale), *ctx.at<const Y>(g.y_zp),
                           g.has_b ? ctx.at<const std::int32_t>(g.b) : nullptr, ctx.at<Y>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.x_scale = ctx.input(1);
        g.x_zp = ctx.input(2);
        g.w = ctx.input(3);
        g.w_scale = ctx.input(4);
        g.w_zp = ctx.input(5);
        g.y_scale = ctx.input(6);
        g.y_zp = ctx.input(7);
        g.has_b = ctx.has_input(8);
        if (g.has_b) g.b = ctx.input(8);
        g.y = ctx.output(0);
        const dtype tw = ctx.input_type(3), ty = ctx.input_type(7);
        ctx.emit(quant_detail::pick_u8_i8(ctx.input_type(0),
                                          [&](auto xt) {
                                              return quant_detail::pick_u8_i8(tw, [&](auto wt) {
                                                  return quant_detail::pick_u8_i8(ty, [&](auto yt) -> kernel_fn {
                                                      return &kernel<decltype(xt), decltype(wt), decltype(yt)>;
                                                  });
                                              });
                                          }),
                 g);
        return status::ok;
    }
};

#undef EMBER_QCONV_ATTRIBUTES

} // namespace ops
EMBER_NAMESPACE_END
