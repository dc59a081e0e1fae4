// SPDX-License-Identifier: Apache-2.0
// QDQ folding (compile_options::passes.qdq_folding): the integer convolution hidden in a QDQ
// model, in the form ONNX Runtime's QDQ quantizer and ember-quantize write,
//
//   Conv(DequantizeLinear(xq, xs, xz),
//        DequantizeLinear(wq, ws, wz?),        wq constant
//        DequantizeLinear(bq, xs * ws, 0?))    int32, optional (or a float constant)
//   -> [Relu or Clip] -> QuantizeLinear(ys, yz) -> yq
//
// becomes one QLinearConv(xq, xs, xz, wq, ws, wz, ys, yz, bq) (FusedQLinearConv with activation
// "Relu" or "Clip" where one was there: quantizing Relu(y) is clamping the quantized y below at
// yz, quantizing Clip(y) clamping it between the quantized bounds; Clip's bounds constant),
// which runs on the INT8 kernels. A Conv of the same inputs whose output is not quantized (it
// feeds a residual Add, a pooling, the graph's end: Q/DQ sit around the inputs of Conv only)
// becomes FusedQConv(xq, xs, xz, wq, ws, wz, bq), which writes the float output from the same
// integer GEMM (epilogue fusion then gives it the Add and the activation). Either computes what
// the float graph computes, up to the rounding of one multiply: Conv sums exactly the products the integer sums hold (each DQ is exact in
// float up to its own rounding) and the bias must be dequantized with exactly xs * ws (checked).
// A float bias (torch exports share biases through Identity nodes, which quantizers then leave
// float) is quantized here with xs * ws, as ONNX Runtime's quantizer does: off by at most half of
// xs * ws, a small fraction of one output step.
//
// Conditions: a depth (C/group * kernel size) of at least 16 or a depthwise convolution, every scale and zero point
// constant, x's zero point 8-bit, xs / xz / ys / yz per tensor, ws per tensor or per output
// channel (DequantizeLinear's axis 0), the float values between the nodes read by the pattern
// only and no graph outputs. The DequantizeLinear nodes stay (a later dead-code pass
// removes those nothing else reads).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "ember/compile/passes/rewrite.hpp"
#include "ember/config.hpp"
#include "ember/kernels/dwconv_f32.hpp"
#include "ember/ops/fused.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

class qdq_folder {
public:
    explicit qdq_folder(graph_rewrite& rw) : rw_(rw) {}

    std::size_t run() {
        std::size_t folded = 0;
        for (std::size_t i = 0; i < rw_.node_count(); ++i)
            if (fold_at(i)) ++folded;
        return folded;
    }

private:
    static constexpr std::size_t min_depth = 16;

    struct dq {
        value_id q = no_value, scale = no_value, zero_point = no_value;
        std::int64_t axis = 1;
    };

    /// v is made by a DequantizeLinear (standard form, one output): its operands.
    bool dequantized(value_id v, dq& d) const {
        const std::int32_t p = rw_.producer(v);
        if (p < 0 || !rw_.is(static_cast<std::size_t>(p), "DequantizeLinear")) return false;
        const node& n = rw_.at(static_cast<std::size_t>(p));
        if (n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1) return false;
        d.q = n.inputs[0];
        d.scale = n.inputs[1];
        d.zero_point = n.inputs.size() > 2 ? n.inputs[2] : no_value;
        d.axis = 1;
        for (const attribute& a : n.attributes) {
            if (a.name != "axis" || a.kind != attribute_kind::integer) return false;
            d.axis = a.i;
        }
        return true;
    }

    /// A constant with exactly one element (per tensor).
    const tensor* single(value_id v) const {
        const tensor* t = rw_.constant(v);
        return t && t->size() == 1 ? t : nullptr;
    }

