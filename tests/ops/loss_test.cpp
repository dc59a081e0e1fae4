// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <ember/ops/loss.hpp>

#include "support/check.hpp"

using ember::attribute;
using ember::shape;
using ember::status;
using ember::tensor;

namespace {

using op_run = ember::test::node_run;

// One node in a graph that declares `opset`; inputs fed at run time or as constants (folded).
// Empty tensors are absent optional inputs. Unlike test::run_node, a failing run is reported.
op_run run_op(const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs, std::size_t outputs, std::int64_t opset,
              ember::test::feed how) {
    ember::test::node_setup setup;
    setup.opset = opset;
    setup.constant.assign(inputs.size(), how == ember::test::feed::constants);
    setup.output_count = outputs;
    return ember::test::run_node_with(op, inputs, std::move(attrs), setup);
}

// Runs both ways, requires both to compile and run, and the two to agree bit for bit.
std::vector<tensor> both(const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs = {}, std::size_t outputs = 1,
                         std::int64_t opset = 13) {
    ember::test::node_setup setup;
    setup.opset = opset;
    setup.output_count = outputs;
    return std::move(ember::test::run_node_both_ways_with(op, inputs, attrs, setup).outputs);
}

ember::error_info compile_error(const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs = {},
                                std::size_t outputs = 1, std::int64_t opset = 13) {
    op_run r = run_op(op, inputs, std::move(attrs), outputs, opset, ember::test::feed::inputs);
    CHECK_FALSE(r.compiled);
    CHECK(r.error.message.find("(" + op + ")") != std::string::npos);
    return r.error;
}

bool mentions(const ember::error_info& e, const std::string& s) { return e.message.find(s) != std::string::npos; }

attribute reduction(const char* r) { return attribute::of("reduction", r); }
attribute ignore(std::int64_t i) { return attribute::of("ignore_index", i); }

// input [2, 3] of log-probabilities, target [2] = {2, 0}
tensor nll_input() { return ember::test::make_f32({2, 3}, {-1, -2, -3, -0.5f, -1.5f, -2.5f}); }
tensor nll_target() { return ember::test::make<std::int64_t>({2}, {2, 0}); }
tensor nll_weight() { return ember::test::make_f32({3}, {0.2f, 0.3f, 0.5f}); }

// SoftmaxCrossEntropyLoss the slow way, independently of the op: double precision, the layout
// spelled out with (n, c, d) indices. Returns the per-element losses and weights.
struct naive_sce {
    std::vector<double> log_prob, loss, weight;
};
naive_sce naive(const std::vector<float>& x, std::int64_t N, std::int64_t C, std::int64_t D, const std::vector<std::int32_t>& t,
                const std::vector<float>* w, const std::int64_t* ii) {
    naive_sce r;
    r.log_prob.resize(x.size());
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t d = 0; d < D; ++d) {
            auto at = [&](std::int64_t c) { return static_cast<std::size_t>((n * C + c) * D + d); };
            double sum = 0.0;
            for (std::int64_t c = 0; c < C; ++c) sum += std::exp(double(x[at(c)]));
            for (std::int64_t c = 0; c < C; ++c) r.log_prob[at(c)] = std::log(std::exp(double(x[at(c)])) / sum);
            const std::int32_t label = t[static_cast<std::size_t>(n * D + d)];
            const bool ignored = ii && label == *ii;
            const double wt = ignored ? 0.0 : w ? double((*w)[static_cast<std::size_t>(label)]) : 1.0;
            r.weight.push_back(wt);
            r.loss.push_back(ignored ? 0.0 : -r.log_prob[at(label)] * wt);
        }
    return r;
}

std::vector<float> as_f32(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

} // namespace

TEST_CASE("nllloss: reduction none, sum and mean pick -input[n, target[n]], worked by hand") {
    auto none = both("NegativeLogLikelihoodLoss", {nll_input(), nll_target()}, {reduction("none")});
    CHECK(none[0].dims() == shape{2});
    ember::test::check_close(none[0], {3.0f, 0.5f});
    auto sum = both("NegativeLogLikelihoodLoss", {nll_input(), nll_target()}, {reduction("sum")});
    CHECK(sum[0].dims() == shape{});
    ember::test::check_close(sum[0], {3.5f});
    auto mean = both("NegativeLogLikelihoodLoss", {nll_input(), nll_target()});  // mean is the default
    CHECK(mean[0].dims() == shape{});
    ember::test::check_close(mean[0], {1.75f});
}

TEST_CASE("nllloss: weights scale each loss and the mean divides by the sum of the weights used") {
    auto none = both("NegativeLogLikelihoodLoss", {nll_input(), nll_target(), nll_weight()}, {reduction("none")});
    ember::test::check_close(none[0], {1.5f, 0.1f});
    auto sum = both("NegativeLogLikelihoodLoss", {nll_input(), nll_target(), nll_weight()}, {reduction("sum")});
    ember::test::check_close(sum[0], {1.6f});
    auto mean = both("NegativeLogLikelihoodLoss", {nll_input(), nll_target(), nll_weight()}, {reduction("mean")});
    ember::test::check_close(mean[0], {1.6f / 0.7f});
}

