// SPDX-License-Identifier: Apache-2.0
// The spatial ops beyond Conv: ConvTranspose, Resize, Upsample, MaxPool on integers, MaxUnpool,
// LpPool, RoiAlign, GridSample, and the signal ops (windows, MelWeightMatrix, DFT, STFT).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <ember/ops/conv_transpose.hpp>
#include <ember/ops/grid_sample.hpp>
#include <ember/ops/lp_pool.hpp>
#include <ember/ops/max_unpool.hpp>
#include <ember/ops/resize.hpp>
#include <ember/ops/roi_align.hpp>
#include <ember/ops/signal.hpp>

#include "support/check.hpp"

using ember::attribute;
using ember::shape;
using ember::status;
using ember::tensor;
using ember::test::check_close;
using ember::test::make;
using ember::test::make_f32;
using ember::test::values_f32;
using ints = std::vector<std::int64_t>;
using floats = std::vector<float>;

namespace {

/// A one-node graph whose inputs i with runtime[i] are graph inputs and the rest constants (empty
/// tensors: absent optional inputs), at `opset` (0: ember's default), compiled and run once.
using mixed_run = ember::test::node_run;

ember::test::node_setup mixed_setup(std::size_t input_count, const std::vector<bool>& runtime, std::int64_t opset, std::size_t output_count) {
    ember::test::node_setup setup;
    setup.opset = opset;
    setup.output_count = output_count;
    for (std::size_t i = 0; i < input_count; ++i) setup.constant.push_back(!(i < runtime.size() && runtime[i]));
    return setup;
}

/// The first `runtime` inputs runtime, the rest constant.
std::vector<bool> first(std::size_t runtime, std::size_t input_count) {
    std::vector<bool> mask(input_count, false);
    for (std::size_t i = 0; i < runtime && i < mask.size(); ++i) mask[i] = true;
    return mask;
}

mixed_run run_mixed(const std::string& op, const std::vector<tensor>& inputs, const std::vector<bool>& runtime, std::vector<attribute> attrs,
                    std::int64_t opset = 0, std::size_t output_count = 1) {
    return ember::test::run_node_with(op, inputs, std::move(attrs), mixed_setup(inputs.size(), runtime, opset, output_count));
}

mixed_run run_mixed(const std::string& op, const std::vector<tensor>& inputs, std::size_t runtime, std::vector<attribute> attrs = {},
                    std::int64_t opset = 0) {
    return run_mixed(op, inputs, first(runtime, inputs.size()), std::move(attrs), opset);
}

/// Runs with the first `runtime` inputs as graph inputs, and again with all of them constants
/// (folded at compile time); both must compile, run and agree bit for bit.
tensor run_both(const std::string& op, const std::vector<tensor>& inputs, std::size_t runtime, std::vector<attribute> attrs = {},
                std::int64_t opset = 0) {
    const ember::test::node_setup setup = mixed_setup(inputs.size(), first(runtime, inputs.size()), opset, 1);
    return std::move(ember::test::run_node_both_ways_with(op, inputs, attrs, setup).outputs[0]);
}

/// Compiling fails, and the message names the op and contains `needle`.
void fails_with(const std::string& op, const std::vector<tensor>& inputs, std::size_t runtime, std::vector<attribute> attrs,
                const std::string& needle, std::int64_t opset = 0) {
    mixed_run r = run_mixed(op, inputs, runtime, std::move(attrs), opset);
    REQUIRE_FALSE(r.compiled);
    CHECK_MESSAGE(r.error.message.find("(" + op + ")") != std::string::npos, r.error.message);
    CHECK_MESSAGE(r.error.message.find(needle) != std::string::npos, r.error.message);
}

tensor i64(const shape& dims, ints v) { return make<std::int64_t>(dims, std::move(v)); }
tensor scalar_i64(std::int64_t v) { return make<std::int64_t>(shape{}, {v}); }
tensor none() { return tensor(); }

template <class T>
std::vector<T> values_as(const tensor& t) {
    const T* p = t.data<T>();
    return std::vector<T>(p, p + t.size());
}

} // namespace

// ---------------------------------------------------------------------------------------------
// ConvTranspose

TEST_CASE("conv_transpose: 1-D scatter by hand: stride, pads, output_padding and bias") {
    const tensor x = make_f32({1, 1, 3}, {1, 2, 3});
    const tensor w = make_f32({1, 1, 2}, {1, 1});
    const tensor plain = run_both("ConvTranspose", {x, w}, 1);
    CHECK(plain.dims() == shape{1, 1, 4});
    check_close(plain, {1, 3, 5, 3}, 0, 0);

    const tensor strided = run_both("ConvTranspose", {x, w}, 1, {attribute::of("strides", ints{2})});
    check_close(strided, {1, 1, 2, 2, 3, 3}, 0, 0);

    const tensor cropped = run_both("ConvTranspose", {x, w}, 1, {attribute::of("strides", ints{2}), attribute::of("pads", ints{1, 1})});
    check_close(cropped, {1, 2, 2, 3}, 0, 0);

    // output_padding adds positions at the end that only the bias reaches
    const tensor b = make_f32({1}, {10});
    const tensor padded = run_both("ConvTranspose", {x, w, b}, 1, {attribute::of("strides", ints{2}), attribute::of("output_padding", ints{1})});
    check_close(padded, {11, 11, 12, 12, 13, 13, 10}, 0, 0);
}

