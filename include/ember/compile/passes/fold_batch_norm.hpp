// SPDX-License-Identifier: Apache-2.0
// BatchNormalization folding (compile_options::passes.batch_norm_folding): an inference-mode
// BatchNormalization right after a Conv or a Gemm, with every weight and statistic a constant,
// becomes new weights of that Conv or Gemm. With f = scale / sqrt(var + epsilon) per output
// channel c:
//     Conv: W'[c, ...] = W[c, ...] * f[c]          B'[c] = (B[c] - mean[c]) * f[c] + bias[c]
//     Gemm: B'[:, c] = B[:, c] * f[c] (rows when transB)
//           C'[., c] = (beta * C[., c] - mean[c]) * f[c] + bias[c], beta' = 1
// float32 only. The new weights are new constants of the rewritten graph (the originals may
// have other readers); the Conv or Gemm then writes the BatchNormalization's output.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/compile/passes/rewrite.hpp"
#include "ember/config.hpp"
#include "ember/core/tensor.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

/// The per-channel factor and shift of an inference-mode BatchNormalization node with constant
/// float32 parameters of `channels` values each.
struct batch_norm_affine {
    std::vector<float> factor;  ///< scale / sqrt(var + epsilon)
    const float* mean = nullptr;
    const float* bias = nullptr;
};

inline bool batch_norm_constants(const graph_rewrite& rw, const node& bn, batch_norm_affine& out, std::int64_t& channels) {
    if (bn.inputs.size() != 5 || bn.outputs.empty() || bn.outputs[0] == no_value) return false;
    for (std::size_t k = 1; k < bn.outputs.size(); ++k)
        if (bn.outputs[k] != no_value) return false;  // training outputs: leave it to the op's error
    float epsilon = 1e-5f;
    for (const attribute& a : bn.attributes) {
        if (a.name == "epsilon" && a.kind == attribute_kind::floating) epsilon = a.f;
        else if (a.name == "momentum" || a.name == "consumed_inputs") continue;
        else if ((a.name == "spatial" || a.name == "is_test") && a.kind == attribute_kind::integer && a.i == 1) continue;
        else if (a.name == "training_mode" && a.kind == attribute_kind::integer && a.i == 0) continue;
        else return false;
    }
    const float* p[4] = {};
    for (std::size_t k = 0; k < 4; ++k) {
        const tensor* t = rw.constant(bn.inputs[k + 1]);
        if (!f32_data(t) || t->dims().rank() != 1) return false;
        if (k == 0) channels = t->dims()[0];
        if (t->dims()[0] != channels) return false;
        p[k] = t->data<float>();
    }
    out.factor.resize(static_cast<std::size_t>(channels));
    for (std::size_t c = 0; c < out.factor.size(); ++c) out.factor[c] = p[0][c] / std::sqrt(p[3][c] + epsilon);  // as ops/batch_normalization.hpp
    out.mean = p[2];
    out.bias = p[1];
    return true;
}

/// Folds BatchNormalization node `bn` into Conv node `conv`; false (nothing changed) when the
/// weights are not constant float32 of matching sizes.
inline bool fold_into_conv(graph_rewrite& rw, std::size_t conv, std::size_t bn, const batch_norm_affine& f, std::int64_t channels) {
    const node& c = rw.at(conv);
    if (c.inputs.size() < 2 || c.inputs.size() > 3 || c.outputs.size() != 1) return false;
    const tensor* w = rw.constant(c.inputs[1]);
    const bool has_b = c.inputs.size() == 3 && c.inputs[2] != no_value;
    const tensor* b = has_b ? rw.constant(c.inputs[2]) : nullptr;
    if (!f32_data(w) || w->dims().rank() < 3 || w->dims()[0] != channels) return false;
    if (has_b && (!f32_data(b) || b->dims().rank() != 1 || b->dims()[0] != channels)) return false;
    result<tensor> w2 = tensor::create(dtype::float32, w->dims());
    result<tensor> b2 = tensor::create(dtype::float32, shape{channels});
    if (!w2 || !b2) return false;
    const auto per_channel = static_cast<std::size_t>(w->size() / static_cast<std::size_t>(channels));
    for (std::size_t m = 0; m < static_cast<std::size_t>(channels); ++m) {
        for (std::size_t k = 0; k < per_channel; ++k)
            w2->data<float>()[m * per_channel + k] = w->data<float>()[m * per_channel + k] * f.factor[m];
        b2->data<float>()[m] = ((has_b ? b->data<float>()[m] : 0.0f) - f.mean[m]) * f.factor[m] + f.bias[m];
    }
    const value_id y = rw.at(bn).outputs[0];
    const value_id w_id = rw.add_constant(rw.g().values[c.inputs[1]].name + "_bn_folded", std::move(*w2));
    const value_id b_id = rw.add_constant(rw.g().values[y].name + "_bias_bn_folded", std::move(*b2));
    rw.remove_node(bn);
    rw.set_input(conv, 1, w_id);
    rw.set_input(conv, 2, b_id);
    rw.set_output(conv, 0, y);
    return true;
}

