// SPDX-License-Identifier: Apache-2.0
// Shape, Size, ConstantOfShape, EyeLike, Range, Cast, CastLike, Squeeze, Unsqueeze, Dropout, and
// the constant folding of exported models' shape subgraphs.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/cast.hpp>
#include <ember/ops/constant_of_shape.hpp>
#include <ember/ops/dropout.hpp>
#include <ember/ops/eye_like.hpp>
#include <ember/ops/range.hpp>
#include <ember/ops/shape.hpp>
#include <ember/ops/squeeze.hpp>

#include "ops/shape_ops_helpers.hpp"

using namespace ember::test::shape_ops;

namespace {

// Every step of the plan, by op name ("Copy" for copies into graph outputs).
std::vector<std::string> step_ops(const ember::plan& p) {
    std::vector<std::string> ops;
    for (std::size_t i = 0; i < p.steps().size(); ++i) ops.emplace_back(p.step_op(i));
    return ops;
}

std::vector<std::int64_t> shape_of(const tensor& x, std::vector<attribute> attrs = {}, std::int64_t opset = 17) {
    auto r = run_op("Shape", {x}, 1, std::move(attrs), 1, opset);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    REQUIRE(r.outputs[0].type() == dtype::int64);
    // the value is known at compile time: the only step copies the constant into the output
    CHECK(step_ops(*r.compiled) == std::vector<std::string>{"Copy"});
    return values_of<std::int64_t>(r.outputs[0]);
}

} // namespace

TEST_CASE("shape: the dimensions as int64, and start/end (opset 15) counted and clamped as ONNX says") {
    const tensor x = ember::test::random_f32({3, 4, 5}, 1);
    CHECK(shape_of(x) == std::vector<std::int64_t>{3, 4, 5});
    CHECK(shape_of(make<std::uint8_t>({0, 2}, {})) == std::vector<std::int64_t>{0, 2});
    CHECK(shape_of(make_f32({}, {1})).empty());
    CHECK(shape_of(x, {attribute::of("start", 1)}, 15) == std::vector<std::int64_t>{4, 5});
    CHECK(shape_of(x, {attribute::of("end", -1)}, 15) == std::vector<std::int64_t>{3, 4});
    CHECK(shape_of(x, {attribute::of("start", -1)}, 15) == std::vector<std::int64_t>{5});
    CHECK(shape_of(x, {attribute::of("start", -10)}, 15) == std::vector<std::int64_t>{3, 4, 5});
    CHECK(shape_of(x, {attribute::of("end", 10)}, 15) == std::vector<std::int64_t>{3, 4, 5});
    CHECK(shape_of(x, {attribute::of("start", 2), attribute::of("end", 1)}, 15).empty());

    auto old = run_op("Shape", {x}, 1, {attribute::of("start", 1)}, 1, 13);
    REQUIRE_FALSE(old.compiled);
    CHECK(old.error.code == status::invalid_model);
    CHECK(old.mentions("opset 15"));
}

TEST_CASE("size: the element count as an int64 scalar, with no step") {
    auto r = run_op("Size", {make<std::int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})}, 1);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == shape{});
    CHECK(values_of<std::int64_t>(r.outputs[0]) == std::vector<std::int64_t>{6});
    CHECK(step_ops(*r.compiled) == std::vector<std::string>{"Copy"});
    auto empty = run_op("Size", {make_f32({4, 0}, {})}, 1);
    REQUIRE_MESSAGE(empty.compiled, empty.error.message);
    CHECK(values_of<std::int64_t>(empty.outputs[0]) == std::vector<std::int64_t>{0});
}

