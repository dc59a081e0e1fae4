// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/sigmoid.hpp>

#include "support/check.hpp"

using ember::ops::sigmoid;

TEST_CASE("sigmoid: known values") {
    const float x[] = {0.0f, std::log(3.0f), -std::log(3.0f)};
    float y[3];
    sigmoid::reference({}, x, y, 3);
    CHECK(y[0] == 0.5f);
    CHECK(y[1] == doctest::Approx(0.75f).epsilon(1e-6));
    CHECK(y[2] == doctest::Approx(0.25f).epsilon(1e-6));
}

TEST_CASE("sigmoid: matches 1 / (1 + exp(-x)) in double to a few ulp over [-20, 20]") {
    const auto x = ember::test::random_f32({4, 50}, 3, -20.0f, 20.0f);
    auto r = ember::test::run_node_both_ways("Sigmoid", {x});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    std::vector<float> expected;
    for (float v : ember::test::values_f32(x)) expected.push_back(static_cast<float>(1.0 / (1.0 + std::exp(-double(v)))));
    ember::test::check_close(r.outputs[0], expected, 1e-7f, 4e-7f);
}

TEST_CASE("sigmoid: large magnitudes saturate to 0 and 1 without NaN or overflow") {
    const float inf = std::numeric_limits<float>::infinity();
    const float big = std::numeric_limits<float>::max();
    const auto x = ember::test::make_f32({8}, {-inf, -big, -1000.0f, -100.0f, 100.0f, 1000.0f, big, inf});
    auto r = ember::test::run_node_both_ways("Sigmoid", {x});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    const std::vector<float> y = ember::test::values_f32(r.outputs[0]);
    for (float v : y) {
        CHECK_FALSE(std::isnan(v));
        CHECK(v >= 0.0f);
        CHECK(v <= 1.0f);
    }
    CHECK(y[0] == 0.0f);
    CHECK(y[1] == 0.0f);
    CHECK(y[2] == 0.0f);
    CHECK(y[3] < 1e-40f);  // 3.7e-44, a float subnormal
    CHECK(y[4] == 1.0f);
    CHECK(y[7] == 1.0f);
}

TEST_CASE("sigmoid: NaN stays NaN, and the reference runs in place") {
    std::vector<float> x = {std::numeric_limits<float>::quiet_NaN(), 0.0f, 2.0f};
    sigmoid::reference({}, x.data(), x.data(), x.size());
    CHECK(std::isnan(x[0]));
    CHECK(x[1] == 0.5f);
    CHECK(x[2] == doctest::Approx(1.0 / (1.0 + std::exp(-2.0))).epsilon(1e-6));
}

TEST_CASE("sigmoid: an int input is rejected with a message naming the node and dtype") {
    auto r = ember::test::run_node("Sigmoid", {ember::test::make<std::int32_t>({1}, {1})});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::unsupported_op);
    CHECK(r.error.message.find("'node' (Sigmoid)") != std::string::npos);
    CHECK(r.error.message.find("int32") != std::string::npos);
}
