// SPDX-License-Identifier: Apache-2.0
// The broadcasting element-wise ops beyond Add (tests/ops/add_test.cpp covers the broadcast
// loop itself): the dtypes of Add/Sub/Mul/Div, legacy opset-6 broadcasting, Pow, Mod, the
// comparisons, And/Or/Xor, BitShift, PRelu, Where, and the variadic Max/Min/Sum/Mean.
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
}

TEST_CASE("Add/Sub/Mul/Div on 8- and 16-bit integers from opset 14, wrapping") {
    auto add = run_both_at(14, "Add", {make<std::uint8_t>({3}, {250, 1, 128}), make<std::uint8_t>({3}, {10, 2, 128})});
    CHECK(values_of<std::uint8_t>(add.outputs[0]) == std::vector<std::uint8_t>{4, 3, 0});
    auto sub = run_both_at(14, "Sub", {make<std::uint8_t>({2}, {1, 5}), make<std::uint8_t>({}, {3})});
    CHECK(values_of<std::uint8_t>(sub.outputs[0]) == std::vector<std::uint8_t>{254, 2});
    // 65535 * 65535 would overflow int after promotion: computed in unsigned, wraps to 1
    auto mul = run_both_at(14, "Mul", {make<std::uint16_t>({2}, {65535, 3}), make<std::uint16_t>({2}, {65535, 4})});
    CHECK(values_of<std::uint16_t>(mul.outputs[0]) == std::vector<std::uint16_t>{1, 12});
    auto mul8 = run_both_at(14, "Mul", {make<std::int8_t>({2}, {-128, 100}), make<std::int8_t>({2}, {-1, 2})});
    CHECK(values_of<std::int8_t>(mul8.outputs[0]) == std::vector<std::int8_t>{-128, -56});
    auto div = run_both_at(14, "Div", {make<std::uint8_t>({4}, {7, 200, 9, 0}), make<std::uint8_t>({4}, {2, 0, 3, 0})});
    CHECK(values_of<std::uint8_t>(div.outputs[0]) == std::vector<std::uint8_t>{3, 0, 3, 0});
    auto div16 = run_both_at(14, "Div", {make<std::int16_t>({2}, {-32768, -7}), make<std::int16_t>({2}, {-1, 2})});
    CHECK(values_of<std::int16_t>(div16.outputs[0]) == std::vector<std::int16_t>{-32768, -3});
    const ember::error_info e = error_at(13, "Add", {make<std::uint8_t>({1}, {1}), make<std::uint8_t>({1}, {1})});
    CHECK(e.code == ember::status::unsupported_op);
    CHECK(mentions(e, "uint8"));
    // uint32/uint64 were there from the start
    auto u64 = run_both_at(7, "Sub", {make<std::uint64_t>({1}, {0}), make<std::uint64_t>({1}, {1})});
    CHECK(values_of<std::uint64_t>(u64.outputs[0]) == std::vector<std::uint64_t>{~std::uint64_t{0}});
}

TEST_CASE("float16 arithmetic computes in float and rounds once") {
    auto r = run_both_at(13, "Mul", {make_f16({3}, {1.5f, -2.0f, 1000.0f}), make_f16({1}, {2.0f})});
    REQUIRE(r.outputs[0].type() == ember::dtype::float16);
    CHECK(f16_values(r.outputs[0]) == std::vector<float>{3.0f, -4.0f, 2000.0f});
}

TEST_CASE("opset 6 legacy broadcasting: broadcast=1 with and without axis") {
    const auto a = make<double>({2, 3}, {1, 2, 3, 4, 5, 6});
    auto trailing = run_both_at(6, "Add", {a, make<double>({3}, {10, 20, 30})}, {attribute::of("broadcast", 1)});
    CHECK(trailing.outputs[0].dims() == ember::shape{2, 3});
    CHECK(values_of<double>(trailing.outputs[0]) == std::vector<double>{11, 22, 33, 14, 25, 36});
    auto axis0 = run_both_at(6, "Mul", {a, make<double>({2}, {10, 100})}, {attribute::of("broadcast", 1), attribute::of("axis", 0)});
    CHECK(values_of<double>(axis0.outputs[0]) == std::vector<double>{10, 20, 30, 400, 500, 600});
    auto size1 = run_both_at(6, "Sub", {a, make<double>({2, 1}, {1, 2})}, {attribute::of("broadcast", 1), attribute::of("axis", 0)});
    CHECK(values_of<double>(size1.outputs[0]) == std::vector<double>{0, 1, 2, 2, 3, 4});
    auto scalar = run_both_at(6, "Div", {a, make<double>({}, {2})}, {attribute::of("broadcast", 1)});
    CHECK(values_of<double>(scalar.outputs[0]) == std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3});
    auto same = run_both_at(6, "Add", {a, a});
    CHECK(values_of<double>(same.outputs[0]) == std::vector<double>{2, 4, 6, 8, 10, 12});
}

