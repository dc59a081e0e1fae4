// SPDX-License-Identifier: Apache-2.0
// Test helper of tests/ops/reduce_test.cpp and normalization_test.cpp: run one node at a chosen
// opset with some inputs as constants, and the same node folded at compile time.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "support/check.hpp"

namespace ember::test {

/// Builds and runs one node at opset `version` (0: the default, 17). Inputs that are empty tensors are
/// absent; inputs with index >= constant_from are constants, the others graph inputs.
inline node_run run_at(std::int64_t version, const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs = {},
                       std::size_t outputs = 1, std::size_t constant_from = 1) {
    graph_builder b("one_" + op);
    std::vector<value_id> ids;
    std::vector<const tensor*> fed;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string name = "in" + std::to_string(i);
        if (inputs[i].empty()) ids.push_back(no_value);
        else if (i >= constant_from) ids.push_back(b.constant(name, inputs[i]));
        else {
            ids.push_back(b.input(name, inputs[i].type(), partial_shape(inputs[i].dims())));
            fed.push_back(&inputs[i]);
        }
    }
    std::vector<value_id> outs = b.nodes(op, ids, outputs, std::move(attrs), "node");
    for (std::size_t k = 0; k < outs.size(); ++k) b.output(outs[k], "out" + std::to_string(k));
    node_run r;
    auto g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    if (version != 0) g->opsets.push_back(ember::opset{"", version});
    r.compiled = compile(*g);
    if (!r.compiled) {
        r.error = r.compiled.error();
        return r;
    }
    session s(*r.compiled);
    for (std::size_t i = 0; i < fed.size(); ++i) REQUIRE(s.bind_input(i, fed[i]->bytes(), fed[i]->size_bytes()) == status::ok);
    for (std::size_t k = 0; k < r.compiled->output_count(); ++k) {
        auto t = tensor::create(r.compiled->output(k).type, r.compiled->output(k).dims);
        REQUIRE(t);
        REQUIRE(s.bind_output(k, t->bytes(), t->size_bytes()) == status::ok);
        r.outputs.push_back(std::move(*t));
    }
    REQUIRE(s.run() == status::ok);
    return r;
}

/// run_at, then the same with every input a constant (folded at compile time); checks that the
/// two agree bit for bit and returns the first. Compiling must succeed.
inline node_run run_at_both_ways(std::int64_t opset, const std::string& op, const std::vector<tensor>& inputs,
                                 std::vector<attribute> attrs = {}, std::size_t outputs = 1, std::size_t constant_from = 1) {
    node_run a = run_at(opset, op, inputs, attrs, outputs, constant_from);
    REQUIRE_MESSAGE(a.compiled, a.error.message);
    node_run b = run_at(opset, op, inputs, attrs, outputs, 0);
    REQUIRE_MESSAGE(b.compiled, b.error.message);
    REQUIRE(a.outputs.size() == b.outputs.size());
    for (std::size_t k = 0; k < a.outputs.size(); ++k) {
        REQUIRE(a.outputs[k].dims() == b.outputs[k].dims());
        REQUIRE(a.outputs[k].type() == b.outputs[k].type());
        CHECK(std::memcmp(a.outputs[k].bytes(), b.outputs[k].bytes(), a.outputs[k].size_bytes()) == 0);
    }
    return a;
}

inline bool mentions(const node_run& r, const std::string& text) { return r.error.message.find(text) != std::string::npos; }

} // namespace ember::test
