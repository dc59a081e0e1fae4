// SPDX-License-Identifier: Apache-2.0
// Slice, Split, Expand, Tile and Pad: the ops that move elements through a strided view.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/expand.hpp>
#include <ember/ops/layout.hpp>
#include <ember/ops/pad.hpp>
#include <ember/ops/slice.hpp>
#include <ember/ops/split.hpp>

#include "ops/shape_ops_helpers.hpp"

using namespace ember::test::shape_ops;

namespace {
constexpr auto int64_max = std::numeric_limits<std::int64_t>::max();
constexpr auto int64_min = std::numeric_limits<std::int64_t>::min();

// Slice at opset 13 with starts, ends, axes, steps (empty: absent) as constants.
ember::test::shape_ops::op_run slice13(const tensor& x, std::vector<std::int64_t> starts, std::vector<std::int64_t> ends,
                                       std::vector<std::int64_t> axes = {}, std::vector<std::int64_t> steps = {}) {
    std::vector<tensor> in{x, ints(std::move(starts)), ints(std::move(ends))};
    in.push_back(axes.empty() ? tensor() : ints(std::move(axes)));
    in.push_back(steps.empty() ? tensor() : ints(std::move(steps)));
    return run_op_both_ways("Slice", in, 1);
}
} // namespace

TEST_CASE("slice: ranges, steps and negative indices on a [3, 4] matrix, worked by hand") {
    const tensor x = iota({3, 4}, 0);  // rows 0 1 2 3 / 4 5 6 7 / 8 9 10 11
    auto block = slice13(x, {1, 1}, {3, 3});
    CHECK(block.outputs[0].dims() == shape{2, 2});
    CHECK(values_of<float>(block.outputs[0]) == std::vector<float>{5, 6, 9, 10});
    auto cols = slice13(x, {0}, {4}, {1}, {2});
    CHECK(values_of<float>(cols.outputs[0]) == std::vector<float>{0, 2, 4, 6, 8, 10});
    auto back = slice13(x, {-1, -1}, {int64_min, int64_min}, {0, 1}, {-2, -3});
    CHECK(back.outputs[0].dims() == shape{2, 2});
    CHECK(values_of<float>(back.outputs[0]) == std::vector<float>{11, 8, 3, 0});
    auto neg_axis = slice13(x, {-2}, {int64_max}, {-1});
    CHECK(values_of<float>(neg_axis.outputs[0]) == std::vector<float>{2, 3, 6, 7, 10, 11});
    auto one = slice13(x, {2}, {int64_max}, {0}, {int64_max});
    CHECK(values_of<float>(one.outputs[0]) == std::vector<float>{8, 9, 10, 11});
}

TEST_CASE("slice: out-of-range starts and ends clamp as the ONNX spec says, empty results are fine") {
    const tensor x = iota({5}, 0);
    CHECK(values_of<float>(slice13(x, {-100}, {100}).outputs[0]) == std::vector<float>{0, 1, 2, 3, 4});
    CHECK(slice13(x, {10}, {20}).outputs[0].dims() == shape{0});
    CHECK(slice13(x, {3}, {1}).outputs[0].dims() == shape{0});
    // negative step: start clamps to dim - 1, end to -1
    CHECK(values_of<float>(slice13(x, {100}, {-100}, {0}, {-1}).outputs[0]) == std::vector<float>{4, 3, 2, 1, 0});
    CHECK(values_of<float>(slice13(x, {4}, {0}, {0}, {-2}).outputs[0]) == std::vector<float>{4, 2});
    CHECK(slice13(make_f32({0}, {}), {0}, {1}, {0}, {-1}).outputs[0].dims() == shape{0});
}

