// SPDX-License-Identifier: Apache-2.0
// The signal ops of ONNX opset 17: HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix
// (generators whose inputs decide the output's shape, so they are computed at compile time), and
// DFT and STFT (float32 and float64, a direct O(n^2) transform with exact twiddle indices).
// Complex values are a trailing dimension of 2 (real, imaginary), as ONNX has them.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <type_traits>
#include <vector>

#include "ember/ops/cast.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace signal_detail {

inline constexpr double pi = 3.14159265358979323846;

/// One scalar (or 1-element) int32/int64 compile-time input, named `what`.
inline status scalar_int(infer_context& ctx, std::size_t i, std::string_view what, std::int64_t& out) {
    if (status s = ctx.expect_type(i, {dtype::int32, dtype::int64}); s != status::ok) return s;
    const tensor* t = ctx.require_constant(i, what);
    if (!t) return status::unsupported_op;
    std::vector<std::int64_t> v;
    infer_context::ints_of(*t, v);
    if (v.size() != 1) return ctx.fail(status::invalid_model, "input {} ({}) must be a scalar, got shape {}", i, what, t->dims());
    out = v[0];
    return status::ok;
}

/// One scalar float (or int) compile-time input as a double.
inline status scalar_double(infer_context& ctx, std::size_t i, std::string_view what, double& out) {
    const tensor* t = ctx.require_constant(i, what);
    if (!t) return status::unsupported_op;
    if (t->size() != 1) return ctx.fail(status::invalid_model, "input {} ({}) must be a scalar, got shape {}", i, what, t->dims());
    bool ok = false;
    visit_dtype(t->type(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
            out = static_cast<double>(static_cast<float>(t->data<T>()[0]));
            ok = true;
        } else if constexpr (!std::is_same_v<T, bool>) {
            out = static_cast<double>(t->data<T>()[0]);
            ok = true;
        }
    });
    if (!ok) return ctx.fail(status::invalid_model, "input {} ({}) has dtype {}, expected a number", i, what, t->type());
    return status::ok;
}

/// A tensor of dtype `type` holding `values` (converted; saturating for integers).
inline status make_constant(infer_context& ctx, dtype type, const shape& dims, const std::vector<double>& values, tensor& out) {
    result<tensor> t = tensor::create(type, dims);
    if (!t) return ctx.fail(t.error().code, "{}", t.error().message);
    bool ok = false;
    visit_dtype(type, [&](auto tag) {
        using T = decltype(tag);
        T* p = t->data<T>();
        for (std::size_t i = 0; i < values.size(); ++i) {
            const double v = values[i];
            if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) p[i] = T(static_cast<float>(v));
            else if constexpr (std::is_same_v<T, bool>) p[i] = v != 0.0;
            else if constexpr (std::is_integral_v<T>) {
                const double lo = static_cast<double>(std::numeric_limits<T>::lowest()), hi = static_cast<double>(std::numeric_limits<T>::max());
                p[i] = !(v > lo) ? std::numeric_limits<T>::lowest() : v >= hi ? std::numeric_limits<T>::max() : static_cast<T>(v);
            } else p[i] = static_cast<T>(v);
        }
        ok = true;
    });
    if (!ok) return ctx.fail(status::unsupported_op, "output dtype {} is not supported", type);
    out = std::move(*t);
    return status::ok;
}

/// The shared body of the three window generators: w[n] = sum_k c[k] * cos(2 pi k n / N) with
/// N = size (periodic) or size - 1 (symmetric).
inline status window(infer_context& ctx, std::int64_t output_datatype, std::int64_t periodic, const std::vector<double>& coeffs) {
    if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
    dtype type = dtype::undefined;
    if (status s = dtype_attribute(ctx, "output_datatype", output_datatype, type); s != status::ok) return s;
    if (periodic != 0 && periodic != 1) return ctx.fail(status::invalid_model, "periodic is {}, expected 0 or 1", periodic);
    std::int64_t size = 0;
    if (status s = scalar_int(ctx, 0, "size", size); s != status::ok) return s;
    if (size < 0 || size > (std::int64_t(1) << 24)) return ctx.fail(status::invalid_model, "size is {}, expected 0 to 2^24", size);
    const double N = static_cast<double>(periodic ? size : size - 1);
    std::vector<double> w(static_cast<std::size_t>(size));
    for (std::int64_t n = 0; n < size; ++n) {
        double v = 0.0, k = 0.0;
        for (double c : coeffs) {
            v += N > 0 ? c * std::cos(2.0 * pi * k * static_cast<double>(n) / N) : c;
            k += 1.0;
        }
        w[static_cast<std::size_t>(n)] = v;
    }
    tensor t;
    if (status s = make_constant(ctx, type, shape{size}, w, t); s != status::ok) return s;
    ctx.set_output_constant(0, std::move(t));
    return status::ok;
}

