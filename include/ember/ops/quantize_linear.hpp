// SPDX-License-Identifier: Apache-2.0
// The linear (affine) quantization ops, reference kernels:
//
//   QuantizeLinear (opset 10+):   y = saturate(round(x / y_scale) + y_zero_point)
//   DequantizeLinear (opset 10+): y = (x - x_zero_point) * x_scale
//   DynamicQuantizeLinear (opset 11+): x float32 -> uint8 with the scale and zero point that map
//       [min(0, min x), max(0, max x)] onto [0, 255].
//
// round is round-half-to-even; saturate clamps to the range of the quantized type (uint8 or
// int8, the type of the zero point; uint8 when it is absent), and NaN quantizes to the zero
// point. Scale and zero point are per tensor (a scalar or a 1-element tensor), or from opset 13
// on per axis: 1-D tensors of x.shape[axis] values (attribute axis, default 1).
// Also the shared helpers of the quantized ops (quant_detail).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace quant_detail {

/// v rounded to the nearest integer, ties to the even one (independent of the FP rounding mode).
inline double round_half_even(double v) noexcept {
    if (!std::isfinite(v)) return v;
    double f = std::floor(v);
    const double diff = v - f;
    if (diff > 0.5 || (diff == 0.5 && std::fmod(f, 2.0) != 0.0)) f += 1.0;
    return f;
}

/// v clamped to Q's range and converted; NaN gives `if_nan`.
template <class Q>
Q saturate(double v, Q if_nan) noexcept {
    if (std::isnan(v)) return if_nan;
    constexpr double lo = static_cast<double>(std::numeric_limits<Q>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<Q>::max());
    return static_cast<Q>(v < lo ? lo : v > hi ? hi : v);
}

/// QuantizeLinear's definition for one value: x / scale in float (as ONNX's reference), rounded
/// half to even, shifted by the zero point, saturated (NaN gives the zero point).
template <class Q>
Q quantize_value(float x, float scale, Q zp) noexcept {
    const float scaled = x / scale;
    return saturate<Q>(round_half_even(scaled) + static_cast<double>(zp), zp);
}

/// Whether a scale or zero point of shape s holds one value (a scalar or any 1-element tensor).
inline bool is_single(const shape& s) noexcept { return s.elements() == 1; }

/// How a scale / zero-point pair applies to x: per tensor, or per axis along `axis`.
struct affine_layout {
    bool per_axis = false;
    std::int64_t axis_len = 1, inner = 1;  ///< x's dimension `axis` and the product of those after it

    std::int64_t channel(std::int64_t i) const noexcept { return per_axis ? (i / inner) % axis_len : 0; }
};

/// Checks scale (input si) and the optional zero point (input zi) against x (input xi) for the
/// QuantizeLinear / DequantizeLinear rules of this opset; fills layout.
inline status check_affine(infer_context& ctx, std::size_t xi, std::size_t si, std::size_t zi, const std::optional<std::int64_t>& axis,
                           affine_layout& layout) {
    const shape& x = ctx.input_shape(xi);
    const shape& s = ctx.input_shape(si);
    if (ctx.opset() < 13 && axis.has_value())
        return ctx.fail(status::invalid_model, "attribute 'axis' needs opset 13 (per-axis quantization); the model's opset is {}", ctx.opset());
    if (ctx.expect_type(si, {dtype::float32}) != status::ok) return status::unsupported_op;
    layout = affine_layout{};
    if (!is_single(s)) {
        if (ctx.opset() < 13)
            return ctx.fail(status::invalid_model, "the scale must be a scalar before opset 13 (per-axis needs opset 13), got shape {}", s);
        std::size_t k = 0;
        const std::int64_t a = axis.value_or(1);
        if (!normalize_axis(a, x.rank(), k))
            return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {} (rank {})", a, x, x.rank());
        if (s.rank() != 1 || s[0] != x[k])
            return ctx.fail(status::shape_mismatch, "a per-axis scale must be 1-D of x.shape[{}] = {} values (x {}), got shape {}", a, x[k], x, s);
        layout.per_axis = true;
        layout.axis_len = x[k];
        for (std::size_t i = k + 1; i < x.rank(); ++i) layout.inner *= x[i];
    }
    if (ctx.has_input(zi)) {
        const shape& z = ctx.input_shape(zi);
        if (!(z == s || (is_single(z) && is_single(s))))
            return ctx.fail(status::shape_mismatch, "the zero point has shape {}, expected the scale's shape {}", z, s);
    }
    return status::ok;
}