TEST_CASE("conv_transpose: auto_pad and output_shape split the padding as the spec says") {
    const tensor x = make_f32({1, 1, 3}, {1, 2, 3});
    const tensor w = make_f32({1, 1, 3}, {1, 1, 1});
    // full output (stride 2, kernel 3): 2 * 2 + 3 = 7 positions
    check_close(run_both("ConvTranspose", {x, w}, 2, {attribute::of("strides", ints{2})}), {1, 1, 3, 2, 5, 3, 3}, 0, 0);
    // SAME_*: out = in * stride = 6, one position of padding, at the end for UPPER
    check_close(run_both("ConvTranspose", {x, w}, 2, {attribute::of("strides", ints{2}), attribute::of("auto_pad", "SAME_UPPER")}),
                {1, 1, 3, 2, 5, 3}, 0, 0);
    check_close(run_both("ConvTranspose", {x, w}, 2, {attribute::of("strides", ints{2}), attribute::of("auto_pad", "SAME_LOWER")}),
                {1, 3, 2, 5, 3, 3}, 0, 0);
    // output_shape: with NOTSET the odd padding goes to the beginning (the spec's "else" branch)
    check_close(run_both("ConvTranspose", {x, w}, 2, {attribute::of("strides", ints{2}), attribute::of("output_shape", ints{6})}),
                {1, 3, 2, 5, 3, 3}, 0, 0);
    // the full [N, M, spatial...] form of output_shape means the same
    check_close(run_both("ConvTranspose", {x, w}, 2, {attribute::of("strides", ints{2}), attribute::of("output_shape", ints{1, 1, 6})}),
                {1, 3, 2, 5, 3, 3}, 0, 0);
    // an output_shape larger than the full output pads the end with zeros (the bias)
    check_close(run_both("ConvTranspose", {x, w}, 2, {attribute::of("strides", ints{2}), attribute::of("output_shape", ints{8})}),
                {1, 1, 3, 2, 5, 3, 3, 0}, 0, 0);
}

TEST_CASE("conv_transpose: channels, groups and 2-D dilation") {
    // two output channels from one input channel
    check_close(run_both("ConvTranspose", {make_f32({1, 1, 2}, {1, 2}), make_f32({1, 2, 1}, {1, -1})}, 2), {1, 2, -1, -2}, 0, 0);
    // group 2: each input channel feeds its own output channel
    const tensor grouped =
        run_both("ConvTranspose", {make_f32({1, 2, 2}, {1, 2, 3, 4}), make_f32({2, 1, 1}, {2, 10})}, 2, {attribute::of("group", 2)});
    CHECK(grouped.dims() == shape{1, 2, 2});
    check_close(grouped, {2, 4, 30, 40}, 0, 0);
    // dilation 2: each input value lands on the four corners of a 3x3 block
    const tensor dilated = run_both("ConvTranspose", {make_f32({1, 1, 2, 2}, {1, 2, 3, 4}), make_f32({1, 1, 2, 2}, {1, 1, 1, 1})}, 2,
                                    {attribute::of("dilations", ints{2, 2})});
    CHECK(dilated.dims() == shape{1, 1, 4, 4});
    check_close(dilated, {1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4}, 0, 0);
}

TEST_CASE("conv_transpose: is the adjoint of Conv (<Conv(x), y> == <x, ConvTranspose(y)>)") {
    // 2-D, 2 -> 3 channels, stride 2, pads 1, kernel 3; output_padding makes the width match.
    const tensor x = ember::test::random_f32({1, 2, 7, 6}, 1);
    const tensor w = ember::test::random_f32({3, 2, 3, 3}, 2);
    const std::vector<attribute> geometry = {attribute::of("strides", ints{2, 2}), attribute::of("pads", ints{1, 1, 1, 1})};
    auto conv = ember::test::run_node("Conv", {x, w}, geometry);
    REQUIRE_MESSAGE(conv.compiled, conv.error.message);
    REQUIRE(conv.outputs[0].dims() == shape{1, 3, 4, 3});
    const tensor y = ember::test::random_f32({1, 3, 4, 3}, 3);
    std::vector<attribute> transposed = geometry;
    transposed.push_back(attribute::of("output_padding", ints{0, 1}));
    const tensor xt = run_both("ConvTranspose", {y, w}, 2, transposed);
    REQUIRE(xt.dims() == x.dims());
    double lhs = 0, rhs = 0;
    const std::vector<float> cx = values_f32(conv.outputs[0]), vy = values_f32(y), vx = values_f32(x), vxt = values_f32(xt);
    for (std::size_t i = 0; i < vy.size(); ++i) lhs += double(cx[i]) * vy[i];
    for (std::size_t i = 0; i < vx.size(); ++i) rhs += double(vx[i]) * vxt[i];
    CHECK(lhs == doctest::Approx(rhs).epsilon(1e-5));
}

