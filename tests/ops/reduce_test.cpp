// SPDX-License-Identifier: Apache-2.0
// Reductions and friends: Reduce*, ArgMax/ArgMin, TopK, Hardmax, LogSoftmax, Einsum,
// NonMaxSuppression, Det.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/arg_max.hpp>
#include <ember/ops/det.hpp>
#include <ember/ops/einsum.hpp>
#include <ember/ops/hardmax.hpp>
#include <ember/ops/log_softmax.hpp>
#include <ember/ops/non_max_suppression.hpp>
#include <ember/ops/reduce.hpp>
#include <ember/ops/top_k.hpp>

#include "ops/node_at_opset.hpp"
#include "support/check.hpp"

namespace {

using ember::attribute;
using ember::shape;
using ember::tensor;
using namespace ember::test;
using ints = std::vector<std::int64_t>;

tensor x322() { return make_f32({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}); }
tensor axes(ints v) {
    const auto n = static_cast<std::int64_t>(v.size());
    return make<std::int64_t>({n}, std::move(v));
}
attribute axes_attr(ints v) { return attribute::of("axes", std::move(v)); }

const float inf = std::numeric_limits<float>::infinity();
const float qnan = std::numeric_limits<float>::quiet_NaN();

} // namespace

// ---------------------------------------------------------------------------------------------
// Reduce*

TEST_CASE("reduce: every kind over one axis, hand-computed, folded or not") {
    const std::vector<attribute> ax1 = {axes_attr({1}), attribute::of("keepdims", 0)};
    struct expect {
        const char* op;
        std::vector<float> y;
    };
    const expect cases[] = {
        {"ReduceSum", {4, 6, 12, 14, 20, 22}},
        {"ReduceMean", {2, 3, 6, 7, 10, 11}},
        {"ReduceMax", {3, 4, 7, 8, 11, 12}},
        {"ReduceMin", {1, 2, 5, 6, 9, 10}},
        {"ReduceProd", {3, 8, 35, 48, 99, 120}},
        {"ReduceL1", {4, 6, 12, 14, 20, 22}},
        {"ReduceL2", {std::sqrt(10.0f), std::sqrt(20.0f), std::sqrt(74.0f), std::sqrt(100.0f), std::sqrt(202.0f), std::sqrt(244.0f)}},
        {"ReduceLogSum", {std::log(4.0f), std::log(6.0f), std::log(12.0f), std::log(14.0f), std::log(20.0f), std::log(22.0f)}},
        {"ReduceLogSumExp",
         {std::log(std::exp(1.0f) + std::exp(3.0f)), std::log(std::exp(2.0f) + std::exp(4.0f)), std::log(std::exp(5.0f) + std::exp(7.0f)),
          std::log(std::exp(6.0f) + std::exp(8.0f)), std::log(std::exp(9.0f) + std::exp(11.0f)), std::log(std::exp(10.0f) + std::exp(12.0f))}},
        {"ReduceSumSquare", {10, 20, 74, 100, 202, 244}},
    };
    for (const expect& c : cases) {
        CAPTURE(c.op);
        // ReduceSum takes its axes as an input from opset 13: use opset 11 for the attribute form
        auto r = run_at_both_ways(11, c.op, {x322()}, ax1);
        CHECK(r.outputs[0].dims() == shape{3, 2});
        check_close(r.outputs[0], c.y, 1e-5f, 1e-5f);
    }
}

TEST_CASE("reduce: keepdims, all axes by default, negative and non-adjacent axes") {
    auto keep = run_at(11, "ReduceSum", {x322()}, {axes_attr({1})});
    CHECK(keep.outputs[0].dims() == shape{3, 1, 2});
    check_close(keep.outputs[0], {4, 6, 12, 14, 20, 22});

    auto all = run_at(11, "ReduceMax", {x322()}, {});
    CHECK(all.outputs[0].dims() == shape{1, 1, 1});
    check_close(all.outputs[0], {12});
    auto all_flat = run_at(11, "ReduceMin", {x322()}, {attribute::of("keepdims", 0)});
    CHECK(all_flat.outputs[0].dims() == shape{});
    check_close(all_flat.outputs[0], {1});

    // axes 0 and 2 around a kept axis 1: y[j] = sum over i, k of x[i, j, k]
    auto outer = run_at(11, "ReduceSum", {x322()}, {axes_attr({0, -1}), attribute::of("keepdims", 0)});
    CHECK(outer.outputs[0].dims() == shape{2});
    check_close(outer.outputs[0], {33, 45});
    auto mean_last = run_at(11, "ReduceMean", {x322()}, {axes_attr({-1})});
    CHECK(mean_last.outputs[0].dims() == shape{3, 2, 1});
    check_close(mean_last.outputs[0], {1.5f, 3.5f, 5.5f, 7.5f, 9.5f, 11.5f});
}