/// fn(T{}) for T = int8 when t is int8, uint8 otherwise: picks a kernel instantiation.
template <class Fn>
kernel_fn pick_u8_i8(dtype t, Fn fn) {
    return t == dtype::int8 ? fn(std::int8_t{}) : fn(std::uint8_t{});
}

} // namespace quant_detail

// ---------------------------------------------------------------------------------------------

struct quantize_linear {
    static constexpr std::string_view onnx_name = "QuantizeLinear";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::optional<std::int64_t> axis;  // opset 13+, default 1
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));

    struct args {
        operand x, scale, zero_point, y;
        bool has_zero_point = false;
        quant_detail::affine_layout layout;
        std::int64_t count = 0;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        return plan(a, ctx, g);
    }

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (ctx.opset() < 10) return ctx.fail(status::unsupported_op, "QuantizeLinear exists from opset 10 on; the model's opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(2, 3); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::int32}); s != status::ok) return s;
        if (ctx.has_input(2))
            if (status s = ctx.expect_type(2, {dtype::uint8, dtype::int8}); s != status::ok) return s;
        if (status s = quant_detail::check_affine(ctx, 0, 1, 2, a.axis, g.layout); s != status::ok) return s;
        g.count = ctx.input_shape(0).elements();
        ctx.set_output(0, ctx.has_input(2) ? ctx.input_type(2) : dtype::uint8, ctx.input_shape(0));
        return status::ok;
    }

    // The definition: x / scale in float (as ONNX's reference), rounded half to even, shifted by
    // the zero point, clamped. zero_point may be null (0).
    template <class X, class Q>
    static void reference(const args& g, const X* x, const float* scale, const Q* zero_point, Q* y) noexcept {
        for (std::int64_t i = 0; i < g.count; ++i) {
            const std::int64_t c = g.layout.channel(i);
            const Q zp = zero_point ? zero_point[c] : Q(0);
            y[i] = quant_detail::quantize_value<Q>(static_cast<float>(x[i]), scale[c], zp);
        }
    }

    template <class X, class Q>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<X, Q>(g, ctx.at<const X>(g.x), ctx.at<const float>(g.scale), g.has_zero_point ? ctx.at<const Q>(g.zero_point) : nullptr,
                        ctx.at<Q>(g.y));
    }

    /// Where x, scale, the optional zero_point and y live; shared with DequantizeLinear.
    static void bind_operands(bind_context& ctx, args& g) noexcept {
        g.x = ctx.input(0);
        g.scale = ctx.input(1);
        g.has_zero_point = ctx.has_input(2);
        if (g.has_zero_point) g.zero_point = ctx.input(2);
        g.y = ctx.output(0);
    }

    // The fast path: float32 x, per-tensor scale and zero point, split into pieces over the
    // executor (kernels::quantize_f32: the same values as the reference).
    struct fast_args {
        args base;
        decltype(simd::kernel_table::quantize_f32) run = nullptr;
        bool is_signed = false;
        std::int64_t pieces = 1;
    };

    static void fast_kernel(const void* p, const run_context& ctx) noexcept {
        const auto& f = *static_cast<const fast_args*>(p);
        const args& g = f.base;
        const float* x = ctx.at<const float>(g.x);
        auto* y = ctx.at<std::uint8_t>(g.y);
        const float scale = *ctx.at<const float>(g.scale);
        std::int32_t zp = 0;
        if (g.has_zero_point)
            zp = f.is_signed ? std::int32_t{*ctx.at<const std::int8_t>(g.zero_point)} : std::int32_t{*ctx.at<const std::uint8_t>(g.zero_point)};
        const std::int32_t lo = f.is_signed ? -128 : 0, hi = f.is_signed ? 127 : 255;
        for_each_piece(ctx.exec, g.count, f.pieces, [&](std::int64_t begin, std::int64_t end) noexcept {
            f.run(x + begin, end - begin, scale, zp, lo, hi, y + begin);
        });
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        bind_operands(ctx, g);
        if (ctx.kernels() && ctx.input_type(0) == dtype::float32 && !g.layout.per_axis) {
            fast_args f;
            f.base = g;
            f.run = ctx.kernels()->table->quantize_f32;
            f.is_signed = ctx.output_type(0) == dtype::int8;
            f.pieces = elementwise_pieces(g.count, ctx.kernels()->slots);
            ctx.emit(&fast_kernel, f);
            return status::ok;
        }
        const bool from_int = ctx.input_type(0) == dtype::int32;
        if (ctx.output_type(0) == dtype::int8)
            ctx.emit(from_int ? &kernel<std::int32_t, std::int8_t> : &kernel<float, std::int8_t>, g);
        else
            ctx.emit(from_int ? &kernel<std::int32_t, std::uint8_t> : &kernel<float, std::uint8_t>, g);
        return status::ok;
    }
};

