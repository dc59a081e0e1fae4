// SPDX-License-Identifier: Apache-2.0
// The element-wise unary ops: math functions (ops/unary_math.hpp), trigonometry (ops/trig.hpp),
// IsNaN/IsInf, Not, the activations with attributes (ops/activation.hpp), Clip, and the dtype
// and opset rules of ops/unary.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/op_list.hpp>

#include "ops/elementwise_support.hpp"
#include "support/check.hpp"

using ember::attribute;
using namespace ember::test::elementwise;

namespace {
const float nan_f = std::numeric_limits<float>::quiet_NaN();
const float inf_f = std::numeric_limits<float>::infinity();

std::vector<float> unary_f32(const std::string& op, const std::vector<float>& x, std::vector<attribute> attrs = {}, std::int64_t opset = 17) {
    auto r = run_both_at(opset, op, {make_f32({static_cast<std::int64_t>(x.size())}, x)}, std::move(attrs));
    REQUIRE(r.outputs[0].type() == ember::dtype::float32);
    return values_f32(r.outputs[0]);
}
} // namespace

TEST_CASE("unary math: hand-computed values, folded and not") {
    ember::test::check_close(unary_f32("Abs", {-2.5f, 0.0f, 3.0f}), {2.5f, 0.0f, 3.0f}, 0, 0);
    ember::test::check_close(unary_f32("Neg", {-2.5f, 0.0f, 3.0f}), {2.5f, 0.0f, -3.0f}, 0, 0);
    ember::test::check_close(unary_f32("Floor", {-1.5f, 1.5f, 2.0f}), {-2.0f, 1.0f, 2.0f}, 0, 0);
    ember::test::check_close(unary_f32("Ceil", {-1.5f, 1.5f, 2.0f}), {-1.0f, 2.0f, 2.0f}, 0, 0);
    ember::test::check_close(unary_f32("Sqrt", {4.0f, 0.25f, 0.0f}), {2.0f, 0.5f, 0.0f}, 0, 0);
    ember::test::check_close(unary_f32("Exp", {0.0f, 1.0f, -1.0f}), {1.0f, std::exp(1.0f), std::exp(-1.0f)});
    ember::test::check_close(unary_f32("Log", {1.0f, std::exp(2.0f)}), {0.0f, 2.0f});
    ember::test::check_close(unary_f32("Reciprocal", {2.0f, -0.5f, 4.0f}), {0.5f, -2.0f, 0.25f}, 0, 0);
    ember::test::check_close(unary_f32("Erf", {0.0f, 1.0f, -3.0f}), {0.0f, 0.8427007794f, -0.9999779095f});
    const std::vector<float> s = unary_f32("Sign", {-3.0f, 0.0f, 2.0f, nan_f});
    CHECK(s[0] == -1.0f);
    CHECK(s[1] == 0.0f);
    CHECK(s[2] == 1.0f);
    CHECK(std::isnan(s[3]));
    CHECK(std::isnan(unary_f32("Sqrt", {-1.0f})[0]));
    CHECK(unary_f32("Log", {0.0f})[0] == -inf_f);
}

TEST_CASE("round: halves go to the even neighbour, the rest to the nearest integer") {
    ember::test::check_close(unary_f32("Round", {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 0.4f, 0.6f, -2.6f, 7.0f}),
                             {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, -2.0f, 0.0f, 1.0f, -3.0f, 7.0f}, 0, 0);
}