TEST_CASE("nllloss: a target equal to ignore_index has loss 0 and weight 0, even outside [0, C)") {
    auto none = both("NegativeLogLikelihoodLoss", {nll_input(), nll_target()}, {reduction("none"), ignore(2)});
    ember::test::check_close(none[0], {0.0f, 0.5f});
    auto mean = both("NegativeLogLikelihoodLoss", {nll_input(), nll_target()}, {ignore(2)});
    ember::test::check_close(mean[0], {0.5f});  // 0.5 over one counted target
    auto weighted = both("NegativeLogLikelihoodLoss", {nll_input(), nll_target(), nll_weight()}, {ignore(2)});
    ember::test::check_close(weighted[0], {0.1f / 0.2f});

    const tensor negative = ember::test::make<std::int64_t>({2}, {-100, 1});
    auto n = both("NegativeLogLikelihoodLoss", {nll_input(), negative}, {reduction("none"), ignore(-100)});
    ember::test::check_close(n[0], {0.0f, 1.5f});

    // every target ignored: the mean is 0 / 0, NaN as in ONNX's reference
    const tensor all = ember::test::make<std::int64_t>({2}, {2, 2});
    auto nan = both("NegativeLogLikelihoodLoss", {nll_input(), all}, {ignore(2)});
    CHECK(std::isnan(nan[0].data<float>()[0]));
}

TEST_CASE("nllloss: N-D input [N, C, d1] reads input[n, target[n, d], d], int32 targets") {
    const tensor x = ember::test::make_f32({1, 2, 2}, {1, 2, 3, 4});  // c0: {1, 2}, c1: {3, 4}
    const tensor t = ember::test::make<std::int32_t>({1, 2}, {1, 0});
    auto none = both("NegativeLogLikelihoodLoss", {x, t}, {reduction("none")});
    CHECK(none[0].dims() == shape{1, 2});
    ember::test::check_close(none[0], {-3.0f, -2.0f});
}

TEST_CASE("nllloss: float64 and float16 inputs give losses of their own dtype") {
    const tensor x = ember::test::make<double>({2, 3}, {-1, -2, -3, -0.5, -1.5, -2.5});
    auto d = both("NegativeLogLikelihoodLoss", {x, nll_target()}, {reduction("sum")});
    REQUIRE(d[0].type() == ember::dtype::float64);
    CHECK(d[0].data<double>()[0] == doctest::Approx(3.5));

    std::vector<ember::float16> h;
    for (float v : {-1.0f, -2.0f, -3.0f, -0.5f, -1.5f, -2.5f}) h.push_back(ember::float16(v));
    auto f = both("NegativeLogLikelihoodLoss", {ember::test::make<ember::float16>({2, 3}, h), nll_target()}, {reduction("none")});
    REQUIRE(f[0].type() == ember::dtype::float16);
    CHECK(static_cast<float>(f[0].data<ember::float16>()[0]) == 3.0f);
    CHECK(static_cast<float>(f[0].data<ember::float16>()[1]) == 0.5f);
}

TEST_CASE("nllloss: a target outside [0, C) stops run() with invalid_argument, or compile() when folded") {
    const tensor bad = ember::test::make<std::int64_t>({2}, {3, 0});
    op_run r = run_op("NegativeLogLikelihoodLoss", {nll_input(), bad}, {}, 1, 13, ember::test::feed::inputs);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.run_status == status::invalid_argument);
    const tensor negative = ember::test::make<std::int64_t>({2}, {0, -1});
    r = run_op("NegativeLogLikelihoodLoss", {nll_input(), negative}, {ignore(-100)}, 1, 13, ember::test::feed::inputs);
    CHECK(r.run_status == status::invalid_argument);
    op_run folded = run_op("NegativeLogLikelihoodLoss", {nll_input(), bad}, {}, 1, 13, ember::test::feed::constants);
    CHECK_FALSE(folded.compiled);
    CHECK(mentions(folded.error, "out of range"));
}

TEST_CASE("nllloss: bad models are rejected with a message naming the problem") {
    CHECK(mentions(compile_error("NegativeLogLikelihoodLoss", {nll_input(), nll_target()}, {reduction("average")}), "'average'"));
    CHECK(mentions(compile_error("NegativeLogLikelihoodLoss", {nll_input(), nll_target()}, {}, 1, 11), "opset 12"));
    CHECK(mentions(compile_error("NegativeLogLikelihoodLoss", {nll_input(), ember::test::make_f32({2}, {0, 1})}), "float32"));
    CHECK(mentions(compile_error("NegativeLogLikelihoodLoss", {nll_input(), ember::test::make<std::int64_t>({3}, {0, 1, 2})}), "[3]"));
    CHECK(mentions(compile_error("NegativeLogLikelihoodLoss", {ember::test::make_f32({3}, {1, 2, 3}), nll_target()}), "rank >= 2"));
    CHECK(mentions(compile_error("NegativeLogLikelihoodLoss", {nll_input(), nll_target(), ember::test::make_f32({2}, {1, 1})}), "weight must be [C]"));
    CHECK(mentions(compile_error("NegativeLogLikelihoodLoss", {nll_input(), nll_target(), ember::test::make<double>({3}, {1, 1, 1})}), "float64"));
    CHECK(mentions(compile_error("NegativeLogLikelihoodLoss", {nll_input(), nll_target()}, {attribute::of("label_smoothing", 0.1f)}),
                   "label_smoothing"));
}

