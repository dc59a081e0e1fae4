// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <ember/ops/batch_normalization.hpp>

#include "support/check.hpp"

using ember::attribute;
using ember::shape;
using ember::status;

namespace {

// Per-channel parameters for 2 channels: scale, B, mean, var.
std::vector<ember::tensor> params2() {
    return {ember::test::make_f32({2}, {1, 2}), ember::test::make_f32({2}, {0, 1}), ember::test::make_f32({2}, {1, 3}),
            ember::test::make_f32({2}, {4, 0.25f})};
}

std::vector<ember::tensor> with_x(ember::tensor x, std::vector<ember::tensor> params) {
    params.insert(params.begin(), std::move(x));
    return params;
}

ember::test::node_run bn_fails(const std::vector<ember::tensor>& inputs, std::vector<attribute> attrs = {}, std::size_t outputs = 1) {
    auto r = ember::test::run_node("BatchNormalization", inputs, std::move(attrs), outputs);
    CHECK_FALSE(r.compiled);
    CHECK(r.error.message.find("(BatchNormalization)") != std::string::npos);
    return r;
}

} // namespace

TEST_CASE("batch_normalization: each channel is normalised with its own statistics, worked by hand") {
    const auto x = ember::test::make_f32({1, 2, 1, 2}, {1, 2, 3, 4});
    auto r = ember::test::run_node_both_ways("BatchNormalization", with_x(x, params2()), {attribute::of("epsilon", 0.0f)});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == shape{1, 2, 1, 2});
    // channel 0: (x - 1) / 2 * 1 + 0; channel 1: (x - 3) / 0.5 * 2 + 1
    ember::test::check_close(r.outputs[0], {0, 0.5f, 1, 5});
}

TEST_CASE("batch_normalization: epsilon defaults to 1e-5 and is added to the variance") {
    const auto x = ember::test::make_f32({1, 1, 1, 1}, {2});
    const std::vector<ember::tensor> p{ember::test::make_f32({1}, {1}), ember::test::make_f32({1}, {0}), ember::test::make_f32({1}, {0}),
                                       ember::test::make_f32({1}, {1e-5f})};
    auto r = ember::test::run_node_both_ways("BatchNormalization", with_x(x, p), {attribute::of("momentum", 0.5f), attribute::of("spatial", 1)});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    ember::test::check_close(r.outputs[0], {static_cast<float>(2.0 / std::sqrt(2e-5))}, 1e-5f, 1e-5f);
}

TEST_CASE("batch_normalization: rank 2 to 5 inputs against a double-precision formula") {
    for (const shape& dims : {shape{4, 3}, shape{2, 3, 7}, shape{2, 3, 4, 5}, shape{1, 3, 2, 3, 4}}) {
        CAPTURE(dims.rank());
        const ember::tensor x = ember::test::random_f32(dims, 1, -3.0f, 3.0f);
        const ember::tensor scale = ember::test::random_f32({3}, 2);
        const ember::tensor bias = ember::test::random_f32({3}, 3);
        const ember::tensor mean = ember::test::random_f32({3}, 4);
        const ember::tensor var = ember::test::random_f32({3}, 5, 0.1f, 2.0f);
        auto r = ember::test::run_node_both_ways("BatchNormalization", {x, scale, bias, mean, var}, {attribute::of("epsilon", 1e-3f)});
        REQUIRE_MESSAGE(r.compiled, r.error.message);
        std::int64_t plane = 1;
        for (std::size_t i = 2; i < dims.rank(); ++i) plane *= dims[i];
        std::vector<float> expected(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % 3);
            const double v = (double(x.data<float>()[i]) - mean.data<float>()[c]) / std::sqrt(double(var.data<float>()[c]) + double(1e-3f));
            expected[i] = static_cast<float>(v * scale.data<float>()[c] + bias.data<float>()[c]);
        }
        ember::test::check_close(r.outputs[0], expected, 1e-5f, 1e-5f);
    }
}

