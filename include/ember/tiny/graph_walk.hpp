// SPDX-License-Identifier: Apache-2.0
// How a tiny network reads its weights out of a graph: graph_walk follows the chain of values
// from the graph's input to its output, one node at a time, skipping the ops that only relabel
// the shape (Identity, inference Dropout, Flatten, Reshape, Squeeze, Unsqueeze), and words every
// mismatch as "tiny network layer 2 of 3 (dense<64, 64, relu>): node 2 'fc2' (Gemm): ...".
// Load time only: allocates, never runs on the per-call path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/format.hpp"
#include "ember/graph/graph.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace tiny::detail {

/// Ops that leave the data as it is (row-major, same values, same order): skipped.
inline bool relabels_shape_only(const node& n) noexcept {
    if (!(n.domain.empty() || n.domain == "ai.onnx")) return false;
    if (n.op_type == "Dropout")  // inference only: no training_mode input, and the mask unused
        return (n.inputs.size() < 3 || n.inputs[2] == no_value) && (n.outputs.size() < 2 || n.outputs[1] == no_value);
    return n.op_type == "Identity" || n.op_type == "Flatten" || n.op_type == "Reshape" || n.op_type == "Squeeze" ||
           n.op_type == "Unsqueeze";
}

class graph_walk {
public:
    /// Where the chain goes next from a value: the node that reads it (-1 at the end of the
    /// chain) and the value that node reads (v itself, or v after the shape-only ops).
    struct step {
        std::int32_t node = -1;
        value_id value = no_value;
    };

    explicit graph_walk(const graph& g) : g_(g), readers_(g.values.size()) {
        for (std::size_t n = 0; n < g.nodes.size(); ++n)
            for (value_id v : g.nodes[n].inputs)
                if (v != no_value && v < readers_.size() &&
                    (readers_[v].empty() || readers_[v].back() != static_cast<std::uint32_t>(n)))
                    readers_[v].push_back(static_cast<std::uint32_t>(n));
        for (value_id v : g.inputs)
            if (v < g.values.size() && g.values[v].kind == value_kind::input) {
                current_ = v;
                break;
            }
    }

    const graph& g() const noexcept { return g_; }
    const node& at(std::int32_t n) const noexcept { return g_.nodes[static_cast<std::size_t>(n)]; }
    /// The value the next layer reads (the graph's first input at the start).
    value_id current() const noexcept { return current_; }
    void advance(value_id v) noexcept { current_ = v; }

    /// Names the layer that errors are about: 1-based index, count, "dense<32, 64, relu>".
    void enter_layer(std::size_t index, std::size_t count, std::string name) {
        layer_ = ember::detail::format("tiny network layer {} of {} ({})", index + 1, count, name);
    }

    /// An error about node n (or about the layer when n < 0), in the layer's words.
    error_info fail(status code, std::int32_t n, const std::string& what) const {
        std::string message = layer_.empty() ? std::string("tiny network") : layer_;
        message += ": ";
        if (n >= 0) message += describe_node(g_, static_cast<std::size_t>(n)) + ": ";
        message += what;
        return error_info{code, n, std::move(message)};
    }

    /// The node that reads v, past the shape-only ops; fails when two nodes read one value (a
    /// tiny network is a chain) or a shape-only op reads v as anything but its data input.
    result<step> reader_of(value_id v) const {
        for (;;) {
            if (v >= readers_.size()) return step{-1, v};
            const std::vector<std::uint32_t>& readers = readers_[v];
            if (readers.empty()) return step{-1, v};
            if (readers.size() > 1)
                return fail(status::unsupported_op, static_cast<std::int32_t>(readers[1]),
                            ember::detail::format("reads '{}', which {} already reads; a tiny network is a chain of layers, each "
                                           "value read by one node",
                                           g_.values[v].name, describe_node(g_, readers[0])));
            const std::int32_t n = static_cast<std::int32_t>(readers[0]);
            const node& nd = at(n);
            if (!relabels_shape_only(nd)) return step{n, v};
            if (nd.inputs.empty() || nd.inputs[0] != v || nd.outputs.empty() || nd.outputs[0] == no_value)
                return fail(status::unsupported_op, n, ember::detail::format("reads '{}' other than as its data input", g_.values[v].name));
            v = nd.outputs[0];
        }
    }

    /// The next node of the layer: the one that reads the current value. Fails when the chain
    /// ends (the graph has fewer layers) or the node is not one of `expected` ("Gemm or MatMul").
    result<step> next(std::string_view expected) const {
        result<step> s = reader_of(current_);
        if (!s) return s.error();
        if (s->node < 0)
            return fail(status::invalid_model, -1,
                        ember::detail::format("the graph ends at '{}'; expected {} here", value_name(s->value), expected));
        const node& nd = at(s->node);
        if (!(nd.domain.empty() || nd.domain == "ai.onnx"))
            return fail(status::unsupported_op, s->node, ember::detail::format("op of domain '{}'; expected {}", nd.domain, expected));
        return s;
    }

    /// Input k of node n as a float32 constant (an initializer, or a Constant node's value);
    /// fails when it is absent, computed at run time or of another dtype. `what`: "B", "W"...
    result<const tensor*> weight(std::int32_t n, std::size_t k, std::string_view what) const {
        const node& nd = at(n);
        if (k >= nd.inputs.size() || nd.inputs[k] == no_value)
            return fail(status::invalid_model, n, ember::detail::format("input {} ({}) is missing", k, what));
        const tensor* t = constant(nd.inputs[k]);
        if (t == nullptr)
            return fail(status::unsupported_op, n,
                        ember::detail::format("input {} ({}) '{}' is computed at run time; a tiny layer needs it as a constant", k,
                                       what, value_name(nd.inputs[k])));
        if (t->type() != dtype::float32)
            return fail(status::unsupported_op, n, ember::detail::format("input {} ({}) is {}; expected float32", k, what, t->type()));
        return t;
    }