TEST_CASE("sce: log_softmax over C, then the negative log-likelihood, worked by hand") {
    const tensor x = ember::test::make_f32({1, 3}, {1, 2, 3});
    const tensor t = ember::test::make<std::int64_t>({1}, {2});
    // log(sum(exp)) = 3 + log(1 + e^-1 + e^-2) = 3.4076059644
    auto r = both("SoftmaxCrossEntropyLoss", {x, t}, {}, 2);
    REQUIRE(r.size() == 2);
    CHECK(r[0].dims() == shape{});
    ember::test::check_close(r[0], {0.4076059644f});
    CHECK(r[1].dims() == shape{1, 3});
    ember::test::check_close(r[1], {-2.4076059644f, -1.4076059644f, -0.4076059644f});
    // without the log_prob output
    auto one = both("SoftmaxCrossEntropyLoss", {x, t}, {reduction("sum")});
    REQUIRE(one.size() == 1);
    ember::test::check_close(one[0], {0.4076059644f});
}

TEST_CASE("sce: large scores do not overflow (the maximum is subtracted first)") {
    const tensor x = ember::test::make_f32({1, 2}, {1000, 1000});
    auto r = both("SoftmaxCrossEntropyLoss", {x, ember::test::make<std::int64_t>({1}, {0})});
    ember::test::check_close(r[0], {std::log(2.0f)});
}

TEST_CASE("sce: N-D scores with weights and ignore_index match a naive double-precision version") {
    const std::int64_t N = 2, C = 3, D1 = 2, D2 = 2, D = D1 * D2;
    const tensor x = ember::test::random_f32({N, C, D1, D2}, 11, -3.0f, 3.0f);
    const std::vector<std::int32_t> labels{0, 1, 2, 1, 2, -1, 0, 1};
    const tensor t = ember::test::make<std::int32_t>({N, D1, D2}, labels);
    const std::vector<float> w{0.5f, 2.0f, 1.5f};
    const std::int64_t ii = -1;
    const naive_sce want = naive(ember::test::values_f32(x), N, C, D, labels, &w, &ii);
    const std::vector<attribute> none{reduction("none"), ignore(ii)};
    auto r = both("SoftmaxCrossEntropyLoss", {x, t, ember::test::make_f32({3}, w)}, none, 2);
    CHECK(r[0].dims() == shape{N, D1, D2});
    ember::test::check_close(r[0], as_f32(want.loss), 1e-5f, 1e-5f);
    CHECK(r[1].dims() == shape{N, C, D1, D2});
    ember::test::check_close(r[1], as_f32(want.log_prob), 1e-5f, 1e-5f);

    double total = 0.0, weights = 0.0;
    for (std::size_t i = 0; i < want.loss.size(); ++i) {
        total += want.loss[i];
        weights += want.weight[i];
    }
    auto mean = both("SoftmaxCrossEntropyLoss", {x, t, ember::test::make_f32({3}, w)}, {ignore(ii)});
    ember::test::check_close(mean[0], {float(total / weights)}, 1e-5f, 1e-5f);
    auto sum = both("SoftmaxCrossEntropyLoss", {x, t, ember::test::make_f32({3}, w)}, {ignore(ii), reduction("sum")});
    ember::test::check_close(sum[0], {float(total)}, 1e-5f, 1e-5f);
}

TEST_CASE("sce: opset 12 and 13 behave the same; earlier opsets and extra outputs are rejected") {
    const tensor x = ember::test::make_f32({1, 3}, {1, 2, 3});
    const tensor t = ember::test::make<std::int64_t>({1}, {2});
    auto a = both("SoftmaxCrossEntropyLoss", {x, t}, {}, 1, 12);
    auto b = both("SoftmaxCrossEntropyLoss", {x, t}, {}, 1, 13);
    CHECK(a[0].data<float>()[0] == b[0].data<float>()[0]);
    CHECK(mentions(compile_error("SoftmaxCrossEntropyLoss", {x, t}, {}, 1, 11), "opset 12"));
    CHECK(mentions(compile_error("SoftmaxCrossEntropyLoss", {x, t}, {}, 3), "1 or 2"));
    CHECK(mentions(compile_error("NegativeLogLikelihoodLoss", {x, t}, {}, 2), "expected 1 outputs"));
    op_run r = run_op("SoftmaxCrossEntropyLoss", {x, ember::test::make<std::int64_t>({1}, {5})}, {}, 1, 13, ember::test::feed::inputs);
    REQUIRE(r.compiled);
    CHECK(r.run_status == status::invalid_argument);
}
