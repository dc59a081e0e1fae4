// SPDX-License-Identifier: Apache-2.0
// The indexing ops: Gather, GatherElements, GatherND, ScatterElements/Scatter, ScatterND,
// OneHot, NonZero, Trilu, CumSum, Compress, ReverseSequence, DepthToSpace, SpaceToDepth, Unique.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/compress.hpp>
#include <ember/ops/cum_sum.hpp>
#include <ember/ops/depth_to_space.hpp>
#include <ember/ops/gather.hpp>
#include <ember/ops/gather_elements.hpp>
#include <ember/ops/gather_nd.hpp>
#include <ember/ops/non_zero.hpp>
#include <ember/ops/one_hot.hpp>
#include <ember/ops/reverse_sequence.hpp>
#include <ember/ops/scatter_elements.hpp>
#include <ember/ops/scatter_nd.hpp>
#include <ember/ops/trilu.hpp>
#include <ember/ops/unique.hpp>

#include "support/check.hpp"

namespace {

using ember::attribute;
using ember::shape;
using ember::status;
using ember::tensor;
using ember::test::make;
using ember::test::make_bool;
using ember::test::make_f32;

using op_run = ember::test::node_run;

// One node over the inputs: input i is a constant where constant[i] (missing entries: false),
// a graph input otherwise; empty tensors are absent optional inputs. opset 0: the default.
ember::test::node_setup setup_of(std::vector<bool> constant, std::size_t output_count, std::int64_t opset) {
    ember::test::node_setup setup;
    setup.opset = opset;
    setup.constant = std::move(constant);
    setup.output_count = output_count;
    return setup;
}

op_run run_op(const std::string& op, const std::vector<tensor>& inputs, std::vector<bool> constant, std::vector<attribute> attrs = {},
              std::size_t output_count = 1, std::int64_t opset = 0) {
    return ember::test::run_node_with(op, inputs, std::move(attrs), setup_of(std::move(constant), output_count, opset));
}

// Runs with the given constants (the rest graph inputs) and again with every input a constant
// (the node folded at compile time); both must compile and run, and agree bit for bit.
op_run run_both(const std::string& op, const std::vector<tensor>& inputs, std::vector<bool> constant = {}, std::vector<attribute> attrs = {},
                std::size_t output_count = 1, std::int64_t opset = 0) {
    return ember::test::run_node_both_ways_with(op, inputs, attrs, setup_of(std::move(constant), output_count, opset));
}

template <class T>
void check_values(const tensor& t, const shape& dims, const std::vector<T>& expected) {
    CHECK(t.type() == ember::dtype_of<T>);
    REQUIRE(t.dims() == dims);
    REQUIRE(t.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        T v;
        std::memcpy(&v, t.bytes() + i * sizeof(T), sizeof(T));
        if (!(v == expected[i])) {
            FAIL_CHECK("element " << i << ": " << +v << " vs expected " << +expected[i]);
            return;
        }
    }
}

bool mentions(const op_run& r, const std::string& text) { return r.error.message.find(text) != std::string::npos; }

// Compiles (some inputs constant); must fail with the code and a message containing text.
void check_rejected(const std::string& op, const std::vector<tensor>& inputs, std::vector<bool> constant, std::vector<attribute> attrs,
                    status code, const std::string& text, std::size_t output_count = 1, std::int64_t opset = 0) {
    op_run r = run_op(op, inputs, std::move(constant), std::move(attrs), output_count, opset);
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == code);
    CHECK_MESSAGE(mentions(r, text), r.error.message);
    CHECK_MESSAGE(mentions(r, "'node' (" + op + ")"), r.error.message);
}

// An index out of range in the data: run() fails with invalid_argument when the indices are a
// runtime input, and compile() fails when the node is folded.
void check_out_of_range(const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs = {}) {
    op_run r = run_op(op, inputs, {}, attrs);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.run_status == status::invalid_argument);
    op_run f = run_op(op, inputs, std::vector<bool>(inputs.size(), true), attrs);
    REQUIRE_FALSE(f.compiled);
    CHECK(f.error.code == status::invalid_argument);
    CHECK(mentions(f, "out of range"));
}

tensor i64(const shape& dims, std::vector<std::int64_t> v) { return make<std::int64_t>(dims, std::move(v)); }
tensor i32(const shape& dims, std::vector<std::int32_t> v) { return make<std::int32_t>(dims, std::move(v)); }

} // namespace

// ---------------------------------------------------------------------------------------------
// Gather