TEST_CASE("trigonometric and hyperbolic functions match the C library, NaN outside the domain") {
    const std::vector<float> x{-0.9f, -0.3f, 0.0f, 0.4f, 0.8f};
    struct fn_case {
        const char* op;
        float (*f)(float);
    };
    const fn_case cases[] = {{"Sin", [](float v) { return std::sin(v); }},     {"Cos", [](float v) { return std::cos(v); }},
                             {"Tan", [](float v) { return std::tan(v); }},     {"Asin", [](float v) { return std::asin(v); }},
                             {"Acos", [](float v) { return std::acos(v); }},   {"Atan", [](float v) { return std::atan(v); }},
                             {"Sinh", [](float v) { return std::sinh(v); }},   {"Cosh", [](float v) { return std::cosh(v); }},
                             {"Asinh", [](float v) { return std::asinh(v); }}, {"Atanh", [](float v) { return std::atanh(v); }}};
    for (const fn_case& c : cases) {
        CAPTURE(c.op);
        std::vector<float> expected;
        for (float v : x) expected.push_back(c.f(v));
        ember::test::check_close(unary_f32(c.op, x), expected, 1e-6f, 1e-6f);
    }
    ember::test::check_close(unary_f32("Acosh", {1.0f, 2.0f, 10.0f}), {0.0f, std::acosh(2.0f), std::acosh(10.0f)}, 1e-6f, 1e-6f);
    CHECK(std::isnan(unary_f32("Asin", {2.0f})[0]));
    CHECK(std::isnan(unary_f32("Acosh", {0.5f})[0]));
}

TEST_CASE("integer Abs, Neg, Sign and Erf: wrapping, no UB at the most negative value") {
    const std::int32_t lo = std::numeric_limits<std::int32_t>::min();
    auto a = run_both_at(13, "Abs", {make<std::int32_t>({4}, {-5, 0, 7, lo})});
    CHECK(values_of<std::int32_t>(a.outputs[0]) == std::vector<std::int32_t>{5, 0, 7, lo});
    auto n = run_both_at(13, "Neg", {make<std::int8_t>({3}, {-128, 5, 0})});
    CHECK(values_of<std::int8_t>(n.outputs[0]) == std::vector<std::int8_t>{-128, -5, 0});
    auto u = run_both_at(13, "Abs", {make<std::uint8_t>({2}, {200, 0})});
    CHECK(values_of<std::uint8_t>(u.outputs[0]) == std::vector<std::uint8_t>{200, 0});
    auto s = run_both_at(13, "Sign", {make<std::int64_t>({3}, {-9, 0, 4})});
    CHECK(values_of<std::int64_t>(s.outputs[0]) == std::vector<std::int64_t>{-1, 0, 1});
    auto e = run_both_at(13, "Erf", {make<std::int32_t>({3}, {-2, 0, 3})});
    CHECK(values_of<std::int32_t>(e.outputs[0]) == std::vector<std::int32_t>{0, 0, 0});  // erf in (-1, 1) truncates to 0
    // Neg is not defined on unsigned integers
    CHECK(mentions(error_at(13, "Neg", {make<std::uint32_t>({1}, {1})}), "uint32"));
}

TEST_CASE("float16 and float64 compute in float and double") {
    auto h = run_both_at(13, "Sqrt", {make_f16({3}, {4.0f, 2.0f, 0.25f})});
    REQUIRE(h.outputs[0].type() == ember::dtype::float16);
    CHECK(f16_values(h.outputs[0]) == std::vector<float>{2.0f, static_cast<float>(ember::float16(std::sqrt(2.0f))), 0.5f});
    auto d = run_both_at(13, "Exp", {make<double>({2}, {1.0, -700.0})});
    CHECK(values_of<double>(d.outputs[0]) == std::vector<double>{std::exp(1.0), std::exp(-700.0)});
    // Relu and Sigmoid on float64 and float16
    auto r = run_both_at(13, "Relu", {make<double>({3}, {-1.0, 0.5, 2.0})});
    CHECK(values_of<double>(r.outputs[0]) == std::vector<double>{0.0, 0.5, 2.0});
    auto sg = run_both_at(13, "Sigmoid", {make_f16({1}, {0.0f})});
    CHECK(f16_values(sg.outputs[0]) == std::vector<float>{0.5f});
}

TEST_CASE("Relu on integers needs opset 14; the message names the dtype and the opset") {
    auto r = run_both_at(14, "Relu", {make<std::int32_t>({3}, {-4, 0, 9})});
    CHECK(values_of<std::int32_t>(r.outputs[0]) == std::vector<std::int32_t>{0, 0, 9});
    const ember::error_info e = error_at(13, "Relu", {make<std::int32_t>({1}, {1})});
    CHECK(e.code == ember::status::unsupported_op);
    CHECK(mentions(e, "int32"));
    CHECK(mentions(e, "opset 13"));
    CHECK(mentions(error_at(17, "Floor", {make<std::int32_t>({1}, {1})}), "supported at opset 17: float32, float16, bfloat16, float64"));
    CHECK(mentions(error_at(11, "Round", {make<std::int64_t>({1}, {1})}), "int64"));
}

