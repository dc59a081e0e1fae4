// SPDX-License-Identifier: Apache-2.0
// Identity removal (compile_options::passes.identity_removal): Identity nodes, and Dropout nodes
// in inference mode, are dropped and their readers read the input. Exporters leave many of them
// (torch writes an Identity per shared initializer, Dropout stays in eval-mode graphs), and each
// one would be a copy step, or hide a Conv's weights behind a node from the other passes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/compile/passes/rewrite.hpp"
#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

/// Dropout node i computes its input: opset 7 or later (before, is_test decides), training_mode
/// absent or a constant false, only the attributes ember knows, and its mask output unused.
inline bool inference_dropout(const graph_rewrite& rw, std::size_t i) {
    const node& n = rw.at(i);
    const std::int64_t opset = rw.g().opset_version("");
    if (opset < 7 || n.inputs.empty() || n.outputs.empty() || n.outputs.size() > 2) return false;
    for (const attribute& a : n.attributes)
        if (a.name != "ratio" && a.name != "seed") return false;
    if (n.inputs.size() > (opset < 12 ? 1u : 3u)) return false;
    if (n.inputs.size() == 3 && n.inputs[2] != no_value) {
        const tensor* mode = rw.constant(n.inputs[2]);
        if (!mode || mode->type() != dtype::boolean || mode->size() != 1 || mode->data<bool>()[0]) return false;
    }
    if (n.outputs.size() == 2 && n.outputs[1] != no_value) {
        const value_id mask = n.outputs[1];
        if (rw.pinned(mask) || !rw.consumers(mask).empty()) return false;
    }
    return true;
}

/// Removes Identity and inference-mode Dropout nodes (see bypass_node for outputs that must
/// keep their name). Returns how many it removed.
inline std::size_t remove_identities(graph_rewrite& rw) {
    std::size_t removed = 0;
    for (std::size_t i = 0; i < rw.node_count(); ++i) {
        const node& n = rw.at(i);
        const bool identity = rw.is(i, "Identity") && n.inputs.size() == 1 && n.outputs.size() == 1 && n.attributes.empty();
        const bool dropout = rw.is(i, "Dropout") && inference_dropout(rw, i);
        if (!identity && !dropout) continue;
        if (bypass_node(rw, i, n.inputs[0], n.outputs[0])) ++removed;
    }
    return removed;
}

} // namespace detail
EMBER_NAMESPACE_END