/// Folds BatchNormalization node `bn` into Gemm node `gemm` (output [M, N], N = channels).
inline bool fold_into_gemm(graph_rewrite& rw, std::size_t gemm, std::size_t bn, const batch_norm_affine& f, std::int64_t channels) {
    const node& n = rw.at(gemm);
    if (n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1) return false;
    bool trans_b = false;
    float beta = 1.0f;
    for (const attribute& a : n.attributes) {
        if (a.name == "transB" && a.kind == attribute_kind::integer) trans_b = a.i != 0;
        else if (a.name == "beta" && a.kind == attribute_kind::floating) beta = a.f;
        else if (a.name == "alpha" || a.name == "transA" || a.name == "broadcast") continue;
        else return false;
    }
    const tensor* b = rw.constant(n.inputs[1]);
    if (!f32_data(b) || b->dims().rank() != 2 || b->dims()[trans_b ? 0 : 1] != channels) return false;
    const bool has_c = n.inputs.size() == 3 && n.inputs[2] != no_value;
    const tensor* c = has_c ? rw.constant(n.inputs[2]) : nullptr;
    // C' has one row per row of C (1 when C is absent, a scalar or a vector) and N columns.
    std::int64_t c_rows = 1, c_cols = 1;
    if (has_c) {
        if (!f32_data(c) || c->dims().rank() > 2) return false;
        const shape& cd = c->dims();
        if (cd.rank() >= 1) c_cols = cd[cd.rank() - 1];
        if (cd.rank() == 2) c_rows = cd[0];
        if (c_cols != 1 && c_cols != channels) return false;
    }
    const auto N = static_cast<std::size_t>(channels);
    const auto K = static_cast<std::size_t>(b->dims()[trans_b ? 1 : 0]);
    result<tensor> b2 = tensor::create(dtype::float32, b->dims());
    const shape c2_dims = has_c && c->dims().rank() == 2 ? shape{c_rows, channels} : shape{channels};
    result<tensor> c2 = tensor::create(dtype::float32, c2_dims);
    if (!b2 || !c2) return false;
    for (std::size_t k = 0; k < K; ++k)
        for (std::size_t j = 0; j < N; ++j) {
            const std::size_t at = trans_b ? j * K + k : k * N + j;
            b2->data<float>()[at] = b->data<float>()[at] * f.factor[j];
        }
    for (std::size_t r = 0; r < static_cast<std::size_t>(c_rows); ++r)
        for (std::size_t j = 0; j < N; ++j) {
            const float cv = has_c ? beta * c->data<float>()[r * static_cast<std::size_t>(c_cols) + (c_cols == 1 ? 0 : j)] : 0.0f;
            c2->data<float>()[r * N + j] = (cv - f.mean[j]) * f.factor[j] + f.bias[j];
        }
    const value_id y = rw.at(bn).outputs[0];
    const value_id b_id = rw.add_constant(rw.g().values[n.inputs[1]].name + "_bn_folded", std::move(*b2));
    const value_id c_id = rw.add_constant(rw.g().values[y].name + "_bias_bn_folded", std::move(*c2));
    rw.remove_node(bn);
    rw.set_input(gemm, 1, b_id);
    rw.set_input(gemm, 2, c_id);
    set_attribute(rw.at(gemm), attribute::of("beta", 1.0f));
    rw.set_output(gemm, 0, y);
    return true;
}

/// Folds every BatchNormalization it can into the Conv or Gemm before it. Returns how many.
inline std::size_t fold_batch_norms(graph_rewrite& rw) {
    std::size_t folded = 0;
    for (std::size_t i = 0; i < rw.node_count(); ++i) {
        if (!rw.is(i, "BatchNormalization")) continue;
        const node& bn = rw.at(i);
        if (bn.inputs.empty() || !rw.single_use(bn.inputs[0])) continue;
        const std::int32_t p = rw.producer(bn.inputs[0]);
        if (p < 0) continue;
        const auto pi = static_cast<std::size_t>(p);
        const bool conv = rw.is(pi, "Conv"), gemm = rw.is(pi, "Gemm");
        if (!conv && !gemm) continue;
        batch_norm_affine f;
        std::int64_t channels = 0;
        if (!batch_norm_constants(rw, bn, f, channels)) continue;
        if (conv ? fold_into_conv(rw, pi, i, f, channels) : fold_into_gemm(rw, pi, i, f, channels)) ++folded;
    }
    return folded;
}

} // namespace detail
EMBER_NAMESPACE_END
