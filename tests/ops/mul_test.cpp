// SPDX-License-Identifier: Apache-2.0
// Mul: y = a * b with numpy broadcasting (the broadcasting itself is covered in add_test.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/mul.hpp>

#include "support/check.hpp"

using ember::test::values_of;

TEST_CASE("mul: [3, 1] x [1, 4] is an outer product") {
    auto r = ember::test::run_node_both_ways("Mul", {ember::test::make_f32({3, 1}, {1, -2, 3}), ember::test::make_f32({1, 4}, {1, -1, 0.5f, 0})});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{3, 4});
    ember::test::check_close(r.outputs[0], {1, -1, 0.5f, 0, -2, 2, -1, 0, 3, -3, 1.5f, 0}, 0.0f, 0.0f);
}

TEST_CASE("mul: a scalar scales every element, and a lower-rank operand broadcasts") {
    auto s = ember::test::run_node_both_ways("Mul", {ember::test::make_f32({2, 2}, {1, 2, 3, 4}), ember::test::make_f32({}, {-2})});
    REQUIRE_MESSAGE(s.compiled, s.error.message);
    ember::test::check_close(s.outputs[0], {-2, -4, -6, -8}, 0.0f, 0.0f);
    auto v = ember::test::run_node_both_ways("Mul", {ember::test::make_f32({2}, {10, 100}), ember::test::make_f32({2, 2, 2}, {1, 1, 2, 2, 3, 3, 4, 4})});
    REQUIRE_MESSAGE(v.compiled, v.error.message);
    CHECK(v.outputs[0].dims() == ember::shape{2, 2, 2});
    ember::test::check_close(v.outputs[0], {10, 100, 20, 200, 30, 300, 40, 400}, 0.0f, 0.0f);
}

TEST_CASE("mul: int32 and int64, wrapping on overflow") {
    auto i32 = ember::test::run_node_both_ways("Mul", {ember::test::make<std::int32_t>({3}, {6, -7, 1 << 30}), ember::test::make<std::int32_t>({}, {4})});
    REQUIRE_MESSAGE(i32.compiled, i32.error.message);
    CHECK(values_of<std::int32_t>(i32.outputs[0]) == std::vector<std::int32_t>{24, -28, 0});
    const std::int64_t big = std::int64_t{1} << 31;
    auto i64 = ember::test::run_node_both_ways("Mul", {ember::test::make<std::int64_t>({2}, {big, -3}), ember::test::make<std::int64_t>({2}, {big, 5})});
    REQUIRE_MESSAGE(i64.compiled, i64.error.message);
    CHECK(values_of<std::int64_t>(i64.outputs[0]) == std::vector<std::int64_t>{std::int64_t{1} << 62, -15});
}

TEST_CASE("mul: non-broadcastable shapes and mixed dtypes are rejected, naming the node") {
    auto r = ember::test::run_node("Mul", {ember::test::random_f32({3, 1}, 1), ember::test::random_f32({2, 4}, 2)});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::shape_mismatch);
    CHECK(r.error.message.find("'node' (Mul)") != std::string::npos);
    CHECK(r.error.message.find("[3, 1] and [2, 4]") != std::string::npos);
    auto d = ember::test::run_node("Mul", {ember::test::random_f32({1}, 1), ember::test::make<double>({1}, {1.0})});
    CHECK(d.error.code == ember::status::shape_mismatch);
    CHECK(d.error.message.find("float64") != std::string::npos);
}
