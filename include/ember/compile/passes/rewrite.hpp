// SPDX-License-Identifier: Apache-2.0
// graph_rewrite: a graph being rewritten by the passes (compile/passes/), with what they ask of
// it (who reads a value, is it a constant, its shape once inferred, may it be renamed) and the
// edits they make (rewire inputs, retarget outputs, drop nodes, add constants). Value ids never
// change (a value a pass bypasses stays, unused); node indices change once, in finish().
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/config.hpp"
#include "ember/graph/graph.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/registry.hpp"
#include "ember/ops/subgraph.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

/// What finish() did to the node list.
struct rewrite_result {
    std::vector<std::uint32_t> new_index;  ///< per node before: its index after, or removed_node
    std::vector<bool> modified;            ///< per node after: a pass changed its op, inputs or outputs
    static constexpr std::uint32_t removed_node = 0xffffffffu;
};

class graph_rewrite {
public:
    /// g: the graph to rewrite in place; its constants at indices below base.constants.size() may
    /// be empty placeholders for base's (the compiler's copy of the user's graph). origin: per
    /// node of g, the index of the user's node it comes from (kept parallel to g.nodes). states:
    /// the compiler's inferred dtypes, shapes and compile-time values per value (null before
    /// shape inference; passes that need shapes do nothing without them). custom: the user's ops;
    /// a node they implement is never rewritten.
    graph_rewrite(graph& g, const graph& base, std::vector<std::int32_t>& origin, const op_registry* custom,
                  const std::vector<value_state>* states = nullptr)
        : g_(g), base_(base), origin_(origin), custom_(custom), states_(states) {
        const std::size_t nv = g.values.size();
        consumers_.assign(nv, {});
        output_.assign(nv, false);
        captured_.assign(nv, false);
        removed_.assign(g.nodes.size(), false);
        modified_.assign(g.nodes.size(), false);
        for (std::size_t v = 0; v < nv; ++v) {
            names_.emplace(g.values[v].name, static_cast<value_id>(v));
            if (g.values[v].kind == value_kind::node_output) g.values[v].producer = -1;
        }
        for (std::size_t i = 0; i < g.nodes.size(); ++i) {
            const node& n = g.nodes[i];
            for (value_id in : n.inputs)
                if (in != no_value) consumers_[in].push_back(static_cast<std::uint32_t>(i));
            for (value_id out : n.outputs)
                if (out != no_value) g.values[out].producer = static_cast<std::int32_t>(i);
        }
        for (value_id out : g.outputs) output_[out] = true;
        for (const node& n : g.nodes)
            for (value_id v : captured_by(n)) captured_[v] = true;
    }

    graph& g() noexcept { return g_; }
    const graph& g() const noexcept { return g_; }
    node& at(std::size_t i) noexcept { return g_.nodes[i]; }
    const node& at(std::size_t i) const noexcept { return g_.nodes[i]; }
    std::size_t node_count() const noexcept { return g_.nodes.size(); }
    bool removed(std::size_t i) const noexcept { return removed_[i]; }
    bool shapes_known() const noexcept { return states_ != nullptr; }

    /// The values of the enclosing graph that n's bodies use by name (none without subgraphs).
    std::vector<value_id> captured_by(const node& n) const {
        std::vector<value_id> ids;
        if (!has_subgraphs(n)) return ids;
        for (const std::string& name : implicit_input_names(n))
            if (const value_id v = find(name); v != no_value) ids.push_back(v);
        return ids;
    }
    value_id find(std::string_view name) const {
        const auto it = names_.find(std::string(name));
        return it == names_.end() ? no_value : it->second;
    }

    /// Node i is the standard-domain op `op_type`, not removed, and not one the user replaced.
    bool is(std::size_t i, std::string_view op_type) const {
        const node& n = g_.nodes[i];
        if (removed_[i] || n.op_type != op_type || !(n.domain.empty() || n.domain == "ai.onnx")) return false;
        return !custom_ || !custom_->find(n.op_type, n.domain);
    }
    /// The node that produces v, or -1 (inputs, constants, values a pass bypassed).
    std::int32_t producer(value_id v) const noexcept { return v == no_value ? -1 : g_.values[v].producer; }
    /// The nodes that read v, once per input slot that names it.
    const std::vector<std::uint32_t>& consumers(value_id v) const noexcept { return consumers_[v]; }
    bool is_output(value_id v) const noexcept { return output_[v]; }
    /// A value that must keep its name and producer: a graph output, or used by name by a body.
    bool pinned(value_id v) const noexcept { return output_[v] || captured_[v]; }
    /// v is read by exactly one node input and is not pinned: a pass may fold it away.
    bool single_use(value_id v) const noexcept { return !pinned(v) && consumers_[v].size() == 1; }

