// SPDX-License-Identifier: Apache-2.0
// Resize (ONNX opset 10, 11, 13) and Upsample (opset 7 scales attribute, 9 scales input): N-D
// interpolation, separable per dimension. Each output coordinate maps back to an input coordinate
// (coordinate_transformation_mode), which gives per dimension a few (index, weight) taps: 1 for
// nearest (nearest_mode rounding), 2 for linear, 4 for cubic (cubic_coeff_a, exclude_outside).
// The output is the sum over all tap combinations of the weights' product times the input there.
// The taps are computed once at compile time, so scales, sizes and roi must be known then; X may
// be a runtime input. Nearest works for every dtype (a pure gather); linear and cubic for
// float32, float64 and float16 (through float).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace resize_detail {

enum class resize_interp { nearest, linear, cubic };
enum class resize_coord { half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize };
/// simple: Upsample and Resize-10, which had no nearest_mode: ceil when downsampling, floor
/// (truncation of a non-negative coordinate) otherwise, as ONNX Runtime keeps them.
enum class resize_nearest { round_prefer_floor, round_prefer_ceil, floor, ceil, simple };

/// Everything that decides the taps, read from attributes and constant inputs.
struct resize_spec {
    resize_interp interp = resize_interp::nearest;
    resize_coord coord = resize_coord::half_pixel;
    resize_nearest nearest = resize_nearest::round_prefer_floor;
    double cubic_a = -0.75;
    bool exclude_outside = false;
    double extrapolation = 0.0;
    std::vector<double> scales;     // per dimension, as given (or out / in when sizes were given)
    std::vector<std::int64_t> out;  // output dimensions
    std::vector<double> roi;        // [starts..., ends...] for tf_crop_and_resize, else empty
    bool from_sizes = false;        // the output dimensions came from sizes
};

/// The precomputed taps: for dimension d and output index o, tap_count[d] (offset, weight) pairs
/// at taps[tap_begin[d] + o * tap_count[d]], offsets already multiplied by d's input stride;
/// outside[out_begin[d] + o] marks tf_crop_and_resize coordinates outside the input.
struct resize_args {
    operand x, y;
    std::size_t rank = 0;
    std::int64_t out_dims[max_rank] = {};
    std::int64_t total = 0;  // output elements
    std::int64_t tap_count[max_rank] = {};
    std::int64_t tap_begin[max_rank] = {};
    std::int64_t out_begin[max_rank] = {};
    std::vector<std::int64_t> offsets;
    std::vector<double> weights;
    std::vector<unsigned char> outside;
    bool any_outside = false;
    double extrapolation = 0.0;
};

inline status parse_resize_coord(infer_context& ctx, const std::string& s, resize_coord& out) {
    if (s == "half_pixel") out = resize_coord::half_pixel;
    else if (s == "pytorch_half_pixel") out = resize_coord::pytorch_half_pixel;
    else if (s == "align_corners") out = resize_coord::align_corners;
    else if (s == "asymmetric") out = resize_coord::asymmetric;
    else if (s == "tf_half_pixel_for_nn" && ctx.opset() < 13) out = resize_coord::tf_half_pixel_for_nn;
    else if (s == "tf_crop_and_resize") out = resize_coord::tf_crop_and_resize;
    else
        return ctx.fail(status::invalid_model,
                        "coordinate_transformation_mode is '{}', expected half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
                        "tf_crop_and_resize{} (opset {})",
                        s, ctx.opset() < 13 ? " or tf_half_pixel_for_nn" : "", ctx.opset());
    return status::ok;
}

inline status parse_resize_interp(infer_context& ctx, const std::string& s, bool cubic_allowed, resize_interp& out) {
    if (s == "nearest") out = resize_interp::nearest;
    else if (s == "linear" || s == "bilinear" || s == "trilinear") out = resize_interp::linear;
    else if (s == "cubic" && cubic_allowed) out = resize_interp::cubic;
    else return ctx.fail(status::invalid_model, "mode is '{}', expected nearest, linear{} (opset {})", s, cubic_allowed ? " or cubic" : "", ctx.opset());
    return status::ok;
}

inline status parse_resize_nearest(infer_context& ctx, const std::string& s, resize_nearest& out) {
    if (s == "round_prefer_floor") out = resize_nearest::round_prefer_floor;
    else if (s == "round_prefer_ceil") out = resize_nearest::round_prefer_ceil;
    else if (s == "floor") out = resize_nearest::floor;
    else if (s == "ceil") out = resize_nearest::ceil;
    else return ctx.fail(status::invalid_model, "nearest_mode is '{}', expected round_prefer_floor, round_prefer_ceil, floor or ceil", s);
    return status::ok;
}