TEST_CASE("opset 6 legacy broadcasting errors, and the attributes are rejected from opset 7") {
    const auto a = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    const auto b = make_f32({3}, {1, 2, 3});
    CHECK(mentions(error_at(6, "Add", {a, b}), "broadcast is 0"));
    CHECK(mentions(error_at(6, "Add", {a, b}, {attribute::of("broadcast", 1), attribute::of("axis", 0)}), "does not match"));
    CHECK(mentions(error_at(6, "Add", {b, a}, {attribute::of("broadcast", 1)}), "higher rank"));
    CHECK(mentions(error_at(7, "Add", {a, b}, {attribute::of("broadcast", 1)}), "only before opset 7"));
    CHECK(mentions(error_at(17, "Mod", {a, b}, {attribute::of("broadcast", 1)}), "'broadcast' is not supported"));
}

TEST_CASE("Pow: floats, integer ^ integer exactly, mixed dtypes from opset 12") {
    ember::test::check_close(values_f32(run_both_at(15, "Pow", {make_f32({3}, {2, 4, -2}), make_f32({3}, {3, 0.5f, 2})}).outputs[0]), {8, 2, 4});
    auto ii = run_both_at(15, "Pow", {make<std::int64_t>({5}, {3, -2, 2, -1, 5}), make<std::int64_t>({5}, {4, 3, 62, -3, -1})});
    CHECK(values_of<std::int64_t>(ii.outputs[0]) == std::vector<std::int64_t>{81, -8, std::int64_t{1} << 62, -1, 0});
    auto i_f = run_both_at(15, "Pow", {make<std::int32_t>({3}, {1, 2, 3}), make_f32({3}, {4, 5, 0.5f})});
    REQUIRE(i_f.outputs[0].type() == ember::dtype::int32);
    CHECK(values_of<std::int32_t>(i_f.outputs[0]) == std::vector<std::int32_t>{1, 32, 1});
    auto f_i = run_both_at(12, "Pow", {make_f32({3}, {1, 2, 3}), make<std::int64_t>({3}, {4, 5, -1})});
    REQUIRE(f_i.outputs[0].type() == ember::dtype::float32);
    ember::test::check_close(f_i.outputs[0], {1, 32, 1.0f / 3.0f});
    auto f_u = run_both_at(15, "Pow", {make_f32({1}, {2}), make<std::uint64_t>({1}, {10})});
    ember::test::check_close(f_u.outputs[0], {1024}, 0, 0);
    // saturates instead of UB when the float result does not fit the integer
    auto sat = run_both_at(15, "Pow", {make<std::int32_t>({2}, {10, -10}), make_f32({2}, {20, 21})});
    CHECK(values_of<std::int32_t>(sat.outputs[0]) ==
          std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::min()});
    CHECK(mentions(error_at(7, "Pow", {make_f32({1}, {2}), make<double>({1}, {2})}), "opset 12"));
    CHECK(mentions(error_at(15, "Pow", {make<std::uint8_t>({1}, {2}), make<std::uint8_t>({1}, {2})}), "uint8"));
}

TEST_CASE("Mod: Python's sign rule by default, C fmod with fmod=1, 0 for a zero divisor") {
    const auto a = make<std::int32_t>({6}, {-4, 7, 5, -7, 4, 3});
    const auto b = make<std::int32_t>({6}, {3, -3, 0, -2, 2, -1});
    CHECK(values_of<std::int32_t>(run_both_at(13, "Mod", {a, b}).outputs[0]) == std::vector<std::int32_t>{2, -2, 0, -1, 0, 0});
    CHECK(values_of<std::int32_t>(run_both_at(13, "Mod", {a, b}, {attribute::of("fmod", 1)}).outputs[0]) ==
          std::vector<std::int32_t>{-1, 1, 0, -1, 0, 0});
    auto f = run_both_at(13, "Mod", {make_f32({3}, {-4.5f, 7.0f, 5.0f}), make_f32({1}, {2.0f})}, {attribute::of("fmod", 1)});
    ember::test::check_close(f.outputs[0], {-0.5f, 1.0f, 1.0f}, 0, 0);
    auto u = run_both_at(13, "Mod", {make<std::uint8_t>({3}, {250, 7, 9}), make<std::uint8_t>({3}, {7, 0, 4})});
    CHECK(values_of<std::uint8_t>(u.outputs[0]) == std::vector<std::uint8_t>{5, 0, 1});
    const std::int64_t lo = std::numeric_limits<std::int64_t>::min();
    auto m = run_both_at(13, "Mod", {make<std::int64_t>({2}, {lo, lo}), make<std::int64_t>({2}, {-1, 3})});
    CHECK(values_of<std::int64_t>(m.outputs[0]) == std::vector<std::int64_t>{0, 1});
    CHECK(mentions(error_at(13, "Mod", {make_f32({1}, {1}), make_f32({1}, {1})}), "fmod=0 is not defined for floating-point"));
    CHECK(mentions(error_at(13, "Mod", {a, b}, {attribute::of("fmod", 2)}), "must be 0 or 1"));
}

