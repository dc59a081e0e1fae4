// SPDX-License-Identifier: Apache-2.0
// The ops the epilogue-fusion pass makes (compile/passes/fuse_epilogue.hpp), domain "ember":
//   FusedConv   (X, W, B?, Z?)     y = act(Conv(X, W, B) + Z)
//   FusedGemm   (A, B, C?, Z?)     y = act(Gemm(A, B, C) + Z)
//   FusedMatMul (A, B, bias?, Z?)  y = act(MatMul(A, B) + bias + Z), bias 1-D [N]
//   FusedQLinearConv (QLinearConv's inputs)  QLinearConv, then with activation "Relu" clamped
//                    below at y_zp (the quantized Relu); made by QDQ folding (fold_qdq.hpp)
//   FusedQConv  (x, x_scale, x_zp, w, w_scale, w_zp, B?, Z?)  y = act(x_scale * w_scale[m] *
//                    (ConvInteger(x, w, x_zp, w_zp) + B[m]) + Z), float32: the QDQ Conv whose
//                    output stays float (it feeds a residual Add, a pooling, the graph's end);
//                    made by QDQ folding, then given Z and the activation by epilogue fusion
// with the attributes of the op they extend plus `activation` (a string, ops/epilogue.hpp:
// "", "Relu", "Clip", "LeakyRelu", "HardSigmoid", "HardSwish", "Sigmoid", "Silu", "Gelu") and
// `activation_params` (floats: Clip min, max; LeakyRelu alpha; HardSigmoid alpha, beta; none
// for the ONNX defaults). Z, the residual, has exactly the output's shape: the pass fuses an Add
// only when shape inference has shown that its other operand has the output's shape, so an Add
// that broadcasts (or widens the output) is never fused. The reference runs the op's own
// reference kernel into the output, then the epilogue in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "ember/ops/binary.hpp"
#include "ember/ops/conv.hpp"
#include "ember/ops/conv_integer.hpp"
#include "ember/ops/epilogue.hpp"
#include "ember/ops/fast_gemm.hpp"
#include "ember/ops/gemm.hpp"
#include "ember/ops/matmul.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// The domain of ember's own ops.
inline constexpr std::string_view ember_domain = "ember";

/// The epilogue attributes every fused op has.
struct epilogue_attributes {
    std::string activation;                 ///< "" or absent: none
    std::vector<float> activation_params;   ///< empty: the activation's ONNX defaults
};

namespace fused_detail {

inline constexpr auto epilogue_bindings = std::make_tuple(attr("activation", &epilogue_attributes::activation),
                                                          attr("activation_params", &epilogue_attributes::activation_params));

/// The activation and its parameters from the attributes; fails on an unknown name or a wrong
/// number of parameters.
inline status read_epilogue(const epilogue_attributes& a, infer_context& ctx, activation& kind, activation_params& params) {
    if (!parse_activation(a.activation, kind))
        return ctx.fail(status::unsupported_op,
                        "activation '{}' is not supported (expected Relu, Clip, LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Silu, Gelu or none)",
                        a.activation);
    const std::size_t n = a.activation_params.size();
    params = default_params(kind);
    if (n == 0) return status::ok;
    if (n != param_count(kind))
        return ctx.fail(status::invalid_model, "activation '{}' takes {} activation_params (or none for the defaults), got {}", a.activation,
                        param_count(kind), n);
    params.alpha = a.activation_params[0];
    if (n > 1) params.beta = a.activation_params[1];
    return status::ok;
}

/// Input i, when present, has exactly the shape of the output.
inline status expect_residual(infer_context& ctx, std::size_t i, const shape& out) {
    if (!ctx.has_input(i) || ctx.input_shape(i) == out) return status::ok;
    return ctx.fail(status::shape_mismatch, "input {} (Z, the residual) has shape {}; it must have the output's shape {} exactly", i,
                    ctx.input_shape(i), out);
}

inline status expect_float_inputs(infer_context& ctx) {
    for (std::size_t i = 0; i < ctx.input_count(); ++i)
        if (ctx.has_input(i))
            if (status s = ctx.expect_type(i, {dtype::float32}); s != status::ok) return s;
    return status::ok;
}

/// A fused op's infer(): its plan() gives the float32 output's shape.
template <class Op>
status infer(const typename Op::attributes& a, infer_context& ctx) {
    typename Op::args g;
    shape out;
    if (status s = Op::plan(a, ctx, g, out); s != status::ok) return s;
    ctx.set_output(0, dtype::float32, out);
    return status::ok;
}

/// The fast kernels' form of an epilogue (kernels/activation.hpp).
inline kernels::activation_spec fast_activation(activation kind, const activation_params& p) noexcept {
    return kernels::activation_spec{kind, p.alpha, p.beta};
}

} // namespace fused_detail

