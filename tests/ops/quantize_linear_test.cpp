// SPDX-License-Identifier: Apache-2.0
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
// ConvInteger and QLinearConv: the reference kernels the INT8 fast kernels are tested against.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <ember/ops/conv_integer.hpp>
#include <ember/ops/matmul_integer.hpp>
#include <ember/ops/quantize_linear.hpp>

#include "support/check.hpp"

using ember::attribute;
using ember::shape;
using ember::status;
using ember::tensor;
using ints = std::vector<std::int64_t>;
using u8 = std::uint8_t;
using i8 = std::int8_t;

namespace {

using op_run = ember::test::node_run;

// One node in a graph that declares `opset`; inputs fed at run time or as constants (folded).
// Empty tensors are absent optional inputs.
op_run run_op(const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs, std::size_t outputs, std::int64_t opset,
              ember::test::feed how, const ember::executor* ex = nullptr) {
    ember::test::node_setup setup;
    setup.opset = opset;
    setup.constant.assign(inputs.size(), how == ember::test::feed::constants);
    setup.output_count = outputs;
    setup.exec = ex;
    return ember::test::run_node_with(op, inputs, std::move(attrs), setup);
}

std::vector<tensor> both(const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs = {}, std::size_t outputs = 1,
                         std::int64_t opset = 13) {
    ember::test::node_setup setup;
    setup.opset = opset;
    setup.output_count = outputs;
    return std::move(ember::test::run_node_both_ways_with(op, inputs, attrs, setup).outputs);
}

tensor one(const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs = {}, std::int64_t opset = 13) {
    return std::move(both(op, inputs, std::move(attrs), 1, opset)[0]);
}

ember::error_info compile_error(const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs = {},
                                std::int64_t opset = 13) {
    op_run r = run_op(op, inputs, std::move(attrs), 1, opset, ember::test::feed::inputs);
    CHECK_FALSE(r.compiled);
    CHECK(r.error.message.find("(" + op + ")") != std::string::npos);
    return r.error;
}

bool mentions(const ember::error_info& e, const std::string& s) {
    INFO(e.message);
    return e.message.find(s) != std::string::npos;
}

template <class T>
std::vector<int> ints_of(const tensor& t) {
    REQUIRE(t.type() == ember::dtype_of<T>);
    std::vector<int> v;
    for (std::size_t i = 0; i < t.size(); ++i) v.push_back(static_cast<int>(t.data<T>()[i]));
    return v;
}

tensor f32(const shape& s, std::vector<float> v) { return ember::test::make_f32(s, std::move(v)); }
tensor scalar_f32(float v) { return ember::test::make_f32({}, {v}); }
template <class T>
tensor scalar(T v) {
    return ember::test::make<T>({}, {v});
}

template <class T>
std::vector<T> random_ints(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(d(rng));
    return v;
}

} // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("quant helpers: round half to even and saturation (NaN to the given value)") {
    using ember::ops::quant_detail::round_half_even;
    using ember::ops::quant_detail::saturate;
    CHECK(round_half_even(0.5) == 0.0);
    CHECK(round_half_even(1.5) == 2.0);
    CHECK(round_half_even(2.5) == 2.0);
    CHECK(round_half_even(-0.5) == 0.0);
    CHECK(round_half_even(-1.5) == -2.0);
    CHECK(round_half_even(-2.5) == -2.0);
    CHECK(round_half_even(2.4999) == 2.0);
    CHECK(round_half_even(-2.5001) == -3.0);
    CHECK(saturate<u8>(300.0, u8(1)) == 255);
    CHECK(saturate<u8>(-1.0, u8(1)) == 0);
    CHECK(saturate<i8>(-200.0, i8(1)) == -128);
    CHECK(saturate<i8>(127.0, i8(1)) == 127);
    CHECK(saturate<u8>(std::numeric_limits<double>::quiet_NaN(), u8(7)) == 7);
    CHECK(saturate<u8>(std::numeric_limits<double>::infinity(), u8(7)) == 255);
}