TEST_CASE("constant_of_shape: float32 zeros by default, the value attribute's dtype otherwise") {
    auto zeros = run_op("ConstantOfShape", {ints({2, 3})}, 0);
    REQUIRE_MESSAGE(zeros.compiled, zeros.error.message);
    CHECK(zeros.outputs[0].dims() == shape{2, 3});
    CHECK(values_of<float>(zeros.outputs[0]) == std::vector<float>(6, 0.0f));

    auto sevens = run_op("ConstantOfShape", {ints({3})}, 0, {attribute::of("value", make<std::int32_t>({1}, {7}))});
    REQUIRE_MESSAGE(sevens.compiled, sevens.error.message);
    CHECK(values_of<std::int32_t>(sevens.outputs[0]) == std::vector<std::int32_t>{7, 7, 7});

    auto halves = run_op("ConstantOfShape", {ints({2, 1})}, 0, {attribute::of("value", make<double>({1}, {0.5}))});
    REQUIRE_MESSAGE(halves.compiled, halves.error.message);
    CHECK(values_of<double>(halves.outputs[0]) == std::vector<double>{0.5, 0.5});

    auto trues = run_op("ConstantOfShape", {ints({2})}, 0, {attribute::of("value", make_bool({1}, {true}))});
    REQUIRE_MESSAGE(trues.compiled, trues.error.message);
    CHECK(values_of<bool>(trues.outputs[0]) == std::vector<bool>{true, true});

    auto empty = run_op("ConstantOfShape", {ints({0, 4})}, 0);
    REQUIRE_MESSAGE(empty.compiled, empty.error.message);
    CHECK(empty.outputs[0].dims() == shape{0, 4});

    auto scalar = run_op("ConstantOfShape", {ints({})}, 0, {attribute::of("value", make_f32({1}, {2.5f}))});
    REQUIRE_MESSAGE(scalar.compiled, scalar.error.message);
    CHECK(scalar.outputs[0].dims() == shape{});
    CHECK(values_of<float>(scalar.outputs[0]) == std::vector<float>{2.5f});
}

TEST_CASE("constant_of_shape: a shape only known at run time, a negative dimension and a bad value are errors") {
    auto dynamic = run_op("ConstantOfShape", {ints({2})}, 1);
    REQUIRE_FALSE(dynamic.compiled);
    CHECK(dynamic.mentions("must be known at compile time"));
    auto negative = run_op("ConstantOfShape", {ints({2, -1})}, 0);
    REQUIRE_FALSE(negative.compiled);
    CHECK(negative.mentions("negative"));
    auto two = run_op("ConstantOfShape", {ints({2})}, 0, {attribute::of("value", make_f32({2}, {1, 2}))});
    REQUIRE_FALSE(two.compiled);
    CHECK(two.mentions("one element"));
}

TEST_CASE("eye_like: ones on the k-th diagonal, in the input's dtype or the dtype attribute") {
    auto main = run_op_both_ways("EyeLike", {make<std::int32_t>({3, 4}, std::vector<std::int32_t>(12, 5))}, 1);
    CHECK(main.outputs[0].type() == dtype::int32);
    CHECK(values_of<std::int32_t>(main.outputs[0]) == std::vector<std::int32_t>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});

    auto above = run_op_both_ways("EyeLike", {ember::test::random_f32({3, 3}, 2)}, 1, {attribute::of("k", 1), attribute::of("dtype", 11)});
    CHECK(above.outputs[0].type() == dtype::float64);
    CHECK(values_of<double>(above.outputs[0]) == std::vector<double>{0, 1, 0, 0, 0, 1, 0, 0, 0});

    auto below = run_op_both_ways("EyeLike", {ember::test::random_f32({3, 2}, 3)}, 1, {attribute::of("k", -2)});
    CHECK(values_of<float>(below.outputs[0]) == std::vector<float>{0, 0, 0, 0, 1, 0});

    auto outside = run_op_both_ways("EyeLike", {ember::test::random_f32({2, 2}, 4)}, 1,
                                    {attribute::of("k", std::numeric_limits<std::int64_t>::max())});
    CHECK(values_of<float>(outside.outputs[0]) == std::vector<float>(4, 0.0f));

    auto boolean = run_op_both_ways("EyeLike", {ember::test::random_f32({2, 2}, 5)}, 1, {attribute::of("dtype", 9)});
    CHECK(values_of<bool>(boolean.outputs[0]) == std::vector<bool>{true, false, false, true});
}

TEST_CASE("eye_like: a non-2-D input and an unsupported dtype are errors") {
    auto cube = run_op("EyeLike", {ember::test::random_f32({2, 2, 2}, 1)}, 1);
    REQUIRE_FALSE(cube.compiled);
    CHECK(cube.error.code == status::shape_mismatch);
    CHECK(cube.mentions("2-D"));
    auto str = run_op("EyeLike", {ember::test::random_f32({2, 2}, 1)}, 1, {attribute::of("dtype", 8)});
    REQUIRE_FALSE(str.compiled);
    CHECK(str.mentions("STRING"));
}