TEST_CASE("conv_transpose: float64") {
    const tensor y = run_both("ConvTranspose", {make<double>({1, 1, 2}, {1.5, 2.0}), make<double>({1, 1, 2}, {2.0, 1.0})}, 2);
    CHECK(y.type() == ember::dtype::float64);
    CHECK(values_as<double>(y) == std::vector<double>{3.0, 5.5, 2.0});
}

TEST_CASE("conv_transpose: bad input is a clear error") {
    const tensor x = make_f32({1, 2, 3}, {1, 2, 3, 4, 5, 6});
    fails_with("ConvTranspose", {x, make_f32({1, 1, 2}, {1, 1})}, 2, {}, "has 2 channels, but W");
    const tensor w = make_f32({2, 1, 2}, {1, 1, 1, 1});
    fails_with("ConvTranspose", {x, w}, 2, {attribute::of("pads", ints{-1, 0})}, "negative");
    fails_with("ConvTranspose", {x, w}, 2, {attribute::of("auto_pad", "SAME")}, "auto_pad is 'SAME'");
    fails_with("ConvTranspose", {x, w, make_f32({2}, {1, 2})}, 3, {}, "B must be [1]");
    fails_with("ConvTranspose", {x, w}, 2, {attribute::of("pads", ints{2, 2})}, "would be 0");
    fails_with("ConvTranspose", {x, w}, 2, {attribute::of("strides", ints{1, 1})}, "strides [1, 1] has 2 values, expected 1");
    fails_with("ConvTranspose", {x, w}, 2, {attribute::of("group", 3)}, "not a multiple of group 3");
    fails_with("ConvTranspose", {x, w}, 2, {attribute::of("pads", ints{1, 0}), attribute::of("auto_pad", "SAME_UPPER")},
               "cannot be used together with auto_pad");
}

// ---------------------------------------------------------------------------------------------
// Resize and Upsample

TEST_CASE("resize: nearest 2x with half_pixel and round_prefer_floor (the defaults)") {
    const tensor x = make_f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const tensor y = run_both("Resize", {x, none(), make_f32({4}, {1, 1, 2, 2})}, 1);
    CHECK(y.dims() == shape{1, 1, 4, 4});
    check_close(y, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 0, 0);
}

TEST_CASE("resize: linear, with half_pixel clamping at the edges and with align_corners") {
    check_close(run_both("Resize", {make_f32({2}, {0, 10}), none(), make_f32({1}, {2})}, 1, {attribute::of("mode", "linear")}),
                {0, 2.5f, 7.5f, 10}, 1e-6f, 0);
    const tensor y = run_both("Resize", {make_f32({1, 1, 1, 2}, {0, 10}), none(), none(), i64({4}, {1, 1, 1, 3})}, 1,
                              {attribute::of("mode", "linear"), attribute::of("coordinate_transformation_mode", "align_corners")});
    CHECK(y.dims() == shape{1, 1, 1, 3});
    check_close(y, {0, 5, 10}, 1e-6f, 0);
    // bilinear is separable: the centre of a 2x2 block is its mean
    check_close(run_both("Resize", {make_f32({2, 2}, {1, 2, 3, 5}), none(), none(), i64({2}, {3, 3})}, 1,
                         {attribute::of("mode", "linear"), attribute::of("coordinate_transformation_mode", "align_corners")}),
                {1, 1.5f, 2, 2, 2.75f, 3.5f, 3, 4, 5}, 1e-6f, 0);
}

TEST_CASE("resize: cubic reproduces linear data, and cubic_coeff_a sets the kernel") {
    std::vector<float> ramp(8);
    for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = float(i);
    const std::vector<attribute> cubic = {attribute::of("mode", "cubic"), attribute::of("coordinate_transformation_mode", "asymmetric")};
    const std::vector<float> y = values_f32(run_both("Resize", {make_f32({8}, ramp), none(), make_f32({1}, {2})}, 1, cubic));
    REQUIRE(y.size() == 16);
    for (std::size_t o = 2; o <= 11; ++o) CHECK(y[o] == doctest::Approx(double(o) / 2).epsilon(1e-6));
    // an impulse at 3 seen from 3.5: the second of the four taps, ((A + 2) t - (A + 3)) t^2 + 1 at t = 0.5
    const tensor impulse = make_f32({8}, {0, 0, 0, 1, 0, 0, 0, 0});
    CHECK(values_f32(run_both("Resize", {impulse, none(), make_f32({1}, {2})}, 1, cubic))[7] == doctest::Approx(0.59375));
    std::vector<attribute> a05 = cubic;
    a05.push_back(attribute::of("cubic_coeff_a", -0.5f));
    CHECK(values_f32(run_both("Resize", {impulse, none(), make_f32({1}, {2})}, 1, a05))[7] == doctest::Approx(0.5625));
    // exclude_outside drops taps outside X and renormalises: at 0.5 from the start the taps are
    // -1 (dropped), 0, 1, 2 with weights c1, c2, c3 over their sum
    std::vector<attribute> excl = cubic;
    excl.push_back(attribute::of("exclude_outside", 1));
    const double c1 = 0.59375, c2 = 0.59375, c3 = -0.09375;
    CHECK(values_f32(run_both("Resize", {make_f32({8}, ramp), none(), make_f32({1}, {2})}, 1, excl))[1] ==
          doctest::Approx((c2 * 1 + c3 * 2) / (c1 + c2 + c3)));
}