    /// The constant behind v (initializer or Constant node's `value`), nullptr if none.
    const tensor* constant(value_id v) const noexcept {
        if (v >= g_.values.size()) return nullptr;
        if (const tensor* t = g_.constant_of(v)) return t;
        const value& val = g_.values[v];
        if (val.producer < 0) return nullptr;
        const node& p = at(val.producer);
        if (p.op_type != "Constant" || !(p.domain.empty() || p.domain == "ai.onnx")) return nullptr;
        const attribute* a = p.find_attribute("value");
        return a != nullptr && a->kind == attribute_kind::tensor ? &a->t : nullptr;
    }

    std::string value_name(value_id v) const {
        return v < g_.values.size() ? g_.values[v].name : ember::detail::format("value {}", v);
    }

    /// A recurrent layer's state: its initial_h input (a graph input) and its state output (a
    /// graph output besides the network's); finish() accepts them.
    void add_state_input(value_id v) { state_values_.push_back(v); }
    void add_state_output(value_id v) { state_values_.push_back(v); }
    bool is_state(value_id v) const noexcept {
        for (value_id s : state_values_)
            if (s == v) return true;
        return false;
    }
    /// Whether any node reads v (a GRU output that must not lead anywhere but out).
    bool read(value_id v) const noexcept { return v < readers_.size() && !readers_[v].empty(); }

    /// After the last layer: the chain must end at the graph's first output, and every other
    /// graph input and output must be a layer's state.
    result<void> finish(std::size_t layer_count) {
        layer_.clear();
        result<step> s = reader_of(current_);
        if (!s) return s.error();
        if (s->node >= 0)
            return fail(status::invalid_model, s->node,
                        ember::detail::format("the network has {} layers and they end at '{}', but the graph goes on", layer_count,
                                       value_name(s->value)));
        if (g_.outputs.empty() || g_.outputs[0] != s->value)
            return fail(status::invalid_model, -1,
                        ember::detail::format("the layers end at '{}', which is not the graph's first output", value_name(s->value)));
        for (std::size_t k = 1; k < g_.outputs.size(); ++k)
            if (!is_state(g_.outputs[k]))
                return fail(status::unsupported_op, -1,
                            ember::detail::format("graph output {} '{}' is neither the network's output nor a GRU's state", k,
                                           value_name(g_.outputs[k])));
        bool first = true;
        for (value_id v : g_.inputs) {
            if (v >= g_.values.size() || g_.values[v].kind != value_kind::input) continue;
            if (first) {
                first = false;
                continue;
            }
            if (!is_state(v))
                return fail(status::unsupported_op, -1,
                            ember::detail::format("graph input '{}' is neither the network's input nor a GRU's initial_h", value_name(v)));
        }
        return {};
    }

private:
    const graph& g_;
    std::vector<std::vector<std::uint32_t>> readers_;
    value_id current_ = no_value;
    std::string layer_;
    std::vector<value_id> state_values_;
};

/// An integer attribute of n, or `fallback` when absent.
inline std::int64_t int_attribute(const node& n, std::string_view name, std::int64_t fallback) noexcept {
    const attribute* a = n.find_attribute(name);
    return a != nullptr && a->kind == attribute_kind::integer ? a->i : fallback;
}

/// A float attribute of n, or `fallback` when absent.
inline float float_attribute(const node& n, std::string_view name, float fallback) noexcept {
    const attribute* a = n.find_attribute(name);
    return a != nullptr && a->kind == attribute_kind::floating ? a->f : fallback;
}

/// Whether t's shape is `dims` exactly.
inline bool has_dims(const tensor& t, std::initializer_list<std::int64_t> dims) noexcept {
    if (t.rank() != dims.size()) return false;
    std::size_t k = 0;
    for (std::int64_t d : dims)
        if (t.dims()[k++] != d) return false;
    return true;
}

/// Whether t holds n values along its last axis and 1 along every other: [n], [1, n], [1, 1, n]...
inline bool is_row(const tensor& t, std::size_t n) noexcept {
    if (t.rank() == 0) return n == 1;
    for (std::size_t k = 0; k + 1 < t.rank(); ++k)
        if (t.dims()[k] != 1) return false;
    return t.dims()[t.rank() - 1] == static_cast<std::int64_t>(n);
}

/// Whether dimension k of s is `value`, unknown, or absent (s has fewer dimensions).
inline bool dim_is(const partial_shape& s, std::size_t k, std::size_t value) noexcept {
    return k >= s.dims.size() || !s.dims[k].known() || s.dims[k].value == static_cast<std::int64_t>(value);
}

/// Matches a layer's activation node (none for identity) at walk's current value; with commit,
/// act reads its attributes (LeakyRelu's alpha). Act is one of activation.hpp's types.
template <class Act>
result<void> load_activation(graph_walk& walk, Act& act, bool commit) {
    if constexpr (!Act::onnx_name.empty()) {
        result<graph_walk::step> a = walk.next(Act::onnx_name);
        if (!a) return a.error();
        const node& an = walk.at(a->node);
        if (an.op_type != Act::onnx_name)
            return walk.fail(status::unsupported_op, a->node, ember::detail::format("expected {}, the layer's activation", Act::onnx_name));
        if (commit) act.read_attributes(an);
        walk.advance(an.outputs[0]);
    } else {
        (void)walk;
        (void)act;
        (void)commit;
    }
    return {};
}

} // namespace tiny::detail
EMBER_NAMESPACE_END