// ---------------------------------------------------------------------------------------------

struct dequantize_linear {
    static constexpr std::string_view onnx_name = "DequantizeLinear";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::optional<std::int64_t> axis;  // opset 13+, default 1
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));

    using args = quantize_linear::args;

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        return plan(a, ctx, g);
    }

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (ctx.opset() < 10) return ctx.fail(status::unsupported_op, "DequantizeLinear exists from opset 10 on; the model's opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(2, 3); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::uint8, dtype::int8, dtype::int32}); s != status::ok) return s;
        if (ctx.has_input(2) && ctx.input_type(2) != ctx.input_type(0))
            return ctx.fail(status::invalid_model, "the zero point has dtype {}, expected x's dtype {}", ctx.input_type(2), ctx.input_type(0));
        if (status s = quant_detail::check_affine(ctx, 0, 1, 2, a.axis, g.layout); s != status::ok) return s;
        g.count = ctx.input_shape(0).elements();
        ctx.set_output(0, dtype::float32, ctx.input_shape(0));
        return status::ok;
    }

    // The definition, as ONNX's reference: (float(x) - float(zero_point)) * scale.
    template <class Q>
    static void reference(const args& g, const Q* x, const float* scale, const Q* zero_point, float* y) noexcept {
        for (std::int64_t i = 0; i < g.count; ++i) {
            const std::int64_t c = g.layout.channel(i);
            const float zp = zero_point ? static_cast<float>(zero_point[c]) : 0.0f;
            y[i] = (static_cast<float>(x[i]) - zp) * scale[c];
        }
    }

    template <class Q>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<Q>(g, ctx.at<const Q>(g.x), ctx.at<const float>(g.scale), g.has_zero_point ? ctx.at<const Q>(g.zero_point) : nullptr,
                     ctx.at<float>(g.y));
    }

    // The fast path: 8-bit x, per-tensor scale and zero point, split into pieces over the
    // executor (kernels::dequantize_8bit: the same floats as the reference).
    struct fast_args {
        args base;
        decltype(simd::kernel_table::dequantize_8bit) run = nullptr;
        bool is_signed = false;
        std::int64_t pieces = 1;
    };

    static void fast_kernel(const void* p, const run_context& ctx) noexcept {
        const auto& f = *static_cast<const fast_args*>(p);
        const args& g = f.base;
        const auto* x = ctx.at<const std::uint8_t>(g.x);
        float* y = ctx.at<float>(g.y);
        const float scale = *ctx.at<const float>(g.scale);
        std::int32_t zp = 0;
        if (g.has_zero_point)
            zp = f.is_signed ? std::int32_t{*ctx.at<const std::int8_t>(g.zero_point)} : std::int32_t{*ctx.at<const std::uint8_t>(g.zero_point)};
        for_each_piece(ctx.exec, g.count, f.pieces, [&](std::int64_t begin, std::int64_t end) noexcept {
            f.run(x + begin, end - begin, f.is_signed, scale, zp, y + begin);
        });
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        quantize_linear::bind_operands(ctx, g);
        if (ctx.kernels() && ctx.input_type(0) != dtype::int32 && !g.layout.per_axis) {
            fast_args f;
            f.base = g;
            f.run = ctx.kernels()->table->dequantize_8bit;
            f.is_signed = ctx.input_type(0) == dtype::int8;
            f.pieces = elementwise_pieces(g.count, ctx.kernels()->slots);
            ctx.emit(&fast_kernel, f);
            return status::ok;
        }
        switch (ctx.input_type(0)) {
            case dtype::int8: ctx.emit(&kernel<std::int8_t>, g); break;
            case dtype::int32: ctx.emit(&kernel<std::int32_t>, g); break;
            default: ctx.emit(&kernel<std::uint8_t>, g); break;
        }
        return status::ok;
    }
};