TEST_CASE("resize: tf_crop_and_resize takes the roi and extrapolates outside it") {
    const tensor x = make_f32({4}, {0, 10, 20, 30});
    // x_original = 0.5 * 3 + i * (1.5 - 0.5) * 3 / 2 = 1.5, 3, 4.5 (outside)
    const tensor y = run_both("Resize", {x, make_f32({2}, {0.5f, 1.5f}), none(), i64({1}, {3})}, 1,
                              {attribute::of("mode", "linear"), attribute::of("coordinate_transformation_mode", "tf_crop_and_resize"),
                               attribute::of("extrapolation_value", 99.0f)});
    check_close(y, {15, 30, 99}, 1e-5f, 0);
}

TEST_CASE("resize: the four nearest modes") {
    const tensor x = make_f32({4}, {0, 1, 2, 3});
    auto nearest = [&](const char* mode) {
        return values_f32(run_both("Resize", {x, none(), none(), i64({1}, {8})}, 1,
                                   {attribute::of("coordinate_transformation_mode", "asymmetric"), attribute::of("nearest_mode", mode)}));
    };
    // x_original = 0, 0.5, 1, ..., 3.5
    CHECK(nearest("floor") == floats{0, 0, 1, 1, 2, 2, 3, 3});
    CHECK(nearest("ceil") == floats{0, 1, 1, 2, 2, 3, 3, 3});
    CHECK(nearest("round_prefer_floor") == floats{0, 0, 1, 1, 2, 2, 3, 3});
    CHECK(nearest("round_prefer_ceil") == floats{0, 1, 1, 2, 2, 3, 3, 3});
}

TEST_CASE("resize: opset 10 takes (X, scales) with asymmetric coordinates and truncation") {
    const tensor x = make_f32({2}, {0, 1});
    // x_original = 0, 0.67, 1.33: truncated at opset 10, rounded at 13
    CHECK(values_f32(run_both("Resize", {x, make_f32({1}, {1.5f})}, 1, {}, 10)) == floats{0, 0, 1});
    CHECK(values_f32(run_both("Resize", {x, none(), make_f32({1}, {1.5f})}, 1, {attribute::of("coordinate_transformation_mode", "asymmetric")})) ==
          floats{0, 1, 1});
    fails_with("Resize", {x, make_f32({1}, {2})}, 1, {attribute::of("mode", "cubic")}, "mode is 'cubic', expected nearest, linear", 10);
    fails_with("Resize", {x, none(), make_f32({1}, {2})}, 1, {attribute::of("coordinate_transformation_mode", "tf_half_pixel_for_nn")},
               "coordinate_transformation_mode is 'tf_half_pixel_for_nn'", 13);
    // opset 11 still has tf_half_pixel_for_nn: (i + 0.5) / 2 = 0.25, 0.75, 1.25, 1.75
    CHECK(values_f32(run_both("Resize", {x, none(), make_f32({1}, {2})}, 1, {attribute::of("coordinate_transformation_mode", "tf_half_pixel_for_nn")},
                              11)) == floats{0, 1, 1, 1});
}

TEST_CASE("resize: dtypes: nearest gathers any dtype, linear works on float16") {
    const tensor y = run_both("Resize", {make<std::uint8_t>({2}, {7, 200}), none(), make_f32({1}, {2})}, 1);
    CHECK(y.type() == ember::dtype::uint8);
    CHECK(values_as<std::uint8_t>(y) == std::vector<std::uint8_t>{7, 7, 200, 200});
    const tensor h = run_both("Resize", {make<ember::float16>({2}, {ember::float16(0.0f), ember::float16(8.0f)}), none(), make_f32({1}, {2})}, 1,
                              {attribute::of("mode", "linear")});
    REQUIRE(h.type() == ember::dtype::float16);
    std::vector<float> hv;
    for (ember::float16 v : values_as<ember::float16>(h)) hv.push_back(static_cast<float>(v));
    CHECK(hv == floats{0, 2, 6, 8});
    fails_with("Resize", {make<std::int32_t>({2}, {1, 2}), none(), make_f32({1}, {2})}, 1, {attribute::of("mode", "linear")},
               "linear interpolation supports float32");
}