TEST_CASE("quantizelinear: per tensor, uint8 and int8, ties to even, saturating, worked by hand") {
    const tensor x = f32({8}, {0, 1, 3, 5, -3, 300, -300, 2.9f});
    // x / 2 = 0, .5, 1.5, 2.5, -1.5, 150, -150, 1.45
    CHECK(ints_of<u8>(one("QuantizeLinear", {x, scalar_f32(2), scalar<u8>(128)})) == std::vector<int>{128, 128, 130, 130, 126, 255, 0, 129});
    const tensor y = one("QuantizeLinear", {f32({5}, {0.5f, -0.5f, 127.4f, -200, 1.5f}), scalar_f32(1), scalar<i8>(-1)});
    CHECK(ints_of<i8>(y) == std::vector<int>{-1, -1, 126, -128, 1});
    // no zero point: uint8 with zero point 0
    CHECK(ints_of<u8>(one("QuantizeLinear", {f32({3}, {-1, 1, 200}), scalar_f32(0.5f)})) == std::vector<int>{0, 2, 255});
    // int32 input; 1-element 1-D scale and zero point are per tensor
    const tensor xi = ember::test::make<std::int32_t>({3}, {10, -10, 15});
    CHECK(ints_of<u8>(one("QuantizeLinear", {xi, f32({1}, {10}), ember::test::make<u8>({1}, {5})})) == std::vector<int>{6, 4, 7});
    // NaN quantizes to the zero point
    CHECK(ints_of<u8>(one("QuantizeLinear", {f32({1}, {std::nanf("")}), scalar_f32(1), scalar<u8>(7)})) == std::vector<int>{7});
    // opset 10 semantics are the same for per-tensor parameters
    CHECK(ints_of<u8>(one("QuantizeLinear", {x, scalar_f32(2), scalar<u8>(128)}, {}, 10)) == std::vector<int>{128, 128, 130, 130, 126, 255, 0, 129});
}

TEST_CASE("quantizelinear: opset 13 per-axis scale and zero point, axis default 1, negative axis") {
    const tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    const tensor y = one("QuantizeLinear", {x, f32({3}, {1, 2, 4}), ember::test::make<u8>({3}, {0, 10, 20})});
    CHECK(ints_of<u8>(y) == std::vector<int>{1, 11, 21, 4, 12, 22});
    const tensor y0 = one("QuantizeLinear", {x, f32({2}, {1, 2}), ember::test::make<u8>({2}, {0, 0})}, {attribute::of("axis", 0)});
    CHECK(ints_of<u8>(y0) == std::vector<int>{1, 2, 3, 2, 2, 3});
    const tensor yn = one("QuantizeLinear", {x, f32({3}, {1, 2, 4}), ember::test::make<u8>({3}, {0, 10, 20})}, {attribute::of("axis", -1)});
    CHECK(ints_of<u8>(yn) == std::vector<int>{1, 11, 21, 4, 12, 22});
    // rank 3, axis 1: the middle dimension, inner stride 2
    const tensor x3 = f32({1, 2, 2}, {10, 20, 30, 40});
    CHECK(ints_of<i8>(one("QuantizeLinear", {x3, f32({2}, {1, 10}), ember::test::make<i8>({2}, {0, -5})})) == std::vector<int>{10, 20, -2, -1});
}

TEST_CASE("quantizelinear: bad parameters are rejected with a message naming the problem") {
    const tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK(mentions(compile_error("QuantizeLinear", {x, f32({3}, {1, 2, 4}), ember::test::make<u8>({3}, {0, 0, 0})}, {}, 10), "opset 13"));
    CHECK(mentions(compile_error("QuantizeLinear", {x, scalar_f32(1), scalar<u8>(0)}, {attribute::of("axis", 0)}, 12), "opset 13"));
    CHECK(mentions(compile_error("QuantizeLinear", {x, f32({2}, {1, 2}), ember::test::make<u8>({2}, {0, 0})}), "x.shape[1] = 3"));
    CHECK(mentions(compile_error("QuantizeLinear", {x, f32({3}, {1, 2, 4}), ember::test::make<u8>({2}, {0, 0})}), "zero point has shape [2]"));
    CHECK(mentions(compile_error("QuantizeLinear", {x, scalar_f32(1), scalar<std::int32_t>(0)}), "int32"));
    CHECK(mentions(compile_error("QuantizeLinear", {x, scalar<double>(1)}), "float64"));
    CHECK(mentions(compile_error("QuantizeLinear", {x, f32({3}, {1, 2, 4})}, {attribute::of("axis", 2)}), "axis 2 is out of range"));
    CHECK(mentions(compile_error("QuantizeLinear", {x, scalar_f32(1)}, {}, 9), "opset 10"));
    CHECK(mentions(compile_error("QuantizeLinear", {x, scalar_f32(1)}, {attribute::of("saturate", 1)}), "saturate"));
}