    bool fold_at(std::size_t i) {
        if (!rw_.is(i, "Conv")) return false;
        const node& conv = rw_.at(i);
        if (conv.outputs.size() != 1 || conv.inputs.size() < 2 || conv.inputs.size() > 3 || conv.outputs[0] == no_value) return false;
        dq x, w, b;
        if (!dequantized(conv.inputs[0], x) || !dequantized(conv.inputs[1], w)) return false;
        // x: per tensor, 8-bit (the type is checked by QLinearConv itself once it is built)
        const tensor* xs = single(x.scale);
        const tensor* xz = single(x.zero_point);
        if (!xs || !xz || xs->type() != dtype::float32 || (xz->type() != dtype::uint8 && xz->type() != dtype::int8)) return false;
        // w: a constant, 8-bit, its scale per tensor or per output channel on axis 0
        const tensor* wq = rw_.constant(w.q);
        const tensor* ws = rw_.constant(w.scale);
        if (!wq || !ws || ws->type() != dtype::float32 || (wq->type() != dtype::int8 && wq->type() != dtype::uint8) || wq->rank() < 3) return false;
        // depthwise convolutions (one input channel per group, a group per output channel, up to
        // 64 taps) run on the INT8 depthwise kernel (kernels/dwconv_u8.hpp); other narrow grouped
        // convolutions stay float: with a depth of C/group * kernel < min_depth per output the
        // INT8 GEMM has nothing to amortise its packing over, and the FP32 depthwise kernel is
        // several times faster (mobilenet_v2's QDQ model: 27 ms with its depthwise convs on the
        // GEMM, 7 ms FP32). From 16 on the INT8 GEMM wins, mostly by writing bytes:
        // mobilenet_v2's 16-channel 1x1 expand conv at 112x112 and its 3-channel 3x3 stem (depth
        // 27) fold, about 0.7 ms of its 5.5 (the threshold 32 left them float)
        const std::size_t depth = wq->size() / static_cast<std::size_t>(wq->dims()[0]);
        if (depth < min_depth && !(depthwise(conv, *wq) && depth <= kernels::dwconv_detail::padded_max_taps)) return false;
        const std::int64_t M = wq->dims()[0];
        const bool per_channel = ws->size() != 1;
        if (per_channel && (ws->rank() != 1 || ws->dims()[0] != M || w.axis != 0)) return false;
        if (w.zero_point != no_value && !rw_.constant(w.zero_point)) return false;
        // the bias: int32 dequantized with exactly xs * ws and zero point 0
        value_id bq = no_value;
        const tensor* float_bias = conv.inputs.size() == 3 ? rw_.constant(conv.inputs[2]) : nullptr;
        if (float_bias) {
            if (float_bias->type() != dtype::float32 || float_bias->size() != static_cast<std::size_t>(M)) return false;
        } else if (conv.inputs.size() == 3 && conv.inputs[2] != no_value) {
            if (!dequantized(conv.inputs[2], b)) return false;
            const tensor* bt = rw_.constant(b.q);
            const tensor* bs = rw_.constant(b.scale);
            if (!bt || bt->type() != dtype::int32 || !bs || bs->type() != dtype::float32 || (bs->size() != 1 && bs->size() != ws->size())) return false;
            if (bs->size() != 1 && b.axis != 0) return false;
            if (b.zero_point != no_value) {
                const tensor* bz = rw_.constant(b.zero_point);
                if (!bz || bz->type() != dtype::int32) return false;
                for (std::size_t k = 0; k < bz->size(); ++k)
                    if (bz->data<std::int32_t>()[k] != 0) return false;
            }
            const float x_scale = xs->data<float>()[0];
            for (std::size_t k = 0; k < ws->size(); ++k) {
                const float want = x_scale * ws->data<float>()[k];
                const float have = bs->data<float>()[bs->size() == 1 ? 0 : k];
                if (std::fabs(have - want) > 1e-6f * std::fabs(want)) return false;
            }
            bq = b.q;
        }
        // the output: [Relu or Clip ->] QuantizeLinear with per-tensor constants, the values
        // between read by the pattern only; else the output stays float (FusedQConv)
        std::int32_t act = -1, quantize = -1;
        float clip_lo = 0.0f, clip_hi = 0.0f;
        value_id cur = conv.outputs[0];
        if (rw_.single_use(cur)) {
            std::uint32_t next = rw_.consumers(cur)[0];
            if (rw_.is(next, "Relu") || rw_.is(next, "Clip")) {
                const node& r = rw_.at(next);
                const bool bounds = rw_.is(next, "Relu") ? r.inputs.size() == 1 : clip_bounds(rw_, r, clip_lo, clip_hi);
                if (bounds && r.inputs[0] == cur && r.outputs.size() == 1 && r.outputs[0] != no_value && rw_.single_use(r.outputs[0])) {
                    act = static_cast<std::int32_t>(next);
                    cur = r.outputs[0];
                    next = rw_.consumers(cur)[0];
                }
            }
            if (rw_.is(next, "QuantizeLinear")) {
                const node& q = rw_.at(next);
                const tensor* ys = q.inputs.size() == 3 ? single(q.inputs[1]) : nullptr;
                const tensor* yz = q.inputs.size() == 3 ? single(q.inputs[2]) : nullptr;
                if (ys && yz && q.outputs.size() == 1 && q.inputs[0] == cur && q.outputs[0] != no_value && axis_only(q) &&
                    ys->type() == dtype::float32 && ys->data<float>()[0] > 0.0f)
                    quantize = static_cast<std::int32_t>(next);
            }
        }
        if (quantize < 0) act = -1;  // the activation stays a node; epilogue fusion takes it

        // rewrite: the Conv node becomes the integer convolution
        value_id wz = w.zero_point;
        if (wz == no_value) {
            result<tensor> zero = tensor::create(wq->type(), shape{});  // absent: 0 of w's type (ONNX's default), zero-filled
            if (!zero) return false;
            wz = rw_.add_constant(g_name(w.q) + "_zero_point", std::move(*zero));
        }
        if (float_bias) {
            // quantized with x_scale * w_scale, as ONNX Runtime's quantizer does
            result<tensor> q32 = tensor::create(dtype::int32, shape{M});
            if (!q32) return false;
            const double x_scale = xs->data<float>()[0];
            for (std::int64_t m = 0; m < M; ++m) {
                const double step = x_scale * ws->data<float>()[per_channel ? m : 0];
                const double v = step > 0.0 ? ops::quant_detail::round_half_even(float_bias->data<float>()[m] / step) : 0.0;
                if (!(v >= -2147483648.0 && v <= 2147483647.0)) return false;
                q32->data<std::int32_t>()[m] = static_cast<std::int32_t>(v);
            }
            bq = rw_.add_constant(g_name(conv.inputs[2]) + "_quantized", std::move(*q32));
        }
        const value_id xq = x.q, xscale = x.scale, xzero = x.zero_point, wqv = w.q, wscale = w.scale;
        if (quantize < 0) {  // float output
            node& f = rw_.at(i);
            f.op_type = "FusedQConv";
            f.domain = std::string(ops::ember_domain);
            const value_id inputs[7] = {xq, xscale, xzero, wqv, wscale, wz, bq};
            for (std::size_t k = 0; k < 7; ++k) rw_.set_input(i, k, inputs[k]);
            while (!f.inputs.empty() && f.inputs.back() == no_value) f.inputs.pop_back();
            return true;
        }
        const node& q = rw_.at(static_cast<std::size_t>(quantize));
        const value_id yq = q.outputs[0], yscale = q.inputs[1], yzero = q.inputs[2];
        const bool clip = act >= 0 && rw_.is(static_cast<std::size_t>(act), "Clip");
        rw_.remove_node(static_cast<std::size_t>(quantize));
        if (act >= 0) rw_.remove_node(static_cast<std::size_t>(act));
        node& f = rw_.at(i);
        if (act >= 0) {
            f.op_type = "FusedQLinearConv";
            f.domain = std::string(ops::ember_domain);
            set_attribute(f, attribute::of("activation", std::string(clip ? "Clip" : "Relu")));
            if (clip) set_attribute(f, attribute::of("activation_params", std::vector<float>{clip_lo, clip_hi}));
        } else {
            f.op_type = "QLinearConv";
            f.domain.clear();
        }
        const value_id inputs[9] = {xq, xscale, xzero, wqv, wscale, wz, yscale, yzero, bq};
        for (std::size_t k = 0; k < 9; ++k) rw_.set_input(i, k, inputs[k]);
        while (!f.inputs.empty() && f.inputs.back() == no_value) f.inputs.pop_back();
        rw_.set_output(i, 0, yq);
        return true;
    }

    /// conv (weights w) has one input channel per group and a group per output channel.
    static bool depthwise(const node& conv, const tensor& w) {
        std::int64_t group = 1;
        for (const attribute& a : conv.attributes)
            if (a.name == "group" && a.kind == attribute_kind::integer) group = a.i;
        return w.dims()[1] == 1 && group == w.dims()[0];
    }

    static bool axis_only(const node& q) {
        for (const attribute& a : q.attributes)
            if (a.name != "axis") return false;
        return true;
    }

    std::string g_name(value_id v) const { return rw_.g().values[v].name; }

    graph_rewrite& rw_;
};

/// Folds QDQ convolutions into QLinearConv / FusedQLinearConv / FusedQConv (before shape
/// inference: the pattern is read from the graph's constants). Returns how many it folded.
inline std::size_t fold_qdq(graph_rewrite& rw) { return qdq_folder(rw).run(); }

} // namespace detail
EMBER_NAMESPACE_END