// ---------------------------------------------------------------------------------------------

struct dynamic_quantize_linear {
    static constexpr std::string_view onnx_name = "DynamicQuantizeLinear";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    struct args {
        operand x, y, y_scale, y_zero_point;
        std::int64_t count = 0;
    };

    static status infer(const attributes&, infer_context& ctx) {
        if (ctx.opset() < 11)
            return ctx.fail(status::unsupported_op, "DynamicQuantizeLinear exists from opset 11 on; the model's opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32}); s != status::ok) return s;
        if (ctx.output_count() != 3 || !ctx.has_output(0) || !ctx.has_output(1) || !ctx.has_output(2))
            return ctx.fail(status::invalid_model, "expected 3 named outputs (y, y_scale, y_zero_point), got {}", ctx.output_count());
        ctx.set_output(0, dtype::uint8, ctx.input_shape(0));
        ctx.set_output(1, dtype::float32, shape());
        ctx.set_output(2, dtype::uint8, shape());
        return status::ok;
    }

    // The definition (ONNX's, with ONNX Runtime's answer for an all-zero input, where the range
    // is empty: scale 1, zero point 0). Min and max always include 0, so 0 is exact.
    static void reference(const float* x, std::int64_t count, std::uint8_t* y, float& scale, std::uint8_t& zero_point) noexcept {
        float lo = 0.0f, hi = 0.0f;
        for (std::int64_t i = 0; i < count; ++i) {
            lo = x[i] < lo ? x[i] : lo;
            hi = x[i] > hi ? x[i] : hi;
        }
        scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
        const float initial = 0.0f - lo / scale;
        zero_point = quant_detail::saturate<std::uint8_t>(quant_detail::round_half_even(initial), std::uint8_t(0));
        for (std::int64_t i = 0; i < count; ++i) y[i] = quant_detail::quantize_value<std::uint8_t>(x[i], scale, zero_point);
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        float scale = 0.0f;
        std::uint8_t zp = 0;
        reference(ctx.at<const float>(g.x), g.count, ctx.at<std::uint8_t>(g.y), scale, zp);
        *ctx.at<float>(g.y_scale) = scale;
        *ctx.at<std::uint8_t>(g.y_zero_point) = zp;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        if (status s = infer(a, ctx); s != status::ok) return s;
        ctx.emit(&kernel, args{ctx.input(0), ctx.output(0), ctx.output(1), ctx.output(2), ctx.input_shape(0).elements()});
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