/// A float tensor's values as doubles (false for other dtypes).
inline bool floats_of(const tensor& t, std::vector<double>& out) {
    out.clear();
    if (t.type() == dtype::float32) out.assign(t.data<float>(), t.data<float>() + t.size());
    else if (t.type() == dtype::float64) out.assign(t.data<double>(), t.data<double>() + t.size());
    else if (t.type() == dtype::float16)
        for (std::size_t i = 0; i < t.size(); ++i) out.push_back(static_cast<double>(static_cast<float>(t.data<float16>()[i])));
    else return false;
    return true;
}

/// Output dimensions from scales (floor(in * scale)) or sizes, checked; fills spec.scales/out.
inline status resize_output(infer_context& ctx, const shape& x, const std::vector<double>* scales, const std::vector<std::int64_t>* sizes,
                            resize_spec& spec) {
    const std::size_t rank = x.rank();
    spec.scales.assign(rank, 1.0);
    spec.out.assign(rank, 0);
    if (scales) {
        if (scales->size() != rank)
            return ctx.fail(status::invalid_model, "scales has {} values, expected {} (one per dimension of X {})", scales->size(), rank, x);
        for (std::size_t d = 0; d < rank; ++d) {
            const double s = (*scales)[d];
            if (!(s > 0.0) || !std::isfinite(s))
                return ctx.fail(status::invalid_model, "scales[{}] is {}, expected a finite value > 0", d, s);
            const double o = std::floor(static_cast<double>(x[d]) * s);
            if (o > 2147483647.0) return ctx.fail(status::invalid_model, "scales[{}] = {} makes dimension {} of X {} too large", d, s, d, x);
            spec.scales[d] = s;
            spec.out[d] = static_cast<std::int64_t>(o);
        }
    } else {
        spec.from_sizes = true;
        if (sizes->size() != rank)
            return ctx.fail(status::invalid_model, "sizes {} has {} values, expected {} (one per dimension of X {})", *sizes, sizes->size(), rank, x);
        for (std::size_t d = 0; d < rank; ++d) {
            const std::int64_t o = (*sizes)[d];
            if (o < 0 || o > 2147483647) return ctx.fail(status::invalid_model, "sizes {} has a value below 0 or above 2^31 - 1", *sizes);
            spec.out[d] = o;
            spec.scales[d] = x[d] > 0 ? static_cast<double>(o) / static_cast<double>(x[d]) : 1.0;
        }
    }
    std::int64_t total = 1;
    for (std::int64_t o : spec.out)
        if (!ember::detail::checked_mul(total, o, total) || total > (std::int64_t(1) << 40))
            return ctx.fail(status::invalid_model, "the output of X {} resized to {} would be too large", x, spec.out);
    for (std::size_t d = 0; d < rank; ++d)
        if (x[d] == 0 && spec.out[d] != 0)
            return ctx.fail(status::shape_mismatch, "cannot resize the empty dimension {} of X {} to {}", d, x, spec.out[d]);
    return status::ok;
}

/// The input coordinate of output index o along one dimension.
inline double resize_source(const resize_spec& s, std::size_t d, std::int64_t o, std::int64_t in_len, std::int64_t out_len) {
    // The resized length as ONNX's reference takes it: in * scale, not floored (sizes give
    // scale = out / in, so it is the output length there).
    const double x = static_cast<double>(o), scale = s.scales[d];
    const double in = static_cast<double>(in_len), out = s.from_sizes ? static_cast<double>(out_len) : in * scale;
    switch (s.coord) {
        case resize_coord::half_pixel: return (x + 0.5) / scale - 0.5;
        case resize_coord::pytorch_half_pixel: return out_len > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
        case resize_coord::align_corners: return out_len > 1 ? x * (in - 1) / (out - 1) : 0.0;
        case resize_coord::asymmetric: return x / scale;
        case resize_coord::tf_half_pixel_for_nn: return (x + 0.5) / scale;
        case resize_coord::tf_crop_and_resize: {
            const std::size_t rank = s.roi.size() / 2;
            const double start = s.roi[d], end = s.roi[rank + d];
            return out_len > 1 ? start * (in - 1) + x * (end - start) * (in - 1) / (out - 1) : 0.5 * (start + end) * (in - 1);
        }
    }
    return 0.0;
}

