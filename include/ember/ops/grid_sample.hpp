// SPDX-License-Identifier: Apache-2.0
// GridSample (ONNX opset 16), float32 and float64, 4-D: Y[n, c, h, w] samples X[n, c] at the
// normalised location grid[n, h, w] = (x, y) in [-1, 1] (x along the width), with nearest,
// bilinear or bicubic (A = -0.75) interpolation; locations and taps outside X follow
// padding_mode (zeros, border, reflection). Computed as ONNX Runtime does (same rounding: nearest
// rounds half to even; reflection folds at the pixel edges, or at the centres with align_corners).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct grid_sample {
    static constexpr std::string_view onnx_name = "GridSample";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t align_corners = 0;
        std::string mode = "bilinear";
        std::string padding_mode = "zeros";
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("align_corners", &attributes::align_corners), attr("mode", &attributes::mode),
                                                            attr("padding_mode", &attributes::padding_mode));

    enum class interp { nearest, bilinear, bicubic };
    enum class padding { zeros, border, reflection };

    struct args {
        operand x, grid, y;
        std::int64_t N = 0, C = 0, H = 0, W = 0, Ho = 0, Wo = 0;
        interp mode = interp::bilinear;
        padding pad = padding::zeros;
        bool align_corners = false;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64}); s != status::ok) return s;
        if (ctx.input_type(1) != ctx.input_type(0))
            return ctx.fail(status::invalid_model, "grid has dtype {}, expected {} like X", ctx.input_type(1), ctx.input_type(0));
        const shape& x = ctx.input_shape(0);
        const shape& grid = ctx.input_shape(1);
        if (x.rank() != 4) return ctx.fail(status::unsupported_op, "X must be [N, C, H, W], got {} (only 4-D GridSample is supported)", x);
        if (grid.rank() != 4 || grid[3] != 2 || grid[0] != x[0])
            return ctx.fail(status::shape_mismatch, "grid must be [N, H_out, W_out, 2] with N = {} (X {}), got {}", x[0], x, grid);
        if (a.mode == "nearest") g.mode = interp::nearest;
        else if (a.mode == "bilinear" || a.mode == "linear") g.mode = interp::bilinear;
        else if (a.mode == "bicubic" || a.mode == "cubic") g.mode = interp::bicubic;
        else return ctx.fail(status::invalid_model, "mode is '{}', expected bilinear, nearest or bicubic", a.mode);
        if (a.padding_mode == "zeros") g.pad = padding::zeros;
        else if (a.padding_mode == "border") g.pad = padding::border;
        else if (a.padding_mode == "reflection") g.pad = padding::reflection;
        else return ctx.fail(status::invalid_model, "padding_mode is '{}', expected zeros, border or reflection", a.padding_mode);
        if (a.align_corners != 0 && a.align_corners != 1)
            return ctx.fail(status::invalid_model, "align_corners is {}, expected 0 or 1", a.align_corners);
        if ((x[2] == 0 || x[3] == 0) && grid[1] * grid[2] != 0 && x[1] != 0)
            return ctx.fail(status::shape_mismatch, "X {} has an empty spatial dimension to sample from", x);
        g.align_corners = a.align_corners != 0;
        g.N = x[0];
        g.C = x[1];
        g.H = x[2];
        g.W = x[3];
        g.Ho = grid[1];
        g.Wo = grid[2];
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), shape{g.N, g.C, g.Ho, g.Wo});
        return status::ok;
    }

    /// Folds x into [lo, hi] by reflection at both ends (ONNX Runtime's GsReflect).
    static double reflect(double x, double lo, double hi) noexcept {
        const double range = hi - lo;
        if (!(range > 0.0)) return lo;
        if (x < lo) {
            const double dx = lo - x;
            const double n = std::floor(dx / range), r = dx - n * range;
            return std::fmod(n, 2.0) == 0.0 ? lo + r : hi - r;
        }
        if (x > hi) {
            const double dx = x - hi;
            const double n = std::floor(dx / range), r = dx - n * range;
            return std::fmod(n, 2.0) == 0.0 ? hi - r : lo + r;
        }
        return x;
    }

    static void cubic_coeffs(double t, double c[4]) noexcept {
        constexpr double A = -0.75;
        t = std::fabs(t);
        c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
        c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
        c[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
        c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
    }

    // The definition, per output location: denormalise, round for nearest, bring an outside
    // location back for border/reflection, then read the taps through padding_mode (zeros gives
    // 0 outside; border clamps; reflection folds, then clamps so that rounding never leaves X).
    // Grid values are data: coordinates are clamped to +-2^40 first, and NaN reads as 0.
    template <class T>
    static void reference(const args& g, const T* x, const T* grid, T* y) noexcept {
        const double lo_x = g.align_corners ? 0.0 : -0.5, hi_x = g.align_corners ? double(g.W - 1) : double(g.W) - 0.5;
        const double lo_y = g.align_corners ? 0.0 : -0.5, hi_y = g.align_corners ? double(g.H - 1) : double(g.H) - 0.5;
        auto denorm = [&](double v, std::int64_t len) {
            if (std::isnan(v)) v = 0.0;
            const double p = g.align_corners ? (v + 1) / 2 * double(len - 1) : ((v + 1) * double(len) - 1) / 2;
            constexpr double limit = 1099511627776.0;  // 2^40
            return p < -limit ? -limit : p > limit ? limit : p;
        };
        for (std::int64_t n = 0; n < g.N; ++n)
            for (std::int64_t c = 0; c < g.C; ++c) {
                const T* plane = x + (n * g.C + c) * g.H * g.W;
                auto at = [&](std::int64_t h, std::int64_t w) -> double {
                    if (g.pad == padding::zeros) {
                        if (h < 0 || h >= g.H || w < 0 || w >= g.W) return 0.0;
                    } else if (g.pad == padding::reflection) {
                        h = static_cast<std::int64_t>(reflect(double(h), lo_y, hi_y));
                        w = static_cast<std::int64_t>(reflect(double(w), lo_x, hi_x));
                    }
                    h = h < 0 ? 0 : h >= g.H ? g.H - 1 : h;
                    w = w < 0 ? 0 : w >= g.W ? g.W - 1 : w;
                    return static_cast<double>(plane[h * g.W + w]);
                };
                for (std::int64_t oh = 0; oh < g.Ho; ++oh)
                    for (std::int64_t ow = 0; ow < g.Wo; ++ow) {
                        const T* loc = grid + ((n * g.Ho + oh) * g.Wo + ow) * 2;
                        double px = denorm(static_cast<double>(loc[0]), g.W), py = denorm(static_cast<double>(loc[1]), g.H);
                        if (g.mode == interp::nearest) {
                            px = std::nearbyint(px);
                            py = std::nearbyint(py);
                        }
                        if (px < lo_x || px > hi_x || py < lo_y || py > hi_y) {
                            if (g.pad == padding::border) {
                                px = px < 0 ? 0 : px > double(g.W - 1) ? double(g.W - 1) : px;
                                py = py < 0 ? 0 : py > double(g.H - 1) ? double(g.H - 1) : py;
                            } else if (g.pad == padding::reflection) {
                                px = reflect(px, lo_x, hi_x);
                                py = reflect(py, lo_y, hi_y);
                            }
                        }
                        double v = 0.0;
                        if (g.mode == interp::nearest) {
                            v = at(static_cast<std::int64_t>(py), static_cast<std::int64_t>(px));
                        } else if (g.mode == interp::bilinear) {
                            const double fx = std::floor(px), fy = std::floor(py);
                            const auto x1 = static_cast<std::int64_t>(fx), y1 = static_cast<std::int64_t>(fy);
                            const double dx = px - fx, dy = py - fy;
                            v = (1 - dy) * ((1 - dx) * at(y1, x1) + dx * at(y1, x1 + 1)) + dy * ((1 - dx) * at(y1 + 1, x1) + dx * at(y1 + 1, x1 + 1));
                        } else {
                            const double fx = std::floor(px), fy = std::floor(py);
                            const auto x0 = static_cast<std::int64_t>(fx) - 1, y0 = static_cast<std::int64_t>(fy) - 1;
                            double cx[4], cy[4];
                            cubic_coeffs(px - fx, cx);
                            cubic_coeffs(py - fy, cy);
                            for (std::int64_t i = 0; i < 4; ++i) {
                                double row = 0.0;
                                for (std::int64_t j = 0; j < 4; ++j) row += cx[j] * at(y0 + i, x0 + j);
                                v += cy[i] * row;
                            }
                        }
                        y[((n * g.C + c) * g.Ho + oh) * g.Wo + ow] = static_cast<T>(v);
                    }
            }
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<const T>(g.grid), ctx.at<T>(g.y));
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.grid = ctx.input(1);
        g.y = ctx.output(0);
        if (ctx.input_type(0) == dtype::float64) ctx.emit(&kernel<double>, g);
        else ctx.emit(&kernel<float>, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