TEST_CASE("reduce: ReduceSum from opset 13 takes the axes as an input, empty meaning all or, with noop_with_empty_axes, none") {
    auto r = run_at_both_ways(13, "ReduceSum", {x322(), axes(ints{-2})}, {attribute::of("keepdims", 0)});
    CHECK(r.outputs[0].dims() == shape{3, 2});
    check_close(r.outputs[0], {4, 6, 12, 14, 20, 22});

    auto absent = run_at(13, "ReduceSum", {x322()}, {});
    CHECK(absent.outputs[0].dims() == shape{1, 1, 1});
    check_close(absent.outputs[0], {78});
    auto empty = run_at(13, "ReduceSum", {x322(), axes(ints{})}, {attribute::of("keepdims", 0)});
    CHECK(empty.outputs[0].dims() == shape{});
    check_close(empty.outputs[0], {78});

    auto noop = run_at_both_ways(13, "ReduceSum", {x322(), axes(ints{})}, {attribute::of("noop_with_empty_axes", 1)});
    CHECK(noop.outputs[0].dims() == shape{3, 2, 2});
    check_close(noop.outputs[0], ember::test::values_f32(x322()));
    // noop only applies to empty axes
    auto given = run_at(13, "ReduceSum", {x322(), axes(ints{0})}, {attribute::of("noop_with_empty_axes", 1)});
    check_close(given.outputs[0], {15, 18, 21, 24});
}

TEST_CASE("reduce: the opset decides between the axes attribute and the axes input") {
    auto attr13 = run_at(13, "ReduceSum", {x322()}, {axes_attr({1})});
    REQUIRE_FALSE(attr13.compiled);
    CHECK(attr13.error.code == ember::status::invalid_model);
    CHECK(mentions(attr13, "'node' (ReduceSum)"));
    CHECK(mentions(attr13, "from opset 13 the axes are input 1"));

    auto input11 = run_at(11, "ReduceSum", {x322(), axes(ints{1})}, {});
    REQUIRE_FALSE(input11.compiled);
    CHECK(mentions(input11, "expected 1 inputs, got 2"));

    auto noop11 = run_at(11, "ReduceMean", {x322()}, {attribute::of("noop_with_empty_axes", 1)});
    REQUIRE_FALSE(noop11.compiled);
    CHECK(mentions(noop11, "noop_with_empty_axes"));

    // ReduceMean keeps the attribute through opset 17
    auto mean17 = run_at(17, "ReduceMean", {x322()}, {axes_attr({0}), attribute::of("keepdims", 0)});
    REQUIRE_MESSAGE(mean17.compiled, mean17.error.message);
    check_close(mean17.outputs[0], {5, 6, 7, 8});

    // the axes input must be known at compile time
    auto dynamic = run_at(13, "ReduceSum", {x322(), axes(ints{1})}, {}, 1, 2);
    REQUIRE_FALSE(dynamic.compiled);
    CHECK(dynamic.error.code == ember::status::unsupported_op);
    CHECK(mentions(dynamic, "input 1 (axes) must be known at compile time"));
}

TEST_CASE("reduce: bad axes and dtypes are rejected with the values in the message") {
    auto r = run_at(11, "ReduceMean", {x322()}, {axes_attr({3})});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::invalid_model);
    CHECK(mentions(r, "'node' (ReduceMean)"));
    CHECK(mentions(r, "axis 3 is out of range"));
    CHECK(mentions(r, "[3, 2, 2]"));
    auto d = run_at(11, "ReduceMax", {x322()}, {axes_attr({1, -2})});
    REQUIRE_FALSE(d.compiled);
    CHECK(mentions(d, "more than once"));
    auto b = run_at(11, "ReduceSum", {make_bool({2}, {1, 0})}, {});
    REQUIRE_FALSE(b.compiled);
    CHECK(b.error.code == ember::status::unsupported_op);
    CHECK(mentions(b, "bool"));
    auto i8 = run_at(11, "ReduceSum", {make<std::int8_t>({2}, {1, 2})}, {});
    REQUIRE_FALSE(i8.compiled);
    CHECK(mentions(i8, "int8"));
}