TEST_CASE("gather: rows by 2-D indices, columns with negative int32 indices, a scalar index") {
    const auto data = make_f32({3, 2}, {1, 2, 3, 4, 5, 6});
    check_values<float>(run_both("Gather", {data, i64({2, 2}, {0, 1, 1, 2})}).outputs[0], {2, 2, 2}, {1, 2, 3, 4, 3, 4, 5, 6});
    const auto wide = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    check_values<float>(run_both("Gather", {wide, i32({2}, {-1, 0})}, {}, {attribute::of("axis", 1)}).outputs[0], {2, 2}, {3, 1, 6, 4});
    check_values<float>(run_both("Gather", {wide, i64({}, {1})}, {}, {attribute::of("axis", -1)}).outputs[0], {2}, {2, 5});
    check_values<float>(run_both("Gather", {data, i64({}, {2})}).outputs[0], {2}, {5, 6});
    // data constant (an embedding table), indices at run time
    check_values<float>(run_both("Gather", {data, i64({1, 3}, {2, 0, 2})}, {true}).outputs[0], {1, 3, 2}, {5, 6, 1, 2, 5, 6});
    check_values<float>(run_both("Gather", {data, i64({0}, {})}).outputs[0], {0, 2}, {});
}

TEST_CASE("gather: any dtype moves unchanged") {
    check_values<std::int64_t>(run_both("Gather", {i64({3}, {7, 1ll << 40, -3}), i64({2}, {1, 1})}).outputs[0], {2}, {1ll << 40, 1ll << 40});
    check_values<std::uint8_t>(run_both("Gather", {make<std::uint8_t>({2, 2}, {1, 2, 254, 255}), i32({1}, {1})}, {}, {attribute::of("axis", 1)}).outputs[0],
                               {2, 1}, {2, 255});
    check_values<double>(run_both("Gather", {make<double>({2}, {0.5, -1.5}), i64({3}, {1, 0, 1})}).outputs[0], {3}, {-1.5, 0.5, -1.5});
}

TEST_CASE("gather: an index out of range at run time fails the run without reading out of bounds") {
    const auto data = make_f32({3, 2}, {1, 2, 3, 4, 5, 6});
    check_out_of_range("Gather", {data, i64({2}, {0, 3})});
    check_out_of_range("Gather", {data, i32({1}, {-4})});
}

TEST_CASE("gather: bad inputs are rejected with a message") {
    const auto data = make_f32({3, 2}, {1, 2, 3, 4, 5, 6});
    check_rejected("Gather", {data, make_f32({1}, {0})}, {}, {}, status::invalid_model, "int32 or int64");
    check_rejected("Gather", {data, i64({1}, {0})}, {}, {attribute::of("axis", 2)}, status::invalid_model, "axis 2 is out of range");
    check_rejected("Gather", {make_f32({}, {1}), i64({1}, {0})}, {}, {}, status::shape_mismatch, "scalar");
    check_rejected("Gather", {data, i64({1}, {0})}, {}, {attribute::of("batch_dims", 1)}, status::unsupported_op, "batch_dims");
}

// ---------------------------------------------------------------------------------------------
// GatherElements

TEST_CASE("gather_elements: along each axis, negative indices, fewer rows than data") {
    check_values<float>(run_both("GatherElements", {make_f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0})}, {}, {attribute::of("axis", 1)})
                            .outputs[0],
                        {2, 2}, {1, 1, 4, 3});
    const auto data = make_f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    check_values<float>(run_both("GatherElements", {data, i32({2, 3}, {1, 2, 0, 2, 0, -3})}).outputs[0], {2, 3}, {4, 8, 3, 7, 2, 3});
    // indices narrower than data in the non-axis dimension
    check_values<float>(run_both("GatherElements", {data, i64({3, 1}, {2, 0, 1})}, {}, {attribute::of("axis", -1)}).outputs[0], {3, 1}, {3, 4, 8});
    check_values<std::int64_t>(run_both("GatherElements", {i64({2}, {10, 20}), i64({3}, {1, 0, 1})}).outputs[0], {3}, {20, 10, 20});
}

TEST_CASE("gather_elements: out of range at run time, bad shapes at compile time") {
    const auto data = make_f32({2, 2}, {1, 2, 3, 4});
    check_out_of_range("GatherElements", {data, i64({1, 2}, {0, 2})});
    check_rejected("GatherElements", {data, i64({2}, {0, 1})}, {}, {}, status::shape_mismatch, "rank");
    check_rejected("GatherElements", {data, i64({1, 3}, {0, 1, 0})}, {}, {}, status::shape_mismatch, "dimension 1");
}

// ---------------------------------------------------------------------------------------------
// GatherND