TEST_CASE("batch_normalization: run in place on an intermediate value, it gives the same result") {
    const ember::tensor x = ember::test::random_f32({2, 2, 3, 3}, 8);
    auto run = [&](bool reuse) {
        ember::graph_builder b("bn_in_place");
        const auto in = b.input("x", ember::dtype::float32, ember::partial_shape(x.dims()));
        const auto relu = b.node("Relu", {in});
        std::vector<ember::value_id> ins{relu};
        const std::vector<ember::tensor> p = params2();
        for (std::size_t i = 0; i < p.size(); ++i) ins.push_back(b.constant("p" + std::to_string(i), p[i]));
        b.output(b.node("BatchNormalization", ins, {}, "bn"), "y");
        auto g = std::move(b).build();
        REQUIRE_MESSAGE(g, g.error().message);
        ember::compile_options options;
        options.reuse_memory = reuse;
        auto plan = ember::compile(*g, options);
        REQUIRE_MESSAGE(plan, plan.error().message);
        ember::session s(*plan);
        REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
        std::vector<float> y(x.size());
        REQUIRE(s.bind_output(0, y.data(), y.size() * sizeof(float)) == status::ok);
        REQUIRE(s.run() == status::ok);
        return y;
    };
    const std::vector<float> shared = run(true), separate = run(false);
    CHECK(shared == separate);
    // and the values are the normalised Relu output
    const float* xv = x.data<float>();
    CHECK(separate[0] == doctest::Approx((std::fmax(xv[0], 0.0f) - 1.0f) / std::sqrt(4.0f + 1e-5f)));
}

TEST_CASE("batch_normalization: parameters that are not one per channel are rejected, naming the input") {
    std::vector<ember::tensor> p = params2();
    p[3] = ember::test::make_f32({3}, {1, 1, 1});
    auto r = bn_fails(with_x(ember::test::random_f32({1, 2, 2, 2}, 1), p));
    CHECK(r.error.code == status::shape_mismatch);
    CHECK(r.error.message.find("input_var must be [2]") != std::string::npos);
    CHECK(r.error.message.find("[3]") != std::string::npos);

    auto x_rank = bn_fails(with_x(ember::test::make_f32({2}, {1, 2}), params2()));
    CHECK(x_rank.error.code == status::shape_mismatch);

    auto four = bn_fails({ember::test::random_f32({1, 2, 2}, 1), ember::test::make_f32({2}, {1, 1}), ember::test::make_f32({2}, {0, 0}),
                          ember::test::make_f32({2}, {0, 0})});
    CHECK(four.error.code == status::invalid_model);
}

TEST_CASE("batch_normalization: training mode, spatial 0 and the statistics outputs are unsupported") {
    const std::vector<ember::tensor> in = with_x(ember::test::random_f32({1, 2, 2, 2}, 1), params2());
    auto training = bn_fails(in, {attribute::of("training_mode", 1)});
    CHECK(training.error.code == status::unsupported_op);
    CHECK(training.error.message.find("training_mode") != std::string::npos);

    auto spatial = bn_fails(in, {attribute::of("spatial", 0)});
    CHECK(spatial.error.code == status::unsupported_op);

    auto outputs = bn_fails(in, {}, 3);
    CHECK(outputs.error.code == status::unsupported_op);
    CHECK(outputs.error.message.find("output 1") != std::string::npos);

    auto old_training = bn_fails(in, {attribute::of("is_test", 0)});
    CHECK(old_training.error.code == status::unsupported_op);
    CHECK(old_training.error.message.find("is_test = 0") != std::string::npos);
}

TEST_CASE("batch_normalization: opset 6's is_test = 1 and consumed_inputs are accepted (old PyTorch exports)") {
    const std::vector<ember::tensor> in = with_x(ember::test::random_f32({1, 2, 3}, 2), params2());
    auto plain = ember::test::run_node("BatchNormalization", in);
    auto old = ember::test::run_node("BatchNormalization", in,
                                     {attribute::of("is_test", 1), attribute::of("consumed_inputs", std::vector<std::int64_t>{0, 0, 0, 1, 1})});
    REQUIRE_MESSAGE(old.compiled, old.error.message);
    REQUIRE(plain.compiled);
    CHECK(ember::test::values_f32(old.outputs[0]) == ember::test::values_f32(plain.outputs[0]));
}