TEST_CASE("range: float and integer ranges, rounding the count up, empty when the limit is behind") {
    auto f = run_op("Range", {make_f32({}, {1}), make_f32({}, {2.5f}), make_f32({}, {0.5f})}, 0);
    REQUIRE_MESSAGE(f.compiled, f.error.message);
    CHECK(values_of<float>(f.outputs[0]) == std::vector<float>{1, 1.5f, 2});
    auto i = run_op("Range", {make<std::int32_t>({}, {10}), make<std::int32_t>({}, {6}), make<std::int32_t>({}, {-3})}, 0);
    REQUIRE_MESSAGE(i.compiled, i.error.message);
    CHECK(values_of<std::int32_t>(i.outputs[0]) == std::vector<std::int32_t>{10, 7});
    auto l = run_op("Range", {make<std::int64_t>({}, {0}), make<std::int64_t>({}, {5}), make<std::int64_t>({}, {2})}, 0);
    REQUIRE_MESSAGE(l.compiled, l.error.message);
    CHECK(values_of<std::int64_t>(l.outputs[0]) == std::vector<std::int64_t>{0, 2, 4});
    auto s = run_op("Range", {make<std::int16_t>({}, {3}), make<std::int16_t>({}, {3}), make<std::int16_t>({}, {1})}, 0);
    REQUIRE_MESSAGE(s.compiled, s.error.message);
    CHECK(s.outputs[0].dims() == shape{0});
    auto d = run_op("Range", {make<double>({}, {1}), make<double>({}, {-1}), make<double>({}, {0.5})}, 0);
    REQUIRE_MESSAGE(d.compiled, d.error.message);
    CHECK(d.outputs[0].dims() == shape{0});
    // the count of an int64 range over the whole type, without overflow
    constexpr auto lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
    CHECK(ember::ops::range::count<std::int64_t>(lo, hi, hi) == 3);
    CHECK(ember::ops::range::count<std::int64_t>(hi, lo, lo) == 2);
}

TEST_CASE("range: delta 0, mixed dtypes, non-scalars and inputs only known at run time are errors") {
    auto zero = run_op("Range", {make_f32({}, {0}), make_f32({}, {1}), make_f32({}, {0})}, 0);
    REQUIRE_FALSE(zero.compiled);
    CHECK(zero.mentions("delta"));
    auto mixed = run_op("Range", {make_f32({}, {0}), make<double>({}, {1}), make_f32({}, {1})}, 0);
    REQUIRE_FALSE(mixed.compiled);
    CHECK(mixed.mentions("float64"));
    auto vec = run_op("Range", {make_f32({2}, {0, 1}), make_f32({}, {1}), make_f32({}, {1})}, 0);
    REQUIRE_FALSE(vec.compiled);
    CHECK(vec.mentions("scalar"));
    auto dynamic = run_op("Range", {make_f32({}, {0}), make_f32({}, {1}), make_f32({}, {1})}, 1);
    REQUIRE_FALSE(dynamic.compiled);
    CHECK(dynamic.mentions("input 0 (start) must be known at compile time"));
}

namespace {
template <class To>
std::vector<To> cast_tensor(const tensor& x, std::int64_t to) {
    auto r = run_op_both_ways("Cast", {x}, 1, {attribute::of("to", to)});
    REQUIRE(r.outputs[0].type() == ember::dtype_of<To>);
    return values_of<To>(r.outputs[0]);
}
template <class To, class From>
std::vector<To> cast_values(const std::vector<From>& x, std::int64_t to) {
    return cast_tensor<To>(make<From>({static_cast<std::int64_t>(x.size())}, x), to);
}
constexpr std::int64_t onnx_float = 1, onnx_uint8 = 2, onnx_int8 = 3, onnx_int16 = 5, onnx_int32 = 6, onnx_int64 = 7, onnx_bool = 9,
                       onnx_float16 = 10, onnx_double = 11, onnx_uint32 = 12, onnx_uint64 = 13, onnx_bfloat16 = 16;
} // namespace