TEST_CASE("reduce: an empty set gives each op's identity") {
    const tensor empty = make_f32({2, 0}, {});
    const std::vector<attribute> ax = {axes_attr({1}), attribute::of("keepdims", 0)};
    struct expect {
        const char* op;
        float y;
    };
    const expect cases[] = {{"ReduceSum", 0},        {"ReduceSumSquare", 0}, {"ReduceL1", 0},          {"ReduceL2", 0},
                            {"ReduceProd", 1},       {"ReduceMax", -inf},    {"ReduceMin", inf},       {"ReduceMean", qnan},
                            {"ReduceLogSum", -inf},  {"ReduceLogSumExp", -inf}};
    for (const expect& c : cases) {
        CAPTURE(c.op);
        auto r = run_at_both_ways(11, c.op, {empty}, ax);
        CHECK(r.outputs[0].dims() == shape{2});
        for (float y : values_of<float>(r.outputs[0])) CHECK(((std::isnan(c.y) && std::isnan(y)) || y == c.y));
    }
    auto imax = run_at(11, "ReduceMax", {make<std::int32_t>({2, 0}, {})}, ax);
    CHECK(values_of<std::int32_t>(imax.outputs[0]) == std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::lowest(),
                                                                                  std::numeric_limits<std::int32_t>::lowest()});
    auto imean = run_at(11, "ReduceMean", {make<std::int64_t>({1, 0}, {})}, ax);
    CHECK(values_of<std::int64_t>(imean.outputs[0]) == ints{0});
    // reducing the non-empty axis of an empty tensor gives an empty tensor
    auto none = run_at(11, "ReduceSum", {empty}, {axes_attr({0})});
    CHECK(none.outputs[0].dims() == shape{1, 0});
}

TEST_CASE("reduce: integer and float64 dtypes") {
    const tensor i64 = make<std::int64_t>({2, 3}, {1, -2, 3, 1ll << 40, 5, -7});
    const std::vector<attribute> ax1 = {axes_attr({1}), attribute::of("keepdims", 0)};
    CHECK(values_of<std::int64_t>(run_at(11, "ReduceSum", {i64}, ax1).outputs[0]) == ints{2, (1ll << 40) - 2});
    CHECK(values_of<std::int64_t>(run_at(11, "ReduceProd", {i64}, ax1).outputs[0]) == ints{-6, -35 * (1ll << 40)});
    CHECK(values_of<std::int64_t>(run_at(11, "ReduceMax", {i64}, ax1).outputs[0]) == ints{3, 1ll << 40});
    CHECK(values_of<std::int64_t>(run_at(11, "ReduceMin", {i64}, ax1).outputs[0]) == ints{-2, -7});
    CHECK(values_of<std::int64_t>(run_at(11, "ReduceL1", {i64}, ax1).outputs[0]) == ints{6, (1ll << 40) + 12});
    // integer mean truncates toward zero, as numpy's mean cast back to the integer type does
    CHECK(values_of<std::int64_t>(run_at(11, "ReduceMean", {make<std::int64_t>({2, 2}, {1, 2, -1, -2})}, ax1).outputs[0]) == ints{1, -1});
    const tensor i32 = make<std::int32_t>({3}, {4, -9, 2});
    CHECK(values_of<std::int32_t>(run_at(11, "ReduceSumSquare", {i32}, {}).outputs[0]) == std::vector<std::int32_t>{101});
    CHECK(values_of<std::int32_t>(run_at(11, "ReduceMin", {i32}, {}).outputs[0]) == std::vector<std::int32_t>{-9});
    const tensor u8 = make<std::uint8_t>({3}, {4, 250, 2});
    CHECK(values_of<std::uint8_t>(run_at(13, "ReduceMax", {u8}, {}).outputs[0]) == std::vector<std::uint8_t>{250});

    // LogSumExp stays finite where exp() alone would overflow
    auto big = run_at(11, "ReduceLogSumExp", {make<double>({2}, {1000.0, 1000.0})}, {});
    CHECK(values_of<double>(big.outputs[0])[0] == doctest::Approx(1000.0 + std::log(2.0)));
    auto minus_inf = run_at(11, "ReduceLogSumExp", {make_f32({2}, {-inf, -inf})}, {});
    CHECK(values_of<float>(minus_inf.outputs[0])[0] == -inf);
}