TEST_CASE("dequantizelinear: (x - zero_point) * scale for uint8, int8 and int32, per tensor and per axis") {
    CHECK(ember::test::values_f32(one("DequantizeLinear", {ember::test::make<u8>({4}, {0, 3, 128, 255}), scalar_f32(2), scalar<u8>(128)})) ==
          std::vector<float>{-256, -250, 0, 254});
    CHECK(ember::test::values_f32(one("DequantizeLinear", {ember::test::make<i8>({3}, {-128, 0, 127}), scalar_f32(0.5f), scalar<i8>(-1)})) ==
          std::vector<float>{-63.5f, 0.5f, 64});
    CHECK(ember::test::values_f32(one("DequantizeLinear", {ember::test::make<std::int32_t>({2}, {-5, 7}), scalar_f32(0.25f)}, {}, 10)) ==
          std::vector<float>{-1.25f, 1.75f});
    const tensor x = ember::test::make<u8>({2, 2}, {1, 2, 3, 4});
    CHECK(ember::test::values_f32(one("DequantizeLinear", {x, f32({2}, {1, 10}), ember::test::make<u8>({2}, {1, 2})}, {attribute::of("axis", 0)})) ==
          std::vector<float>{0, 1, 10, 20});
    CHECK(ember::test::values_f32(one("DequantizeLinear", {x, f32({2}, {1, 10}), ember::test::make<u8>({2}, {1, 2})})) ==
          std::vector<float>{0, 0, 2, 20});
    CHECK(mentions(compile_error("DequantizeLinear", {x, scalar_f32(1), scalar<i8>(0)}), "expected x's dtype uint8"));
    CHECK(mentions(compile_error("DequantizeLinear", {f32({1}, {1}), scalar_f32(1)}), "input 0 has dtype float32"));
    CHECK(mentions(compile_error("DequantizeLinear", {x, f32({2}, {1, 10})}, {}, 12), "opset 13"));
}

TEST_CASE("quantize then dequantize is within half a step of the input") {
    const tensor x = ember::test::random_f32({64}, 3, -1.0f, 1.0f);
    const tensor q = one("QuantizeLinear", {x, scalar_f32(1.0f / 127), scalar<i8>(0)});
    const tensor back = one("DequantizeLinear", {q, scalar_f32(1.0f / 127), scalar<i8>(0)});
    ember::test::check_close(back, ember::test::values_f32(x), 0.5f / 127 + 1e-6f, 0.0f);
}

TEST_CASE("dynamicquantizelinear: the range [min(0, min x), max(0, max x)] maps onto [0, 255]") {
    auto r = both("DynamicQuantizeLinear", {f32({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})}, {}, 3, 11);
    REQUIRE(r.size() == 3);
    CHECK(r[1].dims() == shape{});
    CHECK(r[1].data<float>()[0] == doctest::Approx(5.0 / 255).epsilon(1e-6));
    CHECK(ints_of<u8>(r[2]) == std::vector<int>{153});
    CHECK(ints_of<u8>(r[0]) == std::vector<int>{153, 255, 0, 26, 221, 179});

    auto neg = both("DynamicQuantizeLinear", {f32({6}, {-1.0f, -2.1f, -1.3f, -2.5f, -3.34f, -4.0f})}, {}, 3, 11);
    CHECK(neg[1].data<float>()[0] == doctest::Approx(4.0 / 255).epsilon(1e-6));
    CHECK(ints_of<u8>(neg[2]) == std::vector<int>{255});
    CHECK(ints_of<u8>(neg[0]) == std::vector<int>{191, 121, 172, 96, 42, 0});

    // an all-zero input has an empty range: scale 1, zero point 0 (as ONNX Runtime)
    auto zero = both("DynamicQuantizeLinear", {f32({2, 2}, {0, 0, 0, 0})}, {}, 3, 11);
    CHECK(zero[1].data<float>()[0] == 1.0f);
    CHECK(ints_of<u8>(zero[2]) == std::vector<int>{0});
    CHECK(ints_of<u8>(zero[0]) == std::vector<int>{0, 0, 0, 0});

    CHECK(mentions(compile_error("DynamicQuantizeLinear", {f32({1}, {1})}, {}, 11), "3 named outputs"));
    CHECK(mentions(compile_error("DynamicQuantizeLinear", {ember::test::make<double>({1}, {1})}, {}, 11), "float64"));
}