TEST_CASE("gather_nd: elements, slices, negative indices and batch_dims") {
    check_values<std::int32_t>(run_both("GatherND", {i32({2, 2}, {0, 1, 2, 3}), i64({2, 2}, {0, 0, 1, 1})}).outputs[0], {2}, {0, 3});
    const auto cube = make_f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    check_values<float>(run_both("GatherND", {cube, i64({2, 1, 2}, {0, 1, 1, 0})}).outputs[0], {2, 1, 2}, {2, 3, 4, 5});
    check_values<float>(run_both("GatherND", {cube, i64({1, 1}, {-1})}).outputs[0], {1, 2, 2}, {4, 5, 6, 7});
    check_values<std::int32_t>(
        run_both("GatherND", {i32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), i64({2, 1}, {1, 0})}, {}, {attribute::of("batch_dims", 1)}).outputs[0],
        {2, 2}, {2, 3, 4, 5});
    check_values<std::int32_t>(
        run_both("GatherND", {i32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), i32({2, 1, 2}, {1, 0, 0, 1})}, {}, {attribute::of("batch_dims", 1)})
            .outputs[0],
        {2, 1}, {2, 5});
}

TEST_CASE("gather_nd: out of range at run time; bad batch_dims, opsets and shapes at compile time") {
    const auto data = make_f32({2, 2}, {1, 2, 3, 4});
    check_out_of_range("GatherND", {data, i64({1, 2}, {0, 2})});
    check_rejected("GatherND", {data, i64({1, 3}, {0, 0, 0})}, {}, {}, status::shape_mismatch, "last dimension");
    check_rejected("GatherND", {data, i64({2, 1}, {0, 0})}, {}, {attribute::of("batch_dims", 1)}, status::invalid_model, "opset 12", 1, 11);
    check_rejected("GatherND", {data, i64({3, 1}, {0, 0, 0})}, {}, {attribute::of("batch_dims", 1)}, status::shape_mismatch, "batch dimension 0");
    check_rejected("GatherND", {data, i64({2, 1}, {0, 0})}, {}, {attribute::of("batch_dims", 2)}, status::invalid_model, "batch_dims 2");
}

// ---------------------------------------------------------------------------------------------
// ScatterElements / Scatter

TEST_CASE("scatter_elements: replace along axis 0 and 1, negative indices, in place in a chain") {
    const auto zeros = make_f32({3, 3}, std::vector<float>(9, 0.0f));
    const auto upd = make_f32({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f});
    check_values<float>(run_both("ScatterElements", {zeros, i64({2, 3}, {1, 0, 2, 0, 2, 1}), upd}).outputs[0], {3, 3},
                        {2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f});
    const auto row = make_f32({1, 5}, {1, 2, 3, 4, 5});
    check_values<float>(
        run_both("ScatterElements", {row, i32({1, 2}, {1, -2}), make_f32({1, 2}, {1.1f, 2.1f})}, {}, {attribute::of("axis", 1)}).outputs[0],
        {1, 5}, {1, 1.1f, 3, 2.1f, 5});
    // duplicates without reduction: the last one wins
    check_values<float>(
        run_both("ScatterElements", {row, i64({1, 2}, {1, 1}), make_f32({1, 2}, {1.1f, 2.1f})}, {}, {attribute::of("axis", 1)}).outputs[0],
        {1, 5}, {1, 2.1f, 3, 4, 5});
    check_values<std::int64_t>(run_both("ScatterElements", {i64({4}, {1, 2, 3, 4}), i64({2}, {3, 0}), i64({2}, {-7, 9})}).outputs[0], {4},
                               {9, 2, 3, -7});
}

TEST_CASE("scatter_elements: reductions add and mul (opset 16), min and max (opset 18 only)") {
    const auto row = make_f32({1, 5}, {1, 2, 3, 4, 5});
    const auto ind = i64({1, 2}, {1, 1});
    const auto upd = make_f32({1, 2}, {1.5f, 2.0f});
    ember::test::check_close(
        run_both("ScatterElements", {row, ind, upd}, {}, {attribute::of("axis", 1), attribute::of("reduction", "add")}).outputs[0],
        {1, 5.5f, 3, 4, 5});
    ember::test::check_close(
        run_both("ScatterElements", {row, ind, upd}, {}, {attribute::of("axis", 1), attribute::of("reduction", "mul")}).outputs[0],
        {1, 6, 3, 4, 5});
    check_values<std::int32_t>(run_both("ScatterElements", {i32({3}, {1, 2, 3}), i64({3}, {0, 0, 2}), i32({3}, {4, 5, 6})}, {},
                                        {attribute::of("reduction", "add")})
                                   .outputs[0],
                               {3}, {10, 2, 9});
    check_rejected("ScatterElements", {row, ind, upd}, {}, {attribute::of("axis", 1), attribute::of("reduction", "max")}, status::invalid_model,
                   "opset 18");
    check_rejected("ScatterElements", {row, ind, upd}, {}, {attribute::of("axis", 1), attribute::of("reduction", "add")}, status::invalid_model,
                   "opset 16", 1, 13);
    check_rejected("ScatterElements", {row, ind, upd}, {}, {attribute::of("reduction", "sum")}, status::invalid_model, "'sum'");
}