    /// v's value when known now: a constant of the graph or, after shape inference, a value the
    /// compiler knows (folded, or fixed by input_values).
    const tensor* constant(value_id v) const noexcept {
        if (v == no_value) return nullptr;
        if (states_) return (*states_)[v].constant;
        const value& val = g_.values[v];
        if (val.kind != value_kind::constant || val.constant < 0) return nullptr;
        const auto i = static_cast<std::size_t>(val.constant);
        return i < base_.constants.size() ? &base_.constants[i] : &g_.constants[i];
    }
    /// The inferred shape and dtype (shapes_known() only).
    const shape& shape_of(value_id v) const noexcept { return (*states_)[v].dims; }
    dtype type_of(value_id v) const noexcept { return (*states_)[v].type; }
    bool known(value_id v) const noexcept { return states_ && v != no_value && (*states_)[v].known; }

    // -- edits ------------------------------------------------------------------------------

    /// Node i's input k reads v (no_value: absent); the input list grows with no_value as needed.
    void set_input(std::size_t i, std::size_t k, value_id v) {
        node& n = g_.nodes[i];
        if (k >= n.inputs.size()) n.inputs.resize(k + 1, no_value);
        drop_consumer(n.inputs[k], i);
        n.inputs[k] = v;
        if (v != no_value) consumers_[v].push_back(static_cast<std::uint32_t>(i));
        modified_[i] = true;
    }
    /// Every node input that reads `from` reads `to` instead (graph outputs are not touched).
    void replace_uses(value_id from, value_id to) {
        const std::vector<std::uint32_t> readers = consumers_[from];
        for (std::uint32_t c : readers) {
            node& n = g_.nodes[c];
            for (std::size_t k = 0; k < n.inputs.size(); ++k)
                if (n.inputs[k] == from) set_input(c, k, to);
        }
    }
    /// Node i's output k becomes v (which loses its old producer); the old output is left unused.
    void set_output(std::size_t i, std::size_t k, value_id v) {
        node& n = g_.nodes[i];
        if (n.outputs[k] != no_value) g_.values[n.outputs[k]].producer = -1;
        if (const std::int32_t p = producer(v); p >= 0) {
            for (value_id& o : g_.nodes[static_cast<std::size_t>(p)].outputs)
                if (o == v) o = no_value;
        }
        n.outputs[k] = v;
        g_.values[v].producer = static_cast<std::int32_t>(i);
        modified_[i] = true;
    }
    /// Drops node i; its outputs are left without a producer.
    void remove_node(std::size_t i) {
        node& n = g_.nodes[i];
        for (value_id in : n.inputs) drop_consumer(in, i);
        for (value_id out : n.outputs)
            if (out != no_value && g_.values[out].producer == static_cast<std::int32_t>(i)) g_.values[out].producer = -1;
        removed_[i] = true;
    }
    void mark_modified(std::size_t i) { modified_[i] = true; }

    /// Adds a constant named after `hint` (made unique) and returns its value. Before shape
    /// inference only: the compiler does not know values added after it.
    value_id add_constant(const std::string& hint, tensor t) {
        EMBER_ASSERT(!states_, "constants are added before shape inference");
        std::string name = hint;
        for (int k = 1; names_.count(name) != 0; ++k) name = hint + "_" + std::to_string(k);
        value v;
        v.name = name;
        v.kind = value_kind::constant;
        v.type = t.type();
        v.declared = partial_shape(t.dims());
        v.constant = static_cast<std::int32_t>(g_.constants.size());
        g_.constants.push_back(std::move(t));
        const auto id = static_cast<value_id>(g_.values.size());
        g_.values.push_back(std::move(v));
        names_.emplace(name, id);
        consumers_.emplace_back();
        output_.push_back(false);
        captured_.push_back(false);
        return id;
    }

    /// Removes the dropped nodes from g (node indices change here) and says how.
    rewrite_result finish() {
        rewrite_result r;
        r.new_index.assign(g_.nodes.size(), rewrite_result::removed_node);
        std::vector<node> kept;
        std::vector<std::int32_t> origin;
        for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
            if (removed_[i]) continue;
            r.new_index[i] = static_cast<std::uint32_t>(kept.size());
            r.modified.push_back(modified_[i]);
            origin.push_back(origin_[i]);
            kept.push_back(std::move(g_.nodes[i]));
        }
        g_.nodes = std::move(kept);
        origin_ = std::move(origin);
        for (value& v : g_.values)
            if (v.producer >= 0) v.producer = static_cast<std::int32_t>(r.new_index[static_cast<std::size_t>(v.producer)]);
        return r;
    }