TEST_CASE("IsNaN and IsInf give bool; detect_negative/detect_positive choose the infinities") {
    const auto x = make_f32({5}, {1.0f, nan_f, inf_f, -inf_f, 0.0f});
    CHECK(bools_of(run_both_at(13, "IsNaN", {x}).outputs[0]) == std::vector<int>{0, 1, 0, 0, 0});
    CHECK(bools_of(run_both_at(10, "IsInf", {x}).outputs[0]) == std::vector<int>{0, 0, 1, 1, 0});
    CHECK(bools_of(run_both_at(10, "IsInf", {x}, {attribute::of("detect_negative", 0)}).outputs[0]) == std::vector<int>{0, 0, 1, 0, 0});
    CHECK(bools_of(run_both_at(10, "IsInf", {x}, {attribute::of("detect_positive", 0)}).outputs[0]) == std::vector<int>{0, 0, 0, 1, 0});
    CHECK(bools_of(run_both_at(10, "IsInf", {make<double>({2}, {-std::numeric_limits<double>::infinity(), 1.0})}).outputs[0]) == std::vector<int>{1, 0});
    CHECK(mentions(error_at(10, "IsInf", {make_f16({1}, {1.0f})}), "float16"));
    CHECK(mentions(error_at(13, "IsNaN", {make<std::int32_t>({1}, {1})}), "int32"));
}

TEST_CASE("Not flips bools and treats any non-zero byte as true") {
    ember::tensor x = make_bool({2, 2}, {1, 0, 0, 1});
    reinterpret_cast<std::uint8_t*>(x.bytes())[3] = 7;
    auto r = run_both_at(1, "Not", {x});
    CHECK(r.outputs[0].dims() == ember::shape{2, 2});
    CHECK(bools_of(r.outputs[0]) == std::vector<int>{0, 1, 1, 0});
    CHECK(mentions(error_at(1, "Not", {make_f32({1}, {1.0f})}), "float32"));
}

TEST_CASE("activations with attributes: defaults and set values") {
    const std::vector<float> x{-2.0f, -0.5f, 0.0f, 0.5f, 2.0f};
    ember::test::check_close(unary_f32("LeakyRelu", x), {-0.02f, -0.005f, 0.0f, 0.5f, 2.0f});
    ember::test::check_close(unary_f32("LeakyRelu", x, {attribute::of("alpha", 0.5f)}), {-1.0f, -0.25f, 0.0f, 0.5f, 2.0f});
    ember::test::check_close(unary_f32("Elu", x, {attribute::of("alpha", 2.0f)}, 6),
                             {2.0f * std::expm1(-2.0f), 2.0f * std::expm1(-0.5f), 0.0f, 0.5f, 2.0f});
    const float sa = 1.67326319217681884765625f, sg = 1.05070102214813232421875f;
    ember::test::check_close(unary_f32("Selu", x), {sg * sa * std::expm1(-2.0f), sg * sa * std::expm1(-0.5f), 0.0f, sg * 0.5f, sg * 2.0f});
    ember::test::check_close(unary_f32("Selu", x, {attribute::of("alpha", 2.0f), attribute::of("gamma", 3.0f)}),
                             {6.0f * std::expm1(-2.0f), 6.0f * std::expm1(-0.5f), 0.0f, 1.5f, 6.0f});
    ember::test::check_close(unary_f32("Celu", x, {attribute::of("alpha", 2.0f)}),
                             {2.0f * std::expm1(-1.0f), 2.0f * std::expm1(-0.25f), 0.0f, 0.5f, 2.0f});
    ember::test::check_close(unary_f32("HardSigmoid", x), {0.1f, 0.4f, 0.5f, 0.6f, 0.9f});
    ember::test::check_close(unary_f32("HardSigmoid", x, {attribute::of("alpha", 0.5f), attribute::of("beta", 0.6f)}),
                             {0.0f, 0.35f, 0.6f, 0.85f, 1.0f});
    ember::test::check_close(unary_f32("HardSwish", {-4.0f, -1.0f, 0.0f, 1.0f, 4.0f}), {0.0f, -1.0f / 3.0f, 0.0f, 2.0f / 3.0f, 4.0f});
    ember::test::check_close(unary_f32("ThresholdedRelu", x), {0.0f, 0.0f, 0.0f, 0.0f, 2.0f});
    ember::test::check_close(unary_f32("ThresholdedRelu", x, {attribute::of("alpha", 0.25f)}), {0.0f, 0.0f, 0.0f, 0.5f, 2.0f});
    ember::test::check_close(unary_f32("Softsign", x), {-2.0f / 3.0f, -1.0f / 3.0f, 0.0f, 1.0f / 3.0f, 2.0f / 3.0f});
    ember::test::check_close(unary_f32("Shrink", x), {-2.0f, 0.0f, 0.0f, 0.0f, 2.0f});
    ember::test::check_close(unary_f32("Shrink", x, {attribute::of("lambd", 1.5f), attribute::of("bias", 1.5f)}), {-0.5f, 0.0f, 0.0f, 0.0f, 0.5f});
}