inline std::int64_t resize_clamp(std::int64_t i, std::int64_t len) noexcept { return i < 0 ? 0 : i >= len ? len - 1 : i; }

/// Builds the tap tables for X of shape x (output dims in spec.out).
inline void build_resize_taps(const resize_spec& s, const shape& x, resize_args& a) {
    const std::size_t rank = x.rank();
    a.rank = rank;
    a.total = 1;
    std::int64_t stride[max_rank];
    contiguous_strides(x, stride);
    a.offsets.clear();
    a.weights.clear();
    a.outside.clear();
    a.any_outside = false;
    a.extrapolation = s.extrapolation;
    for (std::size_t d = 0; d < rank; ++d) {
        const std::int64_t in_len = x[d], out_len = s.out[d];
        a.out_dims[d] = out_len;
        a.total *= out_len;
        const std::size_t width = s.interp == resize_interp::nearest ? 1 : s.interp == resize_interp::linear ? 2 : 4;
        // Raw taps, then compacted to the most nonzero taps any output index of d needs.
        std::vector<std::int64_t> idx(static_cast<std::size_t>(out_len) * width, 0);
        std::vector<double> w(static_cast<std::size_t>(out_len) * width, 0.0);
        a.out_begin[d] = static_cast<std::int64_t>(a.outside.size());
        for (std::int64_t o = 0; o < out_len; ++o) {
            const double src = resize_source(s, d, o, in_len, out_len);
            const bool outside = s.coord == resize_coord::tf_crop_and_resize && (src < 0.0 || src > static_cast<double>(in_len - 1));
            a.outside.push_back(outside ? 1 : 0);
            a.any_outside = a.any_outside || outside;
            std::int64_t* ti = &idx[static_cast<std::size_t>(o) * width];
            double* tw = &w[static_cast<std::size_t>(o) * width];
            if (outside) continue;
            const double fl = std::floor(src), r = src - fl;
            const auto base = static_cast<std::int64_t>(fl);
            if (s.interp == resize_interp::nearest) {
                std::int64_t i = base;
                switch (s.nearest) {
                    case resize_nearest::round_prefer_floor: i = base + (r > 0.5 ? 1 : 0); break;
                    case resize_nearest::round_prefer_ceil: i = base + (r >= 0.5 ? 1 : 0); break;
                    case resize_nearest::floor: i = base; break;
                    case resize_nearest::ceil: i = base + (r > 0.0 ? 1 : 0); break;
                    case resize_nearest::simple:
                        i = s.scales[d] < 1.0 ? base + (r > 0.0 ? 1 : 0) : static_cast<std::int64_t>(src);
                        break;
                }
                ti[0] = resize_clamp(i, in_len);
                tw[0] = 1.0;
            } else if (s.interp == resize_interp::linear) {
                const double c = src < 0.0 ? 0.0 : src > static_cast<double>(in_len - 1) ? static_cast<double>(in_len - 1) : src;
                const auto i0 = static_cast<std::int64_t>(std::floor(c));
                const double f = c - static_cast<double>(i0);
                ti[0] = i0;
                tw[0] = 1.0 - f;
                ti[1] = resize_clamp(i0 + 1, in_len);
                tw[1] = f;
            } else {
                const double A = s.cubic_a;
                const double t = r, t1 = t + 1.0, u = 1.0 - t, u1 = u + 1.0;
                const double c[4] = {((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A, ((A + 2) * t - (A + 3)) * t * t + 1,
                                     ((A + 2) * u - (A + 3)) * u * u + 1, ((A * u1 - 5 * A) * u1 + 8 * A) * u1 - 4 * A};
                double sum = 0.0;
                for (int k = 0; k < 4; ++k) {
                    const std::int64_t i = base - 1 + k;
                    const bool inside = i >= 0 && i < in_len;
                    tw[k] = s.exclude_outside && !inside ? 0.0 : c[k];
                    ti[k] = resize_clamp(i, in_len);
                    sum += tw[k];
                }
                if (s.exclude_outside && sum != 0.0)
                    for (int k = 0; k < 4; ++k) tw[k] /= sum;
            }
        }
        // Compact: merge taps on the same index, drop zero weights, keep a common count.
        std::size_t needed = 1;
        for (std::int64_t o = 0; o < out_len; ++o) {
            std::int64_t* ti = &idx[static_cast<std::size_t>(o) * width];
            double* tw = &w[static_cast<std::size_t>(o) * width];
            std::size_t n = 0;
            for (std::size_t k = 0; k < width; ++k) {
                if (tw[k] == 0.0) continue;
                std::size_t j = 0;
                while (j < n && ti[j] != ti[k]) ++j;
                if (j < n) {
                    tw[j] += tw[k];
                } else {
                    ti[n] = ti[k];
                    tw[n] = tw[k];
                    ++n;
                }
            }
            for (std::size_t k = n; k < width; ++k) {
                ti[k] = 0;
                tw[k] = 0.0;
            }
            needed = n > needed ? n : needed;
        }
        a.tap_count[d] = static_cast<std::int64_t>(needed);
        a.tap_begin[d] = static_cast<std::int64_t>(a.offsets.size());
        for (std::int64_t o = 0; o < out_len; ++o)
            for (std::size_t k = 0; k < needed; ++k) {
                a.offsets.push_back(idx[static_cast<std::size_t>(o) * width + k] * stride[d]);
                a.weights.push_back(w[static_cast<std::size_t>(o) * width + k]);
            }
    }
}

template <class T>
double resize_load(T v) noexcept {
    if constexpr (std::is_same_v<T, float16>) return static_cast<double>(static_cast<float>(v));
    else return static_cast<double>(v);
}
template <class T>
T resize_store(double v) noexcept {
    if constexpr (std::is_same_v<T, float16>) return T(static_cast<float>(v));
    else if constexpr (std::is_same_v<T, bool>) return v != 0.0;
    else if constexpr (std::is_integral_v<T>) {  // saturate: an out-of-range cast is undefined
        if (!(v >= static_cast<double>(std::numeric_limits<T>::lowest()))) return std::numeric_limits<T>::lowest();
        if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
        return static_cast<T>(v);
    } else return static_cast<T>(v);
}

// The definition: for each output element (a row-major odometer over the output index), the sum
// over every combination of its per-dimension taps of the weights' product times X there;
// nearest (Interp false) copies the single tap. Every offset was clamped into X at compile time.
template <class T, bool Interp>
void resize_reference(const resize_args& a, const T* x, T* y) noexcept {
    const std::size_t rank = a.rank;
    std::int64_t o[max_rank] = {};
    std::int64_t t[max_rank] = {};
    for (std::int64_t e = 0; e < a.total; ++e) {
        bool outside = false;
        if (a.any_outside)
            for (std::size_t d = 0; d < rank; ++d) outside = outside || a.outside[static_cast<std::size_t>(a.out_begin[d] + o[d])] != 0;
        if (outside) {
            y[e] = resize_store<T>(a.extrapolation);
        } else if constexpr (!Interp) {
            std::int64_t off = 0;
            for (std::size_t d = 0; d < rank; ++d) off += a.offsets[static_cast<std::size_t>(a.tap_begin[d] + o[d] * a.tap_count[d])];
            y[e] = x[off];
        } else {
            double acc = 0.0;
            for (std::size_t d = 0; d < rank; ++d) t[d] = 0;
            for (;;) {
                double w = 1.0;
                std::int64_t off = 0;
                for (std::size_t d = 0; d < rank; ++d) {
                    const auto k = static_cast<std::size_t>(a.tap_begin[d] + o[d] * a.tap_count[d] + t[d]);
                    w *= a.weights[k];
                    off += a.offsets[k];
                }
                if (w != 0.0) acc += w * resize_load(x[off]);
                std::size_t d = rank;
                while (d > 0 && ++t[d - 1] == a.tap_count[d - 1]) t[--d] = 0;
                if (d == 0) break;
            }
            y[e] = resize_store<T>(acc);
        }
        std::size_t d = rank;
        while (d > 0 && ++o[d - 1] == a.out_dims[d - 1]) o[--d] = 0;
    }
}

template <class T, bool Interp>
void resize_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& a = *static_cast<const resize_args*>(p);
    resize_reference<T, Interp>(a, ctx.at<const T>(a.x), ctx.at<T>(a.y));
}

/// Output dtype check of infer(): linear and cubic need a float X.
inline status resize_check_dtype(infer_context& ctx, const resize_spec& s) {
    const dtype t = ctx.input_type(0);
    if (t == dtype::undefined || t == dtype::bfloat16)
        return ctx.fail(status::unsupported_op, "input 0 (X) has dtype {}, which Resize does not support", t);
    if (s.interp != resize_interp::nearest && t != dtype::float32 && t != dtype::float64 && t != dtype::float16)
        return ctx.fail(status::unsupported_op, "input 0 (X) has dtype {}: {} interpolation supports float32, float64 and float16 (nearest: any)", t,
                        s.interp == resize_interp::linear ? "linear" : "cubic");
    return status::ok;
}

inline status resize_bind(const resize_spec& s, bind_context& ctx) {
    resize_args a;
    build_resize_taps(s, ctx.input_shape(0), a);
    a.x = ctx.input(0);
    a.y = ctx.output(0);
    const dtype t = ctx.input_type(0);
    if (s.interp != resize_interp::nearest) {
        if (t == dtype::float64) ctx.emit(&resize_kernel<double, true>, std::move(a));
        else if (t == dtype::float16) ctx.emit(&resize_kernel<float16, true>, std::move(a));
        else ctx.emit(&resize_kernel<float, true>, std::move(a));
        return status::ok;
    }
    bool done = false;
    visit_dtype(t, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (!std::is_same_v<T, bfloat16>) {
            ctx.emit(&resize_kernel<T, false>, std::move(a));
            done = true;
        }
    });
    return done ? status::ok : ctx.fail(status::unsupported_op, "input 0 (X) has dtype {}, which Resize does not support", t);
}

} // namespace resize_detail