TEST_CASE("cast: float to integers truncates toward zero; NaN and out-of-range values as ONNX Runtime on x86-64") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    constexpr auto int32_min = std::numeric_limits<std::int32_t>::min();
    constexpr auto int64_min = std::numeric_limits<std::int64_t>::min();
    CHECK(cast_values<std::int32_t>(std::vector<float>{-1.7f, 2.9f, -0.0f, 1e10f, nan}, onnx_int32) ==
          std::vector<std::int32_t>{-1, 2, 0, int32_min, int32_min});
    CHECK(cast_values<std::int64_t>(std::vector<float>{-3.5f, 1e10f, 1e30f, nan}, onnx_int64) ==
          std::vector<std::int64_t>{-3, 10000000000, int64_min, int64_min});
    // narrower integers go through int32 and wrap: 300 -> 44, NaN -> 0
    CHECK(cast_values<std::int8_t>(std::vector<float>{-5.5f, 300.0f, nan}, onnx_int8) == std::vector<std::int8_t>{-5, 44, 0});
    CHECK(cast_values<std::uint8_t>(std::vector<float>{255.9f, -1.0f}, onnx_uint8) == std::vector<std::uint8_t>{255, 255});
    CHECK(cast_values<std::uint64_t>(std::vector<double>{1e19, 3.0}, onnx_uint64) == std::vector<std::uint64_t>{10000000000000000000ull, 3});
    CHECK(cast_values<std::uint32_t>(std::vector<double>{4294967295.0, -1.0}, onnx_uint32) == std::vector<std::uint32_t>{4294967295u, 4294967295u});
}

TEST_CASE("cast: bool is x != 0 (NaN is true) and becomes 0 or 1; integers wrap") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    CHECK(cast_values<bool>(std::vector<float>{0.0f, -0.0f, 0.5f, nan, -2.0f}, onnx_bool) == std::vector<bool>{false, false, true, true, true});
    CHECK(cast_values<bool>(std::vector<std::int64_t>{0, 256, -1}, onnx_bool) == std::vector<bool>{false, true, true});
    CHECK(cast_tensor<float>(make_bool({2}, {true, false}), onnx_float) == std::vector<float>{1.0f, 0.0f});
    CHECK(cast_tensor<std::int64_t>(make_bool({2}, {true, false}), onnx_int64) == std::vector<std::int64_t>{1, 0});
    CHECK(cast_values<std::int8_t>(std::vector<std::int64_t>{300, -129, 127}, onnx_int8) == std::vector<std::int8_t>{44, 127, 127});
    CHECK(cast_values<std::uint64_t>(std::vector<std::int32_t>{-1}, onnx_uint64) == std::vector<std::uint64_t>{0xffffffffffffffffull});
    CHECK(cast_values<std::int16_t>(std::vector<std::uint16_t>{65535}, onnx_int16) == std::vector<std::int16_t>{-1});
    CHECK(cast_values<float>(std::vector<std::uint8_t>{0, 200}, onnx_float) == std::vector<float>{0.0f, 200.0f});
    CHECK(cast_values<double>(std::vector<std::int64_t>{-(1ll << 40)}, onnx_double) == std::vector<double>{-1099511627776.0});
}

TEST_CASE("cast: float16 and bfloat16 round to nearest even, float64 narrows, and they round-trip") {
    // 1 + 2^-11 is halfway between the float16 values 1 and 1 + 2^-10: ties go to even (1)
    const auto half = cast_values<ember::float16>(std::vector<float>{1.0f + 1.0f / 2048.0f, 65520.0f, -2.0f}, onnx_float16);
    CHECK(half[0].bits == 0x3c00);
    CHECK(half[1].bits == 0x7c00);  // past the largest float16: infinity
    CHECK(half[2].bits == 0xc000);
    CHECK(cast_values<float>(half, onnx_float) == std::vector<float>{1.0f, std::numeric_limits<float>::infinity(), -2.0f});
    // bfloat16 keeps 8 bits of mantissa: 1 + 2^-8 is a tie, goes to 1; 1 + 3 * 2^-9 rounds up to 1 + 2^-7
    const auto brain = cast_values<ember::bfloat16>(std::vector<float>{1.0f + 1.0f / 256.0f, 1.0f + 3.0f / 512.0f}, onnx_bfloat16);
    CHECK(brain[0].bits == 0x3f80);
    CHECK(brain[1].bits == 0x3f81);
    CHECK(cast_values<float>(std::vector<double>{0.1, 1e300}, onnx_float) == std::vector<float>{0.1f, std::numeric_limits<float>::infinity()});
    CHECK(cast_values<std::int32_t>(std::vector<ember::float16>{ember::float16(-7.75f)}, onnx_int32) == std::vector<std::int32_t>{-7});
    CHECK(cast_values<double>(std::vector<float>{0.1f}, onnx_double) == std::vector<double>{static_cast<double>(0.1f)});
}

