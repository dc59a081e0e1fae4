// SPDX-License-Identifier: Apache-2.0
// Dead-code removal (compile_options::passes.dead_code): a node none of whose outputs reaches a
// graph output is dropped, so it is neither compiled nor run (and an op ember lacks in a branch
// of the graph nobody reads no longer stops the model). A node with subgraphs keeps alive the
// values its bodies use by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/compile/passes/rewrite.hpp"
#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

/// Drops every node that no graph output depends on. Returns how many.
inline std::size_t remove_dead_nodes(graph_rewrite& rw) {
    const graph& g = rw.g();
    std::vector<bool> live(rw.node_count(), false);
    std::vector<value_id> pending(g.outputs.begin(), g.outputs.end());
    while (!pending.empty()) {
        const value_id v = pending.back();
        pending.pop_back();
        const std::int32_t p = rw.producer(v);
        if (p < 0 || live[static_cast<std::size_t>(p)] || rw.removed(static_cast<std::size_t>(p))) continue;
        live[static_cast<std::size_t>(p)] = true;
        const node& n = g.nodes[static_cast<std::size_t>(p)];
        for (value_id in : n.inputs)
            if (in != no_value) pending.push_back(in);
        for (value_id captured : rw.captured_by(n)) pending.push_back(captured);
    }
    std::size_t removed = 0;
    for (std::size_t i = 0; i < rw.node_count(); ++i)
        if (!live[i] && !rw.removed(i)) {
            rw.remove_node(i);
            ++removed;
        }
    return removed;
}

} // namespace detail
EMBER_NAMESPACE_END
