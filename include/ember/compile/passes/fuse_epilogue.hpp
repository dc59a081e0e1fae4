// SPDX-License-Identifier: Apache-2.0
// Epilogue fusion (compile_options::passes.epilogue_fusion): a Conv, Gemm or MatMul followed by
//   [MatMul only: Add of a 1-D bias of length N]  [Add of a residual Z]  [an activation]
// becomes one FusedConv / FusedGemm / FusedMatMul node (ops/fused.hpp), which applies the rest
// to the output while it is still in cache. A FusedQConv that QDQ folding made (a dequantized
// integer Conv, no residual or activation yet) takes the residual and the activation the same
// way. Activations: Relu, Clip (MobileNet's Relu6), LeakyRelu, HardSigmoid, HardSwish, Sigmoid,
// SiLU as Sigmoid(x) then Mul(x, .) (EfficientNet) and GELU as torch exports it, Div(x, sqrt 2)
// or Mul(x, 1/sqrt 2), Erf, Add 1, then the two Muls by x and 0.5 in any order.
//
// This pass runs after shape inference, on the compiler's inferred shapes, because an Add
// broadcasts: Add(conv, z) equals conv + z only when z has conv's shape; a z that broadcasts
// into it (a per-channel bias) or widens it (z [2, C, H, W] against a batch-1 conv) would make a
// fused node wrong. Before inference the shapes of most values are unknown, so the residual could
// be fused only in the rare cases a pass can prove them; after it, the check is exact and cheap:
// z is fused only when its shape equals the output's, and FusedConv's infer() rejects any other.
//
// Every value between the fused nodes must be read only inside the pattern and be no graph output
// (nor used by a body), and the anchor must not be folded (its output not a constant).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/compile/passes/rewrite.hpp"
#include "ember/config.hpp"
#include "ember/ops/epilogue.hpp"
#include "ember/ops/fused.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

/// An activation found after a value: its kind and parameters, the nodes it spans, its output.
struct activation_match {
    ops::activation kind = ops::activation::none;
    ops::activation_params params;
    std::vector<std::uint32_t> nodes;
    value_id output = no_value;
};

class epilogue_fuser {
public:
    explicit epilogue_fuser(graph_rewrite& rw) : rw_(rw) {}

    std::size_t run(const std::vector<std::uint32_t>& order) {
        std::size_t fused = 0;
        for (std::uint32_t i : order)
            if (fuse_at(i)) ++fused;
        return fused;
    }

private:
    enum class anchor { conv, gemm, matmul, qconv };

    /// A FusedQConv from QDQ folding, with no residual or activation yet.
    bool bare_qconv(std::uint32_t i) const {
        const node& n = rw_.at(i);
        if (rw_.removed(i) || n.op_type != "FusedQConv" || n.domain != ops::ember_domain || n.inputs.size() > 7) return false;
        for (const attribute& a : n.attributes)
            if (a.name == "activation" || a.name == "activation_params") return false;
        return true;
    }

    bool float_value(value_id v) const { return v != no_value && rw_.known(v) && rw_.type_of(v) == dtype::float32 && !rw_.constant(v); }

    /// The only node that reads v, if v is not pinned and that node is the standard op_type with
    /// one output; else -1.
    std::int32_t sole_reader(value_id v, std::string_view op_type) const {
        if (!rw_.single_use(v)) return -1;
        const std::uint32_t c = rw_.consumers(v)[0];
        const node& n = rw_.at(c);
        if (!rw_.is(c, op_type) || n.outputs.size() != 1 || n.outputs[0] == no_value || !float_value(n.outputs[0])) return -1;
        return static_cast<std::int32_t>(c);
    }

    /// Binary node c reads v and one other value: that value (no_value when both are v).
    static value_id other_input(const node& c, value_id v) {
        if (c.inputs.size() != 2) return no_value;
        if (c.inputs[0] == v && c.inputs[1] != v) return c.inputs[1];
        if (c.inputs[1] == v && c.inputs[0] != v) return c.inputs[0];
        return no_value;
    }