TEST_CASE("cast: to the same dtype copies; string and unknown targets, and bfloat16 before opset 13, are errors") {
    CHECK(cast_values<float>(std::vector<float>{1.5f, -2.0f}, onnx_float) == std::vector<float>{1.5f, -2.0f});
    auto str = run_op("Cast", {make_f32({1}, {1})}, 1, {attribute::of("to", 8)});
    REQUIRE_FALSE(str.compiled);
    CHECK(str.error.code == status::unsupported_op);
    CHECK(str.mentions("STRING"));
    auto unknown = run_op("Cast", {make_f32({1}, {1})}, 1, {attribute::of("to", 99)});
    REQUIRE_FALSE(unknown.compiled);
    CHECK(unknown.mentions("99"));
    auto old = run_op("Cast", {make_f32({1}, {1})}, 1, {attribute::of("to", onnx_bfloat16)}, 1, 12);
    REQUIRE_FALSE(old.compiled);
    CHECK(old.mentions("opset 13"));
    auto missing = run_op("Cast", {make_f32({1}, {1})}, 1);
    REQUIRE_FALSE(missing.compiled);
    CHECK(missing.mentions("'to'"));
}

TEST_CASE("cast: in a chain of same-size dtypes it runs in place") {
    ember::graph_builder b("cast_chain");
    const auto x = b.input("x", dtype::float32, {4});
    const auto r = b.node("Relu", {x}, {}, "relu");
    const auto c = b.node("Cast", {r}, {attribute::of("to", onnx_int32)}, "cast");
    b.output(b.node("Cast", {c}, {attribute::of("to", onnx_float)}, "back"), "y");
    auto g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    CHECK(ember::test::share_buffer(*p, r, c));
    ember::session sess(*p);
    const std::vector<float> in{-1.5f, 2.5f, 3.9f, 7.0f};
    std::vector<float> out(4);
    REQUIRE(sess.bind_input(0, in.data(), in.size() * sizeof(float)) == status::ok);
    REQUIRE(sess.bind_output(0, out) == status::ok);
    REQUIRE(sess.run() == status::ok);
    CHECK(out == std::vector<float>{0.0f, 2.0f, 3.0f, 7.0f});
}

TEST_CASE("cast_like: the output takes input 1's dtype; input 1's values are never needed") {
    const tensor x = make_f32({3}, {1.9f, -0.5f, 0.0f});
    auto r = run_op_both_ways("CastLike", {x, make<std::int64_t>({1}, {0})}, 2, {}, 1, 15);
    CHECK(values_of<std::int64_t>(r.outputs[0]) == std::vector<std::int64_t>{1, 0, 0});
    auto h = run_op_both_ways("CastLike", {x, make<ember::float16>({0}, {})}, 2, {}, 1, 15);
    CHECK(h.outputs[0].type() == dtype::float16);
    auto one = run_op("CastLike", {x}, 1, {}, 1, 15);
    REQUIRE_FALSE(one.compiled);
    CHECK(one.mentions("expected 2 inputs"));
}

TEST_CASE("squeeze: every size-1 dimension without axes, the listed ones with them (attribute < 13, input >= 13)") {
    const tensor x = ember::test::iota({1, 3, 1, 2});
    auto all = run_op_both_ways("Squeeze", {x}, 1);
    CHECK(all.outputs[0].dims() == shape{3, 2});
    CHECK(values_of<float>(all.outputs[0]) == values_of<float>(x));
    auto input = run_op_both_ways("Squeeze", {x, ints({-2})}, 1);
    CHECK(input.outputs[0].dims() == shape{1, 3, 2});
    auto attr = run_op_both_ways("Squeeze", {x}, 1, {attribute::of("axes", std::vector<std::int64_t>{0, 2})}, 1, 11);
    CHECK(attr.outputs[0].dims() == shape{3, 2});
    auto listed_none = run_op_both_ways("Squeeze", {x, ints({})}, 1);
    CHECK(listed_none.outputs[0].dims() == shape{3, 2});
    auto any = run_op_both_ways("Squeeze", {make_bool({1, 1}, {true})}, 1);
    CHECK(any.outputs[0].dims() == shape{});
    CHECK(values_of<bool>(any.outputs[0]) == std::vector<bool>{true});
}

