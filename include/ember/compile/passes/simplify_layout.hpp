// SPDX-License-Identifier: Apache-2.0
// Transpose/Reshape simplification (compile_options::passes.layout_simplification), each a
// copy step saved:
//   - Transpose(Transpose(x, p1), p2) becomes one Transpose of x by the composed permutation, and
//     disappears when that is the identity; a Transpose by the identity permutation is removed.
//   - Reshape(Reshape(x, s1), s2) becomes Reshape(x, s2) when s2 is a constant that does not copy
//     dimensions from its input (no 0, or allowzero = 1).
//   - After shape inference: a Reshape whose output has its input's shape is removed.
// Exporters emit these around attention heads and channel shuffles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/compile/passes/rewrite.hpp"
#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

/// p is a permutation of 0..p.size()-1.
inline bool is_permutation(const std::vector<std::int64_t>& p) {
    std::vector<bool> seen(p.size(), false);
    for (std::int64_t v : p) {
        if (v < 0 || static_cast<std::size_t>(v) >= p.size() || seen[static_cast<std::size_t>(v)]) return false;
        seen[static_cast<std::size_t>(v)] = true;
    }
    return true;
}

inline bool is_identity_permutation(const std::vector<std::int64_t>& p) {
    for (std::size_t i = 0; i < p.size(); ++i)
        if (p[i] != static_cast<std::int64_t>(i)) return false;
    return true;
}

/// Transpose node i with an explicit, valid `perm` (and no other attribute).
inline bool transpose_perm(const graph_rewrite& rw, std::size_t i, std::vector<std::int64_t>& perm) {
    const node& n = rw.at(i);
    if (!rw.is(i, "Transpose") || n.inputs.size() != 1 || n.outputs.size() != 1 || n.attributes.size() != 1) return false;
    return ints_attribute(n, "perm", perm) && is_permutation(perm);
}

/// Reshape node i with a constant shape input that does not depend on its data input's dims.
inline bool reshape_independent_of_input(const graph_rewrite& rw, std::size_t i) {
    const node& n = rw.at(i);
    if (!rw.is(i, "Reshape") || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
    bool allow_zero = false;
    for (const attribute& a : n.attributes) {
        if (a.name == "allowzero" && a.kind == attribute_kind::integer) allow_zero = a.i != 0;
        else return false;
    }
    const tensor* s = rw.constant(n.inputs[1]);
    std::vector<std::int64_t> dims;
    if (!s || !infer_context::ints_of(*s, dims)) return false;
    if (!allow_zero)
        for (std::int64_t d : dims)
            if (d == 0) return false;
    return true;
}

/// The shape-free simplifications. Returns how many nodes they removed.
inline std::size_t simplify_layout(graph_rewrite& rw) {
    std::size_t removed = 0;
    std::vector<std::int64_t> p1, p2;
    for (std::size_t i = 0; i < rw.node_count(); ++i) {
        if (transpose_perm(rw, i, p2)) {
            const value_id x1 = rw.at(i).inputs[0];
            const std::int32_t t1 = rw.producer(x1);
            if (t1 >= 0 && rw.single_use(x1) && transpose_perm(rw, static_cast<std::size_t>(t1), p1) && p1.size() == p2.size()) {
                // output dim k of the pair is dim p2[k] of x1, which is dim p1[p2[k]] of x
                std::vector<std::int64_t> composed(p2.size());
                for (std::size_t k = 0; k < p2.size(); ++k) composed[k] = p1[static_cast<std::size_t>(p2[k])];
                rw.remove_node(static_cast<std::size_t>(t1));
                rw.set_input(i, 0, rw.at(static_cast<std::size_t>(t1)).inputs[0]);
                set_attribute(rw.at(i), attribute::of("perm", composed));
                ++removed;
                p2 = composed;
            }
            if (is_identity_permutation(p2) && bypass_node(rw, i, rw.at(i).inputs[0], rw.at(i).outputs[0])) ++removed;
            continue;
        }
        if (reshape_independent_of_input(rw, i)) {
            const value_id x1 = rw.at(i).inputs[0];
            const std::int32_t r1 = rw.producer(x1);
            if (r1 >= 0 && rw.single_use(x1) && rw.is(static_cast<std::size_t>(r1), "Reshape") && !rw.at(static_cast<std::size_t>(r1)).inputs.empty()) {
                rw.remove_node(static_cast<std::size_t>(r1));
                rw.set_input(i, 0, rw.at(static_cast<std::size_t>(r1)).inputs[0]);
                ++removed;
            }
        }
    }
    return removed;
}

/// After shape inference: Reshapes that keep their input's shape. Returns how many it removed.
inline std::size_t remove_noop_reshapes(graph_rewrite& rw) {
    std::size_t removed = 0;
    for (std::size_t i = 0; i < rw.node_count(); ++i) {
        if (!rw.is(i, "Reshape")) continue;
        const node& n = rw.at(i);
        if (n.inputs.empty() || n.outputs.size() != 1) continue;
        const value_id x = n.inputs[0], y = n.outputs[0];
        if (!rw.known(x) || !rw.known(y) || rw.constant(y) || rw.shape_of(x) != rw.shape_of(y) || rw.type_of(x) != rw.type_of(y)) continue;
        if (bypass_node(rw, i, x, y)) ++removed;
    }
    return removed;
}

} // namespace detail
EMBER_NAMESPACE_END
