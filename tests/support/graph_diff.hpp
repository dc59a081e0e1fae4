// SPDX-License-Identifier: Apache-2.0
// graph_diff(a, b): the first difference between two graphs, field by field (values, nodes,
// attributes of every kind, constants' bytes, subgraphs, inputs, outputs, opsets), or "" when
// they are the same. Floats are compared by their bits.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <ember/ember.hpp>

namespace ember::test {

namespace detail {

inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

inline std::string tensor_diff(const tensor& a, const tensor& b, const std::string& where) {
    if (a.type() != b.type()) return where + ": dtype " + std::string(to_string(a.type())) + " vs " + std::string(to_string(b.type()));
    if (a.dims() != b.dims()) return where + ": shape " + ember::detail::format("{} vs {}", a.dims(), b.dims());
    if (a.size_bytes() != b.size_bytes() || (a.size_bytes() && std::memcmp(a.bytes(), b.bytes(), a.size_bytes()) != 0))
        return where + ": bytes differ";
    return "";
}

inline std::string graph_diff(const graph& a, const graph& b, const std::string& where);

inline std::string attribute_diff(const attribute& a, const attribute& b, const std::string& where) {
    if (a.name != b.name) return where + ": name '" + a.name + "' vs '" + b.name + "'";
    const std::string at = where + " '" + a.name + "'";
    if (a.kind != b.kind) return at + ": kind " + std::string(to_string(a.kind)) + " vs " + std::string(to_string(b.kind));
    if (!same_bits(a.f, b.f)) return at + ": f differs";
    if (a.i != b.i) return at + ": i differs";
    if (a.s != b.s) return at + ": s differs";
    if (std::string d = tensor_diff(a.t, b.t, at + " t"); !d.empty()) return d;
    if (a.floats.size() != b.floats.size()) return at + ": floats count differs";
    for (std::size_t k = 0; k < a.floats.size(); ++k)
        if (!same_bits(a.floats[k], b.floats[k])) return at + ": floats[" + std::to_string(k) + "] differs";
    if (a.ints != b.ints) return at + ": ints differ";
    if (a.strings != b.strings) return at + ": strings differ";
    if (a.tensors.size() != b.tensors.size()) return at + ": tensors count differs";
    for (std::size_t k = 0; k < a.tensors.size(); ++k)
        if (std::string d = tensor_diff(a.tensors[k], b.tensors[k], at + " tensors[" + std::to_string(k) + "]"); !d.empty()) return d;
    if (a.graphs.size() != b.graphs.size()) return at + ": graphs count differs";
    for (std::size_t k = 0; k < a.graphs.size(); ++k)
        if (std::string d = graph_diff(a.graphs[k], b.graphs[k], at + " graphs[" + std::to_string(k) + "]"); !d.empty()) return d;
    return "";
}

inline std::string graph_diff(const graph& a, const graph& b, const std::string& where) {
    if (a.name != b.name) return where + ": name '" + a.name + "' vs '" + b.name + "'";
    if (a.values.size() != b.values.size())
        return where + ": " + std::to_string(a.values.size()) + " vs " + std::to_string(b.values.size()) + " values";
    for (std::size_t k = 0; k < a.values.size(); ++k) {
        const value& x = a.values[k];
        const value& y = b.values[k];
        const std::string at = where + " value " + std::to_string(k) + " '" + x.name + "'";
        if (x.name != y.name) return at + ": name vs '" + y.name + "'";
        if (x.kind != y.kind) return at + ": kind differs";
        if (x.type != y.type) return at + ": dtype " + std::string(to_string(x.type)) + " vs " + std::string(to_string(y.type));
        if (x.producer != y.producer || x.constant != y.constant) return at + ": producer or constant index differs";
        if (x.declared.rank_known != y.declared.rank_known || x.declared.dims.size() != y.declared.dims.size())
            return at + ": declared rank differs";
        for (std::size_t d = 0; d < x.declared.dims.size(); ++d)
            if (x.declared.dims[d].value != y.declared.dims[d].value || x.declared.dims[d].symbol != y.declared.dims[d].symbol)
                return at + ": declared dimension " + std::to_string(d) + " differs";
    }
    if (a.nodes.size() != b.nodes.size())
        return where + ": " + std::to_string(a.nodes.size()) + " vs " + std::to_string(b.nodes.size()) + " nodes";
    for (std::size_t k = 0; k < a.nodes.size(); ++k) {
        const node& x = a.nodes[k];
        const node& y = b.nodes[k];
        const std::string at = where + " " + describe_node(a, k);
        if (x.name != y.name || x.op_type != y.op_type || x.domain != y.domain)
            return at + ": name, op type or domain differs ('" + y.name + "' " + y.op_type + " '" + y.domain + "')";
        if (x.inputs != y.inputs) return at + ": inputs differ";
        if (x.outputs != y.outputs) return at + ": outputs differ";
        if (x.attributes.size() != y.attributes.size())
            return at + ": " + std::to_string(x.attributes.size()) + " vs " + std::to_string(y.attributes.size()) + " attributes";
        for (std::size_t n = 0; n < x.attributes.size(); ++n)
            if (std::string d = attribute_diff(x.attributes[n], y.attributes[n], at + " attribute " + std::to_string(n)); !d.empty()) return d;
    }
    if (a.constants.size() != b.constants.size()) return where + ": constant count differs";
    for (std::size_t k = 0; k < a.constants.size(); ++k)
        if (std::string d = tensor_diff(a.constants[k], b.constants[k], where + " constant " + std::to_string(k)); !d.empty()) return d;
    if (a.inputs != b.inputs) return where + ": inputs differ";
    if (a.outputs != b.outputs) return where + ": outputs differ";
    if (a.opsets.size() != b.opsets.size()) return where + ": opset count differs";
    for (std::size_t k = 0; k < a.opsets.size(); ++k)
        if (a.opsets[k].domain != b.opsets[k].domain || a.opsets[k].version != b.opsets[k].version)
            return where + ": opset " + std::to_string(k) + " differs";
    return "";
}

} // namespace detail

/// The first difference between a and b, or "" when they are the same graph.
inline std::string graph_diff(const graph& a, const graph& b) { return detail::graph_diff(a, b, "graph"); }

} // namespace ember::test