TEST_CASE("slice: any dtype, int32 bounds, and the attribute form before opset 10") {
    const tensor b = make_bool({4}, {true, false, false, true});
    auto r = run_op_both_ways("Slice", {b, make<std::int32_t>({1}, {1}), make<std::int32_t>({1}, {4})}, 1);
    CHECK(values_of<bool>(r.outputs[0]) == std::vector<bool>{false, false, true});
    const tensor h = make<std::uint16_t>({2, 3}, {1, 2, 3, 4, 5, 6});
    auto old = run_op_both_ways("Slice", {h}, 1,
                                {attribute::of("starts", std::vector<std::int64_t>{1}), attribute::of("ends", std::vector<std::int64_t>{3}),
                                 attribute::of("axes", std::vector<std::int64_t>{1})},
                                1, 9);
    CHECK(values_of<std::uint16_t>(old.outputs[0]) == std::vector<std::uint16_t>{2, 3, 5, 6});
    const tensor d = make<double>({3}, {0.5, 1.5, 2.5});
    auto rev = slice13(d, {-1}, {int64_min}, {0}, {-1});
    CHECK(values_of<double>(rev.outputs[0]) == std::vector<double>{2.5, 1.5, 0.5});
}

TEST_CASE("slice: step 0, mismatched lengths, repeated axes and bounds only known at run time are errors") {
    const tensor x = iota({3, 4});
    auto zero = run_op("Slice", {x, ints({0}), ints({2}), ints({0}), ints({0})}, 1);
    REQUIRE_FALSE(zero.compiled);
    CHECK(zero.mentions("steps [0] has a 0"));
    auto lengths = run_op("Slice", {x, ints({0, 0}), ints({2})}, 1);
    REQUIRE_FALSE(lengths.compiled);
    CHECK(lengths.mentions("differ in length"));
    auto twice = run_op("Slice", {x, ints({0, 0}), ints({2, 2}), ints({1, -1})}, 1);
    REQUIRE_FALSE(twice.compiled);
    CHECK(twice.mentions("twice"));
    auto dynamic = run_op("Slice", {x, ints({0}), ints({2})}, 2);
    REQUIRE_FALSE(dynamic.compiled);
    CHECK(dynamic.mentions("input 1 (starts) must be known at compile time"));
    auto attr10 = run_op("Slice", {x, ints({0}), ints({2})}, 1, {attribute::of("axes", std::vector<std::int64_t>{0})}, 1, 10);
    REQUIRE_FALSE(attr10.compiled);
    CHECK(attr10.mentions("inputs, not attributes"));
}

TEST_CASE("split: equal parts, given lengths (input from opset 13, attribute before), zero-length parts") {
    const tensor x = iota({2, 6}, 0);
    auto equal = run_op_both_ways("Split", {x}, 1, {attribute::of("axis", 1)}, 3);
    REQUIRE(equal.outputs.size() == 3);
    CHECK(values_of<float>(equal.outputs[0]) == std::vector<float>{0, 1, 6, 7});
    CHECK(values_of<float>(equal.outputs[2]) == std::vector<float>{4, 5, 10, 11});
    auto given = run_op_both_ways("Split", {x, ints({1, 5})}, 1, {attribute::of("axis", -1)}, 2);
    CHECK(values_of<float>(given.outputs[0]) == std::vector<float>{0, 6});
    CHECK(given.outputs[1].dims() == shape{2, 5});
    CHECK(values_of<float>(given.outputs[1]) == std::vector<float>{1, 2, 3, 4, 5, 7, 8, 9, 10, 11});
    auto rows = run_op_both_ways("Split", {x}, 1, {attribute::of("split", std::vector<std::int64_t>{1, 1})}, 2, 11);
    CHECK(values_of<float>(rows.outputs[1]) == std::vector<float>{6, 7, 8, 9, 10, 11});
    auto empty = run_op_both_ways("Split", {make<std::int64_t>({3}, {1, 2, 3}), ints({0, 3, 0})}, 1, {}, 3);
    CHECK(empty.outputs[0].dims() == shape{0});
    CHECK(values_of<std::int64_t>(empty.outputs[1]) == std::vector<std::int64_t>{1, 2, 3});
}

TEST_CASE("split: uneven equal parts, lengths that do not add up and the wrong form for the opset are errors") {
    const tensor x = iota({5});
    auto uneven = run_op("Split", {x}, 1, {}, 2);
    REQUIRE_FALSE(uneven.compiled);
    CHECK(uneven.mentions("2 equal parts"));
    auto sum = run_op("Split", {x, ints({2, 2})}, 1, {}, 2);
    REQUIRE_FALSE(sum.compiled);
    CHECK(sum.mentions("adds up to 4"));
    auto count = run_op("Split", {x, ints({5})}, 1, {}, 2);
    REQUIRE_FALSE(count.compiled);
    CHECK(count.mentions("2 outputs"));
    auto attr13 = run_op("Split", {x}, 1, {attribute::of("split", std::vector<std::int64_t>{5})}, 1, 13);
    REQUIRE_FALSE(attr13.compiled);
    CHECK(attr13.mentions("input, not an attribute"));
}