/// Conv + residual + activation (see the top of this file).
struct fused_conv {
    static constexpr std::string_view onnx_name = "FusedConv";
    static constexpr std::string_view onnx_domain = ember_domain;
    static constexpr op_flags flags = op_flags::none;

    struct attributes : conv::attributes, epilogue_attributes {};
    static constexpr auto onnx_attributes = std::tuple_cat(conv::onnx_attributes, fused_detail::epilogue_bindings);

    struct args {
        conv::args base;  ///< Conv's own arguments
        operand z;
        bool has_z = false;
        activation act = activation::none;
        activation_params params;
    };

    /// Checks the inputs and fills the geometry and the epilogue; shared by infer() and bind().
    static status plan(const attributes& a, infer_context& ctx, args& g, shape& out) {
        if (status s = conv::plan(a, ctx, g.base, 4); s != status::ok) return s;
        out = window_output_shape(ctx.input_shape(0), g.base.out_channels, g.base.geo);
        if (status s = fused_detail::expect_residual(ctx, 3, out); s != status::ok) return s;
        return fused_detail::read_epilogue(a, ctx, g.act, g.params);
    }

    static status infer(const attributes& a, infer_context& ctx) { return fused_detail::infer<fused_conv>(a, ctx); }

    // The definition: Conv's reference into y, then y = act(y + z) in place.
    static void reference(const args& g, const float* x, const float* w, const float* b, const float* z, float* y, const executor* ex) noexcept {
        conv::reference(g.base, x, w, b, y, ex);
        const auto planes = static_cast<std::size_t>(g.base.batch * g.base.out_channels);
        apply_epilogue(g.act, g.params, y, planes, static_cast<std::size_t>(g.base.geo.out_size()), nullptr, z, ex);
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.base.x), ctx.at<const float>(g.base.w), g.base.has_b ? ctx.at<const float>(g.base.b) : nullptr,
                  g.has_z ? ctx.at<const float>(g.z) : nullptr, ctx.at<float>(g.base.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        g.base.x = ctx.input(0);
        g.base.w = ctx.input(1);
        g.base.has_b = ctx.has_input(2);
        if (g.base.has_b) g.base.b = ctx.input(2);
        g.has_z = ctx.has_input(3);
        if (g.has_z) g.z = ctx.input(3);
        g.base.y = ctx.output(0);
        fast_epilogue post;
        post.act = fused_detail::fast_activation(g.act, g.params);
        post.has_bias = g.base.has_b;
        post.bias_per_row = true;
        post.bias = g.base.b;
        post.has_residual = g.has_z;
        post.residual = g.z;
        bool bound = false;
        if (status s = conv::bind_fast(g.base, ctx, post, bound); s != status::ok || bound) return s;
        ctx.emit(&kernel, g);
        return status::ok;
    }

    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        args g;
        shape out;
        if (plan(a, const_cast<infer_context&>(ctx), g, out) != status::ok) return 0;
        return conv::fast_workspace(g.base, ctx);
    }
};