// ---------------------------------------------------------------------------------------------

TEST_CASE("matmulinteger: zero points per tensor, per row of A and per column of B, worked by hand") {
    const tensor a = ember::test::make<u8>({2, 3}, {1, 2, 3, 4, 5, 6});
    const tensor b = ember::test::make<u8>({3, 2}, {1, 0, 0, 1, 1, 1});
    // A - 1 = [[0, 1, 2], [3, 4, 5]]
    const tensor y = one("MatMulInteger", {a, b, scalar<u8>(1), scalar<u8>(0)}, {}, 10);
    CHECK(y.dims() == shape{2, 2});
    CHECK(ints_of<std::int32_t>(y) == std::vector<int>{2, 3, 8, 9});
    // no zero points
    CHECK(ints_of<std::int32_t>(one("MatMulInteger", {a, b})) == std::vector<int>{4, 5, 10, 11});
    // per row of A: both rows become [0, 1, 2]
    CHECK(ints_of<std::int32_t>(one("MatMulInteger", {a, b, ember::test::make<u8>({2}, {1, 4})})) == std::vector<int>{2, 3, 2, 3});
    // per column of B: B - [1, 0] = [[0, 0], [-1, 1], [0, 1]]
    CHECK(ints_of<std::int32_t>(one("MatMulInteger", {a, b, scalar<u8>(1), ember::test::make<u8>({2}, {1, 0})})) ==
          std::vector<int>{-1, 3, -4, 9});
    // the N-D forms [M, 1] and [1, N]
    CHECK(ints_of<std::int32_t>(one("MatMulInteger", {a, b, ember::test::make<u8>({2, 1}, {1, 4}), ember::test::make<u8>({1, 2}, {1, 0})})) ==
          std::vector<int>{-1, 3, -1, 3});
    // int8 x uint8, 1-D B
    const tensor ai = ember::test::make<i8>({1, 3}, {-1, 2, -3});
    const tensor y1 = one("MatMulInteger", {ai, ember::test::make<u8>({3}, {200, 1, 2})});
    CHECK(y1.dims() == shape{1});
    CHECK(ints_of<std::int32_t>(y1) == std::vector<int>{-204});
}

TEST_CASE("matmulinteger: batched with a [batch, M, 1] zero point matches a naive loop") {
    const std::int64_t Bn = 2, M = 3, K = 4, N = 5;
    const std::vector<u8> av = random_ints<u8>(Bn * M * K, 1);
    const std::vector<i8> bv = random_ints<i8>(K * N, 2);
    const std::vector<u8> za = random_ints<u8>(Bn * M, 3);
    const std::vector<i8> zb = random_ints<i8>(N, 4);
    std::vector<int> want;
    for (std::int64_t bi = 0; bi < Bn; ++bi)
        for (std::int64_t m = 0; m < M; ++m)
            for (std::int64_t n = 0; n < N; ++n) {
                int acc = 0;
                for (std::int64_t k = 0; k < K; ++k)
                    acc += (int(av[std::size_t((bi * M + m) * K + k)]) - int(za[std::size_t(bi * M + m)])) * (int(bv[std::size_t(k * N + n)]) - int(zb[std::size_t(n)]));
                want.push_back(acc);
            }
    const tensor y = one("MatMulInteger", {ember::test::make<u8>({Bn, M, K}, av), ember::test::make<i8>({K, N}, bv),
                                           ember::test::make<u8>({Bn, M, 1}, za), ember::test::make<i8>({N}, zb)});
    CHECK(y.dims() == shape{Bn, M, N});
    CHECK(ints_of<std::int32_t>(y) == want);
}

TEST_CASE("matmulinteger: bad operands and zero points are rejected with a message") {
    const tensor a = ember::test::make<u8>({2, 3}, {1, 2, 3, 4, 5, 6});
    const tensor b = ember::test::make<u8>({3, 2}, {1, 0, 0, 1, 1, 1});
    CHECK(mentions(compile_error("MatMulInteger", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), b}), "float32"));
    CHECK(mentions(compile_error("MatMulInteger", {a, ember::test::make<u8>({2, 2}, {1, 2, 3, 4})}), "inner dimensions differ"));
    CHECK(mentions(compile_error("MatMulInteger", {a, b, ember::test::make<u8>({3}, {1, 2, 3})}), "a_zero_point has shape [3]"));
    CHECK(mentions(compile_error("MatMulInteger", {a, b, scalar<u8>(0), ember::test::make<u8>({3}, {1, 2, 3})}), "b_zero_point has shape [3]"));
    CHECK(mentions(compile_error("MatMulInteger", {a, b, scalar<i8>(0)}), "expected uint8 like A"));
    CHECK(mentions(compile_error("MatMulInteger", {a, b}, {}, 9), "opset 10"));
}