TEST_CASE("reduce: float16 computes in double and rounds once; uint64 wraps instead of overflowing") {
    using ember::float16;
    const tensor h = make<float16>({3}, {float16(1.5f), float16(2.25f), float16(-0.75f)});
    auto sum = run_at_both_ways(11, "ReduceSum", {h}, {});
    CHECK(static_cast<float>(values_of<float16>(sum.outputs[0])[0]) == 3.0f);
    auto mx = run_at(11, "ReduceMax", {h}, {});
    CHECK(static_cast<float>(values_of<float16>(mx.outputs[0])[0]) == 2.25f);
    const tensor u = make<std::uint64_t>({2}, {~std::uint64_t{0}, 2});
    auto wrapped = run_at(11, "ReduceSum", {u}, {});
    CHECK(values_of<std::uint64_t>(wrapped.outputs[0]) == std::vector<std::uint64_t>{1});
}

TEST_CASE("reduce: NaN propagates through max and min") {
    const tensor x = make_f32({2, 2}, {1, qnan, 3, 4});
    const std::vector<attribute> ax1 = {axes_attr({1}), attribute::of("keepdims", 0)};
    auto mx = run_at(11, "ReduceMax", {x}, ax1);
    CHECK(std::isnan(values_of<float>(mx.outputs[0])[0]));
    CHECK(values_of<float>(mx.outputs[0])[1] == 4.0f);
    auto mn = run_at(11, "ReduceMin", {x}, ax1);
    CHECK(std::isnan(values_of<float>(mn.outputs[0])[0]));
    CHECK(values_of<float>(mn.outputs[0])[1] == 3.0f);
}

TEST_CASE("reduce: the geometry merges adjacent dimensions and skips size-1 ones") {
    const bool mask[] = {false, false, true, true, false};
    const ember::ops::reduce_geometry g = ember::ops::make_reduce_geometry(shape{2, 3, 4, 5, 1}, mask);
    CHECK(g.kept_rank == 1);  // [2, 3] merged; the trailing 1 dropped
    CHECK(g.kept_size[0] == 6);
    CHECK(g.kept_stride[0] == 20);
    CHECK(g.red_rank == 1);  // [4, 5] merged
    CHECK(g.red_size[0] == 20);
    CHECK(g.red_stride[0] == 1);
    CHECK(g.out_count == 6);
    CHECK(g.red_count == 20);
    std::vector<std::int64_t> offsets;
    g.for_each(g.base(1), [&](std::int64_t o) { offsets.push_back(o); });
    REQUIRE(offsets.size() == 20);
    CHECK(offsets.front() == 20);
    CHECK(offsets.back() == 39);
}

// ---------------------------------------------------------------------------------------------
// ArgMax, ArgMin

TEST_CASE("argmax/argmin: first index on ties, or the last with select_last_index") {
    const tensor x = make_f32({2, 3}, {2, 5, 5, 7, 1, 1});
    auto first = run_at_both_ways(13, "ArgMax", {x}, {attribute::of("axis", 1)});
    CHECK(first.outputs[0].type() == ember::dtype::int64);
    CHECK(first.outputs[0].dims() == shape{2, 1});
    CHECK(values_of<std::int64_t>(first.outputs[0]) == ints{1, 0});
    auto last = run_at(13, "ArgMax", {x}, {attribute::of("axis", 1), attribute::of("select_last_index", 1)});
    CHECK(values_of<std::int64_t>(last.outputs[0]) == ints{2, 0});
    auto mn = run_at(13, "ArgMin", {x}, {attribute::of("axis", -1), attribute::of("keepdims", 0)});
    CHECK(mn.outputs[0].dims() == shape{2});
    CHECK(values_of<std::int64_t>(mn.outputs[0]) == ints{0, 1});
    auto mn_last = run_at(13, "ArgMin", {x}, {attribute::of("axis", -1), attribute::of("keepdims", 0), attribute::of("select_last_index", 1)});
    CHECK(values_of<std::int64_t>(mn_last.outputs[0]) == ints{0, 2});
    // default axis 0
    auto axis0 = run_at(13, "ArgMax", {x}, {});
    CHECK(axis0.outputs[0].dims() == shape{1, 3});
    CHECK(values_of<std::int64_t>(axis0.outputs[0]) == ints{1, 0, 0});
}