TEST_CASE("scatter: the opset 9 name, without reduction") {
    const auto zeros = make_f32({3, 3}, std::vector<float>(9, 0.0f));
    const auto upd = make_f32({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f});
    check_values<float>(run_both("Scatter", {zeros, i64({2, 3}, {1, 0, 2, 0, 2, 1}), upd}, {}, {}, 1, 9).outputs[0], {3, 3},
                        {2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f});
    check_rejected("Scatter", {zeros, i64({2, 3}, {1, 0, 2, 0, 2, 1}), upd}, {}, {attribute::of("reduction", "add")}, status::unsupported_op,
                   "'reduction'", 1, 10);
}

TEST_CASE("scatter_elements: out of range at run time, bad shapes at compile time") {
    const auto data = make_f32({2, 2}, {1, 2, 3, 4});
    check_out_of_range("ScatterElements", {data, i64({1, 1}, {2}), make_f32({1, 1}, {9})});
    check_rejected("ScatterElements", {data, i64({1, 1}, {0}), make_f32({1, 2}, {9, 9})}, {}, {}, status::shape_mismatch, "shape of indices");
    check_rejected("ScatterElements", {data, i64({1, 1}, {0}), i64({1, 1}, {9})}, {}, {}, status::invalid_model, "dtype int64");
    check_rejected("ScatterElements", {data, i64({1, 3}, {0, 0, 0}), make_f32({1, 3}, {9, 9, 9})}, {}, {}, status::shape_mismatch, "dimension 1");
}

// ---------------------------------------------------------------------------------------------
// ScatterND

TEST_CASE("scatter_nd: elements, slices, reductions") {
    check_values<float>(
        run_both("ScatterND", {make_f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), i64({4, 1}, {4, 3, 1, 7}), make_f32({4}, {9, 10, 11, 12})}).outputs[0], {8},
        {1, 11, 3, 10, 9, 6, 7, 12});
    const auto data = make_f32({2, 2}, {1, 2, 3, 4});
    const auto ind = i64({2, 1}, {0, 0});
    const auto upd = make_f32({2, 2}, {10, 20, 30, 40});
    check_values<float>(run_both("ScatterND", {data, ind, upd}).outputs[0], {2, 2}, {30, 40, 3, 4});
    check_values<float>(run_both("ScatterND", {data, ind, upd}, {}, {attribute::of("reduction", "add")}).outputs[0], {2, 2}, {41, 62, 3, 4});
    check_values<float>(run_both("ScatterND", {data, ind, upd}, {}, {attribute::of("reduction", "mul")}).outputs[0], {2, 2}, {300, 1600, 3, 4});
    check_values<std::int64_t>(run_both("ScatterND", {i64({2, 2}, {1, 2, 3, 4}), i32({1, 2}, {-1, -2}), i64({1}, {99})}).outputs[0], {2, 2},
                               {1, 2, 99, 4});
}

TEST_CASE("scatter_nd: out of range at run time, bad shapes at compile time") {
    const auto data = make_f32({2, 2}, {1, 2, 3, 4});
    check_out_of_range("ScatterND", {data, i64({1, 1}, {2}), make_f32({1, 2}, {9, 9})});
    check_rejected("ScatterND", {data, i64({1, 1}, {0}), make_f32({2, 2}, {9, 9, 9, 9})}, {}, {}, status::shape_mismatch, "must have shape [1, 2]");
    check_rejected("ScatterND", {data, i64({1, 3}, {0, 0, 0}), make_f32({1}, {9})}, {}, {}, status::shape_mismatch, "last dimension");
    check_rejected("ScatterND", {data, i64({1, 1}, {0}), make_f32({1, 2}, {9, 9})}, {}, {attribute::of("reduction", "mul")}, status::invalid_model,
                   "opset 16", 1, 13);
}

// ---------------------------------------------------------------------------------------------
// OneHot