TEST_CASE("comparisons give bool with broadcasting; NaN compares false") {
    const auto a = make_f32({2, 3}, {1, 2, 3, nan_f, 5, 6});
    const auto b = make_f32({3}, {2, 2, 2});
    CHECK(bools_of(run_both_at(13, "Less", {a, b}).outputs[0]) == std::vector<int>{1, 0, 0, 0, 0, 0});
    CHECK(bools_of(run_both_at(13, "Greater", {a, b}).outputs[0]) == std::vector<int>{0, 0, 1, 0, 1, 1});
    CHECK(bools_of(run_both_at(16, "LessOrEqual", {a, b}).outputs[0]) == std::vector<int>{1, 1, 0, 0, 0, 0});
    CHECK(bools_of(run_both_at(16, "GreaterOrEqual", {a, b}).outputs[0]) == std::vector<int>{0, 1, 1, 0, 1, 1});
    CHECK(bools_of(run_both_at(13, "Equal", {a, b}).outputs[0]) == std::vector<int>{0, 1, 0, 0, 0, 0});
    auto r = run_both_at(13, "Equal", {make<std::int32_t>({3, 1}, {1, 2, 3}), make<std::int32_t>({1, 2}, {2, 3})});
    CHECK(r.outputs[0].dims() == ember::shape{3, 2});
    CHECK(bools_of(r.outputs[0]) == std::vector<int>{0, 0, 1, 0, 0, 1});
    CHECK(bools_of(run_both_at(7, "Equal", {make_bool({3}, {1, 0, 1}), make_bool({1}, {1})}).outputs[0]) == std::vector<int>{1, 0, 1});
    CHECK(bools_of(run_both_at(9, "Less", {make<std::uint64_t>({2}, {1, ~std::uint64_t{0}}), make<std::uint64_t>({}, {2})}).outputs[0]) ==
          std::vector<int>{1, 0});
}

TEST_CASE("comparison dtypes by opset, and mismatched input dtypes") {
    CHECK(mentions(error_at(10, "Equal", {make_f32({1}, {1}), make_f32({1}, {1})}), "float32"));  // floats from opset 11
    CHECK(mentions(error_at(8, "Less", {make<std::int32_t>({1}, {1}), make<std::int32_t>({1}, {1})}), "int32"));  // ints from 9
    const ember::error_info e = error_at(13, "Less", {make_f32({1}, {1}), make<double>({1}, {1})});
    CHECK(e.code == ember::status::shape_mismatch);
    CHECK(mentions(e, "float32 and float64"));
    CHECK(!ember::has_flag(ember::ops::less::flags, ember::op_flags::in_place));
}

TEST_CASE("And, Or, Xor on bools with broadcasting") {
    const auto a = make_bool({2, 2}, {0, 0, 1, 1});
    const auto b = make_bool({2}, {0, 1});
    CHECK(bools_of(run_both_at(7, "And", {a, b}).outputs[0]) == std::vector<int>{0, 0, 0, 1});
    CHECK(bools_of(run_both_at(7, "Or", {a, b}).outputs[0]) == std::vector<int>{0, 1, 1, 1});
    CHECK(bools_of(run_both_at(7, "Xor", {a, b}).outputs[0]) == std::vector<int>{0, 1, 1, 0});
    CHECK(bools_of(run_both_at(1, "Or", {a, b}, {attribute::of("broadcast", 1)}).outputs[0]) == std::vector<int>{0, 1, 1, 1});
    CHECK(mentions(error_at(7, "And", {make<std::int32_t>({1}, {1}), make<std::int32_t>({1}, {1})}), "int32"));
}