/// What HannWindow, HammingWindow and BlackmanWindow share: the attributes, and infer() from
/// Op::coefficients. infer() makes the output a compile-time constant, so compile() never binds
/// these ops.
template <class Op>
struct window_op {
    static constexpr op_flags flags = op_flags::none;
    struct attributes {
        std::int64_t output_datatype = 1;  // TensorProto.FLOAT
        std::int64_t periodic = 1;
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("output_datatype", &attributes::output_datatype), attr("periodic", &attributes::periodic));
    static status infer(const attributes& a, infer_context& ctx) {
        return window(ctx, a.output_datatype, a.periodic, {std::begin(Op::coefficients), std::end(Op::coefficients)});
    }
    static status bind(const attributes&, bind_context& ctx) {
        return ctx.fail(status::invalid_model, "{} has no step: its value is known at compile time", Op::onnx_name);
    }
};

} // namespace signal_detail

/// HannWindow (opset 17): 0.5 - 0.5 cos(2 pi n / N).
struct hann_window : signal_detail::window_op<hann_window> {
    static constexpr std::string_view onnx_name = "HannWindow";
    static constexpr double coefficients[] = {0.5, -0.5};
};

/// HammingWindow (opset 17): 25/46 - 21/46 cos(2 pi n / N).
struct hamming_window : signal_detail::window_op<hamming_window> {
    static constexpr std::string_view onnx_name = "HammingWindow";
    static constexpr double coefficients[] = {25.0 / 46.0, -21.0 / 46.0};
};

/// BlackmanWindow (opset 17): 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N).
struct blackman_window : signal_detail::window_op<blackman_window> {
    static constexpr std::string_view onnx_name = "BlackmanWindow";
    static constexpr double coefficients[] = {0.42, -0.5, 0.08};
};

/// MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangular filters, spaced
/// evenly on the mel scale (2595 log10(1 + f / 700)) from lower_edge_hertz to upper_edge_hertz,
/// each rising from its left bin to 1 at its centre bin and falling to 0 at its right bin, the
/// bins being floor((dft_length + 1) * f / sample_rate) as in ONNX's reference.
struct mel_weight_matrix {
    static constexpr std::string_view onnx_name = "MelWeightMatrix";
    static constexpr op_flags flags = op_flags::none;
    struct attributes {
        std::int64_t output_datatype = 1;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("output_datatype", &attributes::output_datatype));

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(5, 5); s != status::ok) return s;
        dtype type = dtype::undefined;
        if (status s = dtype_attribute(ctx, "output_datatype", a.output_datatype, type); s != status::ok) return s;
        std::int64_t bins = 0, dft_length = 0, sample_rate = 0;
        double lower = 0, upper = 0;
        if (status s = signal_detail::scalar_int(ctx, 0, "num_mel_bins", bins); s != status::ok) return s;
        if (status s = signal_detail::scalar_int(ctx, 1, "dft_length", dft_length); s != status::ok) return s;
        if (status s = signal_detail::scalar_int(ctx, 2, "sample_rate", sample_rate); s != status::ok) return s;
        if (status s = signal_detail::scalar_double(ctx, 3, "lower_edge_hertz", lower); s != status::ok) return s;
        if (status s = signal_detail::scalar_double(ctx, 4, "upper_edge_hertz", upper); s != status::ok) return s;
        if (bins < 1 || bins > (1 << 20)) return ctx.fail(status::invalid_model, "num_mel_bins is {}, expected 1 to 2^20", bins);
        if (dft_length < 1 || dft_length > (1 << 24)) return ctx.fail(status::invalid_model, "dft_length is {}, expected 1 to 2^24", dft_length);
        if (sample_rate < 1) return ctx.fail(status::invalid_model, "sample_rate is {}, expected > 0", sample_rate);
        if (!(lower >= 0.0) || !(upper > lower) || !std::isfinite(upper))
            return ctx.fail(status::invalid_model, "lower_edge_hertz {} and upper_edge_hertz {} must satisfy 0 <= lower < upper", lower, upper);
        const std::int64_t spectrogram_bins = dft_length / 2 + 1;
        if (spectrogram_bins * bins > (std::int64_t(1) << 26))
            return ctx.fail(status::invalid_model, "a {} x {} mel weight matrix is too large (at most 2^26 elements)", spectrogram_bins, bins);
        const double low_mel = 2595.0 * std::log10(1.0 + lower / 700.0), high_mel = 2595.0 * std::log10(1.0 + upper / 700.0);
        const double step = (high_mel - low_mel) / static_cast<double>(bins + 2);
        std::vector<std::int64_t> edge(static_cast<std::size_t>(bins + 2));
        for (std::int64_t i = 0; i < bins + 2; ++i) {
            const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
            const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
            if (!(bin >= 0.0) || bin >= static_cast<double>(spectrogram_bins))
                return ctx.fail(status::invalid_model,
                                "upper_edge_hertz {} is above the Nyquist frequency of sample_rate {}: a filter would lie beyond the {} "
                                "spectrogram bins",
                                upper, sample_rate, spectrogram_bins);
            edge[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(bin);
        }
        std::vector<double> w(static_cast<std::size_t>(spectrogram_bins * bins), 0.0);
        auto at = [&](std::int64_t j, std::int64_t i) -> double& { return w[static_cast<std::size_t>(j * bins + i)]; };
        for (std::int64_t i = 0; i < bins; ++i) {
            const std::int64_t left = edge[static_cast<std::size_t>(i)], centre = edge[static_cast<std::size_t>(i + 1)],
                               right = edge[static_cast<std::size_t>(i + 2)];
            if (centre == left) at(centre, i) = 1.0;
            else
                for (std::int64_t j = left; j <= centre; ++j) at(j, i) = static_cast<double>(j - left) / static_cast<double>(centre - left);
            for (std::int64_t j = centre; j < right; ++j) at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - centre);
        }
        tensor t;
        if (status s = signal_detail::make_constant(ctx, type, shape{spectrogram_bins, bins}, w, t); s != status::ok) return s;
        ctx.set_output_constant(0, std::move(t));
        return status::ok;
    }
    static status bind(const attributes&, bind_context& ctx) {
        return ctx.fail(status::invalid_model, "MelWeightMatrix has no step: its value is known at compile time");
    }
};

