// SPDX-License-Identifier: Apache-2.0
// Sub: y = a - b with numpy broadcasting (the broadcasting itself is covered in add_test.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/sub.hpp>

#include "support/check.hpp"

using ember::test::values_of;

TEST_CASE("sub: the order of the operands matters, on both broadcast sides") {
    const auto col = ember::test::make_f32({2, 1}, {10, 20});
    const auto row = ember::test::make_f32({1, 3}, {1, 2, 3});
    auto ab = ember::test::run_node_both_ways("Sub", {col, row});
    REQUIRE_MESSAGE(ab.compiled, ab.error.message);
    CHECK(ab.outputs[0].dims() == ember::shape{2, 3});
    ember::test::check_close(ab.outputs[0], {9, 8, 7, 19, 18, 17}, 0.0f, 0.0f);
    auto ba = ember::test::run_node_both_ways("Sub", {row, col});
    REQUIRE_MESSAGE(ba.compiled, ba.error.message);
    ember::test::check_close(ba.outputs[0], {-9, -8, -7, -19, -18, -17}, 0.0f, 0.0f);
}

TEST_CASE("sub: a scalar minuend and subtrahend") {
    auto r = ember::test::run_node_both_ways("Sub", {ember::test::make_f32({}, {1}), ember::test::make_f32({2}, {0.25f, 3})});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2});
    ember::test::check_close(r.outputs[0], {0.75f, -2}, 0.0f, 0.0f);
}

TEST_CASE("sub: int32 and int64, wrapping at the limits") {
    const std::int32_t lo = std::numeric_limits<std::int32_t>::min();
    auto i32 = ember::test::run_node_both_ways("Sub", {ember::test::make<std::int32_t>({3}, {5, -5, lo}), ember::test::make<std::int32_t>({3}, {7, -7, 1})});
    REQUIRE_MESSAGE(i32.compiled, i32.error.message);
    CHECK(values_of<std::int32_t>(i32.outputs[0]) == std::vector<std::int32_t>{-2, 2, std::numeric_limits<std::int32_t>::max()});

    const std::int64_t big = std::int64_t{1} << 50;
    auto i64 = ember::test::run_node_both_ways("Sub", {ember::test::make<std::int64_t>({2}, {big, 0}), ember::test::make<std::int64_t>({}, {1})});
    REQUIRE_MESSAGE(i64.compiled, i64.error.message);
    CHECK(values_of<std::int64_t>(i64.outputs[0]) == std::vector<std::int64_t>{big - 1, -1});
}

TEST_CASE("sub: non-broadcastable shapes and mixed dtypes are rejected, naming the node") {
    auto r = ember::test::run_node("Sub", {ember::test::random_f32({2, 3}, 1), ember::test::random_f32({2}, 2)});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::shape_mismatch);
    CHECK(r.error.message.find("'node' (Sub)") != std::string::npos);
    CHECK(r.error.message.find("[2, 3] and [2]") != std::string::npos);

    auto d = ember::test::run_node("Sub", {ember::test::make<std::int64_t>({1}, {1}), ember::test::make<std::int32_t>({1}, {1})});
    CHECK(d.error.code == ember::status::shape_mismatch);
    CHECK(d.error.message.find("int64 and int32") != std::string::npos);
}
