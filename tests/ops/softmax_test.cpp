// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <ember/ops/softmax.hpp>

#include "support/check.hpp"

namespace {

struct softmax_run {
    ember::result<ember::plan> compiled = ember::error_info{ember::status::invalid_argument, -1, "not compiled"};
    ember::tensor y;
};

// One Softmax node in a graph that declares `opset` (0: declare none, i.e. the newest), the input
// fed at run time or as a constant (then folded at compile time).
softmax_run run_softmax(const ember::tensor& x, std::vector<ember::attribute> attrs, std::int64_t opset,
                        ember::test::feed how = ember::test::feed::inputs) {
    ember::graph_builder b("softmax");
    const ember::value_id in = how == ember::test::feed::constants ? b.constant("x", x) : b.input("x", x.type(), ember::partial_shape(x.dims()));
    b.output(b.node("Softmax", {in}, std::move(attrs), "node"), "y");
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    if (opset != 0) g->opsets.push_back(ember::opset{"", opset});
    softmax_run r;
    r.compiled = ember::compile(*g);
    if (!r.compiled) return r;
    ember::session s(*r.compiled);
    if (how == ember::test::feed::inputs) REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == ember::status::ok);
    auto y = ember::tensor::create(ember::dtype::float32, r.compiled->output(0).dims);
    REQUIRE(y);
    REQUIRE(s.bind_output(0, y->bytes(), y->size_bytes()) == ember::status::ok);
    REQUIRE(s.run() == ember::status::ok);
    r.y = std::move(*y);
    return r;
}

// Both feeds, checked to agree bit for bit; returns the output.
std::vector<float> softmax_both_ways(const ember::tensor& x, std::vector<ember::attribute> attrs, std::int64_t opset) {
    softmax_run a = run_softmax(x, attrs, opset, ember::test::feed::inputs);
    REQUIRE_MESSAGE(a.compiled, a.compiled.error().message);
    softmax_run b = run_softmax(x, attrs, opset, ember::test::feed::constants);
    REQUIRE_MESSAGE(b.compiled, b.compiled.error().message);
    REQUIRE(a.y.dims() == x.dims());
    REQUIRE(b.y.dims() == x.dims());
    CHECK(std::memcmp(a.y.bytes(), b.y.bytes(), a.y.size_bytes()) == 0);
    return ember::test::values_f32(a.y);
}

// Softmax of each line of `len` values at stride `stride`, written out with double exp.
std::vector<float> expected_lines(const std::vector<float>& x, std::int64_t outer, std::int64_t len, std::int64_t stride) {
    std::vector<float> y(x.size());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t s = 0; s < stride; ++s) {
            const std::int64_t base = o * len * stride + s;
            double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
            for (std::int64_t j = 0; j < len; ++j) max = std::fmax(max, x[static_cast<std::size_t>(base + j * stride)]);
            for (std::int64_t j = 0; j < len; ++j) sum += std::exp(double(x[static_cast<std::size_t>(base + j * stride)]) - max);
            for (std::int64_t j = 0; j < len; ++j)
                y[static_cast<std::size_t>(base + j * stride)] = static_cast<float>(std::exp(double(x[static_cast<std::size_t>(base + j * stride)]) - max) / sum);
        }
    return y;
}

} // namespace

TEST_CASE("softmax: one row, worked by hand") {
    const auto x = ember::test::make_f32({1, 3}, {0.0f, std::log(2.0f), std::log(5.0f)});  // exp: 1, 2, 5
    const std::vector<float> y = softmax_both_ways(x, {}, 0);
    ember::test::check_close(y, {0.125f, 0.25f, 0.625f}, 1e-6f, 1e-6f);
}

TEST_CASE("softmax: opset 13 normalises along the last axis by default, and along any given axis") {
    const auto x = ember::test::random_f32({2, 3, 4}, 5, -3.0f, 3.0f);
    const std::vector<float> xv = ember::test::values_f32(x);
    SUBCASE("default axis -1") { ember::test::check_close(softmax_both_ways(x, {}, 13), expected_lines(xv, 6, 4, 1), 1e-6f, 1e-5f); }
    SUBCASE("axis 1 (strided lines)") {
        ember::test::check_close(softmax_both_ways(x, {ember::attribute::of("axis", 1)}, 13), expected_lines(xv, 2, 3, 4), 1e-6f, 1e-5f);
    }
    SUBCASE("axis 0") {
        ember::test::check_close(softmax_both_ways(x, {ember::attribute::of("axis", 0)}, 13), expected_lines(xv, 1, 2, 12), 1e-6f, 1e-5f);
    }
    SUBCASE("axis -2 equals axis 1") {
        ember::test::check_close(softmax_both_ways(x, {ember::attribute::of("axis", -2)}, 13), expected_lines(xv, 2, 3, 4), 1e-6f, 1e-5f);
    }
    SUBCASE("no opset declared means the newest semantics") { ember::test::check_close(softmax_both_ways(x, {}, 0), expected_lines(xv, 6, 4, 1), 1e-6f, 1e-5f); }
}

