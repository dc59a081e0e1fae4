// SPDX-License-Identifier: Apache-2.0
// validate(): structural checks on a graph (every id in range, each value produced once, names
// unique, no cycle) and the topological order compile() schedules by.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/config.hpp"
#include "ember/graph/graph.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN

/// Checks the graph's structure and returns its nodes in an order where each node comes after
/// the producers of its inputs (stable: ties keep the graph's own order). Fails with
/// invalid_model naming the node or value: an unknown value id, a value produced twice or never,
/// a duplicate value or node name, a cycle. Allocates; does not look at ops or shapes.
[[nodiscard]] inline result<std::vector<std::uint32_t>> validate(const graph& g) {
    const std::size_t nv = g.values.size();
    auto fail = [](std::int32_t node, std::string msg) { return error_info{status::invalid_model, node, std::move(msg)}; };

    std::unordered_map<std::string, value_id> names;
    for (std::size_t v = 0; v < nv; ++v) {
        const value& val = g.values[v];
        if (val.name.empty()) return fail(-1, detail::format("value {} has no name", v));
        if (!names.emplace(val.name, static_cast<value_id>(v)).second)
            return fail(-1, detail::format("two values are named '{}'", val.name));
        if (val.kind == value_kind::constant &&
            (val.constant < 0 || static_cast<std::size_t>(val.constant) >= g.constants.size()))
            return fail(-1, detail::format("constant '{}' refers to constant {} of {}", val.name, val.constant, g.constants.size()));
    }

    std::vector<std::int32_t> producer(nv, -1);
    std::unordered_map<std::string, std::size_t> node_names;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const node& n = g.nodes[i];
        const auto ni = static_cast<std::int32_t>(i);
        if (!n.name.empty() && !node_names.emplace(n.name, i).second)
            return fail(ni, detail::format("{}: another node is also named '{}'", describe_node(g, i), n.name));
        if (n.op_type.empty()) return fail(ni, detail::format("{}: node has no op type", describe_node(g, i)));
        for (std::size_t k = 0; k < n.inputs.size(); ++k)
            if (n.inputs[k] != no_value && n.inputs[k] >= nv)
                return fail(ni, detail::format("{}: input {} refers to unknown value {}", describe_node(g, i), k, n.inputs[k]));
        for (std::size_t k = 0; k < n.outputs.size(); ++k) {
            const value_id o = n.outputs[k];
            if (o == no_value) continue;
            if (o >= nv) return fail(ni, detail::format("{}: output {} refers to unknown value {}", describe_node(g, i), k, o));
            if (g.values[o].kind != value_kind::node_output)
                return fail(ni, detail::format("{}: output {} '{}' is a graph input or constant", describe_node(g, i), k, g.values[o].name));
            if (producer[o] >= 0)
                return fail(ni, detail::format("{}: value '{}' is already produced by {}", describe_node(g, i), g.values[o].name,
                                               describe_node(g, static_cast<std::size_t>(producer[o]))));
            producer[o] = ni;
        }
    }
    for (std::size_t v = 0; v < nv; ++v)
        if (g.values[v].kind == value_kind::node_output && producer[v] < 0) {
            bool used = false;
            for (const node& n : g.nodes)
                for (value_id in : n.inputs) used = used || in == v;
            for (value_id out : g.outputs) used = used || out == v;
            if (used) return fail(-1, detail::format("value '{}' is used but no node produces it", g.values[v].name));
        }
    for (value_id in : g.inputs)
        if (in >= nv || g.values[in].kind != value_kind::input)
            return fail(-1, detail::format("graph input {} is not an input value", in));
    if (g.outputs.empty()) return fail(-1, "the graph has no outputs");
    for (value_id out : g.outputs)
        if (out >= nv) return fail(-1, detail::format("graph output refers to unknown value {}", out));

    // Kahn's algorithm, taking the lowest-index ready node first so the order is stable.
    const std::size_t nn = g.nodes.size();
    std::vector<std::uint32_t> missing(nn, 0);
    std::vector<std::vector<std::uint32_t>> consumers(nv);
    for (std::size_t i = 0; i < nn; ++i)
        for (value_id in : g.nodes[i].inputs)
            if (in != no_value && producer[in] >= 0) {
                ++missing[i];
                consumers[in].push_back(static_cast<std::uint32_t>(i));
            }
    std::vector<std::uint32_t> order;
    order.reserve(nn);
    std::vector<std::uint32_t> ready;
    for (std::size_t i = nn; i-- > 0;)
        if (missing[i] == 0) ready.push_back(static_cast<std::uint32_t>(i));
    while (!ready.empty()) {
        // ready is kept sorted descending, so back() is the lowest index.
        const std::uint32_t i = ready.back();
        ready.pop_back();
        order.push_back(i);
        for (value_id out : g.nodes[i].outputs) {
            if (out == no_value) continue;
            for (std::uint32_t c : consumers[out])
                if (--missing[c] == 0) {
                    auto it = ready.begin();
                    while (it != ready.end() && *it > c) ++it;
                    ready.insert(it, c);
                }
        }
    }
    if (order.size() != nn) {
        for (std::size_t i = 0; i < nn; ++i)
            if (missing[i] != 0)
                return fail(static_cast<std::int32_t>(i), detail::format("{}: the graph has a cycle through this node", describe_node(g, i)));
    }
    return order;
}

EMBER_NAMESPACE_END
