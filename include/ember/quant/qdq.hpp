// SPDX-License-Identifier: Apache-2.0
// The QDQ rewrite: an FP32 graph plus calibrated activation ranges (quant/calibrate.hpp) -> the
// same graph with QuantizeLinear/DequantizeLinear pairs around the inputs of Conv, MatMul and
// Gemm, in the form ONNX Runtime's QDQ quantizer writes (and ember's and ONNX Runtime's
// graph optimisers turn into integer kernels):
//
//   activation x:  x -> QuantizeLinear(x_scale, x_zero_point: uint8) -> DequantizeLinear -> op
//                  uint8, asymmetric: [min(lo, 0), max(hi, 0)] onto [0, 255]
//   weight w:      w_quantized (int8 initializer) -> DequantizeLinear(w_scale, 0) -> op
//                  int8, symmetric: scale = max |w| / 127, per tensor or, with per_channel, per
//                  output channel (Conv: axis 0 of [M, C/g, kh, kw]; Gemm: axis 0 of B when
//                  transB, else 1; MatMul: the last axis of a 2-D B)
//   bias b:        b_quantized (int32, scale x_scale * w_scale, zero point 0) -> DequantizeLinear
//                  (Conv's B, Gemm's 1-D C)
//
// A node is rewritten only when both its data inputs can be: constants, or activations with a
// range. Activations feeding several nodes get one Q/DQ pair. Names follow ONNX Runtime's
// (`x_QuantizeLinear_Output`, `w_quantized`, `w_scale`, ...), with '_' appended until unique.
// The new nodes come right before the node they feed, so the graph stays in topological order;
// values nothing uses any more (the float weights replaced) are dropped and the ids renumbered.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/span.hpp"
#include "ember/core/tensor.hpp"
#include "ember/graph/graph.hpp"
#include "ember/quant/calibrate.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace quant {

/// How quantize_qdq() quantizes.
struct qdq_options {
    /// Weights with one scale per output channel (needs opset 13) instead of one per tensor.
    bool per_channel = false;
    /// Nodes (by name) left in float.
    std::vector<std::string> keep_fp32;
    /// Biases as int32 with scale x_scale * w_scale (ONNX Runtime's QDQ form); off leaves them float.
    bool quantize_bias = true;
};

/// Scale and zero point of an affine uint8 quantization.
struct uint8_params {
    float scale = 1.0f;
    std::uint8_t zero_point = 0;
};

/// ONNX Runtime's asymmetric uint8 parameters for a range: the range is widened to hold 0,
/// scale = (max - min) / 255, zero_point = round(-min / scale) in [0, 255]; an empty range
/// gives scale 1, zero point 0.
[[nodiscard]] inline uint8_params activation_params(float lo, float hi) noexcept {
    const float rmin = std::min(lo, 0.0f), rmax = std::max(hi, 0.0f);
    uint8_params p;
    const float scale = (rmax - rmin) / 255.0f;
    if (!(scale > 0.0f) || !std::isfinite(scale)) return p;
    p.scale = scale;
    const double zp = std::nearbyint(-static_cast<double>(rmin) / static_cast<double>(scale));
    p.zero_point = static_cast<std::uint8_t>(std::clamp(zp, 0.0, 255.0));
    return p;
}

/// The symmetric int8 scale of weights whose largest magnitude is absmax: absmax / 127 (1 when
/// absmax is 0, so the weights quantize to 0).
[[nodiscard]] inline float weight_scale(float absmax) noexcept { return absmax > 0.0f && std::isfinite(absmax) ? absmax / 127.0f : 1.0f; }

namespace detail {

inline double round_half_even(double v) noexcept { return std::nearbyint(v); }  // the default FP rounding mode rounds ties to even

class qdq_rewriter {
public:
    qdq_rewriter(const graph& g, span<const value_range> ranges, const qdq_options& o) : src_(g), options_(o), out_(g) {
        for (const value_range& r : ranges) ranges_.emplace(r.name, r);
        for (const value& v : g.values) names_.insert(v.name);
        for (const node& n : g.nodes)
            if (!n.name.empty()) names_.insert(n.name);
    }