TEST_CASE("resize: bad input is a clear error") {
    const tensor x = make_f32({1, 1, 2, 2}, {1, 2, 3, 4});
    fails_with("Resize", {x, none(), make_f32({4}, {1, 1, 2, 2}), i64({4}, {1, 1, 4, 4})}, 1, {}, "scales and sizes are both given");
    fails_with("Resize", {x, none(), make_f32({0}, {})}, 1, {}, "neither scales nor sizes");
    fails_with("Resize", {x, none(), make_f32({2}, {2, 2})}, 1, {}, "scales has 2 values, expected 4");
    fails_with("Resize", {x, none(), make_f32({4}, {1, 1, 0, 2})}, 1, {}, "scales[2] is");
    fails_with("Resize", {x, none(), make_f32({4}, {1, 1, 2, 2})}, 3, {}, "input 2 (scales) must be known at compile time");
    fails_with("Resize", {x, none(), none(), i64({4}, {1, 1, 4, 4})}, 4, {}, "input 3 (sizes) must be known at compile time");
    fails_with("Resize", {x, none(), make_f32({4}, {1, 1, 2, 2})}, 1, {attribute::of("mode", "bicubic")}, "mode is 'bicubic'");
    fails_with("Resize", {x, none(), make_f32({4}, {1, 1, 2, 2})}, 1, {attribute::of("nearest_mode", "round")}, "nearest_mode is 'round'");
    fails_with("Resize", {x, none(), none(), i64({4}, {1, 1, 4, 4})}, 1, {attribute::of("coordinate_transformation_mode", "tf_crop_and_resize")},
               "needs the roi input");
    fails_with("Resize", {x, none(), make_f32({4}, {1, 1, 2, 2})}, 1, {attribute::of("antialias", 1)}, "attribute 'antialias' is not supported");
}

TEST_CASE("upsample: opset 7 scales attribute, opset 9 scales input") {
    const tensor x = make_f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const floats repeated = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
    check_close(run_both("Upsample", {x}, 1, {attribute::of("scales", floats{1, 1, 2, 2})}, 7), repeated, 0, 0);
    check_close(run_both("Upsample", {x, make_f32({4}, {1, 1, 2, 2})}, 1, {}, 9), repeated, 0, 0);
    // linear, asymmetric: 0, 0.5, 1, 1.5 (clamped to 1)
    check_close(run_both("Upsample", {make_f32({2}, {0, 10}), make_f32({1}, {2})}, 1, {attribute::of("mode", "linear")}, 9), {0, 5, 10, 10}, 0, 0);
    fails_with("Upsample", {x, make_f32({4}, {1, 1, 2, 2})}, 1, {attribute::of("scales", floats{1, 1, 2, 2})}, "is an input since", 9);
    fails_with("Upsample", {x}, 1, {}, "required attribute 'scales' is missing", 7);
    fails_with("Upsample", {x, make_f32({4}, {1, 1, 2, 2})}, 2, {}, "input 1 (scales) must be known at compile time", 9);
}

// ---------------------------------------------------------------------------------------------
// MaxPool on integers, MaxUnpool, LpPool

TEST_CASE("max_pool: int8 and uint8, a window in the padding giving the lowest value") {
    auto r = ember::test::run_node_both_ways("MaxPool", {make<std::int8_t>({1, 1, 3}, {-128, -5, -100})}, {attribute::of("kernel_shape", ints{2})});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(values_as<std::int8_t>(r.outputs[0]) == std::vector<std::int8_t>{-5, -5});
    auto u = ember::test::run_node_both_ways("MaxPool", {make<std::uint8_t>({1, 1, 2}, {7, 9})},
                                             {attribute::of("kernel_shape", ints{2}), attribute::of("pads", ints{2, 0})}, 2);
    REQUIRE_MESSAGE(u.compiled, u.error.message);
    CHECK(u.outputs[0].type() == ember::dtype::uint8);
    CHECK(values_as<std::uint8_t>(u.outputs[0]) == std::vector<std::uint8_t>{0, 7, 9});
    CHECK(values_as<std::int64_t>(u.outputs[1]) == ints{-1, 0, 1});
}

TEST_CASE("max_pool: float16 and float64") {
    using ember::float16;
    auto h = ember::test::run_node_both_ways("MaxPool", {make<float16>({1, 1, 3}, {float16(1.5f), float16(-2.0f), float16(4.0f)})},
                                             {attribute::of("kernel_shape", ints{2}), attribute::of("pads", ints{2, 0})});
    REQUIRE_MESSAGE(h.compiled, h.error.message);
    REQUIRE(h.outputs[0].type() == ember::dtype::float16);
    std::vector<float> hv;
    for (float16 v : values_as<float16>(h.outputs[0])) hv.push_back(static_cast<float>(v));
    CHECK(hv == floats{-INFINITY, 1.5f, 1.5f, 4.0f});
    auto d = ember::test::run_node_both_ways("MaxPool", {make<double>({1, 1, 3}, {0.25, 0.5, -1.0})}, {attribute::of("kernel_shape", ints{2})});
    REQUIRE_MESSAGE(d.compiled, d.error.message);
    CHECK(values_as<double>(d.outputs[0]) == std::vector<double>{0.5, 0.5});
}

TEST_CASE("max_unpool: puts each value at its index, output_shape pads at the end") {
    const tensor x = make_f32({1, 1, 2, 2}, {5, 6, 7, 8});
    const tensor idx = i64({1, 1, 2, 2}, {5, 7, 13, 15});
    const std::vector<attribute> a = {attribute::of("kernel_shape", ints{2, 2}), attribute::of("strides", ints{2, 2})};
    const tensor y = run_both("MaxUnpool", {x, idx}, 2, a);
    CHECK(y.dims() == shape{1, 1, 4, 4});
    check_close(y, {0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8}, 0, 0);
    const tensor big = run_both("MaxUnpool", {x, idx, i64({4}, {1, 1, 5, 5})}, 2, a);
    CHECK(big.dims() == shape{1, 1, 5, 5});
    check_close(big, {0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0}, 0, 0);
}

