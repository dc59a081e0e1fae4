// SPDX-License-Identifier: Apache-2.0
// graph_builder: builds a graph in C++ (the way the ONNX importer does from bytes).
//
//     ember::graph_builder b("mlp");
//     auto x = b.input("x", ember::dtype::float32, {1, 4});
//     auto w = b.constant<float>("w", {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
//     auto y = b.node("MatMul", {x, w});
//     b.output(b.node("Relu", {y}), "y");
//     ember::result<ember::graph> g = std::move(b).build();
//
// Mistakes (an unknown value id, a duplicate name, a constant with the wrong number of values)
// are remembered and reported by build(); the builder itself never fails half-way.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ember/config.hpp"
#include "ember/graph/graph.hpp"
#include "ember/graph/validate.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN

class graph_builder {
public:
    explicit graph_builder(std::string name = "graph") { graph_.name = std::move(name); }

    /// Declares a graph input. Dimensions may be symbolic ("batch") or unknown (-1); compile()
    /// resolves them from compile_options::input_shapes.
    value_id input(std::string name, dtype type, partial_shape dims) {
        value v;
        v.name = std::move(name);
        v.kind = value_kind::input;
        v.type = type;
        v.declared = std::move(dims);
        v.declared.rank_known = true;
        const value_id id = add_value(std::move(v));
        graph_.inputs.push_back(id);
        return id;
    }

    /// Adds a constant (an initializer). The tensor's dtype and shape are the value's.
    value_id constant(std::string name, tensor t) {
        value v;
        v.name = std::move(name);
        v.kind = value_kind::constant;
        v.type = t.type();
        v.declared = partial_shape(t.dims());
        v.constant = static_cast<std::int32_t>(graph_.constants.size());
        graph_.constants.push_back(std::move(t));
        return add_value(std::move(v));
    }

    /// Adds a constant holding a copy of values (values.size() must match the shape).
    template <class T>
    value_id constant(std::string name, const shape& dims, span<const T> values) {
        result<tensor> t = tensor::copy_of<T>(dims, values);
        if (!t) {
            remember(t.error().code, detail::format("constant '{}': {}", name, t.error().message));
            return constant(std::move(name), tensor());
        }
        return constant(std::move(name), std::move(*t));
    }
    template <class T>
    value_id constant(std::string name, const shape& dims, std::initializer_list<T> values) {
        return constant<T>(std::move(name), dims, span<const T>(values.begin(), values.size()));
    }

    /// Adds a node with one output and returns that output. Pass no_value for an absent optional
    /// input. The output is named after the node ("relu1"), or "<OpType>_<index>" when unnamed.
    value_id node(std::string op_type, std::vector<value_id> inputs, std::vector<attribute> attributes = {}, std::string name = {}) {
        return nodes(std::move(op_type), std::move(inputs), 1, std::move(attributes), std::move(name))[0];
    }

    /// Adds a node with output_count outputs ("<name>:0", "<name>:1", ...).
    std::vector<value_id> nodes(std::string op_type, std::vector<value_id> inputs, std::size_t output_count,
                                std::vector<attribute> attributes = {}, std::string name = {}) {
        const std::size_t index = graph_.nodes.size();
        for (std::size_t k = 0; k < inputs.size(); ++k)
            if (inputs[k] != no_value && inputs[k] >= graph_.values.size())
                remember(status::invalid_argument, detail::format("node {} ({}): input {} is not a value of this builder", index, op_type, k));
        ember::node n;
        n.op_type = std::move(op_type);
        n.name = std::move(name);
        n.inputs = std::move(inputs);
        n.attributes = std::move(attributes);
        const std::string stem = n.name.empty() ? detail::format("{}_{}", n.op_type, index) : n.name;
        std::vector<value_id> outs;
        for (std::size_t k = 0; k < output_count; ++k) {
            value v;
            v.name = output_count == 1 ? stem : detail::format("{}:{}", stem, k);
            v.kind = value_kind::node_output;
            v.producer = static_cast<std::int32_t>(index);
            outs.push_back(add_value(std::move(v)));
        }
        n.outputs = outs;
        graph_.nodes.push_back(std::move(n));
        return outs;
    }

    /// Marks a value as a graph output; with a name, the value is renamed to it first.
    void output(value_id v, std::string name = {}) {
        if (v >= graph_.values.size()) {
            remember(status::invalid_argument, detail::format("output {} is not a value of this builder", v));
            return;
        }
        if (!name.empty()) graph_.values[v].name = std::move(name);
        graph_.outputs.push_back(v);
    }

    /// The graph as built so far (for inspection); build() validates and hands it over.
    const graph& peek() const noexcept { return graph_; }

    /// Validates and returns the graph, or the first mistake made while building it.
    result<graph> build() && {
        if (error_.code != status::ok) return error_;
        if (result<std::vector<std::uint32_t>> order = validate(graph_); !order) return order.error();
        return std::move(graph_);
    }

private:
    value_id add_value(value v) {
        graph_.values.push_back(std::move(v));
        return static_cast<value_id>(graph_.values.size() - 1);
    }
    void remember(status code, std::string message) {
        if (error_.code == status::ok) error_ = error_info{code, -1, std::move(message)};
    }

    graph graph_;
    error_info error_;
};

EMBER_NAMESPACE_END