struct resize {
    static constexpr std::string_view onnx_name = "Resize";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::string coordinate_transformation_mode = "half_pixel";  // opset 11
        float cubic_coeff_a = -0.75f;                               // opset 11
        std::int64_t exclude_outside = 0;                           // opset 11
        float extrapolation_value = 0.0f;                           // opset 11
        std::string mode = "nearest";
        std::string nearest_mode = "round_prefer_floor";  // opset 11
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("coordinate_transformation_mode", &attributes::coordinate_transformation_mode),
                        attr("cubic_coeff_a", &attributes::cubic_coeff_a), attr("exclude_outside", &attributes::exclude_outside),
                        attr("extrapolation_value", &attributes::extrapolation_value), attr("mode", &attributes::mode),
                        attr("nearest_mode", &attributes::nearest_mode));

    /// Reads attributes and the constant inputs: opset 10 is (X, scales) with asymmetric
    /// coordinates; opset 11+ is (X, roi, scales, sizes) where exactly one of scales and sizes
    /// is given (an empty tensor counts as absent) and roi matters for tf_crop_and_resize only.
    static status plan(const attributes& a, infer_context& ctx, resize_detail::resize_spec& s) {
        const bool v10 = ctx.opset() < 11;
        if (status st = v10 ? ctx.expect_inputs(2, 2) : ctx.expect_inputs(1, 4); st != status::ok) return st;
        if (status st = resize_detail::parse_resize_interp(ctx, a.mode, !v10, s.interp); st != status::ok) return st;
        const shape& x = ctx.input_shape(0);
        if (v10) {
            s.coord = resize_detail::resize_coord::asymmetric;
            s.nearest = resize_detail::resize_nearest::simple;
        } else {
            if (status st = resize_detail::parse_resize_coord(ctx, a.coordinate_transformation_mode, s.coord); st != status::ok) return st;
            if (status st = resize_detail::parse_resize_nearest(ctx, a.nearest_mode, s.nearest); st != status::ok) return st;
            if (a.exclude_outside != 0 && a.exclude_outside != 1)
                return ctx.fail(status::invalid_model, "exclude_outside is {}, expected 0 or 1", a.exclude_outside);
            s.cubic_a = a.cubic_coeff_a;
            s.exclude_outside = a.exclude_outside != 0;
            s.extrapolation = a.extrapolation_value;
        }
        const std::size_t scales_input = v10 ? 1 : 2, sizes_input = 3;
        // Whether an optional input is present and non-empty (its shape decides, not its value).
        auto given = [&](std::size_t i) { return ctx.has_input(i) && ctx.input_shape(i).elements() > 0; };
        const bool has_scales = given(scales_input), has_sizes = !v10 && given(sizes_input);
        if (has_scales == has_sizes)
            return ctx.fail(status::invalid_model, has_scales ? "scales and sizes are both given; exactly one of them must be"
                                                               : "neither scales nor sizes is given; exactly one of them must be");
        std::vector<double> scales;
        std::vector<std::int64_t> sizes;
        if (has_scales) {
            if (status st = ctx.expect_type(scales_input, {dtype::float32}); st != status::ok) return st;
            const tensor* t = ctx.require_constant(scales_input, "scales");
            if (!t) return status::unsupported_op;
            resize_detail::floats_of(*t, scales);
        } else {
            if (status st = ctx.expect_type(sizes_input, {dtype::int64}); st != status::ok) return st;
            const tensor* t = ctx.require_constant(sizes_input, "sizes");
            if (!t) return status::unsupported_op;
            infer_context::ints_of(*t, sizes);
        }
        if (status st = resize_detail::resize_output(ctx, x, has_scales ? &scales : nullptr, has_sizes ? &sizes : nullptr, s); st != status::ok) return st;
        if (s.coord == resize_detail::resize_coord::tf_crop_and_resize) {
            if (!given(1)) return ctx.fail(status::invalid_model, "coordinate_transformation_mode tf_crop_and_resize needs the roi input");
            if (status st = ctx.expect_type(1, {dtype::float32, dtype::float64, dtype::float16}); st != status::ok) return st;
            const tensor* t = ctx.require_constant(1, "roi");
            if (!t) return status::unsupported_op;
            resize_detail::floats_of(*t, s.roi);
            if (s.roi.size() != 2 * x.rank())
                return ctx.fail(status::invalid_model, "roi has {} values, expected {} (start and end per dimension of X {})", s.roi.size(),
                                2 * x.rank(), x);
            for (double v : s.roi)
                if (!std::isfinite(v)) return ctx.fail(status::invalid_model, "roi has a value that is not finite");
        }
        return resize_detail::resize_check_dtype(ctx, s);
    }

    static status infer(const attributes& a, infer_context& ctx) {
        resize_detail::resize_spec s;
        if (status st = plan(a, ctx, s); st != status::ok) return st;
        ctx.set_output(0, ctx.input_type(0), shape(span<const std::int64_t>(s.out.data(), s.out.size())));
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        resize_detail::resize_spec s;
        if (status st = plan(a, ctx, s); st != status::ok) return st;
        return resize_detail::resize_bind(s, ctx);
    }
};

