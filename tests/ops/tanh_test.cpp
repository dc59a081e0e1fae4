// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/tanh.hpp>

#include "support/check.hpp"

using ember::ops::tanh;

TEST_CASE("tanh: known values and odd symmetry") {
    const float x[] = {0.0f, 0.5f * std::log(3.0f), -0.5f * std::log(3.0f)};  // tanh(ln(3) / 2) = 1/2
    float y[3];
    tanh::reference({}, x, y, 3);
    CHECK(y[0] == 0.0f);
    CHECK(y[1] == doctest::Approx(0.5f).epsilon(1e-6));
    CHECK(y[2] == -y[1]);
}

TEST_CASE("tanh: matches (e^2x - 1) / (e^2x + 1) in double over [-9, 9]") {
    const auto x = ember::test::random_f32({3, 70}, 4, -9.0f, 9.0f);
    auto r = ember::test::run_node_both_ways("Tanh", {x});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    std::vector<float> expected;
    for (float v : ember::test::values_f32(x)) {
        const double e = std::exp(2.0 * double(v));
        expected.push_back(static_cast<float>((e - 1.0) / (e + 1.0)));
    }
    ember::test::check_close(r.outputs[0], expected, 1e-7f, 4e-7f);
}

TEST_CASE("tanh: large magnitudes saturate to -1 and 1 without NaN") {
    const float inf = std::numeric_limits<float>::infinity();
    const float big = std::numeric_limits<float>::max();
    const auto x = ember::test::make_f32({6}, {-inf, -big, -100.0f, 100.0f, big, inf});
    auto r = ember::test::run_node_both_ways("Tanh", {x});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    ember::test::check_close(r.outputs[0], {-1, -1, -1, 1, 1, 1}, 0.0f, 0.0f);
}

TEST_CASE("tanh: an int64 input is rejected with a message naming the node and dtype") {
    auto r = ember::test::run_node("Tanh", {ember::test::make<std::int64_t>({1}, {1})});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::unsupported_op);
    CHECK(r.error.message.find("'node' (Tanh)") != std::string::npos);
    CHECK(r.error.message.find("int64") != std::string::npos);
}
