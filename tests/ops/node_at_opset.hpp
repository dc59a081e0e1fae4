// SPDX-License-Identifier: Apache-2.0
// Test helper of tests/ops/reduce_test.cpp and normalization_test.cpp: run one node at a chosen
// opset with some inputs as constants, and the same node folded at compile time.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/check.hpp"

namespace ember::test {

/// The setup of one node at opset `version` (0: the default, 17) whose inputs with index >=
/// constant_from are constants, the others graph inputs.
inline node_setup at_opset(std::int64_t version, std::size_t input_count, std::size_t outputs, std::size_t constant_from) {
    node_setup setup;
    setup.opset = version;
    setup.output_count = outputs;
    for (std::size_t i = 0; i < input_count; ++i) setup.constant.push_back(i >= constant_from);
    return setup;
}

/// Builds and runs one node at opset `version` (0: the default, 17). Inputs that are empty tensors are
/// absent; inputs with index >= constant_from are constants, the others graph inputs.
inline node_run run_at(std::int64_t version, const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs = {},
                       std::size_t outputs = 1, std::size_t constant_from = 1) {
    node_run r = run_node_with(op, inputs, std::move(attrs), at_opset(version, inputs.size(), outputs, constant_from));
    if (r.compiled) REQUIRE(r.run_status == status::ok);
    return r;
}

/// run_at, then the same with every input a constant (folded at compile time); checks that the
/// two agree bit for bit and returns the first. Compiling must succeed.
inline node_run run_at_both_ways(std::int64_t opset, const std::string& op, const std::vector<tensor>& inputs,
                                 std::vector<attribute> attrs = {}, std::size_t outputs = 1, std::size_t constant_from = 1) {
    return run_node_both_ways_with(op, inputs, attrs, at_opset(opset, inputs.size(), outputs, constant_from));
}

inline bool mentions(const node_run& r, const std::string& text) { return r.error.message.find(text) != std::string::npos; }

} // namespace ember::test