/// Upsample: opset 7 takes the scales as an attribute, opset 9 as a second input (deprecated
/// since opset 10 in favour of Resize). Asymmetric coordinates; nearest or (bi/tri)linear.
struct upsample {
    static constexpr std::string_view onnx_name = "Upsample";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::string mode = "nearest";
        std::vector<float> scales;  // opset 7 only
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("mode", &attributes::mode), attr("scales", &attributes::scales));

    static status plan(const attributes& a, infer_context& ctx, resize_detail::resize_spec& s) {
        const bool v7 = ctx.opset() < 9;
        if (status st = v7 ? ctx.expect_inputs(1, 1) : ctx.expect_inputs(2, 2); st != status::ok) return st;
        if (status st = resize_detail::parse_resize_interp(ctx, a.mode, false, s.interp); st != status::ok) return st;
        s.coord = resize_detail::resize_coord::asymmetric;
        s.nearest = resize_detail::resize_nearest::simple;
        std::vector<double> scales;
        if (v7) {
            if (a.scales.empty()) return ctx.fail(status::invalid_model, "required attribute 'scales' is missing (Upsample opset {})", ctx.opset());
            scales.assign(a.scales.begin(), a.scales.end());
        } else {
            if (!a.scales.empty())
                return ctx.fail(status::invalid_model, "attribute 'scales' is an input since Upsample opset 9 (the model has opset {})", ctx.opset());
            if (status st = ctx.expect_type(1, {dtype::float32}); st != status::ok) return st;
            const tensor* t = ctx.require_constant(1, "scales");
            if (!t) return status::unsupported_op;
            resize_detail::floats_of(*t, scales);
        }
        if (status st = resize_detail::resize_output(ctx, ctx.input_shape(0), &scales, nullptr, s); st != status::ok) return st;
        return resize_detail::resize_check_dtype(ctx, s);
    }

    static status infer(const attributes& a, infer_context& ctx) {
        resize_detail::resize_spec s;
        if (status st = plan(a, ctx, s); st != status::ok) return st;
        ctx.set_output(0, ctx.input_type(0), shape(span<const std::int64_t>(s.out.data(), s.out.size())));
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        resize_detail::resize_spec s;
        if (status st = plan(a, ctx, s); st != status::ok) return st;
        return resize_detail::resize_bind(s, ctx);
    }
};

} // namespace ops
EMBER_NAMESPACE_END