namespace signal_detail {

/// One batch of 1-D transforms: `outer` x `inner` signals of `in_len` complex or real samples
/// (stride `inner`), each transformed to `out_len` bins of length-`L` DFT (zero-padded or
/// truncated to L), optionally multiplied by a window first.
struct dft_args {
    operand x, y, window;
    bool has_window = false;
    bool complex_in = false;
    bool inverse = false;
    std::int64_t outer = 0, inner = 0;
    std::int64_t in_len = 0;        // samples along the axis in X
    std::int64_t L = 0;             // transform length
    std::int64_t out_len = 0;       // bins written (L, or L / 2 + 1 when onesided)
    std::int64_t frames = 1;        // STFT: frames per signal (1 for DFT)
    std::int64_t frame_step = 0;    // STFT: samples between frames
    std::vector<double> cos_table;  // cos(2 pi m / L), m in [0, L)
    std::vector<double> sin_table;
};

inline void fill_twiddles(dft_args& a) {
    a.cos_table.resize(static_cast<std::size_t>(a.L));
    a.sin_table.resize(static_cast<std::size_t>(a.L));
    for (std::int64_t m = 0; m < a.L; ++m) {
        const double angle = 2.0 * pi * static_cast<double>(m) / static_cast<double>(a.L);
        a.cos_table[static_cast<std::size_t>(m)] = std::cos(angle);
        a.sin_table[static_cast<std::size_t>(m)] = std::sin(angle);
    }
}

// The definition: Y[k] = sum_n x[n] e^(-+2 pi i k n / L) over n < min(in_len, L) (the rest is
// zero padding), divided by L for the inverse. For STFT the signals are frames f at offset
// f * frame_step, each sample times window[n]. Layout: X [outer, in_len, inner, 1|2] and
// Y [outer, frames, out_len, inner, 2] (frames = 1 for DFT).
template <class T>
void dft_reference(const dft_args& a, const T* x, const T* window, T* y) noexcept {
    const std::int64_t comps = a.complex_in ? 2 : 1;
    const std::int64_t used = a.frames > 1 || a.frame_step > 0 ? a.L : (a.in_len < a.L ? a.in_len : a.L);
    const double sign = a.inverse ? 1.0 : -1.0;
    const double scale = a.inverse ? 1.0 / static_cast<double>(a.L) : 1.0;
    for (std::int64_t o = 0; o < a.outer; ++o)
        for (std::int64_t f = 0; f < a.frames; ++f)
            for (std::int64_t i = 0; i < a.inner; ++i) {
                const std::int64_t start = f * a.frame_step;
                for (std::int64_t k = 0; k < a.out_len; ++k) {
                    double re = 0.0, im = 0.0;
                    for (std::int64_t n = 0; n < used; ++n) {
                        const T* s = x + ((o * a.in_len + start + n) * a.inner + i) * comps;
                        double xr = static_cast<double>(s[0]), xi = a.complex_in ? static_cast<double>(s[1]) : 0.0;
                        if (window) {
                            const double wv = static_cast<double>(window[n]);
                            xr *= wv;
                            xi *= wv;
                        }
                        const auto m = static_cast<std::size_t>((k * n) % a.L);
                        const double c = a.cos_table[m], sn = sign * a.sin_table[m];
                        re += xr * c - xi * sn;
                        im += xr * sn + xi * c;
                    }
                    T* d = y + (((o * a.frames + f) * a.out_len + k) * a.inner + i) * 2;
                    d[0] = static_cast<T>(re * scale);
                    d[1] = static_cast<T>(im * scale);
                }
            }
}

template <class T>
void dft_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& a = *static_cast<const dft_args*>(p);
    dft_reference<T>(a, ctx.at<const T>(a.x), a.has_window ? ctx.at<const T>(a.window) : nullptr, ctx.at<T>(a.y));
}

inline void emit_dft(bind_context& ctx, dft_args a) {
    if (ctx.input_type(0) == dtype::float64) ctx.emit(&dft_kernel<double>, std::move(a));
    else ctx.emit(&dft_kernel<float>, std::move(a));
}

} // namespace signal_detail

/// DFT (opset 17): the discrete Fourier transform of X [batch, ..., n, ..., 1 or 2] along axis,
/// of length dft_length (the second input, a compile-time scalar; default: the axis' size),
/// inverse (divided by the length) or onesided (the first length / 2 + 1 bins).
struct dft {
    static constexpr std::string_view onnx_name = "DFT";
    static constexpr op_flags flags = op_flags::none;
    struct attributes {
        std::int64_t axis = 1;
        std::int64_t inverse = 0;
        std::int64_t onesided = 0;
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("axis", &attributes::axis), attr("inverse", &attributes::inverse), attr("onesided", &attributes::onesided));

