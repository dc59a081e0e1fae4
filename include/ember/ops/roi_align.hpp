// SPDX-License-Identifier: Apache-2.0
// RoiAlign (ONNX opset 10, 16), float32 and float64: Y[r, c] is X[batch_indices[r], c] pooled
// over region rois[r] = (x1, y1, x2, y2) (times spatial_scale) into output_height x
// output_width bins, each the average (or maximum) of sampling_ratio^2 bilinear samples (or
// ceil(bin size) per axis when sampling_ratio is 0). coordinate_transformation_mode (opset 16,
// default half_pixel) shifts the region by -0.5; output_half_pixel (opset 10's only behaviour)
// does not, and makes regions at least 1 x 1. Computed as ONNX Runtime does, max mode included
// (the maximum of the weighted corner values of each sample).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct roi_align {
    static constexpr std::string_view onnx_name = "RoiAlign";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::string coordinate_transformation_mode = "half_pixel";  // opset 16
        std::string mode = "avg";
        std::int64_t output_height = 1;
        std::int64_t output_width = 1;
        std::int64_t sampling_ratio = 0;
        float spatial_scale = 1.0f;
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("coordinate_transformation_mode", &attributes::coordinate_transformation_mode), attr("mode", &attributes::mode),
                        attr("output_height", &attributes::output_height), attr("output_width", &attributes::output_width),
                        attr("sampling_ratio", &attributes::sampling_ratio), attr("spatial_scale", &attributes::spatial_scale));

    struct args {
        operand x, rois, batch_indices, y;
        std::int64_t N = 0, C = 0, H = 0, W = 0, R = 0, Ho = 0, Wo = 0;
        std::int64_t sampling_ratio = 0;
        double spatial_scale = 1.0;
        bool half_pixel = true;
        bool max_mode = false;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (status s = ctx.expect_inputs(3, 3); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64}); s != status::ok) return s;
        if (ctx.input_type(1) != ctx.input_type(0))
            return ctx.fail(status::invalid_model, "rois has dtype {}, expected {} like X", ctx.input_type(1), ctx.input_type(0));
        if (status s = ctx.expect_type(2, {dtype::int64}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        const shape& rois = ctx.input_shape(1);
        const shape& bi = ctx.input_shape(2);
        if (x.rank() != 4) return ctx.fail(status::shape_mismatch, "X must be [N, C, H, W], got {}", x);
        if (rois.rank() != 2 || rois[1] != 4) return ctx.fail(status::shape_mismatch, "rois must be [num_rois, 4], got {}", rois);
        if (bi.rank() != 1 || bi[0] != rois[0])
            return ctx.fail(status::shape_mismatch, "batch_indices must be [{}] (one per roi of rois {}), got {}", rois[0], rois, bi);
        if (ctx.opset() < 16) {
            if (ctx.node().find_attribute("coordinate_transformation_mode"))
                return ctx.fail(status::invalid_model, "coordinate_transformation_mode needs opset 16 (the model has opset {})", ctx.opset());
            g.half_pixel = false;
        } else if (a.coordinate_transformation_mode == "half_pixel") {
            g.half_pixel = true;
        } else if (a.coordinate_transformation_mode == "output_half_pixel") {
            g.half_pixel = false;
        } else {
            return ctx.fail(status::invalid_model, "coordinate_transformation_mode is '{}', expected half_pixel or output_half_pixel",
                            a.coordinate_transformation_mode);
        }
        if (a.mode == "avg") g.max_mode = false;
        else if (a.mode == "max") g.max_mode = true;
        else return ctx.fail(status::invalid_model, "mode is '{}', expected avg or max", a.mode);
        if (a.output_height < 1 || a.output_width < 1)
            return ctx.fail(status::invalid_model, "output_height {} and output_width {} must be >= 1", a.output_height, a.output_width);
        if (a.sampling_ratio < 0) return ctx.fail(status::invalid_model, "sampling_ratio is {}, expected >= 0", a.sampling_ratio);
        if (!std::isfinite(a.spatial_scale)) return ctx.fail(status::invalid_model, "spatial_scale is not finite");
        if ((x[2] == 0 || x[3] == 0) && rois[0] > 0 && x[1] > 0)
            return ctx.fail(status::shape_mismatch, "X {} has an empty spatial dimension to pool from", x);
        g.N = x[0];
        g.C = x[1];
        g.H = x[2];
        g.W = x[3];
        g.R = rois[0];
        g.Ho = a.output_height;
        g.Wo = a.output_width;
        g.sampling_ratio = a.sampling_ratio;
        g.spatial_scale = a.spatial_scale;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), shape{g.R, g.C, g.Ho, g.Wo});
        return status::ok;
    }

    /// Samples per bin along one axis: sampling_ratio, or ceil(bin extent), kept in [1, 2^16]
    /// so that an absurd region stays a bounded loop.
    static std::int64_t grid_count(std::int64_t ratio, double extent) noexcept {
        if (ratio > 0) return ratio;
        const double c = std::ceil(extent);
        return !(c >= 1.0) ? 1 : c > 65536.0 ? 65536 : static_cast<std::int64_t>(c);
    }

    // The definition (ONNX Runtime's RoiAlign): per roi and bin, the samples at the centres of a
    // grid_h x grid_w grid inside the bin, each bilinear over the four pixels around it, a
    // sample beyond one pixel outside X counting as 0. A batch index outside [0, N) fails the
    // run (invalid_argument) before anything is read.
    template <class T>
    static void reference(const args& g, const T* x, const T* rois, const std::int64_t* batch, T* y, const run_context& ctx) noexcept {
        for (std::int64_t r = 0; r < g.R; ++r)
            if (batch[r] < 0 || batch[r] >= g.N) {
                ctx.fail(static_cast<std::uint8_t>(status::invalid_argument));
                return;
            }
        const double H = static_cast<double>(g.H), W = static_cast<double>(g.W);
        for (std::int64_t r = 0; r < g.R; ++r) {
            const T* roi = rois + r * 4;
            const double offset = g.half_pixel ? 0.5 : 0.0;
            const double x1 = static_cast<double>(roi[0]) * g.spatial_scale - offset, y1 = static_cast<double>(roi[1]) * g.spatial_scale - offset;
            const double x2 = static_cast<double>(roi[2]) * g.spatial_scale - offset, y2 = static_cast<double>(roi[3]) * g.spatial_scale - offset;
            double roi_w = x2 - x1, roi_h = y2 - y1;
            if (!g.half_pixel) {
                roi_w = roi_w > 1.0 ? roi_w : 1.0;
                roi_h = roi_h > 1.0 ? roi_h : 1.0;
            }
            const double bin_h = roi_h / static_cast<double>(g.Ho), bin_w = roi_w / static_cast<double>(g.Wo);
            const std::int64_t grid_h = grid_count(g.sampling_ratio, bin_h), grid_w = grid_count(g.sampling_ratio, bin_w);
            const double count = static_cast<double>(grid_h * grid_w);
            for (std::int64_t c = 0; c < g.C; ++c) {
                const T* plane = x + (batch[r] * g.C + c) * g.H * g.W;
                for (std::int64_t ph = 0; ph < g.Ho; ++ph)
                    for (std::int64_t pw = 0; pw < g.Wo; ++pw) {
                        double acc = 0.0;
                        bool first = true;
                        for (std::int64_t iy = 0; iy < grid_h; ++iy)
                            for (std::int64_t ix = 0; ix < grid_w; ++ix) {
                                double sy = y1 + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
                                double sx = x1 + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
                                double v = 0.0;
                                if (sy >= -1.0 && sy <= H && sx >= -1.0 && sx <= W) {  // false for NaN too
                                    sy = sy <= 0.0 ? 0.0 : sy;
                                    sx = sx <= 0.0 ? 0.0 : sx;
                                    auto ylo = static_cast<std::int64_t>(sy), xlo = static_cast<std::int64_t>(sx);
                                    std::int64_t yhi = ylo + 1, xhi = xlo + 1;
                                    if (ylo >= g.H - 1) {
                                        yhi = ylo = g.H - 1;
                                        sy = static_cast<double>(ylo);
                                    }
                                    if (xlo >= g.W - 1) {
                                        xhi = xlo = g.W - 1;
                                        sx = static_cast<double>(xlo);
                                    }
                                    const double ly = sy - static_cast<double>(ylo), lx = sx - static_cast<double>(xlo);
                                    const double hy = 1.0 - ly, hx = 1.0 - lx;
                                    const double v1 = hy * hx * static_cast<double>(plane[ylo * g.W + xlo]);
                                    const double v2 = hy * lx * static_cast<double>(plane[ylo * g.W + xhi]);
                                    const double v3 = ly * hx * static_cast<double>(plane[yhi * g.W + xlo]);
                                    const double v4 = ly * lx * static_cast<double>(plane[yhi * g.W + xhi]);
                                    if (g.max_mode) {
                                        v = v1 > v2 ? v1 : v2;
                                        v = v > v3 ? v : v3;
                                        v = v > v4 ? v : v4;
                                    } else {
                                        v = v1 + v2 + v3 + v4;
                                    }
                                }
                                if (g.max_mode) acc = first || v > acc ? v : acc;
                                else acc += v;
                                first = false;
                            }
                        y[((r * g.C + c) * g.Ho + ph) * g.Wo + pw] = static_cast<T>(g.max_mode ? acc : acc / count);
                    }
            }
        }
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<const T>(g.rois), ctx.at<const std::int64_t>(g.batch_indices), ctx.at<T>(g.y), ctx);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.rois = ctx.input(1);
        g.batch_indices = ctx.input(2);
        g.y = ctx.output(0);
        if (ctx.input_type(0) == dtype::float64) ctx.emit(&kernel<double>, g);
        else ctx.emit(&kernel<float>, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