TEST_CASE("BitShift: LEFT and RIGHT on unsigned integers; a shift past the width gives 0") {
    auto l = run_both_at(11, "BitShift", {make<std::uint8_t>({4}, {1, 255, 3, 1}), make<std::uint8_t>({4}, {3, 1, 8, 200})},
                         {attribute::of("direction", "LEFT")});
    CHECK(values_of<std::uint8_t>(l.outputs[0]) == std::vector<std::uint8_t>{8, 254, 0, 0});
    auto r = run_both_at(11, "BitShift", {make<std::uint64_t>({3}, {~std::uint64_t{0}, 16, 5}), make<std::uint64_t>({}, {63})},
                         {attribute::of("direction", "RIGHT")});
    CHECK(values_of<std::uint64_t>(r.outputs[0]) == std::vector<std::uint64_t>{1, 0, 0});
    auto r16 = run_both_at(11, "BitShift", {make<std::uint16_t>({2}, {0x8000, 12}), make<std::uint16_t>({2}, {15, 2})},
                           {attribute::of("direction", "RIGHT")});
    CHECK(values_of<std::uint16_t>(r16.outputs[0]) == std::vector<std::uint16_t>{1, 3});
    const auto x = make<std::uint32_t>({1}, {1});
    CHECK(mentions(error_at(11, "BitShift", {x, x}, {attribute::of("direction", "UP")}), "\"LEFT\" or \"RIGHT\""));
    CHECK(mentions(error_at(11, "BitShift", {x, x}), "required attribute 'direction'"));
    CHECK(mentions(error_at(11, "BitShift", {make<std::int32_t>({1}, {1}), make<std::int32_t>({1}, {1})}, {attribute::of("direction", "LEFT")}),
                   "int32"));
}

TEST_CASE("PRelu: slope broadcast to x (opset 7+), per channel before opset 7") {
    const auto x = make_f32({2, 3}, {-1, 2, -3, -4, 5, -6});
    ember::test::check_close(run_both_at(16, "PRelu", {x, make_f32({3}, {0.5f, 1, 2})}).outputs[0], {-0.5f, 2, -6, -2, 5, -12}, 0, 0);
    ember::test::check_close(run_both_at(9, "PRelu", {x, make_f32({1}, {0.25f})}).outputs[0], {-0.25f, 2, -0.75f, -1, 5, -1.5f}, 0, 0);
    const auto x3 = make_f32({1, 2, 2}, {-1, -2, -3, 4});
    ember::test::check_close(run_both_at(6, "PRelu", {x3, make_f32({2}, {10, 100})}).outputs[0], {-10, -20, -300, 4}, 0, 0);
    auto ints = run_both_at(9, "PRelu", {make<std::int32_t>({3}, {-3, 0, 3}), make<std::int32_t>({}, {2})});
    CHECK(values_of<std::int32_t>(ints.outputs[0]) == std::vector<std::int32_t>{-6, 0, 3});
    CHECK(mentions(error_at(16, "PRelu", {x, make_f32({2, 3, 1}, {1, 1, 1, 1, 1, 1})}), "does not broadcast to x"));
    CHECK(mentions(error_at(6, "PRelu", {x3, make_f32({3}, {1, 1, 1})}), "one per channel"));
    CHECK(mentions(error_at(8, "PRelu", {make<std::int32_t>({1}, {1}), make<std::int32_t>({1}, {1})}), "int32"));
}

TEST_CASE("Where: condition, x and y broadcast together; any dtype") {
    const auto c = make_bool({2, 1}, {1, 0});
    auto f = run_both_at(16, "Where", {c, make_f32({1, 3}, {1, 2, 3}), make_f32({}, {-1})});
    CHECK(f.outputs[0].dims() == ember::shape{2, 3});
    ember::test::check_close(f.outputs[0], {1, 2, 3, -1, -1, -1}, 0, 0);
    auto l = run_both_at(9, "Where", {make_bool({3}, {0, 1, 0}), make<std::int64_t>({3}, {1, 2, 3}), make<std::int64_t>({2, 1}, {10, 20})});
    CHECK(l.outputs[0].dims() == ember::shape{2, 3});
    CHECK(values_of<std::int64_t>(l.outputs[0]) == std::vector<std::int64_t>{10, 2, 10, 20, 2, 20});
    auto b = run_both_at(16, "Where", {make_bool({2}, {1, 0}), make_bool({2}, {0, 0}), make_bool({2}, {1, 1})});
    CHECK(bools_of(b.outputs[0]) == std::vector<int>{0, 1});
    auto h = run_both_at(16, "Where", {make_bool({1}, {0}), make_f16({1}, {1.0f}), make_f16({2}, {2.0f, 3.0f})});
    CHECK(f16_values(h.outputs[0]) == std::vector<float>{2.0f, 3.0f});
    CHECK(mentions(error_at(16, "Where", {make_f32({1}, {1}), make_f32({1}, {1}), make_f32({1}, {1})}), "expected bool"));
    CHECK(mentions(error_at(16, "Where", {c, make_f32({1}, {1}), make<double>({1}, {1})}), "float32 and float64"));
    CHECK(mentions(error_at(16, "Where", {c, make_f32({3}, {1, 2, 3}), make_f32({2}, {1, 2})}), "do not broadcast"));
}

