// SPDX-License-Identifier: Apache-2.0
// The graph IR: plain data that the ONNX importer and graph_builder produce and compile() reads.
// Values are numbered (value_id); nodes name their inputs and outputs by id; constants own their
// bytes. Nothing here is executed: see compile() and session.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/tensor.hpp"

EMBER_NAMESPACE_BEGIN

using value_id = std::uint32_t;

/// Marks an absent optional input (ONNX's empty input name).
inline constexpr value_id no_value = 0xffffffffu;

class graph;

enum class attribute_kind : std::uint8_t { undefined, floating, integer, string, tensor, graph, floats, ints, strings, tensors, graphs };

[[nodiscard]] constexpr std::string_view to_string(attribute_kind k) noexcept {
    switch (k) {
        case attribute_kind::floating: return "float";
        case attribute_kind::integer: return "int";
        case attribute_kind::string: return "string";
        case attribute_kind::tensor: return "tensor";
        case attribute_kind::graph: return "graph";
        case attribute_kind::floats: return "floats";
        case attribute_kind::ints: return "ints";
        case attribute_kind::strings: return "strings";
        case attribute_kind::tensors: return "tensors";
        case attribute_kind::graphs: return "graphs";
        case attribute_kind::undefined: break;
    }
    return "undefined";
}

/// A node attribute: one name, one kind, the matching field set.
struct attribute {
    std::string name;
    attribute_kind kind = attribute_kind::undefined;
    float f = 0.0f;
    std::int64_t i = 0;
    std::string s;
    tensor t;
    std::vector<float> floats;
    std::vector<std::int64_t> ints;
    std::vector<std::string> strings;
    std::vector<tensor> tensors;
    std::vector<graph> graphs;  ///< one element for kind graph (If/Loop bodies), any number for graphs

    static attribute of(std::string name, float v) { attribute a; a.name = std::move(name); a.kind = attribute_kind::floating; a.f = v; return a; }
    static attribute of(std::string name, double v) { return of(std::move(name), static_cast<float>(v)); }
    static attribute of(std::string name, std::int64_t v) { attribute a; a.name = std::move(name); a.kind = attribute_kind::integer; a.i = v; return a; }
    static attribute of(std::string name, int v) { return of(std::move(name), static_cast<std::int64_t>(v)); }
    static attribute of(std::string name, std::string v) { attribute a; a.name = std::move(name); a.kind = attribute_kind::string; a.s = std::move(v); return a; }
    static attribute of(std::string name, const char* v) { return of(std::move(name), std::string(v)); }
    static attribute of(std::string name, std::vector<float> v) { attribute a; a.name = std::move(name); a.kind = attribute_kind::floats; a.floats = std::move(v); return a; }
    static attribute of(std::string name, std::vector<std::int64_t> v) { attribute a; a.name = std::move(name); a.kind = attribute_kind::ints; a.ints = std::move(v); return a; }
    static attribute of(std::string name, std::vector<std::string> v) { attribute a; a.name = std::move(name); a.kind = attribute_kind::strings; a.strings = std::move(v); return a; }
    static attribute of(std::string name, tensor v) { attribute a; a.name = std::move(name); a.kind = attribute_kind::tensor; a.t = std::move(v); return a; }
};

/// What a value is: a graph input, a constant (initializer), or produced by a node.
enum class value_kind : std::uint8_t { input, constant, node_output };

struct value {
    std::string name;
    value_kind kind = value_kind::node_output;
    dtype type = dtype::undefined;  ///< declared type; undefined until inferred for node outputs
    partial_shape declared;          ///< declared shape (inputs; optional elsewhere)
    std::int32_t producer = -1;      ///< node index for node outputs, -1 otherwise
    std::int32_t constant = -1;      ///< index into graph::constants for constants, -1 otherwise
};

struct node {
    std::string name;
    std::string op_type;  ///< ONNX op name: "Conv", "Relu", ...
    std::string domain;   ///< "" (= ai.onnx) for the standard ops
    std::vector<value_id> inputs;   ///< no_value for an absent optional input
    std::vector<value_id> outputs;  ///< no_value for an unused optional output
    std::vector<attribute> attributes;

    const attribute* find_attribute(std::string_view attr_name) const noexcept {
        for (const attribute& a : attributes)
            if (a.name == attr_name) return &a;
        return nullptr;
    }
};

struct opset {
    std::string domain;
    std::int64_t version = 0;
};

/// A model: values, nodes (in any order; compile() sorts them), constants, inputs and outputs.
/// Plain data: inspect or edit it freely, then validate() or compile() it.
class graph {
public:
    std::string name;
    std::vector<value> values;
    std::vector<node> nodes;
    std::vector<tensor> constants;
    std::vector<value_id> inputs;
    std::vector<value_id> outputs;
    std::vector<opset> opsets;  ///< empty means: the newest semantics ember knows

    /// The value with this name, or no_value.
    value_id find_value(std::string_view value_name) const noexcept {
        for (std::size_t i = 0; i < values.size(); ++i)
            if (values[i].name == value_name) return static_cast<value_id>(i);
        return no_value;
    }

    /// Opset version of the standard domain; `fallback` when the graph does not say.
    std::int64_t opset_version(std::string_view domain = "", std::int64_t fallback = 17) const noexcept {
        for (const opset& o : opsets)
            if (o.domain == domain || (domain.empty() && o.domain == "ai.onnx")) return o.version;
        return fallback;
    }

    const tensor* constant_of(value_id v) const noexcept {
        if (v >= values.size() || values[v].constant < 0) return nullptr;
        return &constants[static_cast<std::size_t>(values[v].constant)];
    }
};

/// Describes a node for error messages: "node 3 'fc1' (Gemm)".
inline std::string describe_node(const graph& g, std::size_t index) {
    if (index >= g.nodes.size()) return detail::format("node {}", index);
    const node& n = g.nodes[index];
    return n.name.empty() ? detail::format("node {} ({})", index, n.op_type)
                          : detail::format("node {} '{}' ({})", index, n.name, n.op_type);
}

EMBER_NAMESPACE_END