TEST_CASE("argmax/argmin: integer inputs, NaN chosen, and bad input rejected") {
    auto i = run_at(13, "ArgMin", {make<std::int32_t>({4}, {3, -8, 2, -8})}, {attribute::of("keepdims", 0)});
    CHECK(i.outputs[0].dims() == shape{});
    CHECK(values_of<std::int64_t>(i.outputs[0]) == ints{1});
    auto n = run_at(13, "ArgMax", {make_f32({3}, {1, qnan, 3})}, {});
    CHECK(values_of<std::int64_t>(n.outputs[0]) == ints{1});

    auto old = run_at(11, "ArgMax", {make_f32({3}, {1, 2, 3})}, {attribute::of("select_last_index", 1)});
    REQUIRE_FALSE(old.compiled);
    CHECK(mentions(old, "select_last_index"));
    CHECK(mentions(old, "opset 12"));
    auto empty = run_at(13, "ArgMax", {make_f32({2, 0}, {})}, {attribute::of("axis", 1)});
    REQUIRE_FALSE(empty.compiled);
    CHECK(mentions(empty, "empty"));
    auto axis = run_at(13, "ArgMin", {make_f32({2, 2}, {1, 2, 3, 4})}, {attribute::of("axis", 2)});
    REQUIRE_FALSE(axis.compiled);
    CHECK(mentions(axis, "axis 2 is out of range"));
}

// ---------------------------------------------------------------------------------------------
// TopK

TEST_CASE("topk: largest and smallest k along an axis, ties to the lower index") {
    const tensor x = make_f32({2, 4}, {1, 3, 3, 2, 0, -1, 5, 0});
    auto big = run_at_both_ways(11, "TopK", {x, make<std::int64_t>({1}, {3})}, {}, 2);
    CHECK(big.outputs[0].dims() == shape{2, 3});
    check_close(big.outputs[0], {3, 3, 2, 5, 0, 0}, 0.0f, 0.0f);
    CHECK(values_of<std::int64_t>(big.outputs[1]) == ints{1, 2, 3, 2, 0, 3});
    auto small = run_at(11, "TopK", {x, make<std::int64_t>({1}, {2})}, {attribute::of("largest", 0)}, 2);
    check_close(small.outputs[0], {1, 2, -1, 0}, 0.0f, 0.0f);
    CHECK(values_of<std::int64_t>(small.outputs[1]) == ints{0, 3, 1, 0});
    auto axis0 = run_at(11, "TopK", {x, make<std::int64_t>({1}, {1})}, {attribute::of("axis", 0)}, 2);
    CHECK(axis0.outputs[0].dims() == shape{1, 4});
    check_close(axis0.outputs[0], {1, 3, 5, 2}, 0.0f, 0.0f);
    CHECK(values_of<std::int64_t>(axis0.outputs[1]) == ints{0, 0, 1, 0});
    // NaN counts as the largest
    auto n = run_at(11, "TopK", {make_f32({3}, {1, qnan, 2}), make<std::int64_t>({1}, {2})}, {}, 2);
    CHECK(values_of<std::int64_t>(n.outputs[1]) == ints{1, 2});
    // k = 0 gives empty outputs
    auto none = run_at(11, "TopK", {x, make<std::int64_t>({1}, {0})}, {}, 2);
    CHECK(none.outputs[0].dims() == shape{2, 0});
}

TEST_CASE("topk: the opset decides between the k attribute (< 10) and the K input, which must be constant") {
    const tensor x = make<std::int64_t>({4}, {4, 9, -1, 9});
    auto v9 = run_at(9, "TopK", {x}, {attribute::of("k", 2)}, 2);
    REQUIRE_MESSAGE(v9.compiled, v9.error.message);
    CHECK(values_of<std::int64_t>(v9.outputs[0]) == ints{9, 9});
    CHECK(values_of<std::int64_t>(v9.outputs[1]) == ints{1, 3});
    auto largest10 = run_at(10, "TopK", {x, make<std::int64_t>({1}, {1})}, {attribute::of("largest", 0)}, 2);
    REQUIRE_FALSE(largest10.compiled);
    CHECK(mentions(largest10, "opset 11"));
    auto attr11 = run_at(11, "TopK", {x, make<std::int64_t>({1}, {1})}, {attribute::of("k", 1)}, 2);
    REQUIRE_FALSE(attr11.compiled);
    CHECK(mentions(attr11, "k is input 1"));
    auto dynamic = run_at(11, "TopK", {x, make<std::int64_t>({1}, {1})}, {}, 2, 2);
    REQUIRE_FALSE(dynamic.compiled);
    CHECK(mentions(dynamic, "input 1 (K) must be known at compile time"));
    auto too_many = run_at(11, "TopK", {x, make<std::int64_t>({1}, {5})}, {}, 2);
    REQUIRE_FALSE(too_many.compiled);
    CHECK(mentions(too_many, "k is 5, expected 0 to 4"));
}