    static status plan(const attributes& a, infer_context& ctx, signal_detail::dft_args& g, shape& out) {
        if (status s = ctx.expect_inputs(1, 2); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        const auto r = static_cast<std::int64_t>(x.rank());
        if (r < 2 || (x[x.rank() - 1] != 1 && x[x.rank() - 1] != 2))
            return ctx.fail(status::shape_mismatch, "input must be [batch, ..., 1 or 2] (real or complex samples), got {}", x);
        std::int64_t axis = a.axis < 0 ? a.axis + r : a.axis;
        if (axis < 0 || axis > r - 2) return ctx.fail(status::invalid_model, "axis {} is out of range for input {} (expected -{} to {})", a.axis, x, r, r - 2);
        if (a.inverse != 0 && a.inverse != 1) return ctx.fail(status::invalid_model, "inverse is {}, expected 0 or 1", a.inverse);
        if (a.onesided != 0 && a.onesided != 1) return ctx.fail(status::invalid_model, "onesided is {}, expected 0 or 1", a.onesided);
        if (a.inverse && a.onesided) return ctx.fail(status::unsupported_op, "onesided inverse DFT is not supported");
        const auto ax = static_cast<std::size_t>(axis);
        g.in_len = x[ax];
        g.L = g.in_len;
        if (ctx.has_input(1) && ctx.input_shape(1).elements() > 0)
            if (status s = signal_detail::scalar_int(ctx, 1, "dft_length", g.L); s != status::ok) return s;
        if (g.L < 1 || g.L > (std::int64_t(1) << 24)) return ctx.fail(status::invalid_model, "dft_length is {}, expected 1 to 2^24", g.L);
        g.out_len = a.onesided ? g.L / 2 + 1 : g.L;
        g.complex_in = x[x.rank() - 1] == 2;
        g.inverse = a.inverse != 0;
        g.outer = 1;
        for (std::size_t d = 0; d < ax; ++d) g.outer *= x[d];
        g.inner = 1;
        for (std::size_t d = ax + 1; d + 1 < x.rank(); ++d) g.inner *= x[d];
        out = x;
        out[ax] = g.out_len;
        out[x.rank() - 1] = 2;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        signal_detail::dft_args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        signal_detail::dft_args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        signal_detail::fill_twiddles(g);
        signal_detail::emit_dft(ctx, std::move(g));
        return status::ok;
    }
};

/// STFT (opset 17): frames of frame_length samples every frame_step (both compile-time scalars;
/// frame_length defaults to the window's length) of signal [batch, length, 1 or 2], each times
/// the optional window and transformed: output [batch, frames, bins, 2] with bins = frame_length
/// / 2 + 1 when onesided (the default), else frame_length.
struct stft {
    static constexpr std::string_view onnx_name = "STFT";
    static constexpr op_flags flags = op_flags::none;
    struct attributes {
        std::int64_t onesided = 1;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("onesided", &attributes::onesided));

    static status plan(const attributes& a, infer_context& ctx, signal_detail::dft_args& g) {
        if (status s = ctx.expect_inputs(2, 4); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        if (x.rank() != 3 || (x[2] != 1 && x[2] != 2))
            return ctx.fail(status::shape_mismatch, "signal must be [batch, length, 1 or 2], got {}", x);
        if (a.onesided != 0 && a.onesided != 1) return ctx.fail(status::invalid_model, "onesided is {}, expected 0 or 1", a.onesided);
        std::int64_t step = 0, length = -1;
        if (status s = signal_detail::scalar_int(ctx, 1, "frame_step", step); s != status::ok) return s;
        if (step < 1) return ctx.fail(status::invalid_model, "frame_step is {}, expected >= 1", step);
        g.has_window = ctx.has_input(2);
        if (g.has_window) {
            if (ctx.input_type(2) != ctx.input_type(0))
                return ctx.fail(status::invalid_model, "window has dtype {}, expected {} like the signal", ctx.input_type(2), ctx.input_type(0));
            if (ctx.input_shape(2).rank() != 1) return ctx.fail(status::shape_mismatch, "window must be 1-D, got {}", ctx.input_shape(2));
            length = ctx.input_shape(2)[0];
        }
        if (ctx.has_input(3)) {
            std::int64_t given = 0;
            if (status s = signal_detail::scalar_int(ctx, 3, "frame_length", given); s != status::ok) return s;
            if (length >= 0 && given != length)
                return ctx.fail(status::shape_mismatch, "frame_length is {} but the window has {} values", given, length);
            length = given;
        }
        if (length < 0) return ctx.fail(status::invalid_model, "neither window nor frame_length is given");
        if (length < 1 || length > x[1] || length > (std::int64_t(1) << 24))
            return ctx.fail(status::shape_mismatch, "frame_length is {}, expected 1 to the signal's length {}", length, x[1]);
        g.complex_in = x[2] == 2;
        g.outer = x[0];
        g.inner = 1;
        g.in_len = x[1];
        g.L = length;
        g.out_len = a.onesided ? length / 2 + 1 : length;
        g.frame_step = step;
        g.frames = (x[1] - length) / step + 1;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        signal_detail::dft_args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), shape{g.outer, g.frames, g.out_len, 2});
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        signal_detail::dft_args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        if (g.has_window) g.window = ctx.input(2);
        signal_detail::fill_twiddles(g);
        signal_detail::emit_dft(ctx, std::move(g));
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