TEST_CASE("softplus is log(1 + e^x) without overflow for large |x|") {
    const std::vector<float> y = unary_f32("Softplus", {-100.0f, -1.0f, 0.0f, 1.0f, 100.0f, 1000.0f}, {}, 1);
    ember::test::check_close(y, {std::exp(-100.0f), std::log1p(std::exp(-1.0f)), std::log(2.0f), 1.0f + std::log1p(std::exp(-1.0f)), 100.0f, 1000.0f});
}

TEST_CASE("Shrink on integers computes in double and saturates back") {
    auto r = run_both_at(9, "Shrink", {make<std::int8_t>({4}, {-128, -1, 1, 127})}, {attribute::of("lambd", 0.5f), attribute::of("bias", 2.0f)});
    CHECK(values_of<std::int8_t>(r.outputs[0]) == std::vector<std::int8_t>{-126, 1, -1, 125});
}

TEST_CASE("activation attribute errors: Celu alpha 0, an unknown attribute, a wrong attribute kind") {
    const auto x = make_f32({1}, {1.0f});
    CHECK(mentions(error_at(12, "Celu", {x}, {attribute::of("alpha", 0.0f)}), "'alpha' must not be 0"));
    CHECK(mentions(error_at(17, "Elu", {x}, {attribute::of("beta", 1.0f)}), "'beta' is not supported"));
    CHECK(mentions(error_at(17, "LeakyRelu", {x}, {attribute::of("alpha", "big")}), "'alpha'"));
    CHECK(mentions(error_at(12, "Celu", {make<double>({1}, {1.0})}), "float64"));
}

TEST_CASE("clip opset 6: min and max attributes, defaults unbounded") {
    const auto x = make_f32({5}, {-3.0f, -0.5f, 0.0f, 0.7f, 9.0f});
    ember::test::check_close(values_f32(run_both_at(6, "Clip", {x}, {attribute::of("min", -1.0f), attribute::of("max", 0.5f)}).outputs[0]),
                             {-1.0f, -0.5f, 0.0f, 0.5f, 0.5f}, 0, 0);
    ember::test::check_close(values_f32(run_both_at(6, "Clip", {x}, {attribute::of("max", 0.5f)}).outputs[0]), {-3.0f, -0.5f, 0.0f, 0.5f, 0.5f},
                             0, 0);
    ember::test::check_close(values_f32(run_both_at(6, "Clip", {x}).outputs[0]), values_f32(x), 0, 0);
    // inputs instead of attributes are not defined before opset 11
    CHECK(error_at(6, "Clip", {x, make_f32({}, {0.0f})}).code == ember::status::invalid_model);
}