TEST_CASE("max_unpool: an index outside the output fails the run; bad shapes fail compiling") {
    const std::vector<attribute> a = {attribute::of("kernel_shape", ints{2, 2}), attribute::of("strides", ints{2, 2})};
    mixed_run r = run_mixed("MaxUnpool", {make_f32({1, 1, 2, 2}, {5, 6, 7, 8}), i64({1, 1, 2, 2}, {5, 7, 13, 16})}, 2, a);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.run_status == status::invalid_argument);
    fails_with("MaxUnpool", {make_f32({1, 1, 2, 2}, {5, 6, 7, 8}), i64({1, 1, 2, 2}, {5, 7, 13, 15}), i64({4}, {1, 1, 3, 3})}, 2, a,
               "smaller than the unpooled shape");
    fails_with("MaxUnpool", {make_f32({1, 1, 2, 2}, {5, 6, 7, 8}), i64({1, 1, 4}, {5, 7, 13, 15})}, 2, a, "must have X's shape");
    fails_with("MaxUnpool", {make_f32({1, 1, 2, 2}, {5, 6, 7, 8}), i64({1, 1, 2, 2}, {5, 7, 13, 15})}, 2, {}, "required attribute 'kernel_shape'");
}

TEST_CASE("lp_pool: p-norms of the windows") {
    const tensor x = make_f32({1, 1, 2, 2}, {1, -2, 3, -4});
    const std::vector<attribute> k = {attribute::of("kernel_shape", ints{2, 2})};
    check_close(ember::test::run_node_both_ways("LpPool", {x}, k).outputs[0], {std::sqrt(30.0f)}, 1e-6f, 0);
    std::vector<attribute> p1 = k, p3 = k;
    p1.push_back(attribute::of("p", 1));
    p3.push_back(attribute::of("p", 3));
    check_close(ember::test::run_node_both_ways("LpPool", {x}, p1).outputs[0], {10}, 1e-6f, 0);
    check_close(ember::test::run_node_both_ways("LpPool", {x}, p3).outputs[0], {std::cbrt(100.0f)}, 1e-5f, 0);
    // padding counts as 0: a 2-window with one padded position over 1-D [3, 4]
    auto padded = ember::test::run_node_both_ways("LpPool", {make_f32({1, 1, 2}, {3, 4})},
                                                  {attribute::of("kernel_shape", ints{2}), attribute::of("pads", ints{1, 0})});
    check_close(padded.outputs[0], {3, 5}, 1e-6f, 0);
    auto r = ember::test::run_node("LpPool", {x}, {attribute::of("kernel_shape", ints{2, 2}), attribute::of("p", 0)});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.message.find("p is") != std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// RoiAlign and GridSample

namespace {
// X[0, 0, h, w] = w: bilinear samples of it are exact, so a bin's average is its samples' mean x.
tensor ramp4x4() {
    std::vector<float> v(16);
    for (std::size_t i = 0; i < 16; ++i) v[i] = float(i % 4);
    return make_f32({1, 1, 4, 4}, v);
}
} // namespace

TEST_CASE("roi_align: sample positions for half_pixel and output_half_pixel, avg and max") {
    const tensor rois = make_f32({1, 4}, {0, 0, 3, 3});
    const tensor batch = i64({1}, {0});
    const std::vector<attribute> two = {attribute::of("sampling_ratio", 2)};
    // output_half_pixel: samples at 0.75 and 2.25; half_pixel shifts them by -0.5
    std::vector<attribute> ohp = two;
    ohp.push_back(attribute::of("coordinate_transformation_mode", "output_half_pixel"));
    check_close(run_both("RoiAlign", {ramp4x4(), rois, batch}, 3, ohp), {1.5f}, 1e-6f, 0);
    check_close(run_both("RoiAlign", {ramp4x4(), rois, batch}, 3, two), {1.0f}, 1e-6f, 0);
    // opset 10 has output_half_pixel only
    check_close(run_both("RoiAlign", {ramp4x4(), rois, batch}, 3, two, 10), {1.5f}, 1e-6f, 0);
    // spatial_scale scales the roi
    std::vector<attribute> half = ohp;
    half.push_back(attribute::of("spatial_scale", 0.5f));
    check_close(run_both("RoiAlign", {ramp4x4(), make_f32({1, 4}, {0, 0, 6, 6}), batch}, 3, half), {1.5f}, 1e-6f, 0);
    // max: the largest weighted corner of any sample (ONNX Runtime's definition), here 0.75^2 * 2
    std::vector<attribute> mx = ohp;
    mx.push_back(attribute::of("mode", "max"));
    check_close(run_both("RoiAlign", {ramp4x4(), rois, batch}, 3, mx), {1.125f}, 1e-6f, 0);
    // a 1x2 output: bins [0, 1.5) and [1.5, 3) along x
    std::vector<attribute> wide = ohp;
    wide.push_back(attribute::of("output_width", 2));
    const tensor y = run_both("RoiAlign", {ramp4x4(), rois, batch}, 3, wide);
    CHECK(y.dims() == shape{1, 1, 1, 2});
    check_close(y, {0.75f, 2.25f}, 1e-6f, 0);
}

TEST_CASE("roi_align: a batch index out of range fails the run; bad input fails compiling") {
    mixed_run r = run_mixed("RoiAlign", {ramp4x4(), make_f32({1, 4}, {0, 0, 3, 3}), i64({1}, {1})}, 3);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.run_status == status::invalid_argument);
    fails_with("RoiAlign", {ramp4x4(), make_f32({1, 3}, {0, 0, 3}), i64({1}, {0})}, 3, {}, "rois must be [num_rois, 4]");
    fails_with("RoiAlign", {ramp4x4(), make_f32({1, 4}, {0, 0, 3, 3}), i64({2}, {0, 0})}, 3, {}, "batch_indices must be [1]");
    fails_with("RoiAlign", {ramp4x4(), make_f32({1, 4}, {0, 0, 3, 3}), i64({1}, {0})}, 3, {attribute::of("mode", "sum")}, "mode is 'sum'");
    fails_with("RoiAlign", {ramp4x4(), make_f32({1, 4}, {0, 0, 3, 3}), i64({1}, {0})}, 3,
               {attribute::of("coordinate_transformation_mode", "half_pixel")}, "needs opset 16", 10);
}

