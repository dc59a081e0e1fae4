// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <ember/ops/flatten.hpp>

#include "support/check.hpp"

namespace {

// Runs Flatten both ways, checks the bytes come through unchanged and returns the output shape.
ember::shape flatten_shape(const ember::tensor& x, std::vector<ember::attribute> attrs = {}) {
    auto r = ember::test::run_node_both_ways("Flatten", {x}, std::move(attrs));
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].type() == x.type());
    REQUIRE(r.outputs[0].size_bytes() == x.size_bytes());
    CHECK(ember::test::same_bytes(r.outputs[0], x));
    return r.outputs[0].dims();
}

ember::attribute axis(std::int64_t a) { return ember::attribute::of("axis", a); }

} // namespace

TEST_CASE("flatten: the default axis 1 keeps the first dimension") {
    CHECK(flatten_shape(ember::test::random_f32({2, 3, 4}, 1)) == ember::shape{2, 12});
    CHECK(flatten_shape(ember::test::random_f32({5}, 1)) == ember::shape{5, 1});
}

TEST_CASE("flatten: every axis in [-rank, rank], including 0 and rank") {
    const auto x = ember::test::random_f32({2, 3, 4}, 2);
    CHECK(flatten_shape(x, {axis(0)}) == ember::shape{1, 24});
    CHECK(flatten_shape(x, {axis(2)}) == ember::shape{6, 4});
    CHECK(flatten_shape(x, {axis(3)}) == ember::shape{24, 1});
    CHECK(flatten_shape(x, {axis(-1)}) == ember::shape{6, 4});
    CHECK(flatten_shape(x, {axis(-3)}) == ember::shape{1, 24});
}

TEST_CASE("flatten: a scalar with axis 0, an empty tensor, and other dtypes") {
    CHECK(flatten_shape(ember::test::make_f32({}, {3}), {axis(0)}) == ember::shape{1, 1});
    CHECK(flatten_shape(ember::test::make_f32({2, 0, 3}, {}), {axis(2)}) == ember::shape{0, 3});
    CHECK(flatten_shape(ember::test::make<std::int64_t>({2, 2, 1}, {7, -8, 9, 1ll << 50})) == ember::shape{2, 2});
    CHECK(flatten_shape(ember::test::make<std::int8_t>({1, 3}, {-1, 0, 1}), {axis(-1)}) == ember::shape{1, 3});
}

TEST_CASE("flatten: an axis out of range is rejected with a message naming the node, axis and shape") {
    for (std::int64_t a : {4, -4}) {
        CAPTURE(a);
        auto r = ember::test::run_node("Flatten", {ember::test::random_f32({2, 3, 4}, 1)}, {axis(a)});
        REQUIRE_FALSE(r.compiled);
        CHECK(r.error.code == ember::status::invalid_model);
        CHECK(r.error.message.find("'node' (Flatten)") != std::string::npos);
        CHECK(r.error.message.find("axis " + std::to_string(a)) != std::string::npos);
        CHECK(r.error.message.find("[2, 3, 4]") != std::string::npos);
    }
    auto scalar = ember::test::run_node("Flatten", {ember::test::make_f32({}, {3})});  // default axis 1 > rank 0
    CHECK(scalar.error.code == ember::status::invalid_model);
}

TEST_CASE("flatten: in a chain it shares its input's buffer") {
    const auto c = ember::test::run_in_chain("Flatten", ember::test::random_f32({2, 2, 2}, 1));
    CHECK(c.compiled->output(0).dims == ember::shape{2, 4});
    CHECK(c.shared);
}