/// Gemm + residual + activation (see the top of this file).
struct fused_gemm {
    static constexpr std::string_view onnx_name = "FusedGemm";
    static constexpr std::string_view onnx_domain = ember_domain;
    static constexpr op_flags flags = op_flags::none;

    struct attributes : gemm::attributes, epilogue_attributes {};
    static constexpr auto onnx_attributes = std::tuple_cat(gemm::onnx_attributes, fused_detail::epilogue_bindings);

    struct args {
        gemm::args base;  ///< Gemm's own arguments
        operand z;
        bool has_z = false;
        activation act = activation::none;
        activation_params params;
    };

    // Gemm's checks (ops/gemm.hpp), with the residual as input 3.
    static status plan(const attributes& a, infer_context& ctx, args& g, shape& out) {
        if (status s = gemm::check_shapes(a, ctx, out, 4); s != status::ok) return s;
        if (status s = fused_detail::expect_residual(ctx, 3, out); s != status::ok) return s;
        g.base.attrs = a;
        g.base.m = out[0];
        g.base.n = out[1];
        g.base.k = a.trans_a ? ctx.input_shape(0)[0] : ctx.input_shape(0)[1];
        return fused_detail::read_epilogue(a, ctx, g.act, g.params);
    }

    static status infer(const attributes& a, infer_context& ctx) { return fused_detail::infer<fused_gemm>(a, ctx); }

    // The definition: Gemm's reference into Y, then Y = act(Y + Z) in place.
    static void reference(const args& g, const float* A, const float* B, const float* C, const float* Z, float* Y, const executor* ex) noexcept {
        gemm::reference(g.base, A, B, C, Y, ex);
        apply_epilogue(g.act, g.params, Y, static_cast<std::size_t>(g.base.m), static_cast<std::size_t>(g.base.n), nullptr, Z, ex);
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.base.a), ctx.at<const float>(g.base.b), g.base.has_c ? ctx.at<const float>(g.base.c) : nullptr,
                  g.has_z ? ctx.at<const float>(g.z) : nullptr, ctx.at<float>(g.base.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        g.base.a = ctx.input(0);
        g.base.b = ctx.input(1);
        g.base.y = ctx.output(0);
        if (ctx.has_input(2)) {
            g.base.has_c = true;
            g.base.c = ctx.input(2);
            std::int64_t strides[max_rank] = {};
            broadcast_strides(ctx.input_shape(2), out, strides);
            g.base.c_row_stride = strides[0];
            g.base.c_col_stride = strides[1];
        }
        g.has_z = ctx.has_input(3);
        if (g.has_z) g.z = ctx.input(3);
        fast_gemm_args f;
        if (fast_plan(a, ctx, g, f)) {
            if (f.post.has_bias) f.post.bias = ctx.input(2);
            if (f.post.has_residual) f.post.residual = ctx.has_input(3) ? ctx.input(3) : ctx.input(2);
            return emit_fast_gemm(ctx, f, ctx.input_constant(0) != nullptr, ctx.input_constant(1) != nullptr);
        }
        ctx.emit(&kernel, g);
        return status::ok;
    }

    // Gemm's fast path (ops/gemm.hpp) with the activation, and Z as its residual; C must then be
    // a bias, as one residual is all the epilogue adds.
    static bool fast_plan(const attributes& a, const infer_context& ctx, const args& g, fast_gemm_args& f) noexcept {
        if (!gemm::fast_plan(a, ctx, &f)) return false;
        if (ctx.has_input(3)) {
            if (f.post.has_residual) return false;
            f.post.has_residual = true;
        }
        f.post.act = fused_detail::fast_activation(g.act, g.params);
        return true;
    }

    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        args g;
        shape out;
        fast_gemm_args f;
        if (plan(a, const_cast<infer_context&>(ctx), g, out) != status::ok || !fast_plan(a, ctx, g, f)) return 0;
        return fast_gemm_workspace(*ctx.kernels(), ctx.input_constant(0) == nullptr, ctx.input_constant(1) == nullptr);
    }
};

