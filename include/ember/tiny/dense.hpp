// SPDX-License-Identifier: Apache-2.0
// tiny::dense<In, Out, Act>: y = act(x W + b), a fully connected layer of fixed size. In ONNX:
// Gemm (any transB, alpha, beta; C absent, one value or one per output), or MatMul then an
// optional bias Add, then the activation's node unless Act is identity.
#pragma once

#include <cstddef>
#include <string>

#include "ember/config.hpp"
#include "ember/core/span.hpp"
#include "ember/detail/format.hpp"
#include "ember/status.hpp"
#include "ember/tiny/activation.hpp"
#include "ember/tiny/graph_walk.hpp"
#include "ember/tiny/kernels.hpp"

EMBER_NAMESPACE_BEGIN
namespace tiny {

/// How a weight matrix given to set_weights() is laid out.
enum class weight_layout : unsigned char {
    in_out,  ///< [In][Out]: ONNX Gemm's B without transB, MatMul's B
    out_in,  ///< [Out][In]: Gemm's B with transB = 1, torch.nn.Linear.weight
};

template <std::size_t In, std::size_t Out, class Act = identity>
class dense {
    static_assert(In > 0 && Out > 0, "tiny::dense: sizes must be positive");

public:
    static constexpr std::size_t in_size = In;
    static constexpr std::size_t out_size = Out;
    static constexpr std::size_t state_size = 0;  ///< no state between calls
    using activation_type = Act;

    /// "dense<32, 64, relu>", for messages.
    static std::string describe() { return ember::detail::format("dense<{}, {}, {}>", In, Out, Act::name); }

    /// y[0..Out) = act(x[0..In) W + b). Allocates nothing; x and y must not overlap.
    void run(const float* x, float* y) const noexcept { detail::affine<In, Out>(w_, b_, x, y, act_); }
    /// The network's form (the state pointer is unused).
    void run(const float* x, float* y, float*) const noexcept { run(x, y); }

    /// Copies the weights: `weight` In * Out values in `layout`, `bias` Out values (or none:
    /// zeros). Fails with invalid_argument, changing nothing, when a size is wrong.
    [[nodiscard]] result<void> set_weights(span<const float> weight, span<const float> bias = {},
                                           weight_layout layout = weight_layout::in_out) {
        if (weight.size() != In * Out)
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("{}: {} weights given, expected {}", describe(), weight.size(), In * Out)};
        if (!bias.empty() && bias.size() != Out)
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("{}: {} biases given, expected {} (or none)", describe(), bias.size(), Out)};
        for (std::size_t i = 0; i < In; ++i)
            for (std::size_t o = 0; o < Out; ++o)
                w_[i * Out + o] = layout == weight_layout::in_out ? weight[i * Out + o] : weight[o * In + i];
        for (std::size_t o = 0; o < Out; ++o) b_[o] = bias.empty() ? 0.0f : bias[o];
        return {};
    }

    /// The activation (leaky_relu's alpha lives here).
    Act& activation() noexcept { return act_; }
    const Act& activation() const noexcept { return act_; }

    /// The weights as stored, [In][Out] row-major, and the bias.
    span<const float> weights() const noexcept { return {w_, In * Out}; }
    span<const float> bias() const noexcept { return {b_, Out}; }

    /// Whether the graph input `s` can feed this layer first: [..., In].
    static bool accepts_input(const partial_shape& s, std::string& expected) {
        expected = ember::detail::format("[N, {}]", In);
        return !s.rank_known || s.dims.empty() || detail::dim_is(s, s.dims.size() - 1, In);
    }

    /// Matches this layer's nodes at walk's current value; with commit, copies their weights.
    /// load() of network calls it twice: to check everything, then to copy.
    result<void> load(detail::graph_walk& walk, bool commit) {
        result<detail::graph_walk::step> s = walk.next("Gemm or MatMul");
        if (!s) return s.error();
        const std::int32_t n = s->node;
        const node& nd = walk.at(n);
        if ((nd.op_type == "Gemm" || nd.op_type == "MatMul") && (nd.inputs.size() < 2 || nd.inputs[0] != s->value))
            return walk.fail(status::unsupported_op, n,
                             ember::detail::format("reads '{}' as B; the layer's input must be A", walk.value_name(s->value)));
        if (nd.op_type == "Gemm") {
            if (result<void> r = load_gemm(walk, n, commit); !r) return r;
            walk.advance(nd.outputs[0]);
        } else if (nd.op_type == "MatMul") {
            if (result<void> r = load_matmul(walk, n, commit); !r) return r;
        } else {
            return walk.fail(status::unsupported_op, n, "expected Gemm or MatMul");
        }
        return detail::load_activation(walk, act_, commit);
    }

