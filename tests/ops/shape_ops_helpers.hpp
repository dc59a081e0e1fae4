// SPDX-License-Identifier: Apache-2.0
// Helpers of the shape and layout op tests (shape_ops_test.cpp, layout_ops_test.cpp): a
// one-node graph at a chosen opset whose leading inputs are graph inputs or constants and whose
// trailing "parameter" inputs (axes, pads, repeats, ...) are always constants.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/check.hpp"

namespace ember::test::shape_ops {

// The vocabulary and the makers and readers of support/check.hpp, so that a test needs only
// `using namespace ember::test::shape_ops`.
using ember::attribute;
using ember::dtype;
using ember::shape;
using ember::status;
using ember::tensor;
using ember::test::iota;
using ember::test::make;
using ember::test::make_bool;
using ember::test::make_f32;
using ember::test::values_of;

struct op_run : node_run {
    bool mentions(const std::string& text) const { return error.message.find(text) != std::string::npos; }
};

/// Builds data inputs [0, data_count) (graph inputs, or constants with feed::constants) and
/// parameter inputs [data_count, ...) (always constants; an empty tensor is an absent input),
/// one node of op_type at `opset`, and runs it once. A failed run leaves no outputs and its
/// status in error.code.
inline op_run run_op(const std::string& op_type, const std::vector<tensor>& inputs, std::size_t data_count,
                     std::vector<attribute> attributes = {}, std::size_t output_count = 1, std::int64_t opset_version = 17,
                     feed how = feed::inputs) {
    node_setup setup;
    setup.opset = opset_version;
    setup.output_count = output_count;
    for (std::size_t i = 0; i < inputs.size(); ++i) setup.constant.push_back(i >= data_count || how == feed::constants);
    op_run r;
    static_cast<node_run&>(r) = run_node_with(op_type, inputs, std::move(attributes), setup);
    if (r.compiled && r.run_status != status::ok) {
        r.error = error_info{r.run_status, -1, "run failed"};
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
    check_same_outputs(a, b);
    return a;
}

inline tensor ints(std::vector<std::int64_t> v) {
    const auto n = static_cast<std::int64_t>(v.size());
    return make<std::int64_t>({n}, std::move(v));
}

} // namespace ember::test::shape_ops