// ---------------------------------------------------------------------------------------------
// Hardmax, LogSoftmax

TEST_CASE("hardmax: one-hot of the first maximum; opset 11 coerces to 2-D, 13 uses one axis") {
    const tensor x = make_f32({2, 2, 2}, {1, 4, 4, 2, 0, 0, 0, 0});
    auto v13 = run_at_both_ways(13, "Hardmax", {x}, {attribute::of("axis", 1)});
    check_close(v13.outputs[0], {0, 1, 1, 0, 1, 1, 0, 0}, 0.0f, 0.0f);
    auto v13_default = run_at(13, "Hardmax", {x}, {});  // axis -1
    check_close(v13_default.outputs[0], {0, 1, 1, 0, 1, 0, 1, 0}, 0.0f, 0.0f);
    // opset 11, axis 1: each batch's 4 values form one row
    auto v11 = run_at(11, "Hardmax", {x}, {});
    check_close(v11.outputs[0], {0, 1, 0, 0, 1, 0, 0, 0}, 0.0f, 0.0f);
    auto bad = run_at(13, "Hardmax", {x}, {attribute::of("axis", 3)});
    REQUIRE_FALSE(bad.compiled);
    CHECK(mentions(bad, "axis 3 is out of range"));
}

TEST_CASE("logsoftmax: x - max - log(sum(exp(x - max))), stable for large inputs, both axis meanings") {
    const tensor x = make_f32({1, 3}, {1, 2, 3});
    const float lse = std::log(std::exp(1.0f) + std::exp(2.0f) + std::exp(3.0f));
    auto r = run_at_both_ways(13, "LogSoftmax", {x}, {});
    check_close(r.outputs[0], {1 - lse, 2 - lse, 3 - lse});
    auto big = run_at(13, "LogSoftmax", {make_f32({2}, {10000, 10001})}, {});
    const float l2 = std::log(1.0f + std::exp(1.0f));
    check_close(big.outputs[0], {-l2, 1 - l2}, 1e-4f);

    // [1, 2, 2] with axis 1: opset 11 normalises the 4 values of the batch together, opset 13
    // each column of 2.
    const tensor y = make_f32({1, 2, 2}, {0, 0, 0, 0});
    auto v11 = run_at(11, "LogSoftmax", {y}, {attribute::of("axis", 1)});
    check_close(v11.outputs[0], {-std::log(4.0f), -std::log(4.0f), -std::log(4.0f), -std::log(4.0f)});
    auto v13 = run_at(13, "LogSoftmax", {y}, {attribute::of("axis", 1)});
    check_close(v13.outputs[0], {-std::log(2.0f), -std::log(2.0f), -std::log(2.0f), -std::log(2.0f)});
    auto f64 = run_at(13, "LogSoftmax", {make<double>({2}, {0.0, 0.0})}, {});
    CHECK(values_of<double>(f64.outputs[0])[1] == doctest::Approx(-std::log(2.0)));
    auto i = run_at(13, "LogSoftmax", {make<std::int32_t>({2}, {1, 2})}, {});
    REQUIRE_FALSE(i.compiled);
    CHECK(mentions(i, "int32"));
}

// ---------------------------------------------------------------------------------------------
// Einsum

