// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <ember/ops/concat.hpp>

#include "support/check.hpp"

using ember::test::values_of;

namespace {

ember::attribute axis(std::int64_t a) { return ember::attribute::of("axis", a); }


// Concat in an old opset: the graph declares `opset`, the inputs are graph inputs.
ember::error_info compile_error_at_opset(const std::vector<ember::tensor>& xs, std::int64_t a, std::int64_t opset) {
    ember::graph_builder b("concat");
    std::vector<ember::value_id> ins;
    for (std::size_t i = 0; i < xs.size(); ++i)
        ins.push_back(b.input("in" + std::to_string(i), xs[i].type(), ember::partial_shape(xs[i].dims())));
    b.output(b.node("Concat", ins, {axis(a)}, "node"), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    g->opsets.push_back(ember::opset{"", opset});
    auto p = ember::compile(*g);
    return p ? ember::error_info{} : p.error();
}

} // namespace

TEST_CASE("concat: along the first, a middle and the last axis, worked by hand") {
    const auto a = ember::test::make_f32({2, 2}, {1, 2, 3, 4});
    const auto b = ember::test::make_f32({1, 2}, {5, 6});
    auto rows = ember::test::run_node_both_ways("Concat", {a, b}, {axis(0)});
    REQUIRE_MESSAGE(rows.compiled, rows.error.message);
    CHECK(rows.outputs[0].dims() == ember::shape{3, 2});
    ember::test::check_close(rows.outputs[0], {1, 2, 3, 4, 5, 6}, 0.0f, 0.0f);

    const auto c = ember::test::make_f32({2, 1}, {7, 8});
    auto cols = ember::test::run_node_both_ways("Concat", {a, c, a}, {axis(1)});
    REQUIRE_MESSAGE(cols.compiled, cols.error.message);
    CHECK(cols.outputs[0].dims() == ember::shape{2, 5});
    ember::test::check_close(cols.outputs[0], {1, 2, 7, 1, 2, 3, 4, 8, 3, 4}, 0.0f, 0.0f);

    // [2, 1, 2] and [2, 2, 2] on axis 1 -> [2, 3, 2]
    const auto x = ember::test::make_f32({2, 1, 2}, {1, 2, 3, 4});
    const auto y = ember::test::make_f32({2, 2, 2}, {10, 11, 12, 13, 14, 15, 16, 17});
    auto mid = ember::test::run_node_both_ways("Concat", {x, y}, {axis(1)});
    REQUIRE_MESSAGE(mid.compiled, mid.error.message);
    CHECK(mid.outputs[0].dims() == ember::shape{2, 3, 2});
    ember::test::check_close(mid.outputs[0], {1, 2, 10, 11, 12, 13, 3, 4, 14, 15, 16, 17}, 0.0f, 0.0f);
}

TEST_CASE("concat: a negative axis counts from the end") {
    const auto a = ember::test::make_f32({2, 1}, {1, 2});
    const auto b = ember::test::make_f32({2, 2}, {3, 4, 5, 6});
    auto r = ember::test::run_node_both_ways("Concat", {a, b}, {axis(-1)});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2, 3});
    ember::test::check_close(r.outputs[0], {1, 3, 4, 2, 5, 6}, 0.0f, 0.0f);
}

TEST_CASE("concat: a single input, zero-length inputs, and integer dtypes") {
    auto one = ember::test::run_node_both_ways("Concat", {ember::test::make_f32({3}, {1, 2, 3})}, {axis(0)});
    REQUIRE_MESSAGE(one.compiled, one.error.message);
    ember::test::check_close(one.outputs[0], {1, 2, 3}, 0.0f, 0.0f);

    const auto empty = ember::test::make<std::int64_t>({2, 0}, {});
    const auto full = ember::test::make<std::int64_t>({2, 2}, {1, 2, 3, 1ll << 40});
    auto z = ember::test::run_node_both_ways("Concat", {empty, full, empty}, {axis(1)});
    REQUIRE_MESSAGE(z.compiled, z.error.message);
    CHECK(z.outputs[0].dims() == ember::shape{2, 2});
    CHECK(values_of<std::int64_t>(z.outputs[0]) == std::vector<std::int64_t>{1, 2, 3, 1ll << 40});

    auto all_empty = ember::test::run_node_both_ways("Concat", {empty, empty}, {axis(0)});
    REQUIRE_MESSAGE(all_empty.compiled, all_empty.error.message);
    CHECK(all_empty.outputs[0].dims() == ember::shape{4, 0});

    const auto u = ember::test::make<std::uint8_t>({1, 2}, {1, 2});
    const auto v = ember::test::make<std::uint8_t>({1, 3}, {3, 4, 255});
    auto bytes = ember::test::run_node_both_ways("Concat", {u, v}, {axis(1)});
    REQUIRE_MESSAGE(bytes.compiled, bytes.error.message);
    CHECK(values_of<std::uint8_t>(bytes.outputs[0]) == std::vector<std::uint8_t>{1, 2, 3, 4, 255});
}

TEST_CASE("concat: mismatched inputs are rejected with a message naming the node and shapes") {
    const auto a = ember::test::random_f32({2, 3}, 1);
    SUBCASE("a dimension off the axis differs") {
        auto r = ember::test::run_node("Concat", {a, ember::test::random_f32({2, 4}, 2)}, {axis(0)});
        REQUIRE_FALSE(r.compiled);
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("'node' (Concat)") != std::string::npos);
        CHECK(r.error.message.find("[2, 4]") != std::string::npos);
        CHECK(r.error.message.find("[2, 3]") != std::string::npos);
    }
    SUBCASE("ranks differ") {
        auto r = ember::test::run_node("Concat", {a, ember::test::random_f32({2, 3, 1}, 2)}, {axis(0)});
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("rank 3") != std::string::npos);
    }
    SUBCASE("dtypes differ") {
        auto r = ember::test::run_node("Concat", {a, ember::test::make<std::int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})}, {axis(0)});
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("int32") != std::string::npos);
        CHECK(r.error.message.find("float32") != std::string::npos);
    }
    SUBCASE("axis out of range") {
        auto r = ember::test::run_node("Concat", {a, a}, {axis(2)});
        CHECK(r.error.code == ember::status::invalid_model);
        CHECK(r.error.message.find("axis 2") != std::string::npos);
    }
    SUBCASE("axis is required") {
        auto r = ember::test::run_node("Concat", {a, a});
        CHECK(r.error.code == ember::status::invalid_model);
        CHECK(r.error.message.find("'axis'") != std::string::npos);
    }
    SUBCASE("scalars cannot be joined") {
        auto r = ember::test::run_node("Concat", {ember::test::make_f32({}, {1}), ember::test::make_f32({}, {2})}, {axis(0)});
        CHECK(r.error.code == ember::status::shape_mismatch);
    }
}

TEST_CASE("concat: a negative axis needs opset 11") {
    const std::vector<ember::tensor> xs = {ember::test::random_f32({2}, 1), ember::test::random_f32({3}, 2)};
    const ember::error_info old = compile_error_at_opset(xs, -1, 10);
    CHECK(old.code == ember::status::invalid_model);
    CHECK(old.message.find("opset 11") != std::string::npos);
    CHECK(compile_error_at_opset(xs, -1, 11).code == ember::status::ok);
    CHECK(compile_error_at_opset(xs, 0, 4).code == ember::status::ok);
}