TEST_CASE("softmax: before opset 13 the input is flattened at axis (default 1) and each trailing block normalised") {
    const auto x = ember::test::random_f32({2, 3, 4}, 6, -3.0f, 3.0f);
    const std::vector<float> xv = ember::test::values_f32(x);
    SUBCASE("default axis 1: blocks of 3 * 4") { ember::test::check_close(softmax_both_ways(x, {}, 11), expected_lines(xv, 2, 12, 1), 1e-6f, 1e-5f); }
    SUBCASE("axis 2: rows of 4") {
        ember::test::check_close(softmax_both_ways(x, {ember::attribute::of("axis", 2)}, 1), expected_lines(xv, 6, 4, 1), 1e-6f, 1e-5f);
    }
    SUBCASE("axis 0: everything at once") {
        ember::test::check_close(softmax_both_ways(x, {ember::attribute::of("axis", 0)}, 12), expected_lines(xv, 1, 24, 1), 1e-6f, 1e-5f);
    }
    SUBCASE("axis -2 equals axis 1") {
        ember::test::check_close(softmax_both_ways(x, {ember::attribute::of("axis", -2)}, 11), expected_lines(xv, 2, 12, 1), 1e-6f, 1e-5f);
    }
    SUBCASE("the same axis means something else at opset 13") {
        const std::vector<float> old = softmax_both_ways(x, {ember::attribute::of("axis", 1)}, 12);
        const std::vector<float> now = softmax_both_ways(x, {ember::attribute::of("axis", 1)}, 13);
        CHECK(old != now);
    }
}

TEST_CASE("softmax: large magnitudes neither overflow nor give NaN, and each line sums to 1") {
    const auto x = ember::test::make_f32({2, 3}, {1000.0f, 1001.0f, 1002.0f, -1000.0f, -1001.0f, -1002.0f});
    const std::vector<float> y = softmax_both_ways(x, {}, 13);
    for (float v : y) CHECK_FALSE(std::isnan(v));
    // exp(-2), exp(-1), 1 normalised, for both rows (mirrored)
    const float e1 = std::exp(-1.0f), e2 = std::exp(-2.0f), s = 1.0f + e1 + e2;
    ember::test::check_close(y, {e2 / s, e1 / s, 1.0f / s, 1.0f / s, e1 / s, e2 / s}, 1e-6f, 1e-5f);
    CHECK(y[0] + y[1] + y[2] == doctest::Approx(1.0f));
}

TEST_CASE("softmax: the reference may run in place") {
    std::vector<float> x = {1, 2, 3, 4, 0, 0, 0, 0};
    const std::vector<float> expected = expected_lines(x, 2, 4, 1);
    ember::ops::softmax::args g;
    g.outer = 2;
    g.axis_len = 4;
    g.inner = 1;
    ember::ops::softmax::reference(g, x.data(), x.data(), nullptr);
    ember::test::check_close(x, expected, 1e-6f, 1e-5f);
}

TEST_CASE("softmax: in a chain it runs in place over its input's buffer") {
    const auto in = ember::test::random_f32({2, 5}, 3, -2.0f, 2.0f);
    const auto c = ember::test::run_in_chain("Softmax", in);
    CHECK(c.shared);
    std::vector<float> relu(in.size());
    for (std::size_t i = 0; i < relu.size(); ++i) relu[i] = std::fmax(ember::test::values_f32(in)[i], 0.0f);
    ember::test::check_close(c.y, expected_lines(relu, 2, 5, 1), 1e-6f, 1e-5f);
}

TEST_CASE("softmax: a bad axis, a scalar or an int input is rejected with a message naming the node") {
    SUBCASE("axis out of range") {
        softmax_run r = run_softmax(ember::test::random_f32({2, 3}, 1), {ember::attribute::of("axis", 2)}, 13);
        REQUIRE_FALSE(r.compiled);
        CHECK(r.compiled.error().code == ember::status::invalid_model);
        CHECK(r.compiled.error().message.find("'node' (Softmax)") != std::string::npos);
        CHECK(r.compiled.error().message.find("axis 2") != std::string::npos);
        CHECK(r.compiled.error().message.find("[2, 3]") != std::string::npos);
    }
    SUBCASE("a scalar input") {
        softmax_run r = run_softmax(ember::test::make_f32({}, {1}), {}, 13);
        REQUIRE_FALSE(r.compiled);
        CHECK(r.compiled.error().code == ember::status::invalid_model);
    }
    SUBCASE("int32") {
        auto r = ember::test::run_node("Softmax", {ember::test::make<std::int32_t>({2}, {1, 2})});
        REQUIRE_FALSE(r.compiled);
        CHECK(r.error.code == ember::status::unsupported_op);
        CHECK(r.error.message.find("int32") != std::string::npos);
    }
}