/// MatMul + bias + residual + activation (see the top of this file).
struct fused_matmul {
    static constexpr std::string_view onnx_name = "FusedMatMul";
    static constexpr std::string_view onnx_domain = ember_domain;
    static constexpr op_flags flags = op_flags::none;

    struct attributes : epilogue_attributes {};
    static constexpr auto onnx_attributes = fused_detail::epilogue_bindings;

    struct args {
        matmul::args base;  ///< MatMul's own arguments
        operand bias, z;
        bool has_bias = false, has_z = false;
        activation act = activation::none;
        activation_params params;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g, shape& out) {
        if (status s = ctx.expect_inputs(2, 4); s != status::ok) return s;
        if (status s = fused_detail::expect_float_inputs(ctx); s != status::ok) return s;
        if (status s = matmul::check_shapes(ctx, ctx.input_shape(0), ctx.input_shape(1), out, &g.base); s != status::ok) return s;
        if (ctx.has_input(2)) {
            const shape& bias = ctx.input_shape(2);
            if (ctx.input_shape(1).rank() < 2)
                return ctx.fail(status::shape_mismatch, "input 2 (bias) needs B of rank >= 2 (one bias per column), got B {}", ctx.input_shape(1));
            if (bias.rank() != 1 || bias[0] != g.base.n)
                return ctx.fail(status::shape_mismatch, "input 2 (bias) must be [{}] (one value per column of the output {}), got {}", g.base.n,
                                out, bias);
        }
        if (status s = fused_detail::expect_residual(ctx, 3, out); s != status::ok) return s;
        return fused_detail::read_epilogue(a, ctx, g.act, g.params);
    }

    static status infer(const attributes& a, infer_context& ctx) { return fused_detail::infer<fused_matmul>(a, ctx); }

    // The definition: MatMul's reference into Y, then Y = act(Y + bias + Z) in place.
    static void reference(const args& g, const float* A, const float* B, const float* bias, const float* Z, float* Y, const executor* ex) noexcept {
        matmul::reference(g.base, A, B, Y, ex);
        apply_epilogue(g.act, g.params, Y, static_cast<std::size_t>(g.base.batch_count * g.base.m), static_cast<std::size_t>(g.base.n),
                       bias, Z, ex);
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.base.a), ctx.at<const float>(g.base.b), g.has_bias ? ctx.at<const float>(g.bias) : nullptr,
                  g.has_z ? ctx.at<const float>(g.z) : nullptr, ctx.at<float>(g.base.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        g.base.a = ctx.input(0);
        g.base.b = ctx.input(1);
        g.base.y = ctx.output(0);
        g.has_bias = ctx.has_input(2);
        if (g.has_bias) g.bias = ctx.input(2);
        g.has_z = ctx.has_input(3);
        if (g.has_z) g.z = ctx.input(3);
        fast_gemm_args f;
        if (fast_plan(ctx, g, f)) {
            f.post.bias = g.bias;
            f.post.residual = g.z;
            return emit_fast_gemm(ctx, f, false, matmul::prepacks_b(ctx, f));
        }
        ctx.emit(&kernel, g);
        return status::ok;
    }

    // MatMul's fast path (ops/matmul.hpp) with the bias per column, Z as the residual and the
    // activation; batches stay one GEMM each, with C (and Z) advancing by M x N per batch.
    static bool fast_plan(const infer_context& ctx, const args& g, fast_gemm_args& f) noexcept {
        if (!matmul::fast_plan(ctx, f)) return false;
        f.post.has_bias = ctx.has_input(2);
        f.post.has_residual = ctx.has_input(3);
        f.post.act = fused_detail::fast_activation(g.act, g.params);
        return true;
    }

    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        args g;
        shape out;
        fast_gemm_args f;
        if (plan(a, const_cast<infer_context&>(ctx), g, out) != status::ok || !fast_plan(ctx, g, f)) return 0;
        return fast_gemm_workspace(*ctx.kernels(), true, !matmul::prepacks_b(ctx, f));
    }
};