TEST_CASE("qlinearmatmul: ONNX's 2-D example, and per-column scales against a naive loop") {
    const tensor a = ember::test::make<u8>({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29});
    const tensor b = ember::test::make<u8>({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247});
    const tensor y = one("QLinearMatMul", {a, f32({1}, {0.0066f}), ember::test::make<u8>({1}, {113}), b, f32({1}, {0.00705f}),
                                           ember::test::make<u8>({1}, {114}), f32({1}, {0.0107f}), ember::test::make<u8>({1}, {118})},
                         {}, 10);
    CHECK(ints_of<u8>(y) == std::vector<int>{168, 115, 255, 1, 66, 151});

    // powers of two make every product exact, so the naive double version rounds the same way
    const std::int64_t M = 3, K = 5, N = 2;
    const std::vector<i8> av = random_ints<i8>(M * K, 5), bv = random_ints<i8>(K * N, 6);
    const std::vector<float> a_scale{0.5f, 0.25f, 1.0f}, b_scale{0.25f, 0.125f};
    const std::vector<i8> a_zp{1, -2, 3}, b_zp{0, 5};
    const float y_scale = 4.0f;
    const i8 y_zp = -3;
    std::vector<int> want;
    for (std::int64_t m = 0; m < M; ++m)
        for (std::int64_t n = 0; n < N; ++n) {
            double acc = 0;
            for (std::int64_t k = 0; k < K; ++k)
                acc += (double(av[std::size_t(m * K + k)]) - a_zp[std::size_t(m)]) * (double(bv[std::size_t(k * N + n)]) - b_zp[std::size_t(n)]);
            const double real = acc * a_scale[std::size_t(m)] * b_scale[std::size_t(n)] / y_scale;
            double q = std::nearbyint(real) + y_zp;  // default rounding: to nearest, ties to even
            q = q < -128 ? -128 : q > 127 ? 127 : q;
            want.push_back(int(q));
        }
    const tensor yi = one("QLinearMatMul", {ember::test::make<i8>({M, K}, av), f32({M}, a_scale), ember::test::make<i8>({M}, a_zp),
                                            ember::test::make<i8>({K, N}, bv), f32({N}, b_scale), ember::test::make<i8>({N}, b_zp),
                                            scalar_f32(y_scale), scalar<i8>(y_zp)});
    CHECK(ints_of<i8>(yi) == want);
}

TEST_CASE("qlinearmatmul: batched 3-D operands, and bad parameters are rejected") {
    // two batches of [1, 2] x [2, 1]; all scales 1, zero points 0: an exact integer product
    const tensor a = ember::test::make<u8>({2, 1, 2}, {1, 2, 3, 4});
    const tensor b = ember::test::make<u8>({2, 2, 1}, {5, 6, 7, 8});
    const tensor y = one("QLinearMatMul", {a, scalar_f32(1), scalar<u8>(0), b, scalar_f32(1), scalar<u8>(0), scalar_f32(1), scalar<u8>(0)});
    CHECK(y.dims() == shape{2, 1, 1});
    CHECK(ints_of<u8>(y) == std::vector<int>{17, 53});
    CHECK(mentions(compile_error("QLinearMatMul", {a, scalar_f32(1), scalar<u8>(0), b, scalar_f32(1), scalar<u8>(0), f32({2}, {1, 1}), scalar<u8>(0)}),
                   "y_scale must be a scalar"));
    CHECK(mentions(compile_error("QLinearMatMul", {a, f32({3}, {1, 1, 1}), scalar<u8>(0), b, scalar_f32(1), scalar<u8>(0), scalar_f32(1), scalar<u8>(0)}),
                   "a_scale has shape [3]"));
    CHECK(mentions(compile_error("QLinearMatMul", {a, scalar_f32(1), scalar<i8>(0), b, scalar_f32(1), scalar<u8>(0), scalar_f32(1), scalar<u8>(0)}),
                   "a_zero_point has dtype int8"));
    CHECK(mentions(compile_error("QLinearMatMul", {a, scalar_f32(1), scalar<u8>(0), b}), "expected 8 inputs"));
}