TEST_CASE("einsum: matmul, transpose, trace, diagonal, inner product, implicit output") {
    const tensor a = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    const tensor b = make_f32({3, 2}, {1, 0, 0, 1, 1, 1});
    auto mm = run_at_both_ways(12, "Einsum", {a, b}, {attribute::of("equation", "ij,jk->ik")});
    CHECK(mm.outputs[0].dims() == shape{2, 2});
    check_close(mm.outputs[0], {4, 5, 10, 11}, 0.0f, 0.0f);
    auto implicit = run_at(12, "Einsum", {a, b}, {attribute::of("equation", "ij, jk")});
    check_close(implicit.outputs[0], {4, 5, 10, 11}, 0.0f, 0.0f);
    auto t = run_at(12, "Einsum", {a}, {attribute::of("equation", "ij->ji")});
    CHECK(t.outputs[0].dims() == shape{3, 2});
    check_close(t.outputs[0], {1, 4, 2, 5, 3, 6}, 0.0f, 0.0f);
    // implicit output is alphabetical: "ji" keeps both labels as "ij", a transpose
    auto ji = run_at(12, "Einsum", {a}, {attribute::of("equation", "ji")});
    CHECK(ji.outputs[0].dims() == shape{3, 2});
    auto sum = run_at(12, "Einsum", {a}, {attribute::of("equation", "ij->")});
    CHECK(sum.outputs[0].dims() == shape{});
    check_close(sum.outputs[0], {21}, 0.0f, 0.0f);

    const tensor sq = make_f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    check_close(run_at(12, "Einsum", {sq}, {attribute::of("equation", "ii")}).outputs[0], {15}, 0.0f, 0.0f);
    check_close(run_at(12, "Einsum", {sq}, {attribute::of("equation", "ii->i")}).outputs[0], {1, 5, 9}, 0.0f, 0.0f);
    const tensor v = make_f32({3}, {1, 2, 3});
    check_close(run_at(12, "Einsum", {v, v}, {attribute::of("equation", "i,i")}).outputs[0], {14}, 0.0f, 0.0f);
    auto outer = run_at(12, "Einsum", {v, make_f32({2}, {1, -1})}, {attribute::of("equation", "i,j->ij")});
    check_close(outer.outputs[0], {1, -1, 2, -2, 3, -3}, 0.0f, 0.0f);
    // three operands: a . b . c
    auto three = run_at(12, "Einsum", {v, v, v}, {attribute::of("equation", "i,i,i->")});
    check_close(three.outputs[0], {36}, 0.0f, 0.0f);
}

TEST_CASE("einsum: '...' broadcasts the leading dimensions; int64 and float64") {
    const tensor batch = make<double>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    auto diag = run_at_both_ways(12, "Einsum", {batch}, {attribute::of("equation", "...ii ->...i")});
    CHECK(diag.outputs[0].dims() == shape{2, 2});
    CHECK(values_of<double>(diag.outputs[0]) == std::vector<double>{1, 4, 5, 8});
    // [2, 3] . [3] over the last axis, the vector's missing '...' broadcast
    auto bc = run_at(12, "Einsum", {make<std::int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}), make<std::int64_t>({3}, {1, 0, -1})},
                     {attribute::of("equation", "...i,...i->...")});
    CHECK(bc.outputs[0].dims() == shape{2});
    CHECK(values_of<std::int64_t>(bc.outputs[0]) == ints{-2, -2});
    // a size-1 '...' dimension broadcasts against a larger one
    auto one = run_at(12, "Einsum", {make_f32({1, 2}, {1, 2}), make_f32({3, 2}, {1, 1, 2, 2, 3, 3})},
                      {attribute::of("equation", "...j,...j->...")});
    CHECK(one.outputs[0].dims() == shape{3});
    check_close(one.outputs[0], {3, 6, 9}, 0.0f, 0.0f);
}

TEST_CASE("einsum: a bad equation is rejected with the equation in the message") {
    const tensor a = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    auto terms = run_at(12, "Einsum", {a}, {attribute::of("equation", "ij,jk->ik")});
    REQUIRE_FALSE(terms.compiled);
    CHECK(mentions(terms, "'ij,jk->ik' has 2 operand terms but the node has 1 inputs"));
    auto rank = run_at(12, "Einsum", {a}, {attribute::of("equation", "ijk->i")});
    REQUIRE_FALSE(rank.compiled);
    CHECK(mentions(rank, "term 'ijk' does not match input 0 of shape [2, 3]"));
    auto sizes = run_at(12, "Einsum", {a, a}, {attribute::of("equation", "ij,jk->ik")});
    REQUIRE_FALSE(sizes.compiled);
    CHECK(mentions(sizes, "label 'j'"));
    auto unknown = run_at(12, "Einsum", {a}, {attribute::of("equation", "ij->ik")});
    REQUIRE_FALSE(unknown.compiled);
    CHECK(mentions(unknown, "output label 'k' is in no input"));
    auto chars = run_at(12, "Einsum", {a}, {attribute::of("equation", "i1->i")});
    REQUIRE_FALSE(chars.compiled);
    CHECK(mentions(chars, "not letters"));
    auto missing = run_at(12, "Einsum", {a}, {});
    REQUIRE_FALSE(missing.compiled);
    CHECK(mentions(missing, "equation"));
}

// ---------------------------------------------------------------------------------------------
// NonMaxSuppression

