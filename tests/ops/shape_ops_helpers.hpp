// SPDX-License-Identifier: Apache-2.0
// Helpers of the shape and layout op tests (shape_ops_test.cpp, layout_ops_test.cpp): a
// one-node graph at a chosen opset whose leading inputs are graph inputs or constants and whose
// trailing "parameter" inputs (axes, pads, repeats, ...) are always constants.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support/check.hpp"

namespace ember::test::shape_ops {

struct op_run {
    result<plan> compiled = error_info{status::invalid_argument, -1, "not compiled"};
    std::vector<tensor> outputs;
    error_info error;
    bool mentions(const std::string& text) const { return error.message.find(text) != std::string::npos; }
};

/// Builds data inputs [0, data_count) (graph inputs, or constants with feed::constants) and
/// parameter inputs [data_count, ...) (always constants; an empty tensor is an absent input),
/// one node of op_type at `opset`, and runs it once.
inline op_run run_op(const std::string& op_type, const std::vector<tensor>& inputs, std::size_t data_count,
                     std::vector<attribute> attributes = {}, std::size_t output_count = 1, std::int64_t opset_version = 17,
                     feed how = feed::inputs) {
    graph_builder b("single_" + op_type);
    std::vector<value_id> ids;
    std::vector<const tensor*> fed;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string name = "in" + std::to_string(i);
        if (inputs[i].empty()) {
            ids.push_back(no_value);
        } else if (i >= data_count || how == feed::constants) {
            ids.push_back(b.constant(name, inputs[i]));
        } else {
            ids.push_back(b.input(name, inputs[i].type(), partial_shape(inputs[i].dims())));
            fed.push_back(&inputs[i]);
        }
    }
    std::vector<value_id> outs = b.nodes(op_type, ids, output_count, std::move(attributes), "node");
    for (std::size_t k = 0; k < outs.size(); ++k) b.output(outs[k], "out" + std::to_string(k));
    op_run r;
    result<graph> g = std::move(b).build();
    if (!g) {
        r.error = g.error();
        return r;
    }
    g->opsets.push_back(opset{"", opset_version});
    r.compiled = compile(*g);
    if (!r.compiled) {
        r.error = r.compiled.error();
        return r;
    }
    const plan& p = *r.compiled;
    session s(p);
    REQUIRE(s.state() == status::ok);
    for (std::size_t i = 0; i < fed.size(); ++i) REQUIRE(s.bind_input(i, fed[i]->bytes(), fed[i]->size_bytes()) == status::ok);
    for (std::size_t k = 0; k < p.output_count(); ++k) {
        result<tensor> t = tensor::create(p.output(k).type, p.output(k).dims);
        REQUIRE(t);
        REQUIRE(s.bind_output(k, t->bytes(), t->size_bytes()) == status::ok);
        r.outputs.push_back(std::move(*t));
    }
    const status ran = s.run();
    if (ran != status::ok) {
        r.error = error_info{ran, -1, "run failed"};
        r.outputs.clear();
    }
    return r;
}

/// run_op with the data as graph inputs and as constants (folded); both must compile and agree
/// bit for bit. Returns the first.
inline op_run run_op_both_ways(const std::string& op_type, const std::vector<tensor>& inputs, std::size_t data_count,
                               std::vector<attribute> attributes = {}, std::size_t output_count = 1, std::int64_t opset = 17) {
    op_run a = run_op(op_type, inputs, data_count, attributes, output_count, opset, feed::inputs);
    REQUIRE_MESSAGE(a.compiled, a.error.message);
    op_run b = run_op(op_type, inputs, data_count, attributes, output_count, opset, feed::constants);
    REQUIRE_MESSAGE(b.compiled, b.error.message);
    REQUIRE(a.outputs.size() == b.outputs.size());
    for (std::size_t k = 0; k < a.outputs.size(); ++k) {
        REQUIRE(a.outputs[k].type() == b.outputs[k].type());
        REQUIRE(a.outputs[k].dims() == b.outputs[k].dims());
        CHECK(std::memcmp(a.outputs[k].bytes(), b.outputs[k].bytes(), a.outputs[k].size_bytes()) == 0);
    }
    return a;
}

/// A bool tensor (std::vector<bool> has no data(), so make<bool> cannot be used).
inline tensor bools(const shape& dims, std::initializer_list<bool> values) {
    result<tensor> t = tensor::create(dtype::boolean, dims);
    REQUIRE(t);
    REQUIRE(t->size() == values.size());
    std::size_t i = 0;
    for (bool v : values) t->data<bool>()[i++] = v;
    return std::move(*t);
}

inline tensor ints(std::vector<std::int64_t> v) {
    const auto n = static_cast<std::int64_t>(v.size());
    return make<std::int64_t>({n}, std::move(v));
}

} // namespace ember::test::shape_ops