TEST_CASE("expand: broadcasting in both directions, any dtype") {
    auto grow = run_op_both_ways("Expand", {make_f32({3, 1}, {1, 2, 3}), ints({2, 1, 4})}, 1);
    CHECK(grow.outputs[0].dims() == shape{2, 3, 4});
    std::vector<float> expected;
    for (int rep = 0; rep < 2; ++rep)
        for (float v : {1.0f, 2.0f, 3.0f})
            for (int j = 0; j < 4; ++j) expected.push_back(v);
    CHECK(values_of<float>(grow.outputs[0]) == expected);
    // the shape's 1 takes the input's size: [2, 3] expanded to [1, 3] stays [2, 3]
    auto keep = run_op_both_ways("Expand", {make<std::int8_t>({2, 3}, {1, 2, 3, 4, 5, 6}), ints({1, 3})}, 1);
    CHECK(keep.outputs[0].dims() == shape{2, 3});
    CHECK(values_of<std::int8_t>(keep.outputs[0]) == std::vector<std::int8_t>{1, 2, 3, 4, 5, 6});
    auto scalar = run_op_both_ways("Expand", {make<std::int64_t>({}, {7}), ints({2, 2})}, 1);
    CHECK(values_of<std::int64_t>(scalar.outputs[0]) == std::vector<std::int64_t>{7, 7, 7, 7});
    auto bad = run_op("Expand", {make_f32({3}, {1, 2, 3}), ints({2})}, 1);
    REQUIRE_FALSE(bad.compiled);
    CHECK(bad.error.code == status::shape_mismatch);
    CHECK(bad.mentions("[3]"));
}