// ---------------------------------------------------------------------------------------------

TEST_CASE("convinteger: ONNX's examples with and without padding (the padding holds x_zero_point)") {
    const tensor x = ember::test::make<u8>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
    const tensor w = ember::test::make<u8>({1, 1, 2, 2}, {1, 1, 1, 1});
    const tensor y = one("ConvInteger", {x, w, scalar<u8>(1)}, {}, 10);
    CHECK(y.dims() == shape{1, 1, 2, 2});
    CHECK(ints_of<std::int32_t>(y) == std::vector<int>{12, 16, 24, 28});
    const tensor p = one("ConvInteger", {x, w, scalar<u8>(1)}, {attribute::of("pads", ints{1, 1, 1, 1})});
    CHECK(p.dims() == shape{1, 1, 4, 4});
    CHECK(ints_of<std::int32_t>(p) == std::vector<int>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9});
}

TEST_CASE("convinteger: per-output-channel w_zero_point, int8 with groups, strides") {
    const tensor x = ember::test::make<u8>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
    const tensor w = ember::test::make<u8>({2, 1, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
    const tensor y = one("ConvInteger", {x, w, scalar<u8>(1), ember::test::make<u8>({2}, {0, 1})});
    CHECK(y.dims() == shape{1, 2, 2, 2});
    CHECK(ints_of<std::int32_t>(y) == std::vector<int>{12, 16, 24, 28, 0, 0, 0, 0});

    const tensor xi = ember::test::make<i8>({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
    const tensor wi = ember::test::make<i8>({2, 1, 1, 1}, {2, 3});
    const tensor g = one("ConvInteger", {xi, wi}, {attribute::of("group", 2)});
    CHECK(ints_of<std::int32_t>(g) == std::vector<int>{2, 4, 6, 8, -3, -6, -9, -12});
    const tensor s = one("ConvInteger", {xi, wi}, {attribute::of("group", 2), attribute::of("strides", ints{2, 2})});
    CHECK(s.dims() == shape{1, 2, 1, 1});
    CHECK(ints_of<std::int32_t>(s) == std::vector<int>{2, -3});
    // a 1-D convolution with a uint8 x and an int8 w
    const tensor x1 = ember::test::make<u8>({1, 1, 4}, {10, 20, 30, 40});
    const tensor w1 = ember::test::make<i8>({1, 1, 2}, {1, -1});
    CHECK(ints_of<std::int32_t>(one("ConvInteger", {x1, w1, scalar<u8>(10)})) == std::vector<int>{-10, -10, -10});
}

TEST_CASE("convinteger: bad inputs are rejected with a message") {
    const tensor x = ember::test::make<u8>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
    const tensor w = ember::test::make<u8>({1, 1, 2, 2}, {1, 1, 1, 1});
    CHECK(mentions(compile_error("ConvInteger", {x, w, ember::test::make<u8>({2}, {1, 1})}), "x_zero_point must be a scalar"));
    CHECK(mentions(compile_error("ConvInteger", {x, w, scalar<u8>(1), ember::test::make<u8>({3}, {1, 1, 1})}), "[M] = [1]"));
    CHECK(mentions(compile_error("ConvInteger", {x, w, scalar<i8>(1)}), "x_zero_point has dtype int8"));
    CHECK(mentions(compile_error("ConvInteger", {x, ember::test::make<u8>({1, 2, 2, 2}, std::vector<u8>(8, 1))}), "channels"));
    CHECK(mentions(compile_error("ConvInteger", {ember::test::make<std::int32_t>({1, 1, 1, 1}, {1}), w}), "int32"));
    CHECK(mentions(compile_error("ConvInteger", {x, w}, {attribute::of("auto_pad", "SAME")}), "auto_pad"));
}

TEST_CASE("qlinearconv: bias, per-channel weight scales and saturation, worked by hand") {
    const tensor x = ember::test::make<u8>({1, 1, 2, 2}, {10, 20, 30, 40});  // x - x_zp = 0, 10, 20, 30
    const tensor w = ember::test::make<i8>({2, 1, 1, 1}, {2, -1});
    const tensor b = ember::test::make<std::int32_t>({2}, {4, 0});
    // channel 0: ((x - 10) * 2 + 4) * 0.5 * 0.25 = 0.5, 3, 5.5, 8 -> 0, 3, 6, 8 (+100)
    // channel 1: (x - 10) * -1 * 0.5 * 1 = 0, -5, -10, -15 (+100)
    const tensor y = one("QLinearConv", {x, scalar_f32(0.5f), scalar<u8>(10), w, f32({2}, {0.25f, 1.0f}), ember::test::make<i8>({2}, {0, 0}),
                                         scalar_f32(1.0f), scalar<u8>(100), b},
                         {}, 10);
    CHECK(y.dims() == shape{1, 2, 2, 2});
    CHECK(ints_of<u8>(y) == std::vector<int>{100, 103, 106, 108, 100, 95, 90, 85});
    // a tiny y_scale saturates both ways; int8 output without bias
    const tensor s = one("QLinearConv", {x, scalar_f32(0.5f), scalar<u8>(10), w, scalar_f32(1.0f), scalar<i8>(0), scalar_f32(0.01f), scalar<i8>(0)});
    CHECK(ints_of<i8>(s) == std::vector<int>{0, 127, 127, 127, 0, -128, -128, -128});
    // a w_zero_point per output channel
    const tensor z = one("QLinearConv", {x, scalar_f32(1.0f), scalar<u8>(10), w, scalar_f32(1.0f), ember::test::make<i8>({2}, {1, -1}),
                                         scalar_f32(1.0f), scalar<u8>(0)});
    CHECK(ints_of<u8>(z) == std::vector<int>{0, 10, 20, 30, 0, 0, 0, 0});
}

TEST_CASE("qlinearconv: padding, strides and bad parameters") {
    const tensor x = ember::test::make<u8>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
    const tensor w = ember::test::make<u8>({1, 1, 2, 2}, {1, 1, 1, 1});
    const std::vector<tensor> in{x, scalar_f32(1), scalar<u8>(1), w, scalar_f32(1), scalar<u8>(0), scalar_f32(1), scalar<u8>(0)};
    const tensor p = one("QLinearConv", in, {attribute::of("pads", ints{1, 1, 1, 1}), attribute::of("strides", ints{2, 2})});
    CHECK(p.dims() == shape{1, 1, 2, 2});
    CHECK(ints_of<u8>(p) == std::vector<int>{1, 5, 11, 28});
    std::vector<tensor> bad = in;
    bad.push_back(ember::test::make<std::int32_t>({2}, {0, 0}));
    CHECK(mentions(compile_error("QLinearConv", bad), "B must be [M] = [1]"));
    bad = in;
    bad[1] = f32({2}, {1, 1});
    CHECK(mentions(compile_error("QLinearConv", bad), "x_scale must be a scalar"));
    bad = in;
    bad[4] = f32({3}, {1, 1, 1});
    CHECK(mentions(compile_error("QLinearConv", bad), "w_scale must be a scalar or [M]"));
    bad = in;
    bad[7] = scalar<std::int32_t>(0);
    CHECK(mentions(compile_error("QLinearConv", bad), "input 7 has dtype int32"));
    bad = in;
    bad[6] = scalar<double>(1);
    CHECK(mentions(compile_error("QLinearConv", bad), "float64"));
}

TEST_CASE("quantized matmul and conv give the same bytes with a thread pool") {
    ember::thread_pool pool(4);
    const ember::executor ex = pool.as_executor();
    auto same = [&](const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs) {
        op_run serial = run_op(op, inputs, attrs, 1, 13, ember::test::feed::inputs);
        op_run pooled = run_op(op, inputs, attrs, 1, 13, ember::test::feed::inputs, &ex);
        REQUIRE_MESSAGE(serial.compiled, serial.error.message);
        REQUIRE(serial.run_status == status::ok);
        REQUIRE(pooled.run_status == status::ok);
        CHECK(std::memcmp(serial.outputs[0].bytes(), pooled.outputs[0].bytes(), serial.outputs[0].size_bytes()) == 0);
    };
    const tensor x = ember::test::make<u8>({2, 3, 9, 7}, random_ints<u8>(2 * 3 * 9 * 7, 7));
    const tensor w = ember::test::make<i8>({4, 3, 3, 3}, random_ints<i8>(4 * 3 * 3 * 3, 8));
    same("QLinearConv",
         {x, scalar_f32(0.02f), scalar<u8>(120), w, f32({4}, {0.01f, 0.02f, 0.03f, 0.04f}), ember::test::make<i8>({4}, {0, 0, 0, 0}),
          scalar_f32(0.5f), scalar<u8>(128), ember::test::make<std::int32_t>({4}, {100, -100, 5, 0})},
         {attribute::of("pads", ints{1, 1, 1, 1})});
    same("ConvInteger", {x, w, scalar<u8>(3)}, {attribute::of("strides", ints{2, 1})});
    const tensor a = ember::test::make<u8>({3, 5, 6}, random_ints<u8>(3 * 5 * 6, 9));
    const tensor b = ember::test::make<u8>({6, 4}, random_ints<u8>(6 * 4, 10));
    same("MatMulInteger", {a, b, scalar<u8>(7), ember::test::make<u8>({4}, {1, 2, 3, 4})}, {});
    same("QLinearMatMul", {a, scalar_f32(0.1f), scalar<u8>(7), b, scalar_f32(0.05f), scalar<u8>(9), scalar_f32(3.0f), scalar<u8>(100)}, {});
}

TEST_CASE("dequantizelinear: the vectorised kernel of every table gives the reference's floats (uint8 and int8, every byte)") {
    std::vector<std::uint8_t> bytes;
    for (int round = 0; round < 3; ++round)
        for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<std::uint8_t>((b * 73 + round) & 255));
    bytes.resize(bytes.size() - 5);  // a partial last vector on every table
    const auto n = static_cast<std::int64_t>(bytes.size());
    for (const bool is_signed : {false, true}) {
        std::vector<i8> signed_bytes(bytes.begin(), bytes.end());
        const tensor x = is_signed ? ember::test::make<i8>({n}, signed_bytes) : ember::test::make<u8>({n}, bytes);
        const tensor zp = is_signed ? scalar<i8>(-7) : scalar<u8>(131);
        const std::vector<tensor> in = {x, scalar_f32(0.0371f), zp};
        ember::test::node_setup setup;
        setup.opset = 13;
        setup.constant = {false, true, true};
        setup.options.isa = "reference";
        const op_run ref = ember::test::run_node_with("DequantizeLinear", in, {}, setup);
        REQUIRE(ref.compiled);
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
            CAPTURE(t->name);
            CAPTURE(is_signed);
            setup.options.isa = std::string(t->name);
            const op_run fast = ember::test::run_node_with("DequantizeLinear", in, {}, setup);
            REQUIRE(fast.compiled);
            CHECK(std::memcmp(fast.outputs[0].bytes(), ref.outputs[0].bytes(), static_cast<std::size_t>(n) * sizeof(float)) == 0);
        }
    }
}

TEST_CASE("quantizelinear: the vectorised kernel of every table gives the reference's bytes (ties, NaN, inf, saturation)") {
    std::vector<float> x;
    const float scale = 0.25f;
    for (int k = -700; k <= 700; ++k) x.push_back(static_cast<float>(k) * 0.125f);  // every other one a tie (k/2 + .5 steps)
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> d(-80.0f, 80.0f);
    for (int i = 0; i < 3001; ++i) x.push_back(d(rng));
    for (float v : {std::nanf(""), std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 3e9f, -3e9f, 1e30f, -0.0f})
        x.push_back(v);
    const tensor xt = f32({static_cast<std::int64_t>(x.size())}, x);
    for (const bool is_signed : {false, true}) {
        const tensor zp = is_signed ? scalar<i8>(-7) : scalar<u8>(131);
        const std::vector<tensor> in = {xt, scalar_f32(scale), zp};
        ember::test::node_setup setup;
        setup.opset = 13;
        setup.constant = {false, true, true};
        setup.options.isa = "reference";
        const op_run ref = ember::test::run_node_with("QuantizeLinear", in, {}, setup);
        REQUIRE(ref.compiled);
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
            CAPTURE(t->name);
            CAPTURE(is_signed);
            setup.options.isa = std::string(t->name);
            const op_run fast = ember::test::run_node_with("QuantizeLinear", in, {}, setup);
            REQUIRE(fast.compiled);
            CHECK(std::memcmp(fast.outputs[0].bytes(), ref.outputs[0].bytes(), x.size()) == 0);
        }
    }
}