    bool scalar_is(value_id v, float expected, float rel) const {
        float s = 0.0f;
        return scalar_f32(rw_.constant(v), s) && std::fabs(s - expected) <= rel * std::fabs(expected);
    }

    /// Single-node activations: Relu, Clip, LeakyRelu, HardSigmoid, HardSwish, Sigmoid.
    bool match_unary(value_id v, activation_match& m) const {
        if (!rw_.single_use(v)) return false;
        const std::uint32_t c = rw_.consumers(v)[0];
        const node& n = rw_.at(c);
        if (n.inputs.empty() || n.inputs[0] != v || n.outputs.size() != 1 || !float_value(n.outputs[0])) return false;
        using ops::activation;
        m.params = {};
        if (rw_.is(c, "Relu") && n.inputs.size() == 1) m.kind = activation::relu;
        else if (rw_.is(c, "HardSwish") && n.inputs.size() == 1) m.kind = activation::hard_swish;
        else if (rw_.is(c, "Sigmoid") && n.inputs.size() == 1) m.kind = activation::sigmoid;
        else if ((rw_.is(c, "LeakyRelu") || rw_.is(c, "HardSigmoid")) && n.inputs.size() == 1) {
            m.kind = rw_.is(c, "LeakyRelu") ? activation::leaky_relu : activation::hard_sigmoid;
            m.params = ops::default_params(m.kind);
            for (const attribute& a : n.attributes) {
                if (a.kind != attribute_kind::floating) return false;
                if (a.name == "alpha") m.params.alpha = a.f;
                else if (a.name == "beta" && m.kind == activation::hard_sigmoid) m.params.beta = a.f;
                else return false;
            }
        } else if (rw_.is(c, "Clip")) {
            m.kind = activation::clip;
            if (!clip_bounds(rw_, n, m.params.alpha, m.params.beta)) return false;  // a run-time bound stays a Clip
        } else {
            return false;
        }
        m.nodes = {c};
        m.output = n.outputs[0];
        return true;
    }

    /// SiLU: s = Sigmoid(v), y = Mul(v, s) (either order); v read by exactly those two.
    bool match_silu(value_id v, activation_match& m) const {
        if (rw_.pinned(v) || rw_.consumers(v).size() != 2) return false;
        for (std::size_t first = 0; first < 2; ++first) {
            const std::uint32_t s = rw_.consumers(v)[first], mul = rw_.consumers(v)[1 - first];
            if (!rw_.is(s, "Sigmoid") || rw_.at(s).inputs.size() != 1 || rw_.at(s).outputs.size() != 1) continue;
            const value_id sv = rw_.at(s).outputs[0];
            if (sv == no_value || sole_reader(sv, "Mul") != static_cast<std::int32_t>(mul) || other_input(rw_.at(mul), sv) != v) continue;
            m.kind = ops::activation::silu;
            m.params = {};
            m.nodes = {s, mul};
            m.output = rw_.at(mul).outputs[0];
            return true;
        }
        return false;
    }