TEST_CASE("clip opset 11+: optional min/max inputs, as run-time inputs or constants") {
    const auto x = make_f32({2, 3}, {-3.0f, -0.5f, 0.0f, 0.7f, 9.0f, nan_f});
    const auto lo = make_f32({}, {-1.0f});
    const auto hi = make_f32({}, {0.5f});
    auto both = run_both_at(13, "Clip", {x, lo, hi});
    CHECK(both.outputs[0].dims() == ember::shape{2, 3});
    ember::test::check_close(both.outputs[0], {-1.0f, -0.5f, 0.0f, 0.5f, 0.5f, nan_f}, 0, 0);
    ember::test::check_close(run_both_at(13, "Clip", {x, lo}).outputs[0], {-1.0f, -0.5f, 0.0f, 0.7f, 9.0f, nan_f}, 0, 0);
    ember::test::check_close(run_both_at(13, "Clip", {x, ember::tensor(), hi}).outputs[0], {-3.0f, -0.5f, 0.0f, 0.5f, 0.5f, nan_f}, 0, 0);
    ember::test::check_close(run_both_at(11, "Clip", {x}).outputs[0], values_f32(x), 0, 0);
    // min > max: every element becomes max
    ember::test::check_close(run_both_at(13, "Clip", {x, make_f32({}, {2.0f}), make_f32({1}, {1.0f})}).outputs[0], {1, 1, 1, 1, 1, nan_f}, 0, 0);
}

TEST_CASE("clip on integers from opset 12, defaults are the type's limits") {
    auto r = run_both_at(13, "Clip", {make<std::int8_t>({4}, {-128, -5, 5, 127}), make<std::int8_t>({}, {-6}), ember::tensor()});
    CHECK(values_of<std::int8_t>(r.outputs[0]) == std::vector<std::int8_t>{-6, -5, 5, 127});
    auto u = run_both_at(12, "Clip", {make<std::uint64_t>({3}, {0, 5, ~std::uint64_t{0}}), make<std::uint64_t>({}, {1}), make<std::uint64_t>({}, {6})});
    CHECK(values_of<std::uint64_t>(u.outputs[0]) == std::vector<std::uint64_t>{1, 5, 6});
    CHECK(mentions(error_at(11, "Clip", {make<std::int8_t>({1}, {1})}), "int8"));
}

TEST_CASE("clip errors: attributes at opset 11+, non-scalar bounds, mismatched dtypes") {
    const auto x = make_f32({2}, {1.0f, 2.0f});
    CHECK(mentions(error_at(13, "Clip", {x}, {attribute::of("min", 0.0f)}), "only before opset 11"));
    CHECK(mentions(error_at(13, "Clip", {x, make_f32({2}, {0.0f, 1.0f})}), "must be a scalar, got shape [2]"));
    CHECK(mentions(error_at(13, "Clip", {x, make<double>({}, {0.0})}), "float64"));
}

TEST_CASE("unary ops run in place in a chain, and bool-valued ones do not") {
    const auto x = make_f32({2, 3}, {-1, 1, -1, 2, -2, -5});
    const auto c = ember::test::run_in_chain("Exp", x);  // Relu, then Exp over Relu's buffer, then Relu
    CHECK(c.shared);
    ember::test::check_close(c.y, {1, std::exp(1.0f), 1, std::exp(2.0f), 1, 1});
    const auto e = ember::test::run_in_chain("Elu", x);
    CHECK(e.shared);
    const auto cl = ember::test::run_in_chain("Clip", x, {make_f32({}, {0.5f}), make_f32({}, {1.5f})});
    CHECK(cl.shared);
    ember::test::check_close(cl.y, {0.5f, 1, 0.5f, 1.5f, 0.5f, 0.5f}, 0.0f, 0.0f);
    CHECK(!ember::has_flag(ember::ops::is_nan::flags, ember::op_flags::in_place));
    CHECK(ember::has_flag(ember::ops::abs::flags, ember::op_flags::in_place));
}

TEST_CASE("the float32 reference of a unary op is the kernel's loop") {
    const float x[] = {-1.0f, 0.25f, 3.0f};
    float y[3];
    ember::ops::leaky_relu::reference({0.5f}, x, y, 3);
    CHECK(y[0] == -0.5f);
    CHECK(y[1] == 0.25f);
    ember::ops::reciprocal::reference({}, x, y, 3);
    CHECK(y[1] == 4.0f);
}