TEST_CASE("nonmaxsuppression: greedy by score, suppressing by IoU, per batch and class, computed at compile time") {
    // boxes 0 and 1 overlap (IoU 0.6 / 1.4 = 0.43 > 0.4), box 2 is apart
    const tensor boxes = make_f32({1, 3, 4}, {0, 0, 1, 1, 0, 0.4f, 1, 1.4f, 5, 5, 6, 6});
    const tensor scores = make_f32({1, 2, 3}, {0.9f, 0.8f, 0.7f, 0.1f, 0.6f, 0.2f});
    const tensor max_out = make<std::int64_t>({1}, {3});
    const tensor iou = make_f32({1}, {0.4f});
    auto r = run_at(11, "NonMaxSuppression", {boxes, scores, max_out, iou}, {}, 1, 0);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == shape{4, 3});
    CHECK(values_of<std::int64_t>(r.outputs[0]) == ints{0, 0, 0, 0, 0, 2, 0, 1, 1, 0, 1, 2});
    // a score threshold drops the low scores; max_output_boxes_per_class caps each class
    auto thr = run_at(11, "NonMaxSuppression", {boxes, scores, make<std::int64_t>({1}, {1}), iou, make_f32({1}, {0.5f})}, {}, 1, 0);
    CHECK(values_of<std::int64_t>(thr.outputs[0]) == ints{0, 0, 0, 0, 1, 1});
    // no max_output_boxes_per_class: nothing is selected
    auto none = run_at(11, "NonMaxSuppression", {boxes, scores}, {}, 1, 0);
    CHECK(none.outputs[0].dims() == shape{0, 3});
    // center_point_box=1: the same boxes as [x_center, y_center, width, height]
    const tensor centers = make_f32({1, 3, 4}, {0.5f, 0.5f, 1, 1, 0.5f, 0.9f, 1, 1, 5.5f, 5.5f, 1, 1});
    auto c = run_at(11, "NonMaxSuppression", {centers, scores, max_out, iou}, {attribute::of("center_point_box", 1)}, 1, 0);
    CHECK(values_of<std::int64_t>(c.outputs[0]) == ints{0, 0, 0, 0, 0, 2, 0, 1, 1, 0, 1, 2});
}

TEST_CASE("nonmaxsuppression: boxes that are not constant are refused with the standard message; bad shapes named") {
    const tensor boxes = make_f32({1, 1, 4}, {0, 0, 1, 1});
    const tensor scores = make_f32({1, 1, 1}, {1});
    auto dynamic = run_at(11, "NonMaxSuppression", {boxes, scores, make<std::int64_t>({1}, {1})}, {}, 1, 1);
    REQUIRE_FALSE(dynamic.compiled);
    CHECK(dynamic.error.code == ember::status::unsupported_op);
    CHECK(mentions(dynamic, "input 0 (boxes) must be known at compile time"));
    auto shapes = run_at(11, "NonMaxSuppression", {boxes, make_f32({1, 1, 2}, {1, 1})}, {}, 1, 0);
    REQUIRE_FALSE(shapes.compiled);
    CHECK(mentions(shapes, "scores must be [1, classes, 1]"));
    auto cpb = run_at(11, "NonMaxSuppression", {boxes, scores}, {attribute::of("center_point_box", 2)}, 1, 0);
    REQUIRE_FALSE(cpb.compiled);
    CHECK(mentions(cpb, "center_point_box is 2"));
}

// ---------------------------------------------------------------------------------------------
// Det

TEST_CASE("det: determinants of a batch of matrices, with pivoting and a singular one") {
    const tensor x = make_f32({3, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0, 2, 4, 1, 2});
    auto r = run_at_both_ways(11, "Det", {x});
    CHECK(r.outputs[0].dims() == shape{3});
    check_close(r.outputs[0], {-2, -1, 0}, 1e-6f);
    auto three = run_at(11, "Det", {make<double>({3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 2})});
    CHECK(three.outputs[0].dims() == shape{});
    CHECK(values_of<double>(three.outputs[0])[0] == doctest::Approx(6.0));
    auto bad = run_at(11, "Det", {make_f32({2, 3}, {1, 2, 3, 4, 5, 6})});
    REQUIRE_FALSE(bad.compiled);
    CHECK(mentions(bad, "square"));
}

TEST_CASE("hardmax: in a chain it runs in place on its input's buffer") {
    const auto c = ember::test::run_in_chain("Hardmax", make_f32({2, 2}, {-1, 2, 3, -4}));
    CHECK(c.shared);
    check_close(c.y, {0, 1, 1, 0}, 0.0f, 0.0f);
}
