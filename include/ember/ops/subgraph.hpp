// SPDX-License-Identifier: Apache-2.0
// Values a subgraph (an If/Loop/Scan body) takes from the enclosing graphs, and how compile()
// makes them visible. The importer represents an outer-scope name used in a body as a value of
// kind `input` that is not listed in graph::inputs (a "captured" value). compile() appends, to
// every node with graph attributes, one extra ("implicit") input per name its bodies capture,
// nested bodies included, in the order implicit_input_names() gives: the scheduler then orders
// the node after the producers of those values, the memory planner keeps them alive until it
// runs, folding sees them, and the op reads them as its last inputs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "ember/config.hpp"
#include "ember/graph/graph.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

inline bool has_subgraphs(const node& n) noexcept {
    for (const attribute& a : n.attributes)
        if (!a.graphs.empty()) return true;
    return false;
}

inline bool is_graph_input(const graph& g, value_id v) noexcept {
    return std::find(g.inputs.begin(), g.inputs.end(), v) != g.inputs.end();
}

/// Names the graph (and the bodies nested in it) uses from enclosing scopes, sorted, unique.
inline void free_names(const graph& g, std::vector<std::string>& out) {
    for (std::size_t v = 0; v < g.values.size(); ++v)
        if (g.values[v].kind == value_kind::input && !is_graph_input(g, static_cast<value_id>(v))) out.push_back(g.values[v].name);
    for (const node& n : g.nodes)
        for (const attribute& a : n.attributes)
            for (const graph& sub : a.graphs) {
                std::vector<std::string> inner;
                free_names(sub, inner);
                for (std::string& name : inner)
                    if (g.find_value(name) == no_value) out.push_back(std::move(name));
            }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
}

/// The names of a node's implicit inputs: everything its graph attributes capture, sorted.
inline std::vector<std::string> implicit_input_names(const node& n) {
    std::vector<std::string> names;
    for (const attribute& a : n.attributes)
        for (const graph& sub : a.graphs) free_names(sub, names);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

/// When g has nodes with subgraphs: fills `storage` with g's structure (values, nodes, inputs,
/// outputs, opsets; constants left empty, read them from g) where those nodes list their
/// implicit inputs last, and returns it; otherwise returns &g. Null, with `error` set, when a body
/// uses a name g does not have.
inline const graph* with_implicit_inputs(const graph& g, graph& storage, error_info& error) {
    bool any = false;
    for (const node& n : g.nodes) any = any || has_subgraphs(n);
    if (!any) return &g;
    storage.name = g.name;
    storage.values = g.values;
    storage.nodes = g.nodes;
    storage.inputs = g.inputs;
    storage.outputs = g.outputs;
    storage.opsets = g.opsets;
    storage.constants.clear();
    storage.constants.resize(g.constants.size());
    for (std::size_t i = 0; i < storage.nodes.size(); ++i) {
        node& n = storage.nodes[i];
        if (!has_subgraphs(n)) continue;
        for (const std::string& name : implicit_input_names(n)) {
            const value_id v = g.find_value(name);
            if (v == no_value || (g.values[v].kind == value_kind::input && !is_graph_input(g, v))) {
                error = error_info{status::invalid_model, static_cast<std::int32_t>(i),
                                   detail::format("{}: a subgraph uses '{}', which is not a value of the enclosing graph", describe_node(g, i), name)};
                return nullptr;
            }
            n.inputs.push_back(v);
        }
    }
    return &storage;
}

} // namespace detail
EMBER_NAMESPACE_END