private:
    void drop_consumer(value_id v, std::size_t i) {
        if (v == no_value) return;
        std::vector<std::uint32_t>& c = consumers_[v];
        for (std::size_t k = 0; k < c.size(); ++k)
            if (c[k] == i) {
                c.erase(c.begin() + static_cast<std::ptrdiff_t>(k));
                return;
            }
    }

    graph& g_;
    const graph& base_;
    std::vector<std::int32_t>& origin_;
    const op_registry* custom_;
    const std::vector<value_state>* states_;
    std::unordered_map<std::string, value_id> names_;
    std::vector<std::vector<std::uint32_t>> consumers_;
    std::vector<bool> output_;
    std::vector<bool> captured_;
    std::vector<bool> removed_;
    std::vector<bool> modified_;
};

/// Removes node i, whose output y holds its input x unchanged: whoever reads y reads x. When y
/// must keep its name (a graph output, or used by a body), x's producer writes y instead, if x
/// may be renamed; otherwise (x is an input, a constant, or pinned itself) the node stays.
/// Returns whether it was removed.
inline bool bypass_node(graph_rewrite& rw, std::size_t i, value_id x, value_id y) {
    if (x == no_value || y == no_value || x == y) return false;
    if (!rw.pinned(y)) {
        rw.remove_node(i);
        rw.replace_uses(y, x);
        return true;
    }
    const std::int32_t p = rw.producer(x);
    if (p < 0 || rw.pinned(x) || rw.constant(x)) return false;
    const node& pn = rw.at(static_cast<std::size_t>(p));
    std::size_t k = 0;
    while (k < pn.outputs.size() && pn.outputs[k] != x) ++k;
    if (k == pn.outputs.size()) return false;
    rw.remove_node(i);
    rw.replace_uses(x, y);
    rw.set_output(static_cast<std::size_t>(p), k, y);
    return true;
}

/// The float32 values of a constant (null when t is not float32).
inline const float* f32_data(const tensor* t) noexcept { return t && t->type() == dtype::float32 ? t->data<float>() : nullptr; }

/// A one-element float32 constant's value.
inline bool scalar_f32(const tensor* t, float& out) noexcept {
    if (!t || t->type() != dtype::float32 || t->size() != 1) return false;
    out = t->data<float>()[0];
    return true;
}

/// A Clip node's bounds when they are known at compile time: the min / max attributes before
/// opset 11, constant inputs 1 and 2 from then on; an absent bound is the float range's end (the
/// ONNX default). False for a run-time bound or an unexpected attribute.
inline bool clip_bounds(const graph_rewrite& rw, const node& n, float& lo, float& hi) {
    lo = std::numeric_limits<float>::lowest();  // ONNX's defaults
    hi = std::numeric_limits<float>::max();
    if (rw.g().opset_version("") < 11) {
        if (n.inputs.size() != 1) return false;
        for (const attribute& a : n.attributes) {
            if (a.kind != attribute_kind::floating) return false;
            if (a.name == "min") lo = a.f;
            else if (a.name == "max") hi = a.f;
            else return false;
        }
        return true;
    }
    if (!n.attributes.empty() || n.inputs.size() > 3) return false;
    for (std::size_t k = 1; k < n.inputs.size(); ++k) {
        const value_id v = n.inputs[k];
        if (v == no_value) continue;
        const tensor* t = rw.constant(v);
        // before shape inference a Constant node's output is not a constant yet: read its value
        // (torch exports Relu6's bounds that way)
        const std::int32_t p = rw.producer(v);
        if (!t && p >= 0 && rw.is(static_cast<std::size_t>(p), "Constant")) {
            const attribute* a = rw.at(static_cast<std::size_t>(p)).find_attribute("value");
            if (a && a->kind == attribute_kind::tensor) t = &a->t;
        }
        if (!scalar_f32(t, k == 1 ? lo : hi)) return false;
    }
    return true;
}

/// The ints of an attribute of kind ints; false when absent or another kind.
inline bool ints_attribute(const node& n, std::string_view name, std::vector<std::int64_t>& out) {
    const attribute* a = n.find_attribute(name);
    if (!a || a->kind != attribute_kind::ints) return false;
    out = a->ints;
    return true;
}

/// Sets (or adds) an attribute on n.
inline void set_attribute(node& n, attribute a) {
    for (attribute& existing : n.attributes)
        if (existing.name == a.name) {
            existing = std::move(a);
            return;
        }
    n.attributes.push_back(std::move(a));
}

} // namespace detail
EMBER_NAMESPACE_END