private:
    result<void> load_gemm(detail::graph_walk& walk, std::int32_t n, bool commit) {
        const node& nd = walk.at(n);
        if (detail::int_attribute(nd, "transA", 0) != 0) return walk.fail(status::unsupported_op, n, "transA = 1; expected 0");
        const bool trans_b = detail::int_attribute(nd, "transB", 0) != 0;
        const float alpha = detail::float_attribute(nd, "alpha", 1.0f), beta = detail::float_attribute(nd, "beta", 1.0f);
        result<const tensor*> b = walk.weight(n, 1, "B");
        if (!b) return b.error();
        const std::int64_t rows = trans_b ? Out : In, cols = trans_b ? In : Out;
        if (!detail::has_dims(**b, {rows, cols}))
            return walk.fail(status::shape_mismatch, n,
                             ember::detail::format("B has shape {} with transB = {}; expected [{}, {}]", (*b)->dims(), trans_b ? 1 : 0, rows, cols));
        const tensor* c = nullptr;
        if (nd.inputs.size() > 2 && nd.inputs[2] != no_value) {
            result<const tensor*> ct = walk.weight(n, 2, "C");
            if (!ct) return ct.error();
            c = *ct;
            if (!detail::is_row(*c, Out) && !detail::is_row(*c, 1))
                return walk.fail(status::shape_mismatch, n,
                                 ember::detail::format("C has shape {}; expected [{}], [1, {}] or one value", c->dims(), Out, Out));
        }
        if (!commit) return {};
        const float* bv = (*b)->data<float>();
        for (std::size_t i = 0; i < In; ++i)
            for (std::size_t o = 0; o < Out; ++o) w_[i * Out + o] = alpha * (trans_b ? bv[o * In + i] : bv[i * Out + o]);
        for (std::size_t o = 0; o < Out; ++o)
            b_[o] = c == nullptr ? 0.0f : beta * c->data<float>()[c->size() == 1 ? 0 : o];
        return {};
    }

    // MatMul by a constant [In, Out], then an Add of a constant row of Out values if one follows.
    result<void> load_matmul(detail::graph_walk& walk, std::int32_t n, bool commit) {
        const node& nd = walk.at(n);
        result<const tensor*> b = walk.weight(n, 1, "B");
        if (!b) return b.error();
        if (!detail::has_dims(**b, {static_cast<std::int64_t>(In), static_cast<std::int64_t>(Out)}))
            return walk.fail(status::shape_mismatch, n, ember::detail::format("B has shape {}; expected [{}, {}]", (*b)->dims(), In, Out));
        if (commit)
            for (std::size_t k = 0; k < In * Out; ++k) w_[k] = (*b)->data<float>()[k];
        walk.advance(nd.outputs[0]);
        const tensor* bias = nullptr;
        result<detail::graph_walk::step> a = walk.reader_of(walk.current());
        if (!a) return a.error();
        if (a->node >= 0 && walk.at(a->node).op_type == "Add" && walk.at(a->node).domain.empty()) {
            const node& add = walk.at(a->node);
            const std::size_t other = add.inputs.size() == 2 && add.inputs[0] == a->value ? 1 : 0;
            if (add.inputs.size() != 2 || add.inputs[1 - other] != a->value)
                return walk.fail(status::unsupported_op, a->node, "expected an Add of the MatMul's output and a bias");
            result<const tensor*> bt = walk.weight(a->node, other, "bias");
            if (!bt) return bt.error();
            bias = *bt;
            if (!detail::is_row(*bias, Out))
                return walk.fail(status::shape_mismatch, a->node,
                                 ember::detail::format("the bias has shape {}; expected [{}] or [1, {}]", bias->dims(), Out, Out));
            walk.advance(add.outputs[0]);
        }
        if (commit)
            for (std::size_t o = 0; o < Out; ++o) b_[o] = bias == nullptr ? 0.0f : bias->data<float>()[o];
        return {};
    }

    alignas(64) float w_[In * Out] = {};  // [In][Out]
    alignas(64) float b_[Out] = {};
    Act act_{};
};

} // namespace tiny
EMBER_NAMESPACE_END