    /// GELU (erf form): d = v / sqrt(2) (or v * 1/sqrt(2)), e = Erf(d), a = e + 1, then either
    /// Mul(Mul(v, a), 0.5), Mul(Mul(v, 0.5), a) or Mul(v, Mul(a, 0.5)); any operand order.
    bool match_gelu(value_id v, activation_match& m) const {
        if (rw_.pinned(v) || rw_.consumers(v).size() != 2) return false;
        constexpr float sqrt2 = 1.41421356237309505f, half_sqrt2 = 0.70710678118654752f, tol = 1e-6f;
        for (std::size_t first = 0; first < 2; ++first) {
            const std::uint32_t d = rw_.consumers(v)[first], other = rw_.consumers(v)[1 - first];
            const node& dn = rw_.at(d);
            if (dn.outputs.size() != 1 || dn.inputs.size() != 2) continue;
            const bool div = rw_.is(d, "Div") && dn.inputs[0] == v && scalar_is(dn.inputs[1], sqrt2, tol);
            const bool mul = rw_.is(d, "Mul") && scalar_is(other_input(dn, v), half_sqrt2, tol);
            if (!div && !mul) continue;
            const std::int32_t e = sole_reader(dn.outputs[0], "Erf");
            if (e < 0 || rw_.at(static_cast<std::size_t>(e)).inputs.size() != 1) continue;
            const value_id ev = rw_.at(static_cast<std::size_t>(e)).outputs[0];
            const std::int32_t add = sole_reader(ev, "Add");
            if (add < 0 || !scalar_is(other_input(rw_.at(static_cast<std::size_t>(add)), ev), 1.0f, 0.0f)) continue;
            const value_id av = rw_.at(static_cast<std::size_t>(add)).outputs[0];
            std::vector<std::uint32_t> nodes{d, static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(add)};
            // `other` is the node besides d that reads v: Mul(v, a), Mul(v, 0.5) or Mul(v, h).
            if (!rw_.is(other, "Mul") || rw_.at(other).outputs.size() != 1) continue;
            const value_id ov = other_input(rw_.at(other), v);
            const value_id out1 = rw_.at(other).outputs[0];
            value_id result = no_value;
            if (ov == av) {  // Mul(v, a), then Mul(., 0.5)
                const std::int32_t last = sole_reader(out1, "Mul");
                if (last >= 0 && scalar_is(other_input(rw_.at(static_cast<std::size_t>(last)), out1), 0.5f, 0.0f)) {
                    nodes.push_back(other);
                    nodes.push_back(static_cast<std::uint32_t>(last));
                    result = rw_.at(static_cast<std::size_t>(last)).outputs[0];
                }
            } else if (scalar_is(ov, 0.5f, 0.0f)) {  // Mul(v, 0.5), then Mul(., a)
                const std::int32_t last = sole_reader(out1, "Mul");
                if (last >= 0 && sole_reader(av, "Mul") == last && other_input(rw_.at(static_cast<std::size_t>(last)), out1) == av) {
                    nodes.push_back(other);
                    nodes.push_back(static_cast<std::uint32_t>(last));
                    result = rw_.at(static_cast<std::size_t>(last)).outputs[0];
                }
            } else {  // h = Mul(a, 0.5), then Mul(v, h)
                const std::int32_t h = sole_reader(av, "Mul");
                if (h >= 0 && scalar_is(other_input(rw_.at(static_cast<std::size_t>(h)), av), 0.5f, 0.0f) &&
                    rw_.at(static_cast<std::size_t>(h)).outputs[0] == ov && sole_reader(ov, "Mul") == static_cast<std::int32_t>(other)) {
                    nodes.push_back(static_cast<std::uint32_t>(h));
                    nodes.push_back(other);
                    result = out1;
                }
            }
            if (result == no_value) continue;
            m.kind = ops::activation::gelu;
            m.params = {};
            m.nodes = std::move(nodes);
            m.output = result;
            return true;
        }
        return false;
    }

    bool match_activation(value_id v, activation_match& m) const { return match_unary(v, m) || match_silu(v, m) || match_gelu(v, m); }