TEST_CASE("squeeze: a dimension that is not 1, a repeated or out-of-range axis, and the wrong form for the opset are errors") {
    const tensor x = ember::test::iota({1, 3});
    auto not_one = run_op("Squeeze", {x, ints({1})}, 1);
    REQUIRE_FALSE(not_one.compiled);
    CHECK(not_one.error.code == status::shape_mismatch);
    CHECK(not_one.mentions("size is 3"));
    auto twice = run_op("Squeeze", {x, ints({0, -2})}, 1);
    REQUIRE_FALSE(twice.compiled);
    CHECK(twice.mentions("twice"));
    auto range = run_op("Squeeze", {x, ints({2})}, 1);
    REQUIRE_FALSE(range.compiled);
    CHECK(range.mentions("out of range"));
    auto attr13 = run_op("Squeeze", {x}, 1, {attribute::of("axes", std::vector<std::int64_t>{0})}, 1, 13);
    REQUIRE_FALSE(attr13.compiled);
    CHECK(attr13.mentions("input, not an attribute"));
    auto dynamic = run_op("Squeeze", {x, ints({0})}, 2);
    REQUIRE_FALSE(dynamic.compiled);
    CHECK(dynamic.mentions("input 1 (axes) must be known at compile time"));
}

TEST_CASE("unsqueeze: axes index the output, may be negative and unsorted (attribute < 13, input >= 13)") {
    const tensor x = make<std::int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
    auto front = run_op_both_ways("Unsqueeze", {x, ints({0})}, 1);
    CHECK(front.outputs[0].dims() == shape{1, 2, 3});
    CHECK(values_of<std::int64_t>(front.outputs[0]) == values_of<std::int64_t>(x));
    auto several = run_op_both_ways("Unsqueeze", {x, ints({4, 0, -3})}, 1);
    CHECK(several.outputs[0].dims() == shape{1, 2, 1, 3, 1});
    auto attr = run_op_both_ways("Unsqueeze", {x}, 1, {attribute::of("axes", std::vector<std::int64_t>{-1})}, 1, 11);
    CHECK(attr.outputs[0].dims() == shape{2, 3, 1});
    auto scalar = run_op_both_ways("Unsqueeze", {make_f32({}, {4})}, 1, {attribute::of("axes", std::vector<std::int64_t>{0})}, 1, 1);
    CHECK(scalar.outputs[0].dims() == shape{1});
}

TEST_CASE("unsqueeze: missing axes, an axis past the output rank and a rank past EMBER_MAX_RANK are errors") {
    const tensor x = ember::test::iota({2});
    auto none = run_op("Unsqueeze", {x}, 1, {}, 1, 11);
    REQUIRE_FALSE(none.compiled);
    CHECK(none.mentions("'axes'"));
    auto none13 = run_op("Unsqueeze", {x}, 1, {}, 1, 13);
    REQUIRE_FALSE(none13.compiled);
    CHECK(none13.mentions("expected 2 inputs"));
    auto past = run_op("Unsqueeze", {x, ints({2})}, 1);
    REQUIRE_FALSE(past.compiled);
    CHECK(past.mentions("out of range for rank 2"));
    auto deep = run_op("Unsqueeze", {x, ints(std::vector<std::int64_t>(ember::max_rank, 0))}, 1);
    REQUIRE_FALSE(deep.compiled);
    CHECK(deep.mentions("EMBER_MAX_RANK"));
}

TEST_CASE("dropout: the output is the input and the mask all ones, in every opset's form") {
    const tensor x = ember::test::random_f32({3, 4}, 9);
    auto v7 = run_op_both_ways("Dropout", {x}, 1, {attribute::of("ratio", 0.3f)}, 2, 7);
    CHECK(values_of<float>(v7.outputs[0]) == values_of<float>(x));
    CHECK(v7.outputs[1].type() == dtype::float32);  // before opset 10 the mask has the data's dtype
    CHECK(values_of<float>(v7.outputs[1]) == std::vector<float>(12, 1.0f));
    auto v10 = run_op_both_ways("Dropout", {x}, 1, {}, 2, 10);
    CHECK(v10.outputs[1].type() == dtype::boolean);
    CHECK(values_of<bool>(v10.outputs[1]) == std::vector<bool>(12, true));
    // opset 12+: ratio is an input (here a run-time one), training_mode a compile-time false
    auto v13 = run_op_both_ways("Dropout", {x, make_f32({}, {0.75f}), make_bool({}, {false})}, 2, {attribute::of("seed", 3)}, 2, 13);
    CHECK(values_of<float>(v13.outputs[0]) == values_of<float>(x));
    CHECK(values_of<bool>(v13.outputs[1]) == std::vector<bool>(12, true));
    // training mode with ratio 0 drops nothing, so it is the same
    auto zero = run_op_both_ways("Dropout", {x, make_f32({}, {0.0f}), make_bool({}, {true})}, 1, {}, 2, 13);
    CHECK(values_of<float>(zero.outputs[0]) == values_of<float>(x));
    auto ints64 = run_op_both_ways("Dropout", {make<std::int64_t>({2}, {5, -5})}, 1, {}, 1, 13);
    CHECK(values_of<std::int64_t>(ints64.outputs[0]) == std::vector<std::int64_t>{5, -5});
}

