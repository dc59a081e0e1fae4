// SPDX-License-Identifier: Apache-2.0
// Helpers of the element-wise op tests: one-node graphs at a chosen opset, bool tensors, and
// reading results of any dtype.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support/check.hpp"

namespace ember::test::elementwise {

/// A bool tensor (one byte per element) from 0/1 values.
inline tensor make_bool(const shape& dims, const std::vector<int>& values) {
    result<tensor> t = tensor::create(dtype::boolean, dims);
    REQUIRE(t);
    REQUIRE(t->size() == values.size());
    for (std::size_t i = 0; i < values.size(); ++i) reinterpret_cast<std::uint8_t*>(t->bytes())[i] = values[i] ? 1 : 0;
    return std::move(*t);
}

inline std::vector<int> bools_of(const tensor& t) {
    REQUIRE(t.type() == dtype::boolean);
    std::vector<int> v;
    for (std::size_t i = 0; i < t.size(); ++i) v.push_back(reinterpret_cast<const std::uint8_t*>(t.bytes())[i]);
    return v;
}

/// A float16 tensor from float values (rounded to nearest even).
inline tensor make_f16(const shape& dims, const std::vector<float>& values) {
    std::vector<float16> h;
    for (float f : values) h.push_back(float16(f));
    return make<float16>(dims, h);
}
inline std::vector<float> f16_values(const tensor& t) {
    REQUIRE(t.type() == dtype::float16);
    std::vector<float> v;
    for (std::size_t i = 0; i < t.size(); ++i) v.push_back(static_cast<float>(t.data<float16>()[i]));
    return v;
}

/// Like run_node, with the graph's opset set; feed::constants folds the node at compile time.
inline node_run run_at(std::int64_t version, const std::string& op_type, const std::vector<tensor>& inputs, std::vector<attribute> attributes = {},
                       feed how = feed::inputs) {
    graph_builder b("single_" + op_type);
    std::vector<value_id> ids;
    std::vector<const tensor*> fed;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string name = "in" + std::to_string(i);
        if (inputs[i].empty()) {
            ids.push_back(no_value);
        } else if (how == feed::constants) {
            ids.push_back(b.constant(name, inputs[i]));
        } else {
            ids.push_back(b.input(name, inputs[i].type(), partial_shape(inputs[i].dims())));
            fed.push_back(&inputs[i]);
        }
    }
    b.output(b.node(op_type, ids, std::move(attributes), "node"), "out0");
    node_run r;
    result<graph> g = std::move(b).build();
    if (!g) {
        r.error = g.error();
        return r;
    }
    g->opsets = {ember::opset{"", version}};
    r.compiled = compile(*g);
    if (!r.compiled) {
        r.error = r.compiled.error();
        return r;
    }
    const plan& p = *r.compiled;
    session s(p);
    REQUIRE(s.state() == status::ok);
    for (std::size_t i = 0; i < fed.size(); ++i) REQUIRE(s.bind_input(i, fed[i]->bytes(), fed[i]->size_bytes()) == status::ok);
    result<tensor> t = tensor::create(p.output(0).type, p.output(0).dims);
    REQUIRE(t);
    REQUIRE(s.bind_output(0, t->bytes(), t->size_bytes()) == status::ok);
    r.outputs.push_back(std::move(*t));
    REQUIRE(s.run() == status::ok);
    return r;
}

/// run_at both ways (graph inputs and folded constants); the two must agree bit for bit.
inline node_run run_both_at(std::int64_t opset, const std::string& op_type, const std::vector<tensor>& inputs,
                            std::vector<attribute> attributes = {}) {
    node_run a = run_at(opset, op_type, inputs, attributes, feed::inputs);
    REQUIRE_MESSAGE(a.compiled, a.error.message);
    node_run b = run_at(opset, op_type, inputs, attributes, feed::constants);
    REQUIRE_MESSAGE(b.compiled, b.error.message);
    REQUIRE(a.outputs[0].dims() == b.outputs[0].dims());
    REQUIRE(a.outputs[0].type() == b.outputs[0].type());
    CHECK(std::memcmp(a.outputs[0].bytes(), b.outputs[0].bytes(), a.outputs[0].size_bytes()) == 0);
    return a;
}

/// The compile error of the node at this opset (the test fails if it compiles).
inline error_info error_at(std::int64_t opset, const std::string& op_type, const std::vector<tensor>& inputs,
                           std::vector<attribute> attributes = {}) {
    node_run r = run_at(opset, op_type, inputs, std::move(attributes));
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.message.find("'node' (" + op_type + ")") != std::string::npos);
    return r.error;
}

inline bool mentions(const error_info& e, const std::string& text) { return e.message.find(text) != std::string::npos; }

} // namespace ember::test::elementwise