    bool fuse_at(std::uint32_t i) {
        anchor kind;
        if (rw_.is(i, "Conv")) kind = anchor::conv;
        else if (rw_.is(i, "Gemm")) kind = anchor::gemm;
        else if (rw_.is(i, "MatMul")) kind = anchor::matmul;
        else if (bare_qconv(i)) kind = anchor::qconv;
        else return false;
        const node& n = rw_.at(i);
        const std::size_t max_inputs = kind == anchor::matmul ? 2 : kind == anchor::qconv ? 7 : 3;
        if (n.outputs.size() != 1 || n.inputs.size() < 2 || n.inputs.size() > max_inputs || !float_value(n.outputs[0])) return false;
        value_id cur = n.outputs[0];
        const shape out = rw_.shape_of(cur);
        std::vector<std::uint32_t> absorbed;
        value_id bias = no_value, z = no_value;
        // MatMul + Add(1-D [N]): the bias. B must be a matrix (stack) for "per column" to mean N.
        if (kind == anchor::matmul && rw_.known(n.inputs[1]) && rw_.shape_of(n.inputs[1]).rank() >= 2 && out.rank() >= 1) {
            const std::int32_t add = sole_reader(cur, "Add");
            if (add >= 0) {
                const value_id other = other_input(rw_.at(static_cast<std::size_t>(add)), cur);
                if (float_value_or_constant(other) && rw_.shape_of(other) == shape{out[out.rank() - 1]} &&
                    rw_.shape_of(rw_.at(static_cast<std::size_t>(add)).outputs[0]) == out) {
                    bias = other;
                    absorbed.push_back(static_cast<std::uint32_t>(add));
                    cur = rw_.at(static_cast<std::size_t>(add)).outputs[0];
                }
            }
        }
        // Add(., z) with z exactly the output's shape: the residual.
        if (const std::int32_t add = sole_reader(cur, "Add"); add >= 0) {
            const value_id other = other_input(rw_.at(static_cast<std::size_t>(add)), cur);
            if (float_value_or_constant(other) && rw_.shape_of(other) == out && rw_.shape_of(rw_.at(static_cast<std::size_t>(add)).outputs[0]) == out) {
                z = other;
                absorbed.push_back(static_cast<std::uint32_t>(add));
                cur = rw_.at(static_cast<std::size_t>(add)).outputs[0];
            }
        }
        activation_match act;
        if (match_activation(cur, act)) {
            if (rw_.shape_of(act.output) != out) return false;
            absorbed.insert(absorbed.end(), act.nodes.begin(), act.nodes.end());
            cur = act.output;
        }
        if (absorbed.empty()) return false;

        // Rewrite node i into the fused op; it writes the last value of the pattern.
        const value_id third = n.inputs.size() > 2 ? n.inputs[2] : no_value;
        for (std::uint32_t a : absorbed) rw_.remove_node(a);
        node& f = rw_.at(i);
        if (kind == anchor::qconv) {
            rw_.set_input(i, 7, z);  // FusedQConv(x, xs, xz, w, ws, wz, B?, Z?)
        } else {
            f.op_type = kind == anchor::conv ? "FusedConv" : kind == anchor::gemm ? "FusedGemm" : "FusedMatMul";
            f.domain = std::string(ops::ember_domain);
            rw_.set_input(i, 2, kind == anchor::matmul ? bias : third);
            rw_.set_input(i, 3, z);
        }
        while (!f.inputs.empty() && f.inputs.back() == no_value) f.inputs.pop_back();
        if (act.kind != ops::activation::none) {
            set_attribute(f, attribute::of("activation", std::string(ops::activation_name(act.kind))));
            if (ops::param_count(act.kind) != 0) {
                std::vector<float> params{act.params.alpha};
                if (ops::param_count(act.kind) > 1) params.push_back(act.params.beta);
                set_attribute(f, attribute::of("activation_params", std::move(params)));
            }
        }
        rw_.set_output(i, 0, cur);
        return true;
    }

    bool float_value_or_constant(value_id v) const {
        return v != no_value && rw_.known(v) && rw_.type_of(v) == dtype::float32;
    }

    graph_rewrite& rw_;
};

/// Fuses epilogues into the Conv, Gemm and MatMul nodes, visited in `order` (topological, so a
/// chain is matched from its start). Needs shapes (graph_rewrite with states). Returns how many
/// nodes it made.
inline std::size_t fuse_epilogues(graph_rewrite& rw, const std::vector<std::uint32_t>& order) {
    if (!rw.shapes_known()) return 0;
    return epilogue_fuser(rw).run(order);
}

} // namespace detail
EMBER_NAMESPACE_END
