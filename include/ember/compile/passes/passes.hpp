// SPDX-License-Identifier: Apache-2.0
// The graph passes compile() runs, in order, and the switches that turn each off
// (compile_options::passes). They rewrite the compiler's own copy of the graph; the caller's
// graph is never changed, and inputs, outputs and their names stay as they were.
//
//   before shape inference (the graph alone):
//     1. identity_removal       Identity, inference-mode Dropout          remove_identity.hpp
//     2. qdq_folding            DQ + Conv [+ Relu] [+ Q] -> QLinearConv, FusedQConv  fold_qdq.hpp
//     3. batch_norm_folding     Conv/Gemm + BatchNormalization -> new weights  fold_batch_norm.hpp
//     4. layout_simplification  Transpose pairs, Reshape chains           simplify_layout.hpp
//     5. dead_code              nodes no output depends on                dead_code.hpp
//   after shape inference (shapes and folded values known):
//     6. layout_simplification  Reshapes that keep the shape              simplify_layout.hpp
//     7. epilogue_fusion        Conv/Gemm/MatMul [+ bias] [+ Z] [+ act]   fuse_epilogue.hpp
//
// ember::optimize() (compile/compile.hpp) returns the rewritten graph, for tests and tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/compile/passes/dead_code.hpp"
#include "ember/compile/passes/fold_batch_norm.hpp"
#include "ember/compile/passes/fold_qdq.hpp"
#include "ember/compile/passes/fuse_epilogue.hpp"
#include "ember/compile/passes/remove_identity.hpp"
#include "ember/compile/passes/rewrite.hpp"
#include "ember/compile/passes/simplify_layout.hpp"
#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN

/// Which graph passes compile() runs (compile_options::passes); all on by default. Each can be
/// turned off alone, to compare results or to find a pass at fault; none changes what the graph
/// computes beyond float rounding (BatchNormalization folding, and the fused activations, round
/// differently from the separate ops: within about 1e-6 relative in practice).
struct pass_options {
    /// Remove Identity nodes, and Dropout nodes in inference mode (no training_mode input, or a
    /// constant false one, and the mask output unused): their readers read the input directly.
    bool identity_removal = true;
    /// Remove nodes none of whose outputs reaches a graph output (values that If/Loop/Scan bodies
    /// use by name count as reached).
    bool dead_code = true;
    /// Fold an inference-mode BatchNormalization with constant parameters into the Conv or Gemm
    /// before it (constant float32 weights; the Conv's or Gemm's output read by it alone).
    bool batch_norm_folding = true;
    /// Fuse Conv, Gemm and MatMul with a following bias Add (MatMul), residual Add (an operand of
    /// the output's exact shape) and activation (Relu, Clip, LeakyRelu, HardSigmoid, HardSwish,
    /// Sigmoid, SiLU, GELU) into one FusedConv, FusedGemm or FusedMatMul node (domain "ember").
    bool epilogue_fusion = true;
    /// Merge Transpose pairs (dropping them when they cancel), collapse Reshape chains, and remove
    /// Transposes by the identity permutation and Reshapes that keep the shape.
    bool layout_simplification = true;
    /// Fold the QDQ form of an integer convolution (DequantizeLinear of the input, the constant
    /// weights and the int32 bias, Conv, [Relu or Clip,] QuantizeLinear) into one QLinearConv
    /// (or FusedQLinearConv with the Relu or Clip), and a Conv of dequantized inputs whose output
    /// stays float into FusedQConv; both run on the INT8 kernels.
    bool qdq_folding = true;

    /// Every pass off: compile() compiles the graph as given.
    static constexpr pass_options none() noexcept { return pass_options{false, false, false, false, false, false}; }
    /// Whether any pass is on.
    constexpr bool any() const noexcept {
        return identity_removal || dead_code || batch_norm_folding || epilogue_fusion || layout_simplification || qdq_folding;
    }
};

namespace detail {

/// What the passes did, for compile()'s log.
struct pass_counts {
    std::size_t identities = 0, batch_norms = 0, layout = 0, dead = 0, fused = 0, qdq = 0;
};

/// Passes 1-5, on a graph without shapes (rw made without value states).
inline void run_graph_passes(graph_rewrite& rw, const pass_options& p, pass_counts& counts) {
    if (p.identity_removal) counts.identities += remove_identities(rw);
    if (p.qdq_folding) counts.qdq += fold_qdq(rw);
    if (p.batch_norm_folding) counts.batch_norms += fold_batch_norms(rw);
    if (p.layout_simplification) counts.layout += simplify_layout(rw);
    if (p.dead_code) counts.dead += remove_dead_nodes(rw);
}

/// Passes 6-7, with the compiler's inferred shapes (rw made with value states); order is a
/// topological order of rw's nodes.
inline void run_shape_passes(graph_rewrite& rw, const pass_options& p, const std::vector<std::uint32_t>& order, pass_counts& counts) {
    if (p.layout_simplification) counts.layout += remove_noop_reshapes(rw);
    if (p.epilogue_fusion) counts.fused += fuse_epilogues(rw, order);
}

} // namespace detail
EMBER_NAMESPACE_END