TEST_CASE("dropout: training mode is unsupported, and must be known at compile time") {
    const tensor x = ember::test::random_f32({2}, 9);
    auto training = run_op("Dropout", {x, make_f32({}, {0.5f}), make_bool({}, {true})}, 1, {}, 1, 13);
    REQUIRE_FALSE(training.compiled);
    CHECK(training.error.code == status::unsupported_op);
    CHECK(training.mentions("training"));
    auto default_ratio = run_op("Dropout", {x, tensor(), make_bool({}, {true})}, 1, {}, 1, 13);
    REQUIRE_FALSE(default_ratio.compiled);
    CHECK(default_ratio.mentions("training"));
    auto dynamic = run_op("Dropout", {x, make_f32({}, {0.5f}), make_bool({}, {false})}, 3, {}, 1, 13);
    REQUIRE_FALSE(dynamic.compiled);
    CHECK(dynamic.mentions("input 2 (training_mode) must be known at compile time"));
    auto old_inputs = run_op("Dropout", {x, make_f32({}, {0.5f})}, 1, {}, 1, 11);
    REQUIRE_FALSE(old_inputs.compiled);
    CHECK(old_inputs.mentions("expected 1 inputs"));
}

namespace {
// x -> Shape -> (Slice | Gather+Unsqueeze) -> Concat([-1]) -> Reshape(x): with x's shape known,
// everything but the Reshape folds away at compile time.
void check_shape_subgraph_folds(bool use_gather) {
    ember::graph_builder b("shape_subgraph");
    const auto x = b.input("x", dtype::float32, {2, 3, 4});
    const auto s = b.node("Shape", {x}, {}, "shape");
    ember::value_id batch;
    if (use_gather) {
        const auto g = b.node("Gather", {s, b.constant<std::int64_t>("zero", {}, {0})}, {attribute::of("axis", 0)}, "gather");
        batch = b.node("Unsqueeze", {g, b.constant<std::int64_t>("axes", {1}, {0})}, {}, "unsqueeze");
    } else {
        batch = b.node("Slice", {s, b.constant<std::int64_t>("starts", {1}, {0}), b.constant<std::int64_t>("ends", {1}, {1})}, {}, "slice");
    }
    const auto target = b.node("Concat", {batch, b.constant<std::int64_t>("rest", {1}, {-1})}, {attribute::of("axis", 0)}, "concat");
    b.output(b.node("Reshape", {x, target}, {}, "reshape"), "y");
    auto g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    CHECK(p->output(0).dims == shape{2, 12});
    CHECK(step_ops(*p) == std::vector<std::string>{"Reshape"});
    const tensor in = ember::test::iota({2, 3, 4});
    std::vector<float> out(24);
    ember::session sess(*p);
    REQUIRE(sess.bind_input(0, in.bytes(), in.size_bytes()) == status::ok);
    REQUIRE(sess.bind_output(0, out) == status::ok);
    REQUIRE(sess.run() == status::ok);
    CHECK(out == values_of<float>(in));
}
} // namespace

TEST_CASE("shape subgraphs: Shape -> Slice -> Concat -> Reshape folds to the one Reshape step") {
    check_shape_subgraph_folds(false);
}

TEST_CASE("shape subgraphs: Shape -> Gather -> Unsqueeze -> Concat -> Reshape folds to the one Reshape step") {
    if (!ember::ops::find_builtin("Gather", "")) {
        MESSAGE("Gather is not a built-in op in this tree yet; only the Slice form is checked");
        return;
    }
    check_shape_subgraph_folds(true);
}