/// QLinearConv with an optional quantized Relu or Clip (qconv_detail::quantized_clamp):
/// QuantizeLinear(Relu(y)) = max(QuantizeLinear(y), y_zp) for a positive y_scale, and
/// QuantizeLinear(Clip(y, min, max)) = the quantized y clamped between the quantized min and max.
/// activation: "", "Relu" or "Clip" (activation_params min, max; the float range's ends when
/// absent); Clip needs y_scale and y_zero_point constant.
struct fused_qlinear_conv {
    static constexpr std::string_view onnx_name = "FusedQLinearConv";
    static constexpr std::string_view onnx_domain = ember_domain;
    static constexpr op_flags flags = op_flags::none;

    struct attributes : qlinear_conv::attributes, epilogue_attributes {};
    static constexpr auto onnx_attributes = std::tuple_cat(qlinear_conv::onnx_attributes, fused_detail::epilogue_bindings);

    static status check(const attributes& a, infer_context& ctx, qconv_detail::quantized_clamp& act) {
        activation kind = activation::none;
        activation_params params;
        if (status s = fused_detail::read_epilogue(a, ctx, kind, params); s != status::ok) return s;
        if (kind != activation::none && kind != activation::relu && kind != activation::clip)
            return ctx.fail(status::unsupported_op, "activation '{}' is not supported (expected Relu, Clip or none)", a.activation);
        act.relu = kind == activation::relu;
        act.clip = kind == activation::clip;
        if (!act.clip) return status::ok;
        const tensor* ys = ctx.input_count() > 7 ? ctx.input_constant(6) : nullptr;
        const tensor* yz = ctx.input_count() > 7 ? ctx.input_constant(7) : nullptr;
        if (!ys || !yz || ys->type() != dtype::float32 || ys->size() != 1 || yz->size() != 1)
            return ctx.fail(status::unsupported_op, "activation Clip needs a constant one-value y_scale and y_zero_point");
        const float scale = ys->data<float>()[0];
        const auto quantize = [&](auto zp, float v) { return static_cast<std::int32_t>(quant_detail::quantize_value(v, scale, zp)); };
        if (yz->type() == dtype::int8) {
            act.lo = quantize(yz->data<std::int8_t>()[0], params.alpha);
            act.hi = quantize(yz->data<std::int8_t>()[0], params.beta);
        } else if (yz->type() == dtype::uint8) {
            act.lo = quantize(yz->data<std::uint8_t>()[0], params.alpha);
            act.hi = quantize(yz->data<std::uint8_t>()[0], params.beta);
        } else {
            return ctx.fail(status::invalid_model, "y_zero_point has dtype {}, expected uint8 or int8", yz->type());
        }
        return status::ok;
    }
    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = qlinear_conv::infer(a, ctx); s != status::ok) return s;
        qconv_detail::quantized_clamp act;
        return check(a, ctx, act);
    }
    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) { return qlinear_conv::workspace_bytes(a, ctx); }
    static status bind(const attributes& a, bind_context& ctx) {
        qconv_detail::quantized_clamp act;
        if (status s = check(a, ctx, act); s != status::ok) return s;
        return qlinear_conv::bind_with(a, ctx, act);
    }
};

/// The dequantized integer convolution (see the top of this file): QLinearConv's x and w
/// operands, an int32 bias quantized with x_scale * w_scale, a float32 output with the residual
/// and activation of FusedConv. Runs on the INT8 GEMM with the float epilogue.
struct fused_qconv {
    static constexpr std::string_view onnx_name = "FusedQConv";
    static constexpr std::string_view onnx_domain = ember_domain;
    static constexpr op_flags flags = op_flags::none;

    struct attributes : qconv_detail::attributes, epilogue_attributes {};
    static constexpr auto onnx_attributes = std::tuple_cat(qlinear_conv::onnx_attributes, fused_detail::epilogue_bindings);

