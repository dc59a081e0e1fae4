// SPDX-License-Identifier: Apache-2.0
// Helpers of the element-wise op tests: one-node graphs at a chosen opset (over run_node_with),
// and the tensor makers and readers they use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/check.hpp"

namespace ember::test::elementwise {

// The makers and readers of support/check.hpp, so that `using namespace elementwise` is enough.
using ember::test::bools_of;
using ember::test::f16_values;
using ember::test::make;
using ember::test::make_bool;
using ember::test::make_f16;
using ember::test::make_f32;
using ember::test::values_f32;
using ember::test::values_of;

/// Like run_node, with the graph's opset set; feed::constants folds the node at compile time.
inline node_run run_at(std::int64_t version, const std::string& op_type, const std::vector<tensor>& inputs, std::vector<attribute> attributes = {},
                       feed how = feed::inputs) {
    node_setup setup;
    setup.opset = version;
    setup.constant.assign(inputs.size(), how == feed::constants);
    node_run r = run_node_with(op_type, inputs, std::move(attributes), setup);
    if (r.compiled) REQUIRE(r.run_status == status::ok);
    return r;
}

/// run_at both ways (graph inputs and folded constants); the two must agree bit for bit.
inline node_run run_both_at(std::int64_t opset, const std::string& op_type, const std::vector<tensor>& inputs,
                            std::vector<attribute> attributes = {}) {
    node_setup setup;
    setup.opset = opset;
    return run_node_both_ways_with(op_type, inputs, attributes, setup);
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
