// SPDX-License-Identifier: Apache-2.0
// Div: y = a / b with numpy broadcasting; integer division truncates, and dividing by 0 gives 0.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/div.hpp>

#include "support/check.hpp"

using ember::test::values_of;

TEST_CASE("div: float division, broadcast, with IEEE results for division by zero") {
    auto r = ember::test::run_node_both_ways("Div", {ember::test::make_f32({2, 2}, {1, -3, 0, 8}), ember::test::make_f32({1, 2}, {2, 0})});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2, 2});
    const std::vector<float> y = ember::test::values_f32(r.outputs[0]);
    CHECK(y[0] == 0.5f);
    CHECK(y[1] == -std::numeric_limits<float>::infinity());
    CHECK(y[2] == 0.0f);
    CHECK(y[3] == std::numeric_limits<float>::infinity());
}

TEST_CASE("div: a scalar numerator over a vector, and a [3, 1] by [1, 2] grid") {
    auto s = ember::test::run_node_both_ways("Div", {ember::test::make_f32({}, {1}), ember::test::make_f32({3}, {2, 4, -8})});
    REQUIRE_MESSAGE(s.compiled, s.error.message);
    CHECK(s.outputs[0].dims() == ember::shape{3});
    ember::test::check_close(s.outputs[0], {0.5f, 0.25f, -0.125f}, 0.0f, 0.0f);
    auto g = ember::test::run_node_both_ways("Div", {ember::test::make_f32({3, 1}, {2, 4, 8}), ember::test::make_f32({1, 2}, {1, 2})});
    REQUIRE_MESSAGE(g.compiled, g.error.message);
    ember::test::check_close(g.outputs[0], {2, 1, 4, 2, 8, 4}, 0.0f, 0.0f);
}

TEST_CASE("div: integer division truncates toward zero, and division by zero gives 0") {
    auto i32 = ember::test::run_node_both_ways("Div", {ember::test::make<std::int32_t>({6}, {7, -7, 7, -7, 5, 0}),
                                                       ember::test::make<std::int32_t>({6}, {2, 2, -2, -2, 0, 0})});
    REQUIRE_MESSAGE(i32.compiled, i32.error.message);
    CHECK(values_of<std::int32_t>(i32.outputs[0]) == std::vector<std::int32_t>{3, -3, -3, 3, 0, 0});

    auto i64 = ember::test::run_node_both_ways("Div", {ember::test::make<std::int64_t>({2, 1}, {std::int64_t{1} << 40, -9}),
                                                       ember::test::make<std::int64_t>({1, 3}, {0, 4, -1})});
    REQUIRE_MESSAGE(i64.compiled, i64.error.message);
    CHECK(i64.outputs[0].dims() == ember::shape{2, 3});
    CHECK(values_of<std::int64_t>(i64.outputs[0]) ==
          std::vector<std::int64_t>{0, std::int64_t{1} << 38, -(std::int64_t{1} << 40), 0, -2, 9});
}

TEST_CASE("div: the most negative integer over -1 wraps instead of trapping") {
    const std::int32_t lo = std::numeric_limits<std::int32_t>::min();
    auto r = ember::test::run_node_both_ways("Div", {ember::test::make<std::int32_t>({1}, {lo}), ember::test::make<std::int32_t>({1}, {-1})});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(values_of<std::int32_t>(r.outputs[0]) == std::vector<std::int32_t>{lo});
    const std::int64_t lo64 = std::numeric_limits<std::int64_t>::min();
    auto r64 = ember::test::run_node_both_ways("Div", {ember::test::make<std::int64_t>({1}, {lo64}), ember::test::make<std::int64_t>({}, {-1})});
    REQUIRE_MESSAGE(r64.compiled, r64.error.message);
    CHECK(values_of<std::int64_t>(r64.outputs[0]) == std::vector<std::int64_t>{lo64});
}

TEST_CASE("div: non-broadcastable shapes and mixed dtypes are rejected, naming the node") {
    auto r = ember::test::run_node("Div", {ember::test::random_f32({4}, 1), ember::test::random_f32({3}, 2)});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::shape_mismatch);
    CHECK(r.error.message.find("'node' (Div)") != std::string::npos);
    CHECK(r.error.message.find("[4] and [3]") != std::string::npos);
    auto d = ember::test::run_node("Div", {ember::test::make<std::int32_t>({1}, {1}), ember::test::random_f32({1}, 2)});
    CHECK(d.error.code == ember::status::shape_mismatch);
    CHECK(d.error.message.find("int32 and float32") != std::string::npos);
}