    struct args {
        qconv_detail::geometry geo;
        operand x, x_scale, x_zp, w, w_scale, w_zp, b, z, y;
        bool has_b = false, has_z = false, w_scale_per_channel = false, w_zp_per_channel = false;
        activation act = activation::none;
        activation_params params;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g, shape& out) {
        if (status s = ctx.expect_inputs(6, 8); s != status::ok) return s;
        if (status s = qconv_detail::plan_quantized(a, ctx, 6, g.geo, g.w_scale_per_channel, g.w_zp_per_channel); s != status::ok) return s;
        const std::int64_t M = g.geo.out_channels;
        if (ctx.has_input(7))
            if (status s = ctx.expect_type(7, {dtype::float32}); s != status::ok) return s;
        out = window_output_shape(ctx.input_shape(0), M, g.geo.geo);
        if (status s = fused_detail::expect_residual(ctx, 7, out); s != status::ok) return s;
        return fused_detail::read_epilogue(a, ctx, g.act, g.params);
    }

    static status infer(const attributes& a, infer_context& ctx) { return fused_detail::infer<fused_qconv>(a, ctx); }

    // The definition: the exact integer sum plus the bias, times x_scale * w_scale[m] (float, as
    // the fast path's multiplier), to float; then y = act(y + z) in place. b, z may be null.
    template <class X, class W>
    static void reference(const args& g, const X* x, float x_scale, X x_zp, const W* w, const float* w_scale, const W* w_zp, const std::int32_t* b,
                          const float* z, float* y, const executor* ex) noexcept {
        qconv_detail::accumulate(
            g.geo, x, static_cast<std::int64_t>(x_zp), w, w_zp, g.w_zp_per_channel,
            [&](std::int64_t i, std::int64_t m, std::int64_t acc) {
                const float scale = x_scale * w_scale[g.w_scale_per_channel ? m : 0];
                y[i] = static_cast<float>(static_cast<double>(acc + (b ? b[m] : 0)) * static_cast<double>(scale));
            },
            ex);
        const auto planes = static_cast<std::size_t>(g.geo.batch * g.geo.out_channels);
        apply_epilogue(g.act, g.params, y, planes, static_cast<std::size_t>(g.geo.geo.out_size()), nullptr, z, ex);
    }

    template <class X, class W>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<X, W>(g, ctx.at<const X>(g.x), *ctx.at<const float>(g.x_scale), *ctx.at<const X>(g.x_zp), ctx.at<const W>(g.w),
                        ctx.at<const float>(g.w_scale), ctx.at<const W>(g.w_zp), g.has_b ? ctx.at<const std::int32_t>(g.b) : nullptr,
                        g.has_z ? ctx.at<const float>(g.z) : nullptr, ctx.at<float>(g.y), ctx.exec);
    }

    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        args g;
        shape out;
        if (plan(a, const_cast<infer_context&>(ctx), g, out) != status::ok) return 0;
        return qconv_detail::fast_workspace(g.geo, ctx);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        bool usable = false;
        const qconv_detail::fast_constants c = qconv_detail::quantized_constants(ctx, 6, usable);
        if (usable) {
            qconv_detail::float_epilogue post;
            post.z_input = 7;
            post.act = g.act;
            post.params = g.params;
            bool bound = false;
            if (status s = qconv_detail::bind_fast(g.geo, ctx, c, ctx.input_type(0), dtype::float32, {}, bound, &post); s != status::ok || bound)
                return s;
        }
        qconv_detail::bind_quantized_operands(ctx, 6, g);
        g.has_z = ctx.has_input(7);
        if (g.has_z) g.z = ctx.input(7);
        g.y = ctx.output(0);
        ctx.emit(quant_detail::pick_u8_i8(ctx.input_type(0),
                                          [&](auto xt) {
                                              return quant_detail::pick_u8_i8(ctx.input_type(3), [&](auto wt) -> kernel_fn {
                                                  return &kernel<decltype(xt), decltype(wt)>;
                                              });
                                          }),
                 g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