    result<graph> run() {
        const std::int64_t opset = src_.opset_version("", 17);
        const std::int64_t needed = options_.per_channel ? 13 : 10;
        if (opset < needed)
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("quantize: {} needs opset {} or later; the model's opset is {}",
                                                    options_.per_channel ? "per-channel quantization (DequantizeLinear's axis)" : "QuantizeLinear",
                                                    needed, opset)};
        const std::size_t count = src_.nodes.size();
        std::vector<std::vector<node>> before(count);
        for (std::size_t i = 0; i < count; ++i) {
            const node& n = src_.nodes[i];
            if (!quantizable_op(n) || kept_fp32(n, span<const std::string>(options_.keep_fp32.data(), options_.keep_fp32.size()))) continue;
            if (!can_quantize(n)) continue;
            if (status s = rewrite(i, before[i]); s != status::ok) return error_;
        }
        // Splice the new nodes in before their consumers and renumber the producers.
        std::vector<node> nodes;
        nodes.reserve(count + added_);
        for (std::size_t i = 0; i < count; ++i) {
            for (node& n : before[i]) nodes.push_back(std::move(n));
            nodes.push_back(std::move(out_.nodes[i]));
        }
        out_.nodes = std::move(nodes);
        drop_unused();
        return std::move(out_);
    }

private:
    /// Removes the values nothing reads or produces any more (the float weights that were
    /// replaced, so the written model does not carry them) and renumbers the rest in order.
    void drop_unused() {
        std::vector<bool> used(out_.values.size(), false);
        for (const node& n : out_.nodes) {
            for (value_id v : n.inputs)
                if (v != no_value) used[v] = true;
            for (value_id v : n.outputs)
                if (v != no_value) used[v] = true;
        }
        for (value_id v : out_.inputs) used[v] = true;
        for (value_id v : out_.outputs) used[v] = true;
        std::vector<value_id> id(out_.values.size(), no_value);
        std::vector<value> values;
        std::vector<tensor> constants;
        for (std::size_t v = 0; v < out_.values.size(); ++v) {
            if (!used[v]) continue;
            id[v] = static_cast<value_id>(values.size());
            value val = std::move(out_.values[v]);
            if (val.kind == value_kind::constant) {
                constants.push_back(std::move(out_.constants[static_cast<std::size_t>(val.constant)]));
                val.constant = static_cast<std::int32_t>(constants.size() - 1);
            }
            values.push_back(std::move(val));
        }
        for (std::size_t i = 0; i < out_.nodes.size(); ++i) {
            for (value_id& v : out_.nodes[i].inputs)
                if (v != no_value) v = id[v];
            for (value_id& v : out_.nodes[i].outputs)
                if (v != no_value) {
                    v = id[v];
                    values[v].producer = static_cast<std::int32_t>(i);
                }
        }
        for (value_id& v : out_.inputs) v = id[v];
        for (value_id& v : out_.outputs) v = id[v];
        out_.values = std::move(values);
        out_.constants = std::move(constants);
    }

    const tensor* float_constant(value_id v) const noexcept {
        const tensor* t = src_.constant_of(v);
        return t && t->type() == dtype::float32 ? t : nullptr;
    }

    bool can_quantize(const node& n) const {
        if (n.inputs.size() < quantized_operands) return false;
        for (std::size_t k = 0; k < quantized_operands; ++k) {
            const value_id v = n.inputs[k];
            if (v == no_value) return false;
            if (src_.values[v].kind == value_kind::constant) {
                if (!float_constant(v)) return false;
            } else if (!ranges_.count(src_.values[v].name)) {
                return false;
            }
        }
        return true;
    }

    std::string unique(std::string name) {
        while (names_.count(name)) name += '_';
        names_.insert(name);
        return name;
    }

    value_id add_constant(const std::string& base, tensor t) {
        value v;
        v.name = unique(base);
        v.kind = value_kind::constant;
        v.type = t.type();
        v.declared = partial_shape(t.dims());
        v.constant = static_cast<std::int32_t>(out_.constants.size());
        out_.constants.push_back(std::move(t));
        out_.values.push_back(std::move(v));
        return static_cast<value_id>(out_.values.size() - 1);
    }

    /// A node with one output named `output`; its producer index is set when the nodes are spliced.
    value_id add_node(std::vector<node>& list, const std::string& op, const std::string& node_name, const std::string& output,
                      std::vector<value_id> inputs, dtype type, std::vector<attribute> attrs = {}) {
        value v;
        v.name = unique(output);
        v.kind = value_kind::node_output;
        v.type = type;
        out_.values.push_back(std::move(v));
        const auto id = static_cast<value_id>(out_.values.size() - 1);
        node n;
        n.name = unique(node_name);
        n.op_type = op;
        n.inputs = std::move(inputs);
        n.outputs = {id};
        n.attributes = std::move(attrs);
        list.push_back(std::move(n));
        ++added_;
        return id;
    }

    template <class T>
    static tensor filled(const shape& dims, T v) {
        result<tensor> t = tensor::create(dtype_of<T>, dims);
        if (!t) return tensor();
        T* p = t->template data<T>();
        for (std::size_t i = 0; i < t->size(); ++i) p[i] = v;
        return std::move(*t);
    }

    status oom(const std::string& what) {
        error_ = error_info{status::out_of_memory, -1, ember::detail::format("quantize: out of memory for {}", what)};
        return error_.code;
    }

