// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <ember/ops/relu.hpp>

#include "support/check.hpp"

using ember::ops::relu;

TEST_CASE("relu: negative inputs become zero, the rest pass through, NaN stays NaN") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float x[] = {-2.0f, -0.0f, 0.0f, 3.5f, nan};
    float y[5];
    relu::reference({}, x, y, 5);
    CHECK(y[0] == 0.0f);
    CHECK(y[1] == 0.0f);
    CHECK(y[2] == 0.0f);
    CHECK(y[3] == 3.5f);
    CHECK(std::isnan(y[4]));
}

TEST_CASE("relu: a graph with one Relu node gives the reference's result, folded or not") {
    const ember::tensor x = ember::test::random_f32({2, 3, 5}, 7);
    auto r = ember::test::run_node_both_ways("Relu", {x});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    std::vector<float> expected(x.size());
    relu::reference({}, x.data<float>(), expected.data(), x.size());
    ember::test::check_close(r.outputs[0], expected, 0.0f, 0.0f);
}

TEST_CASE("relu: a uint8 input is rejected with a message naming the node and dtype") {
    auto r = ember::test::run_node("Relu", {ember::test::make<std::uint8_t>({2}, {1, 2})});
    CHECK_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::unsupported_op);
    CHECK(r.error.message.find("'node' (Relu)") != std::string::npos);
    CHECK(r.error.message.find("uint8") != std::string::npos);
}