TEST_CASE("Max, Min, Sum, Mean: one input, three broadcast inputs, NaN wins in Max/Min") {
    const auto a = make_f32({3}, {3, 2, 1});
    CHECK(values_f32(run_both_at(13, "Max", {a}).outputs[0]) == std::vector<float>{3, 2, 1});
    CHECK(values_f32(run_both_at(13, "Sum", {a}).outputs[0]) == std::vector<float>{3, 2, 1});
    const auto b = make_f32({2, 1}, {1, 4});
    const auto c = make_f32({}, {2});
    auto mx = run_both_at(13, "Max", {a, b, c});
    CHECK(mx.outputs[0].dims() == ember::shape{2, 3});
    CHECK(values_f32(mx.outputs[0]) == std::vector<float>{3, 2, 2, 4, 4, 4});
    CHECK(values_f32(run_both_at(13, "Min", {a, b, c}).outputs[0]) == std::vector<float>{1, 1, 1, 2, 2, 1});
    CHECK(values_f32(run_both_at(13, "Sum", {a, b, c}).outputs[0]) == std::vector<float>{6, 5, 4, 9, 8, 7});
    ember::test::check_close(run_both_at(13, "Mean", {a, b, c}).outputs[0], {2, 5.0f / 3, 4.0f / 3, 3, 8.0f / 3, 7.0f / 3});
    const auto n = make_f32({2}, {nan_f, 1});
    CHECK(std::isnan(values_f32(run_both_at(13, "Max", {make_f32({2}, {5, 1}), n}).outputs[0])[0]));
    CHECK(std::isnan(values_f32(run_both_at(13, "Min", {n, make_f32({2}, {5, 1})}).outputs[0])[0]));
}

TEST_CASE("Max and Min on integers from opset 12; no broadcasting before opset 8") {
    auto i = run_both_at(12, "Max", {make<std::uint32_t>({2}, {1, 4000000000u}), make<std::uint32_t>({2}, {2, 3})});
    CHECK(values_of<std::uint32_t>(i.outputs[0]) == std::vector<std::uint32_t>{2, 4000000000u});
    auto j = run_both_at(13, "Min", {make<std::int8_t>({2}, {-128, 5}), make<std::int8_t>({1}, {0})});
    CHECK(values_of<std::int8_t>(j.outputs[0]) == std::vector<std::int8_t>{-128, 0});
    CHECK(mentions(error_at(11, "Max", {make<std::int32_t>({1}, {1}), make<std::int32_t>({1}, {1})}), "int32"));
    CHECK(mentions(error_at(13, "Sum", {make<std::int32_t>({1}, {1})}), "int32"));
    CHECK(mentions(error_at(6, "Sum", {make_f32({2}, {1, 2}), make_f32({1}, {1})}), "no broadcasting before opset 8"));
    CHECK(mentions(error_at(13, "Mean", {make_f32({2}, {1, 2}), make_f32({3}, {1, 2, 3})}), "does not broadcast"));
    CHECK(mentions(error_at(13, "Min", {make_f32({2}, {1, 2}), make<double>({2}, {1, 2})}), "float64"));
    CHECK(error_at(13, "Max", {}).code == ember::status::invalid_model);
}

TEST_CASE("a variadic op in place over its first input, which also appears later") {
    // Sum(r, r, r) where r dies here: the output may take r's buffer; every element is read first
    ember::graph_builder b("chain");
    const ember::value_id in = b.input("x", ember::dtype::float32, ember::partial_shape(ember::shape{3}));
    const ember::value_id r = b.node("Relu", {in}, {}, "relu");
    const ember::value_id s = b.node("Sum", {r, r, r}, {}, "sum");
    b.output(b.node("Neg", {s}, {}, "neg"), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    CHECK(ember::test::share_buffer(*p, r, s));
    ember::session sess(*p);
    const std::vector<float> x{1, -2, 3};
    std::vector<float> y(3);
    REQUIRE(sess.bind_input(0, x.data(), x.size() * sizeof(float)) == ember::status::ok);
    REQUIRE(sess.bind_output(0, y) == ember::status::ok);
    REQUIRE(sess.run() == ember::status::ok);
    CHECK(y == std::vector<float>{-3, 0, -9});
}