TEST_CASE("one_hot: last axis, negative and out-of-range indices, opset 9 does not wrap") {
    const auto values = make_f32({2}, {0, 1});
    const auto depth = i64({}, {4});
    check_values<float>(run_both("OneHot", {i64({3}, {0, -1, 5}), depth, values}, {false, true}, {}, 1, 11).outputs[0], {3, 4},
                        {1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0});
    check_values<float>(run_both("OneHot", {i64({3}, {0, -1, 5}), depth, values}, {false, true}, {}, 1, 9).outputs[0], {3, 4},
                        {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("one_hot: axis 0, float depth and indices, int32 values") {
    const auto values = i32({2}, {-1, 7});
    check_values<std::int32_t>(
        run_both("OneHot", {i64({2}, {1, 0}), make_f32({}, {3}), values}, {false, true}, {attribute::of("axis", 0)}).outputs[0], {3, 2},
        {-1, 7, 7, -1, -1, -1});
    // float indices are truncated toward zero
    check_values<std::int32_t>(
        run_both("OneHot", {make_f32({2}, {1.0f, 2.7f}), make_f32({1}, {3}), values}, {false, true}, {attribute::of("axis", -2)}).outputs[0],
        {3, 2}, {-1, -1, 7, -1, -1, 7});
}

TEST_CASE("one_hot: depth must be known at compile time and positive; values must be [off, on]") {
    const auto values = make_f32({2}, {0, 1});
    check_rejected("OneHot", {i64({2}, {0, 1}), i64({}, {3}), values}, {}, {}, status::unsupported_op, "compile time");
    check_rejected("OneHot", {i64({2}, {0, 1}), i64({}, {0}), values}, {false, true}, {}, status::invalid_model, "depth must be >= 1");
    check_rejected("OneHot", {i64({2}, {0, 1}), i64({}, {3}), make_f32({3}, {0, 1, 2})}, {false, true}, {}, status::shape_mismatch, "[off_value, on_value]");
    check_rejected("OneHot", {i64({2}, {0, 1}), i64({}, {3}), values}, {false, true}, {attribute::of("axis", 2)}, status::invalid_model, "axis 2");
}

// ---------------------------------------------------------------------------------------------
// NonZero

TEST_CASE("non_zero: coordinates of non-zero elements, folded at compile time") {
    op_run r = run_op("NonZero", {make_bool({2, 2}, {true, false, true, true})}, {true});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    check_values<std::int64_t>(r.outputs[0], {2, 3}, {0, 1, 1, 0, 0, 1});
    check_values<std::int64_t>(run_op("NonZero", {make_f32({3}, {0.0f, -0.0f, 2.0f})}, {true}).outputs[0], {1, 1}, {2});
    check_values<std::int64_t>(run_op("NonZero", {i32({}, {5})}, {true}).outputs[0], {1, 1}, {0});
    check_values<std::int64_t>(run_op("NonZero", {i64({2, 0}, {})}, {true}).outputs[0], {2, 0}, {});
    check_rejected("NonZero", {make_bool({2}, {true, false})}, {}, {}, status::unsupported_op, "compile time");
}

// ---------------------------------------------------------------------------------------------
// Trilu

TEST_CASE("trilu: upper and lower, with k shifting the diagonal either way") {
    std::vector<std::int64_t> v(12);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i) + 1;
    const auto x = i64({3, 4}, v);
    check_values<std::int64_t>(run_both("Trilu", {x}).outputs[0], {3, 4}, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
    check_values<std::int64_t>(run_both("Trilu", {x}, {}, {attribute::of("upper", 0)}).outputs[0], {3, 4}, {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
    check_values<std::int64_t>(run_both("Trilu", {x, i64({}, {1})}).outputs[0], {3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
    check_values<std::int64_t>(run_both("Trilu", {x, i64({}, {-1})}, {}, {attribute::of("upper", 0)}).outputs[0], {3, 4},
                               {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
    check_values<std::int64_t>(run_both("Trilu", {x, i64({}, {-1})}).outputs[0], {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12});
    // k constant, x at run time
    check_values<std::int64_t>(run_both("Trilu", {x, i64({}, {2})}, {false, true}, {attribute::of("upper", 0)}).outputs[0], {3, 4},
                               {1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12});
}

TEST_CASE("trilu: extreme k, batches, empty matrices, any dtype, in place") {
    const auto x = make_f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max(), small = std::numeric_limits<std::int64_t>::min();
    check_values<float>(run_both("Trilu", {x}).outputs[0], {2, 2, 2}, {1, 2, 0, 4, 5, 6, 0, 8});
    check_values<float>(run_both("Trilu", {x, i64({}, {big})}).outputs[0], {2, 2, 2}, {0, 0, 0, 0, 0, 0, 0, 0});
    check_values<float>(run_both("Trilu", {x, i64({}, {small})}).outputs[0], {2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    check_values<float>(run_both("Trilu", {x, i64({}, {big})}, {}, {attribute::of("upper", 0)}).outputs[0], {2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    check_values<float>(run_both("Trilu", {x, i64({}, {small})}, {}, {attribute::of("upper", 0)}).outputs[0], {2, 2, 2}, {0, 0, 0, 0, 0, 0, 0, 0});
    check_values<std::int64_t>(run_both("Trilu", {i64({3, 0, 5}, {}), i64({}, {6})}).outputs[0], {3, 0, 5}, {});
    check_values<std::uint8_t>(run_both("Trilu", {make<std::uint8_t>({2, 2}, {1, 2, 3, 4})}, {}, {attribute::of("upper", 0)}).outputs[0], {2, 2},
                               {1, 0, 3, 4});
    const auto c = ember::test::run_in_chain("Trilu", make_f32({2, 2}, {1, -2, 3, 4}));
    CHECK(c.shared);
    ember::test::check_close(c.y, {1, 0, 0, 4}, 0.0f, 0.0f);
}

TEST_CASE("trilu: bad rank, k dtype or shape, opset") {
    check_rejected("Trilu", {make_f32({3}, {1, 2, 3})}, {}, {}, status::shape_mismatch, "rank >= 2");
    check_rejected("Trilu", {make_f32({2, 2}, {1, 2, 3, 4}), i32({}, {1})}, {}, {}, status::invalid_model, "int64");
    check_rejected("Trilu", {make_f32({2, 2}, {1, 2, 3, 4}), i64({2}, {1, 1})}, {}, {}, status::shape_mismatch, "scalar");
    check_rejected("Trilu", {make_f32({2, 2}, {1, 2, 3, 4})}, {}, {}, status::invalid_model, "opset 14", 1, 13);
}

// ---------------------------------------------------------------------------------------------
// CumSum

TEST_CASE("cum_sum: inclusive, exclusive, reverse and both, on float64") {
    const auto x = make<double>({5}, {1, 2, 3, 4, 5});
    const auto axis = i32({}, {0});
    using A = std::vector<attribute>;
    check_values<double>(run_both("CumSum", {x, axis}, {false, true}).outputs[0], {5}, {1, 3, 6, 10, 15});
    check_values<double>(run_both("CumSum", {x, axis}, {false, true}, A{attribute::of("exclusive", 1)}).outputs[0], {5}, {0, 1, 3, 6, 10});
    check_values<double>(run_both("CumSum", {x, axis}, {false, true}, A{attribute::of("reverse", 1)}).outputs[0], {5}, {15, 14, 12, 9, 5});
    check_values<double>(
        run_both("CumSum", {x, axis}, {false, true}, A{attribute::of("exclusive", 1), attribute::of("reverse", 1)}).outputs[0], {5},
        {14, 12, 9, 5, 0});
}

TEST_CASE("cum_sum: along each axis of a matrix, int dtypes wrap, float16 from opset 14") {
    const auto x = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    check_values<float>(run_both("CumSum", {x, i64({}, {0})}, {false, true}).outputs[0], {2, 3}, {1, 2, 3, 5, 7, 9});
    check_values<float>(run_both("CumSum", {x, i64({1}, {-1})}, {false, true}).outputs[0], {2, 3}, {1, 3, 6, 4, 9, 15});
    constexpr std::int32_t top = std::numeric_limits<std::int32_t>::max(), bottom = std::numeric_limits<std::int32_t>::min();
    check_values<std::int32_t>(run_both("CumSum", {i32({2}, {top, 1}), i32({}, {0})}, {false, true}).outputs[0], {2}, {top, bottom});
    check_values<std::int64_t>(run_both("CumSum", {i64({3}, {5, -2, 7}), i32({}, {0})}, {false, true}, {attribute::of("reverse", 1)}).outputs[0],
                               {3}, {10, 5, 7});
    const auto h = make<ember::float16>({3}, {ember::float16(1.0f), ember::float16(2.0f), ember::float16(3.5f)});
    const auto y = run_both("CumSum", {h, i64({}, {0})}, {false, true}).outputs[0];
    REQUIRE(y.type() == ember::dtype::float16);
    CHECK(static_cast<float>(y.data<ember::float16>()[2]) == 6.5f);
    check_rejected("CumSum", {h, i64({}, {0})}, {false, true}, {}, status::unsupported_op, "opset 13", 1, 13);
}

TEST_CASE("cum_sum: the axis must be a known int scalar in range") {
    const auto x = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    check_rejected("CumSum", {x, i64({}, {0})}, {}, {}, status::unsupported_op, "compile time");
    check_rejected("CumSum", {x, i64({}, {2})}, {false, true}, {}, status::invalid_model, "axis 2 is out of range");
    check_rejected("CumSum", {x, make_f32({}, {0})}, {false, true}, {}, status::invalid_model, "int32 or int64 scalar");
    check_rejected("CumSum", {make_bool({2}, {true, false}), i64({}, {0})}, {false, true}, {}, status::unsupported_op, "bool");
}

// ---------------------------------------------------------------------------------------------
// Compress

TEST_CASE("compress: along an axis, negative axis, flattened, short condition") {
    const auto x = make_f32({3, 2}, {1, 2, 3, 4, 5, 6});
    check_values<float>(run_both("Compress", {x, make_bool({3}, {false, true, true})}, {false, true}, {attribute::of("axis", 0)}).outputs[0], {2, 2},
                        {3, 4, 5, 6});
    check_values<float>(run_both("Compress", {x, make_bool({2}, {false, true})}, {false, true}, {attribute::of("axis", -1)}).outputs[0], {3, 1},
                        {2, 4, 6});
    check_values<float>(run_both("Compress", {x, make_bool({5}, {false, true, false, false, true})}, {false, true}).outputs[0], {2}, {2, 5});
    check_values<float>(run_both("Compress", {x, make_bool({1}, {true})}, {false, true}, {attribute::of("axis", 0)}).outputs[0], {1, 2}, {1, 2});
    check_values<std::int64_t>(run_both("Compress", {i64({2, 2}, {1, 2, 3, 4}), make_bool({2}, {false, false})}, {false, true},
                                        {attribute::of("axis", 1)})
                                   .outputs[0],
                               {2, 0}, {});
}

TEST_CASE("compress: the condition must be a known 1-D bool within the axis") {
    const auto x = make_f32({3, 2}, {1, 2, 3, 4, 5, 6});
    check_rejected("Compress", {x, make_bool({3}, {true, true, true})}, {}, {attribute::of("axis", 0)}, status::unsupported_op, "compile time");
    check_rejected("Compress", {x, make_bool({3}, {false, false, true})}, {false, true}, {attribute::of("axis", 1)}, status::shape_mismatch, "past the length");
    check_rejected("Compress", {x, i64({2}, {1, 0})}, {false, true}, {attribute::of("axis", 1)}, status::invalid_model, "1-D bool");
    check_rejected("Compress", {x, make_bool({2}, {true, true})}, {false, true}, {attribute::of("axis", -1)}, status::invalid_model, "opset 11", 1, 9);
}

// ---------------------------------------------------------------------------------------------
// ReverseSequence

TEST_CASE("reverse_sequence: time-major and batch-major, blocks of several elements") {
    std::vector<float> v(16);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    const auto x = make_f32({4, 4}, v);
    check_values<float>(run_both("ReverseSequence", {x, i64({4}, {4, 3, 2, 1})}).outputs[0], {4, 4},
                        {12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15});
    check_values<float>(
        run_both("ReverseSequence", {x, i32({4}, {1, 2, 3, 0})}, {}, {attribute::of("batch_axis", 0), attribute::of("time_axis", 1)}).outputs[0],
        {4, 4}, {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 12, 13, 14, 15});
    check_values<std::int64_t>(run_both("ReverseSequence", {i64({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), i64({2}, {2, 1})}).outputs[0], {2, 2, 2},
                               {4, 5, 2, 3, 0, 1, 6, 7});
}

TEST_CASE("reverse_sequence: a length past the time axis fails the run; bad axes and shapes at compile time") {
    const auto x = make_f32({2, 2}, {1, 2, 3, 4});
    check_out_of_range("ReverseSequence", {x, i64({2}, {1, 3})});
    check_out_of_range("ReverseSequence", {x, i64({2}, {-1, 1})});
    check_rejected("ReverseSequence", {x, i64({2}, {1, 1})}, {}, {attribute::of("batch_axis", 0)}, status::invalid_model, "0 and 1");
    check_rejected("ReverseSequence", {x, i64({3}, {1, 1, 1})}, {}, {}, status::shape_mismatch, "sequence_lens");
    check_rejected("ReverseSequence", {make_f32({2}, {1, 2}), i64({2}, {1, 1})}, {}, {}, status::shape_mismatch, "rank >= 2");
}

// ---------------------------------------------------------------------------------------------
// DepthToSpace / SpaceToDepth

TEST_CASE("depth_to_space: DCR and CRD; space_to_depth inverts DCR") {
    std::vector<float> v(8);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    const auto x = make_f32({1, 8, 1, 1}, v);
    check_values<float>(run_both("DepthToSpace", {x}, {}, {attribute::of("blocksize", 2)}).outputs[0], {1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7});
    check_values<float>(run_both("DepthToSpace", {x}, {}, {attribute::of("blocksize", 2), attribute::of("mode", "CRD")}).outputs[0],
                        {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    check_values<float>(run_both("SpaceToDepth", {make_f32({1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7})}, {}, {attribute::of("blocksize", 2)}).outputs[0],
                        {1, 8, 1, 1}, v);
    // round trip on a larger random input, and on int64
    const auto r = ember::test::random_f32({2, 3, 4, 6}, 7);
    const tensor deep = run_both("SpaceToDepth", {r}, {}, {attribute::of("blocksize", 2)}).outputs[0];
    CHECK(deep.dims() == shape{2, 12, 2, 3});
    const tensor back = run_both("DepthToSpace", {deep}, {}, {attribute::of("blocksize", 2)}).outputs[0];
    REQUIRE(back.dims() == r.dims());
    CHECK(std::memcmp(back.bytes(), r.bytes(), r.size_bytes()) == 0);
    check_values<std::int64_t>(run_both("DepthToSpace", {i64({1, 4, 1, 1}, {1, 2, 3, 4})}, {}, {attribute::of("blocksize", 2)}).outputs[0],
                               {1, 1, 2, 2}, {1, 2, 3, 4});
}

TEST_CASE("depth_to_space / space_to_depth: bad shapes, blocksize and mode") {
    const auto x = ember::test::random_f32({1, 6, 2, 2}, 3);
    check_rejected("DepthToSpace", {x}, {}, {attribute::of("blocksize", 2)}, status::shape_mismatch, "multiple of blocksize^2 = 4");
    check_rejected("DepthToSpace", {x}, {}, {}, status::invalid_model, "'blocksize' is missing");
    check_rejected("DepthToSpace", {x}, {}, {attribute::of("blocksize", 0)}, status::invalid_model, "blocksize must be >= 1");
    check_rejected("DepthToSpace", {ember::test::random_f32({1, 8, 2, 2}, 3)}, {}, {attribute::of("blocksize", 2), attribute::of("mode", "CRD")},
                   status::invalid_model, "opset 11", 1, 10);
    check_rejected("DepthToSpace", {ember::test::random_f32({1, 8, 2, 2}, 3)}, {}, {attribute::of("blocksize", 2), attribute::of("mode", "RCD")},
                   status::invalid_model, "'RCD'");
    check_rejected("SpaceToDepth", {ember::test::random_f32({1, 1, 3, 4}, 3)}, {}, {attribute::of("blocksize", 2)}, status::shape_mismatch,
                   "multiples of blocksize 2");
    check_rejected("SpaceToDepth", {ember::test::random_f32({1, 4, 4}, 3)}, {}, {attribute::of("blocksize", 2)}, status::shape_mismatch, "4-D");
}

// ---------------------------------------------------------------------------------------------
// Unique

TEST_CASE("unique: sorted and in order of first occurrence, all four outputs") {
    const auto x = make_f32({6}, {2, 1, 1, 3, 4, 3});
    op_run s = run_op("Unique", {x}, {true}, {}, 4);
    REQUIRE_MESSAGE(s.compiled, s.error.message);
    check_values<float>(s.outputs[0], {4}, {1, 2, 3, 4});
    check_values<std::int64_t>(s.outputs[1], {4}, {1, 0, 3, 4});
    check_values<std::int64_t>(s.outputs[2], {6}, {1, 0, 0, 2, 3, 2});
    check_values<std::int64_t>(s.outputs[3], {4}, {2, 1, 2, 1});
    op_run u = run_op("Unique", {x}, {true}, {attribute::of("sorted", 0)}, 4);
    REQUIRE_MESSAGE(u.compiled, u.error.message);
    check_values<float>(u.outputs[0], {4}, {2, 1, 3, 4});
    check_values<std::int64_t>(u.outputs[1], {4}, {0, 1, 3, 4});
    check_values<std::int64_t>(u.outputs[2], {6}, {0, 1, 1, 2, 3, 2});
    check_values<std::int64_t>(u.outputs[3], {4}, {1, 2, 2, 1});
}

TEST_CASE("unique: slices along an axis; Y alone; X must be known at compile time") {
    op_run r = run_op("Unique", {i64({3, 3}, {2, 3, 4, 1, 0, 0, 2, 3, 4})}, {true}, {attribute::of("axis", 0)}, 4);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    check_values<std::int64_t>(r.outputs[0], {2, 3}, {1, 0, 0, 2, 3, 4});
    check_values<std::int64_t>(r.outputs[1], {2}, {1, 0});
    check_values<std::int64_t>(r.outputs[2], {3}, {1, 0, 1});
    check_values<std::int64_t>(r.outputs[3], {2}, {1, 2});
    op_run c = run_op("Unique", {make_f32({2, 3}, {1, 0, 1, 2, 0, 2})}, {true}, {attribute::of("axis", -1)}, 1);
    REQUIRE_MESSAGE(c.compiled, c.error.message);
    check_values<float>(c.outputs[0], {2, 2}, {0, 1, 0, 2});
    // NaNs sort after the numbers and count as one value (numpy's equal_nan)
    const float nan = std::numeric_limits<float>::quiet_NaN();
    op_run n = run_op("Unique", {make_f32({4}, {nan, 1, nan, -1})}, {true}, {}, 4);
    REQUIRE_MESSAGE(n.compiled, n.error.message);
    ember::test::check_close(n.outputs[0], {-1, 1, nan});
    check_values<std::int64_t>(n.outputs[1], {3}, {3, 1, 0});
    check_values<std::int64_t>(n.outputs[3], {3}, {1, 1, 2});
    check_rejected("Unique", {make_f32({2}, {1, 2})}, {}, {}, status::unsupported_op, "compile time", 4);
    check_rejected("Unique", {make_f32({2}, {1, 2})}, {true}, {attribute::of("axis", 1)}, status::invalid_model, "axis 1 is out of range", 4);
}