TEST_CASE("tile: repeats along every dimension, zero repeats, errors") {
    auto t = run_op_both_ways("Tile", {make<std::int32_t>({2, 2}, {1, 2, 3, 4}), ints({2, 3})}, 1);
    CHECK(t.outputs[0].dims() == shape{4, 6});
    CHECK(values_of<std::int32_t>(t.outputs[0]) == std::vector<std::int32_t>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                                                             1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
    auto none = run_op_both_ways("Tile", {make_f32({2}, {1, 2}), ints({0})}, 1);
    CHECK(none.outputs[0].dims() == shape{0});
    auto length = run_op("Tile", {make_f32({2}, {1, 2}), ints({1, 2})}, 1);
    REQUIRE_FALSE(length.compiled);
    CHECK(length.mentions("rank 1"));
    auto negative = run_op("Tile", {make_f32({2}, {1, 2}), ints({-1})}, 1);
    REQUIRE_FALSE(negative.compiled);
    CHECK(negative.mentions("negative"));
    auto dynamic = run_op("Tile", {make_f32({2}, {1, 2}), ints({2})}, 2);
    REQUIRE_FALSE(dynamic.compiled);
    CHECK(dynamic.mentions("input 1 (repeats) must be known at compile time"));
}

TEST_CASE("strided view: contiguous dimensions merge, size-1 dimensions drop") {
    ember::ops::strided_copy_args g;
    g.push(2, 12);
    g.push(3, 4);
    g.push(1, 99);
    g.push(4, 1);
    CHECK(g.rank == 1);
    CHECK(g.dims[0] == 24);
    g = ember::ops::strided_copy_args{};
    g.push(2, 0);
    g.push(3, 1);
    CHECK(g.rank == 2);
}

TEST_CASE("pad: constant, edge and reflect on a [2, 3] matrix, worked by hand") {
    const tensor x = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    auto c = run_op_both_ways("Pad", {x, ints({0, 1, 1, 0}), make_f32({}, {9})}, 1);
    CHECK(c.outputs[0].dims() == shape{3, 4});
    CHECK(values_of<float>(c.outputs[0]) == std::vector<float>{9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9});
    auto zero = run_op_both_ways("Pad", {x, ints({1, 0, 0, 0})}, 1);
    CHECK(values_of<float>(zero.outputs[0]) == std::vector<float>{0, 0, 0, 1, 2, 3, 4, 5, 6});
    auto edge = run_op_both_ways("Pad", {x, ints({0, 2, 0, 1})}, 1, {attribute::of("mode", "edge")});
    CHECK(values_of<float>(edge.outputs[0]) == std::vector<float>{1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6});
    auto reflect = run_op_both_ways("Pad", {x, ints({0, 2, 0, 2})}, 1, {attribute::of("mode", "reflect")});
    CHECK(values_of<float>(reflect.outputs[0]) == std::vector<float>{3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4});
    // pads longer than the axis reflect again (numpy.pad): [1, 2] padded by 3 before
    auto again = run_op_both_ways("Pad", {make<std::int32_t>({2}, {1, 2}), ints({3, 0})}, 1, {attribute::of("mode", "reflect")});
    CHECK(values_of<std::int32_t>(again.outputs[0]) == std::vector<std::int32_t>{2, 1, 2, 1, 2});
}

TEST_CASE("pad: negative pads crop; opset 2-10 takes pads and value as attributes") {
    const tensor x = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    auto crop = run_op_both_ways("Pad", {x, ints({0, -1, -1, 1}), make_f32({}, {7})}, 1);
    CHECK(crop.outputs[0].dims() == shape{1, 3});
    CHECK(values_of<float>(crop.outputs[0]) == std::vector<float>{2, 3, 7});
    auto old = run_op_both_ways("Pad", {make<std::uint8_t>({2}, {1, 2})}, 1,
                                {attribute::of("pads", std::vector<std::int64_t>{1, 2}), attribute::of("value", 5.0f)}, 1, 10);
    CHECK(values_of<std::uint8_t>(old.outputs[0]) == std::vector<std::uint8_t>{5, 1, 2, 5, 5});
}

TEST_CASE("pad: the constant_value may be a run-time input") {
    ember::graph_builder b("pad_value");
    const auto x = b.input("x", dtype::int64, {2});
    const auto v = b.input("v", dtype::int64, {});
    b.output(b.node("Pad", {x, b.constant<std::int64_t>("pads", {2}, {1, 1}), v}, {}, "pad"), "y");
    auto g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session sess(*p);
    const std::int64_t in[2] = {3, 4}, value = -8;
    std::int64_t out[4] = {};
    REQUIRE(sess.bind_input(0, in, sizeof in) == status::ok);
    REQUIRE(sess.bind_input(1, &value, sizeof value) == status::ok);
    REQUIRE(sess.bind_output(0, out, sizeof out) == status::ok);
    REQUIRE(sess.run() == status::ok);
    CHECK(std::vector<std::int64_t>(out, out + 4) == std::vector<std::int64_t>{-8, 3, 4, -8});
}

TEST_CASE("pad: wrong pads, an unknown mode, edge padding of an empty axis and a mistyped value are errors") {
    const tensor x = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    auto count = run_op("Pad", {x, ints({1, 1})}, 1);
    REQUIRE_FALSE(count.compiled);
    CHECK(count.mentions("2 * rank = 4"));
    auto too_much = run_op("Pad", {x, ints({-2, 0, -1, 0})}, 1);
    REQUIRE_FALSE(too_much.compiled);
    CHECK(too_much.mentions("remove more"));
    auto mode = run_op("Pad", {x, ints({0, 0, 0, 0})}, 1, {attribute::of("mode", "wrap")});
    REQUIRE_FALSE(mode.compiled);
    CHECK(mode.error.code == status::unsupported_op);
    CHECK(mode.mentions("'wrap'"));
    auto empty = run_op("Pad", {make_f32({0}, {}), ints({1, 0})}, 1, {attribute::of("mode", "edge")});
    REQUIRE_FALSE(empty.compiled);
    CHECK(empty.mentions("nothing to copy"));
    auto typed = run_op("Pad", {x, ints({0, 0, 0, 0}), make<double>({}, {1})}, 1);
    REQUIRE_FALSE(typed.compiled);
    CHECK(typed.mentions("float64"));
    auto dynamic = run_op("Pad", {x, ints({0, 0, 0, 0})}, 2);
    REQUIRE_FALSE(dynamic.compiled);
    CHECK(dynamic.mentions("input 1 (pads) must be known at compile time"));
}
