// SPDX-License-Identifier: Apache-2.0
// ember-run --dot: a graph as Graphviz DOT (`dot -Tsvg FILE.dot -o FILE.svg`). ember-run gives it
// ember::optimize()'s graph, the one compile() turns into steps, so what the passes did shows:
// one box per node, labelled with its op and name; the nodes the fusion pass made (domain
// "ember": FusedConv, FusedGemm, FusedMatMul) are filled and labelled with what they fused,
// "Conv+Add+Relu"; graph inputs and outputs are ellipses; constants (weights) are left out.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <ember/ember.hpp>

namespace example {

/// Whether the fusion pass made n (ops/fused.hpp).
inline bool is_fused(const ember::node& n) { return n.domain == "ember" && n.op_type.compare(0, 5, "Fused") == 0; }

/// The op as a label: "Relu"; for a fused node the ops it does, "Conv+Add+Relu" for
/// FusedConv(X, W, B, Z) with activation "Relu" (inputs: X, W, bias, residual Z).
inline std::string op_label(const ember::node& n) {
    if (!is_fused(n)) return n.op_type;
    std::string label = n.op_type.substr(5);
    const auto has = [&](std::size_t i) { return i < n.inputs.size() && n.inputs[i] != ember::no_value; };
    if (n.op_type == "FusedMatMul" && has(2)) label += "+Add";  // MatMul's bias
    if (has(3)) label += "+Add";                              // the residual
    if (const ember::attribute* a = n.find_attribute("activation"); a && !a->s.empty()) label += "+" + a->s;
    return label;
}

/// s inside a DOT string literal: quotes and backslashes escaped, line breaks and other control
/// characters as spaces (in a label DOT reads "\n" as a line break: graph_dot() puts its own).
inline std::string dot_escaped(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
    return out;
}

inline std::string dot_quoted(std::string_view s) { return "\"" + dot_escaped(s) + "\""; }

/// g as a DOT digraph (see the top of this file).
inline std::string graph_dot(const ember::graph& g) {
    std::string out = "digraph " + dot_quoted(g.name.empty() ? "graph" : g.name) + " {\n";
    out += "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n  edge [color=\"#555555\"];\n";
    const auto input_id = [](ember::value_id v) { return "i" + std::to_string(v); };
    const auto node_id = [](std::size_t i) { return "n" + std::to_string(i); };
    for (ember::value_id v : g.inputs)
        out += "  " + input_id(v) + " [shape=ellipse, label=" + dot_quoted(g.values[v].name) + "];\n";
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const ember::node& n = g.nodes[i];
        const std::string label = dot_escaped(op_label(n)) + (n.name.empty() ? "" : "\\n" + dot_escaped(n.name));
        out += "  " + node_id(i) + " [label=\"" + label + "\"";
        if (is_fused(n)) out += ", style=\"rounded,filled\", fillcolor=\"#ffd8a8\"";
        out += "];\n";
    }
    // An edge from the producer of each value a node or the graph output reads.
    const auto source = [&](ember::value_id v) -> std::string {
        if (v == ember::no_value || v >= g.values.size()) return {};
        const ember::value& val = g.values[v];
        if (val.kind == ember::value_kind::input) return input_id(v);
        if (val.kind == ember::value_kind::node_output && val.producer >= 0) return node_id(static_cast<std::size_t>(val.producer));
        return {};  // a constant
    };
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        for (ember::value_id v : g.nodes[i].inputs)
            if (const std::string from = source(v); !from.empty()) out += "  " + from + " -> " + node_id(i) + ";\n";
    for (std::size_t k = 0; k < g.outputs.size(); ++k) {
        const std::string id = "o" + std::to_string(k);
        out += "  " + id + " [shape=ellipse, label=" + dot_quoted(g.values[g.outputs[k]].name) + "];\n";
        if (const std::string from = source(g.outputs[k]); !from.empty()) out += "  " + from + " -> " + id + ";\n";
    }
    return out + "}\n";
}

} // namespace example