TEST_CASE("grid_sample: interpolation and padding modes at hand-picked locations") {
    // X is 2 rows by 3 columns; with align_corners, x = -1, 0, 1 are columns 0, 1, 2 and
    // y = -1, 1 rows 0, 1. Locations: a corner, the other corner, the centre, beyond the right edge.
    const tensor x = make_f32({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
    const tensor grid = make_f32({1, 1, 4, 2}, {-1, -1, 1, 1, 0, 0, 2, 0});
    auto sample = [&](const char* mode, const char* padding) {
        return run_both("GridSample", {x, grid}, 2,
                        {attribute::of("align_corners", 1), attribute::of("mode", mode), attribute::of("padding_mode", padding)});
    };
    // centre (1, 0.5): between 2 and 5; beyond: x = 3
    check_close(sample("bilinear", "zeros"), {1, 6, 3.5f, 0}, 1e-6f, 0);
    check_close(sample("bilinear", "border"), {1, 6, 3.5f, 4.5f}, 1e-6f, 0);
    check_close(sample("bilinear", "reflection"), {1, 6, 3.5f, 3.5f}, 1e-6f, 0);
    // nearest rounds 0.5 to even (row 0)
    check_close(sample("nearest", "zeros"), {1, 6, 2, 0}, 0, 0);
    // bicubic passes through the pixels at integer locations
    const std::vector<float> cubic = values_f32(sample("bicubic", "border"));
    CHECK(cubic[0] == doctest::Approx(1));
    CHECK(cubic[1] == doctest::Approx(6));
    // without align_corners, -1 and 1 are the outer pixel edges: x = -1 is column -0.5
    const tensor edge = run_both("GridSample", {x, make_f32({1, 1, 1, 2}, {-1, -1})}, 2, {attribute::of("padding_mode", "border")});
    check_close(edge, {1}, 1e-6f, 0);
    const tensor zero_edge = run_both("GridSample", {x, make_f32({1, 1, 1, 2}, {-1, -1})}, 2);
    check_close(zero_edge, {0.25f}, 1e-6f, 0);  // a quarter of pixel (0, 0), the rest padding
}

TEST_CASE("grid_sample: bad input is a clear error") {
    const tensor x = make_f32({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
    fails_with("GridSample", {x, make_f32({1, 1, 1, 3}, {0, 0, 0})}, 2, {}, "grid must be [N, H_out, W_out, 2]");
    fails_with("GridSample", {x, make_f32({1, 1, 1, 2}, {0, 0})}, 2, {attribute::of("mode", "area")}, "mode is 'area'");
    fails_with("GridSample", {x, make_f32({1, 1, 1, 2}, {0, 0})}, 2, {attribute::of("padding_mode", "wrap")}, "padding_mode is 'wrap'");
    fails_with("GridSample", {make_f32({1, 1, 3}, {1, 2, 3}), make_f32({1, 1, 1, 2}, {0, 0})}, 2, {}, "only 4-D");
}

// ---------------------------------------------------------------------------------------------
// Signal ops

namespace {
tensor window(const char* op, std::int64_t n, std::vector<attribute> attrs = {}) {
    auto r = ember::test::run_node(op, {scalar_i64(n)}, std::move(attrs), 1, ember::test::feed::constants);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    return std::move(r.outputs[0]);
}
} // namespace

TEST_CASE("windows: Hann, Hamming and Blackman, periodic and symmetric") {
    check_close(window("HannWindow", 4), {0, 0.5f, 1, 0.5f}, 1e-7f, 0);
    check_close(window("HannWindow", 3, {attribute::of("periodic", 0)}), {0, 1, 0}, 1e-7f, 0);
    check_close(window("HammingWindow", 4), {4.0f / 46, 25.0f / 46, 1, 25.0f / 46}, 1e-7f, 1e-6f);
    check_close(window("BlackmanWindow", 4), {0, 0.34f, 1, 0.34f}, 1e-7f, 1e-6f);
    const tensor d = window("HannWindow", 2, {attribute::of("output_datatype", 11)});
    CHECK(d.type() == ember::dtype::float64);
    CHECK(values_as<double>(d)[1] == doctest::Approx(1.0));
    fails_with("HannWindow", {scalar_i64(4)}, 1, {}, "input 0 (size) must be known at compile time");
    fails_with("HannWindow", {scalar_i64(4)}, 0, {attribute::of("periodic", 2)}, "periodic is 2");
    fails_with("HammingWindow", {scalar_i64(-1)}, 0, {}, "size is -1");
}

TEST_CASE("mel_weight_matrix: one triangle by hand, and an upper edge beyond Nyquist") {
    // 1 mel bin over 0..4 Hz at 8 Hz with an 8-point DFT: edges at DFT bins 0, 1 and 2
    auto r = ember::test::run_node("MelWeightMatrix",
                                   {scalar_i64(1), scalar_i64(8), scalar_i64(8), make_f32(shape{}, {0}), make_f32(shape{}, {4})}, {}, 1,
                                   ember::test::feed::constants);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == shape{5, 1});
    check_close(r.outputs[0], {0, 1, 0, 0, 0}, 0, 0);
    fails_with("MelWeightMatrix", {scalar_i64(1), scalar_i64(8), scalar_i64(8), make_f32(shape{}, {0}), make_f32(shape{}, {100})}, 0, {},
               "above the Nyquist frequency");
}

TEST_CASE("dft: forward, onesided, inverse, and dft_length") {
    const tensor x = make_f32({1, 4, 1}, {1, 2, 3, 4});
    const tensor y = run_both("DFT", {x}, 1);
    CHECK(y.dims() == shape{1, 4, 2});
    check_close(y, {10, 0, -2, 2, -2, 0, -2, -2}, 1e-5f, 0);
    check_close(run_both("DFT", {x}, 1, {attribute::of("onesided", 1)}), {10, 0, -2, 2, -2, 0}, 1e-5f, 0);
    check_close(run_both("DFT", {y}, 1, {attribute::of("inverse", 1)}), {1, 0, 2, 0, 3, 0, 4, 0}, 1e-5f, 0);
    // truncated to 2 samples, zero-padded to 8
    check_close(run_both("DFT", {x, scalar_i64(2)}, 1), {3, 0, -1, 0}, 1e-5f, 0);
    const std::vector<float> padded = values_f32(run_both("DFT", {x, scalar_i64(8)}, 1));
    REQUIRE(padded.size() == 16);
    CHECK(padded[0] == doctest::Approx(10));
    CHECK(padded[8] == doctest::Approx(-2));  // bin 4 of 8 is bin 2 of 4
    // along axis 2 of [1, 1, 2, 1]
    check_close(run_both("DFT", {make_f32({1, 1, 2, 1}, {1, 5})}, 1, {attribute::of("axis", 2)}), {6, 0, -4, 0}, 1e-5f, 0);
    fails_with("DFT", {make_f32({1, 4, 3}, std::vector<float>(12, 0.0f))}, 1, {}, "1 or 2");
    fails_with("DFT", {x}, 1, {attribute::of("axis", 2)}, "axis 2 is out of range");
    fails_with("DFT", {x, scalar_i64(4)}, 2, {}, "input 1 (dft_length) must be known at compile time");
}

TEST_CASE("stft: frames of a signal, with and without a window") {
    const tensor signal = make_f32({1, 8, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
    const tensor y = run_both("STFT", {signal, scalar_i64(4), none(), scalar_i64(4)}, 1);
    CHECK(y.dims() == shape{1, 2, 3, 2});
    // frame [0, 1, 2, 3]: 6, -2 + 2i, -2; frame [4, 5, 6, 7]: 22, -2 + 2i, -2
    check_close(y, {6, 0, -2, 2, -2, 0, 22, 0, -2, 2, -2, 0}, 1e-5f, 0);
    // a window keeping only each frame's first sample: every bin is that sample
    const tensor w = run_both("STFT", {signal, scalar_i64(4), make_f32({4}, {1, 0, 0, 0})}, 1);
    check_close(w, {0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 4, 0}, 1e-5f, 0);
    // the signal and the window may be runtime inputs, frame_step not
    mixed_run w2 = run_mixed("STFT", {signal, scalar_i64(4), make_f32({4}, {1, 0, 0, 0})}, std::vector<bool>{true, false, true}, {});
    REQUIRE_MESSAGE(w2.compiled, w2.error.message);
    REQUIRE(w2.run_status == status::ok);
    check_close(w2.outputs[0], {0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 4, 0}, 1e-5f, 0);
    fails_with("STFT", {signal, scalar_i64(4), make_f32({4}, {1, 1, 1, 1}), scalar_i64(2)}, 1, {}, "frame_length is 2 but the window has 4");
    fails_with("STFT", {signal, scalar_i64(4)}, 1, {}, "neither window nor frame_length");
    fails_with("STFT", {signal, scalar_i64(0), none(), scalar_i64(4)}, 1, {}, "frame_step is 0");
}