    /// The DQ output that stands for activation v (made once).
    status activation(value_id v, std::vector<node>& list, value_id& dq, uint8_params& params) {
        const std::string& name = src_.values[v].name;
        const value_range& r = ranges_.at(name);
        params = activation_params(r.min, r.max);
        if (auto it = act_dq_.find(v); it != act_dq_.end()) {
            dq = it->second;
            return status::ok;
        }
        tensor scale = filled<float>(shape{}, params.scale), zp = filled<std::uint8_t>(shape{}, params.zero_point);
        if (scale.empty() || zp.empty()) return oom("the scale of '" + name + "'");
        const value_id s = add_constant(name + "_scale", std::move(scale));
        const value_id z = add_constant(name + "_zero_point", std::move(zp));
        const value_id q = add_node(list, "QuantizeLinear", name + "_QuantizeLinear", name + "_QuantizeLinear_Output", {v, s, z}, dtype::uint8);
        dq = add_node(list, "DequantizeLinear", name + "_DequantizeLinear", name + "_DequantizeLinear_Output", {q, s, z}, dtype::float32);
        act_dq_.emplace(v, dq);
        return status::ok;
    }

    /// Weight w quantized along `axis` (-1: per tensor); its scales go to `scales`.
    status weight(value_id v, std::int64_t axis, std::vector<node>& list, value_id& dq, std::vector<float>& scales) {
        const tensor& w = *float_constant(v);
        const std::string& name = src_.values[v].name;
        const shape& dims = w.dims();
        const std::int64_t channels = axis >= 0 ? dims[static_cast<std::size_t>(axis)] : 1;
        std::int64_t inner = 1;
        if (axis >= 0)
            for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < dims.rank(); ++d) inner *= dims[d];
        const float* x = w.data<float>();
        const std::size_t n = w.size();
        auto channel = [&](std::size_t i) { return axis >= 0 ? static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % channels) : 0; };
        std::vector<float> absmax(static_cast<std::size_t>(channels), 0.0f);
        for (std::size_t i = 0; i < n; ++i) absmax[channel(i)] = std::max(absmax[channel(i)], std::fabs(x[i]));
        scales.resize(absmax.size());
        for (std::size_t c = 0; c < absmax.size(); ++c) scales[c] = weight_scale(absmax[c]);
        result<tensor> q = tensor::create(dtype::int8, dims);
        if (!q) return oom("weight '" + name + "'");
        std::int8_t* qp = q->data<std::int8_t>();
        for (std::size_t i = 0; i < n; ++i) {
            const double r = round_half_even(static_cast<double>(x[i]) / static_cast<double>(scales[channel(i)]));
            qp[i] = static_cast<std::int8_t>(std::clamp(r, -127.0, 127.0));
        }
        const shape sdims = axis >= 0 ? shape{channels} : shape{};
        result<tensor> st = tensor::copy_of<float>(sdims, span<const float>(scales.data(), scales.size()));
        tensor zp = filled<std::int8_t>(sdims, 0);
        if (!st || zp.empty()) return oom("the scales of '" + name + "'");
        const value_id qv = add_constant(name + "_quantized", std::move(*q));
        const value_id s = add_constant(name + "_scale", std::move(*st));
        const value_id z = add_constant(name + "_zero_point", std::move(zp));
        std::vector<attribute> attrs;
        if (axis >= 0) attrs.push_back(attribute::of("axis", axis));
        dq = add_node(list, "DequantizeLinear", name + "_DequantizeLinear", name + "_DequantizeLinear_Output", {qv, s, z}, dtype::float32,
                      std::move(attrs));
        return status::ok;
    }

    /// Bias b as int32 with scale x_scale * w_scale[c] (per channel when w_scales has more than one).
    status bias(value_id v, float x_scale, const std::vector<float>& w_scales, std::vector<node>& list, value_id& dq) {
        const tensor& b = *float_constant(v);
        const std::string& name = src_.values[v].name;
        const bool per_channel = w_scales.size() > 1;
        std::vector<float> scales(per_channel ? w_scales.size() : 1);
        for (std::size_t c = 0; c < scales.size(); ++c) scales[c] = x_scale * w_scales[c];
        result<tensor> q = tensor::create(dtype::int32, b.dims());
        if (!q) return oom("bias '" + name + "'");
        const float* x = b.data<float>();
        std::int32_t* qp = q->data<std::int32_t>();
        constexpr double lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
        for (std::size_t i = 0; i < b.size(); ++i) {
            const float s = scales[per_channel ? i : 0];
            const double r = s > 0.0f ? round_half_even(static_cast<double>(x[i]) / static_cast<double>(s)) : 0.0;
            qp[i] = static_cast<std::int32_t>(std::clamp(r, lo, hi));
        }
        const shape sdims = per_channel ? shape{static_cast<std::int64_t>(scales.size())} : shape{};
        result<tensor> st = tensor::copy_of<float>(sdims, span<const float>(scales.data(), scales.size()));
        tensor zp = filled<std::int32_t>(sdims, 0);
        if (!st || zp.empty()) return oom("the scales of '" + name + "'");
        const value_id qv = add_constant(name + "_quantized", std::move(*q));
        const value_id s = add_constant(name + "_quantized_scale", std::move(*st));
        const value_id z = add_constant(name + "_quantized_zero_point", std::move(zp));
        std::vector<attribute> attrs;
        if (per_channel) attrs.push_back(attribute::of("axis", std::int64_t{0}));
        dq = add_node(list, "DequantizeLinear", name + "_quantized_DequantizeLinear", name + "_quantized_DequantizeLinear_Output", {qv, s, z},
                      dtype::float32, std::move(attrs));
        return status::ok;
    }

    /// The output-channel axis of node n's weight input (input 1), or -1 for per tensor.
    std::int64_t weight_axis(const node& n, const tensor& w) const {
        if (!options_.per_channel) return -1;
        if (n.op_type == "Conv") return w.rank() >= 3 ? 0 : -1;
        if (n.op_type == "Gemm") {
            const attribute* t = n.find_attribute("transB");
            return w.rank() == 2 ? (t && t->i != 0 ? 0 : 1) : -1;
        }
        return w.rank() == 2 ? 1 : -1;  // MatMul: B is [K, N]
    }

    status rewrite(std::size_t i, std::vector<node>& list) {
        const node& n = src_.nodes[i];
        node& dst = out_.nodes[i];
        float x_scale = 0.0f;
        bool x_is_activation = false;
        std::vector<float> w_scales;
        bool w_is_weight = false;
        for (std::size_t k = 0; k < quantized_operands; ++k) {
            const value_id v = n.inputs[k];
            value_id dq = no_value;
            if (src_.values[v].kind == value_kind::constant) {
                std::vector<float> scales;
                const std::int64_t axis = k == 1 ? weight_axis(n, *float_constant(v)) : -1;
                if (status s = weight(v, axis, list, dq, scales); s != status::ok) return s;
                if (k == 1) {
                    w_scales = std::move(scales);
                    w_is_weight = true;
                }
            } else {
                uint8_params p;
                if (status s = activation(v, list, dq, p); s != status::ok) return s;
                if (k == 0) {
                    x_scale = p.scale;
                    x_is_activation = true;
                }
            }
            dst.inputs[k] = dq;
        }
        // The bias: Conv's B, Gemm's C when it is 1-D with one value per output channel.
        if (!options_.quantize_bias || !x_is_activation || !w_is_weight || n.inputs.size() < 3 || n.op_type == "MatMul") return status::ok;
        const value_id b = n.inputs[2];
        const tensor* bt = b == no_value ? nullptr : float_constant(b);
        if (!bt || bt->rank() != 1) return status::ok;
        if (n.op_type == "Gemm") {
            const attribute* alpha = n.find_attribute("alpha");
            const attribute* beta = n.find_attribute("beta");
            if ((alpha && alpha->f != 1.0f) || (beta && beta->f != 1.0f)) return status::ok;  // the scale would not be x_scale * w_scale
        }
        if (w_scales.size() > 1 && static_cast<std::size_t>(bt->dims()[0]) != w_scales.size()) return status::ok;
        value_id dq = no_value;
        if (status s = bias(b, x_scale, w_scales, list, dq); s != status::ok) return s;
        dst.inputs[2] = dq;
        return status::ok;
    }

    const graph& src_;
    const qdq_options& options_;
    graph out_;
    std::unordered_map<std::string, value_range> ranges_;
    std::unordered_set<std::string> names_;
    std::unordered_map<value_id, value_id> act_dq_;
    std::size_t added_ = 0;
    error_info error_;
};

} // namespace detail

/// g with QuantizeLinear/DequantizeLinear around the inputs of its Conv, MatMul and Gemm nodes
/// (see the top of this file), from the activation ranges `ranges` (by value name; calibrate()
/// gives them). Nodes whose activations have no range, or that options.keep_fp32 names, stay
/// float. Fails with invalid_argument when the model's opset is too old (10 for
/// QuantizeLinear, 13 for per-channel), out_of_memory naming the tensor. Allocates; g is not
/// changed.
[[nodiscard]] inline result<graph> quantize_qdq(const graph& g, span<const value_range> ranges, const qdq_options& options = {}) {
    return detail::qdq_rewriter(g, ranges, options).run();
}

} // namespace quant
EMBER_NAMESPACE_END
