// SPDX-License-Identifier: Apache-2.0
// RNN, GRU and LSTM: hand-computed one-unit cases of each cell, the directions, sequence_lens,
// layout, activations, clip, folding, dtypes and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <ember/ops/recurrent.hpp>

#include "support/check.hpp"

namespace {

using ember::attribute;
using ember::shape;
using ember::tensor;
using ember::test::make;
using ember::test::make_f32;

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

bool mentions(const ember::test::node_run& r, const std::string& text) {
    return !r.compiled && r.error.message.find(text) != std::string::npos;
}

// A graph with the op's data inputs as graph inputs, compiled, run; returns run()'s status.
ember::status run_status(const std::string& op, const std::vector<tensor>& inputs, std::vector<attribute> attrs, std::size_t outputs) {
    ember::graph_builder b("g");
    std::vector<ember::value_id> ids;
    std::vector<const tensor*> fed;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].empty()) {
            ids.push_back(ember::no_value);
            continue;
        }
        ids.push_back(b.input("in" + std::to_string(i), inputs[i].type(), ember::partial_shape(inputs[i].dims())));
        fed.push_back(&inputs[i]);
    }
    auto outs = b.nodes(op, ids, outputs, std::move(attrs), "node");
    for (std::size_t k = 0; k < outs.size(); ++k) b.output(outs[k], "out" + std::to_string(k));
    auto g = std::move(b).build();
    REQUIRE(g);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    for (std::size_t i = 0; i < fed.size(); ++i) REQUIRE(s.bind_input(i, fed[i]->bytes(), fed[i]->size_bytes()) == ember::status::ok);
    return s.run();
}

} // namespace

TEST_CASE("rnn: one unit, two steps, forward and reverse, with bias and initial_h") {
    const tensor x = make_f32({2, 1, 1}, {1.0f, 2.0f});
    const tensor w = make_f32({1, 1, 1}, {0.5f});
    const tensor r = make_f32({1, 1, 1}, {-0.25f});
    const tensor b = make_f32({1, 2}, {0.125f, 0.0625f});
    const tensor h0 = make_f32({1, 1, 1}, {0.75f});
    const float bias = 0.1875f;
    {
        auto run = ember::test::run_node_both_ways("RNN", {x, w, r, b, tensor(), h0}, {attribute::of("hidden_size", 1)}, 2);
        REQUIRE_MESSAGE(run.compiled, run.error.message);
        const float h1 = std::tanh(0.5f * 1.0f - 0.25f * 0.75f + bias);
        const float h2 = std::tanh(0.5f * 2.0f - 0.25f * h1 + bias);
        CHECK(run.outputs[0].dims() == shape{2, 1, 1, 1});
        ember::test::check_close(run.outputs[0], {h1, h2});
        ember::test::check_close(run.outputs[1], {h2});
    }
    {
        auto run = ember::test::run_node_both_ways("RNN", {x, w, r, b, tensor(), h0}, {attribute::of("direction", "reverse")}, 2);
        REQUIRE_MESSAGE(run.compiled, run.error.message);
        const float h_t1 = std::tanh(0.5f * 2.0f - 0.25f * 0.75f + bias);
        const float h_t0 = std::tanh(0.5f * 1.0f - 0.25f * h_t1 + bias);
        ember::test::check_close(run.outputs[0], {h_t0, h_t1});
        ember::test::check_close(run.outputs[1], {h_t0});
    }
}

TEST_CASE("rnn: bidirectional stacks the directions; sequence_lens zeroes Y past each row's length") {
    // seq 3, batch 2, input 1, hidden 1; row 1 has length 1, row 0 the full 3
    const tensor x = make_f32({3, 2, 1}, {1, 10, 2, 20, 3, 30});
    const tensor w = make_f32({2, 1, 1}, {0.5f, -0.5f});
    const tensor r = make_f32({2, 1, 1}, {0.25f, 0.5f});
    const tensor lens = make<std::int32_t>({2}, {3, 1});
    auto run = ember::test::run_node_both_ways("RNN", {x, w, r, tensor(), lens},
                                               {attribute::of("direction", "bidirectional"), attribute::of("activations", std::vector<std::string>{"Relu", "Tanh"})}, 2);
    REQUIRE_MESSAGE(run.compiled, run.error.message);
    CHECK(run.outputs[0].dims() == shape{3, 2, 2, 1});
    // forward, relu: row 0: 0.5, 1 + 0.125, 1.5 + 0.28125; row 1: 5
    const float f0 = 0.5f, f1 = 1.0f + 0.25f * f0, f2 = 1.5f + 0.25f * f1;
    // reverse, tanh: row 0 from t = 2 down; row 1 only t = 0
    const float r2 = std::tanh(-1.5f), r1 = std::tanh(-1.0f + 0.5f * r2), r0 = std::tanh(-0.5f + 0.5f * r1);
    const float q0 = std::tanh(-5.0f);
    // Y[t, d, b]
    ember::test::check_close(run.outputs[0], {f0, 5.0f, r0, q0, f1, 0.0f, r1, 0.0f, f2, 0.0f, r2, 0.0f});
    // Y_h[d, b]: forward ends at each row's last step, reverse at t = 0
    ember::test::check_close(run.outputs[1], {f2, 5.0f, r0, q0});
}

TEST_CASE("rnn: a row of length 0 keeps initial_h; a length out of range fails at run time") {
    const tensor x = make_f32({2, 2, 1}, {1, 2, 3, 4});
    const tensor w = make_f32({1, 1, 1}, {1.0f});
    const tensor r = make_f32({1, 1, 1}, {1.0f});
    const tensor h0 = make_f32({1, 2, 1}, {0.5f, -0.5f});
    auto run = ember::test::run_node("RNN", {x, w, r, tensor(), make<std::int32_t>({2}, {0, 2}), h0}, {}, 2);
    REQUIRE_MESSAGE(run.compiled, run.error.message);
    ember::test::check_close(run.outputs[1], {0.5f, std::tanh(4.0f + std::tanh(2.0f - 0.5f))});
    CHECK(run_status("RNN", {x, w, r, tensor(), make<std::int32_t>({2}, {3, 1})}, {}, 1) == ember::status::invalid_argument);
    CHECK(run_status("RNN", {x, w, r, tensor(), make<std::int32_t>({2}, {-1, 1})}, {}, 1) == ember::status::invalid_argument);
    CHECK(run_status("RNN", {x, w, r, tensor(), make<std::int32_t>({2}, {2, 1})}, {}, 1) == ember::status::ok);
    // a constant sequence_lens is checked at compile time
    CHECK(mentions(ember::test::run_node("RNN", {x, w, r, tensor(), make<std::int32_t>({2}, {1, 5})}, {}, 1, ember::test::feed::constants),
                   "sequence_lens[1] is 5, expected 0 to seq_length 2"));
}

TEST_CASE("rnn: layout 1 (opset 14) is the batch-first transpose of layout 0") {
    const tensor w = ember::test::random_f32({1, 3, 2}, 1);
    const tensor r = ember::test::random_f32({1, 3, 3}, 2);
    const tensor b = ember::test::random_f32({1, 6}, 3);
    // X [seq 2, batch 2, input 2] and its [batch, seq, input] transpose
    const std::vector<float> xv{1, 2, 3, 4, 5, 6, 7, 8};
    const tensor x0 = make_f32({2, 2, 2}, xv);
    const tensor x1 = make_f32({2, 2, 2}, {1, 2, 5, 6, 3, 4, 7, 8});
    auto a = ember::test::run_node("RNN", {x0, w, r, b}, {}, 2);
    auto c = ember::test::run_node("RNN", {x1, w, r, b}, {attribute::of("layout", 1)}, 2);
    REQUIRE_MESSAGE(a.compiled, a.error.message);
    REQUIRE_MESSAGE(c.compiled, c.error.message);
    CHECK(c.outputs[0].dims() == shape{2, 2, 1, 3});
    CHECK(c.outputs[1].dims() == shape{2, 1, 3});
    const auto y0 = ember::test::values_f32(a.outputs[0]);  // [t, 1, b, 3]
    std::vector<float> transposed;
    for (int bb = 0; bb < 2; ++bb)
        for (int t = 0; t < 2; ++t)
            for (int j = 0; j < 3; ++j) transposed.push_back(y0[static_cast<std::size_t>(t * 6 + bb * 3 + j)]);
    ember::test::check_close(c.outputs[0], transposed);
    ember::test::check_close(c.outputs[1], ember::test::values_f32(a.outputs[1]));

    // before opset 14 there is no layout
    ember::graph_builder gb("g");
    const auto xi = gb.input("x", ember::dtype::float32, ember::partial_shape(shape{2, 2, 2}));
    gb.output(gb.node("RNN", {xi, gb.constant("w", w), gb.constant("r", r)}, {attribute::of("layout", 1)}, "node"), "y");
    auto g = std::move(gb).build();
    REQUIRE(g);
    g->opsets.push_back(ember::opset{"", 13});
    auto p = ember::compile(*g);
    REQUIRE_FALSE(p);
    CHECK(p.error().message.find("'layout' needs opset 14") != std::string::npos);
}

TEST_CASE("rnn: activations with alpha/beta, and clip bounds the activation's input") {
    const tensor x = make_f32({1, 1, 1}, {3.0f});
    const tensor w = make_f32({1, 1, 1}, {1.0f});
    const tensor r = make_f32({1, 1, 1}, {0.0f});
    auto hs = ember::test::run_node("RNN", {x, w, r},
                                    {attribute::of("activations", std::vector<std::string>{"hardsigmoid"}),
                                     attribute::of("activation_alpha", std::vector<float>{0.25f}), attribute::of("activation_beta", std::vector<float>{0.125f})});
    REQUIRE_MESSAGE(hs.compiled, hs.error.message);
    ember::test::check_close(hs.outputs[0], {0.25f * 3.0f + 0.125f});
    auto lk = ember::test::run_node("RNN", {make_f32({1, 1, 1}, {-2.0f}), w, r}, {attribute::of("activations", std::vector<std::string>{"LeakyRelu"})});
    REQUIRE_MESSAGE(lk.compiled, lk.error.message);
    ember::test::check_close(lk.outputs[0], {-0.02f});
    auto clipped = ember::test::run_node("RNN", {x, w, r}, {attribute::of("activations", std::vector<std::string>{"Relu"}), attribute::of("clip", 1.5f)});
    REQUIRE_MESSAGE(clipped.compiled, clipped.error.message);
    ember::test::check_close(clipped.outputs[0], {1.5f});
}

TEST_CASE("gru: one unit, both linear_before_reset variants") {
    // gates z r h; W [1, 3, 1], R [1, 3, 1], B [1, 6]
    const tensor x = make_f32({1, 1, 1}, {1.0f});
    const tensor w = make_f32({1, 3, 1}, {0.5f, -0.5f, 2.0f});
    const tensor r = make_f32({1, 3, 1}, {0.25f, 0.75f, -1.0f});
    const tensor b = make_f32({1, 6}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
    const tensor h0 = make_f32({1, 1, 1}, {0.5f});
    const float h = 0.5f;
    const float z = sigmoid(0.5f + 0.25f * h + 0.1f + 0.4f);
    const float rr = sigmoid(-0.5f + 0.75f * h + 0.2f + 0.5f);
    for (int lbr : {0, 1}) {
        CAPTURE(lbr);
        auto run = ember::test::run_node_both_ways("GRU", {x, w, r, b, tensor(), h0}, {attribute::of("linear_before_reset", lbr)}, 2);
        REQUIRE_MESSAGE(run.compiled, run.error.message);
        const float ht = lbr ? std::tanh(2.0f + 0.3f + rr * (-1.0f * h + 0.6f)) : std::tanh(2.0f + 0.3f + (rr * h) * -1.0f + 0.6f);
        const float hn = (1.0f - z) * ht + z * h;
        ember::test::check_close(run.outputs[0], {hn});
        ember::test::check_close(run.outputs[1], {hn});
    }
}

TEST_CASE("lstm: one unit with peepholes, input_forget and Y_c") {
    // gates i o f c
    const tensor x = make_f32({1, 1, 1}, {1.0f});
    const tensor w = make_f32({1, 4, 1}, {0.5f, -0.5f, 0.25f, 2.0f});
    const tensor r = make_f32({1, 4, 1}, {0.1f, 0.2f, 0.3f, 0.4f});
    const tensor b = make_f32({1, 8}, {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f, 0.07f, 0.08f});
    const tensor h0 = make_f32({1, 1, 1}, {0.5f});
    const tensor c0 = make_f32({1, 1, 1}, {-0.5f});
    const tensor p = make_f32({1, 3}, {0.3f, -0.2f, 0.1f});  // i o f
    const float h = 0.5f, c = -0.5f;
    for (int coupled : {0, 1}) {
        CAPTURE(coupled);
        auto run = ember::test::run_node_both_ways("LSTM", {x, w, r, b, tensor(), h0, c0, p}, {attribute::of("input_forget", coupled)}, 3);
        REQUIRE_MESSAGE(run.compiled, run.error.message);
        const float i = sigmoid(0.5f + 0.1f * h + 0.06f + 0.3f * c);
        const float f = coupled ? 1.0f - i : sigmoid(0.25f + 0.3f * h + 0.1f + 0.1f * c);
        const float cn = f * c + i * std::tanh(2.0f + 0.4f * h + 0.12f);
        const float o = sigmoid(-0.5f + 0.2f * h + 0.08f - 0.2f * cn);
        const float hn = o * std::tanh(cn);
        ember::test::check_close(run.outputs[0], {hn});
        ember::test::check_close(run.outputs[1], {hn});
        ember::test::check_close(run.outputs[2], {cn});
    }
}

TEST_CASE("lstm: float64 and float16 agree with float32") {
    const tensor x = ember::test::random_f32({3, 2, 4}, 7);
    const tensor w = ember::test::random_f32({2, 20, 4}, 8);
    const tensor r = ember::test::random_f32({2, 20, 5}, 9);
    const tensor b = ember::test::random_f32({2, 40}, 10);
    const std::vector<attribute> attrs{attribute::of("direction", "bidirectional"), attribute::of("hidden_size", 5)};
    auto f32 = ember::test::run_node("LSTM", {x, w, r, b}, attrs, 3);
    REQUIRE_MESSAGE(f32.compiled, f32.error.message);
    auto to = [](const tensor& t, auto zero) {
        using T = decltype(zero);
        std::vector<T> v;
        for (float f : ember::test::values_f32(t)) v.push_back(T(f));
        return make<T>(t.dims(), v);
    };
    auto f64 = ember::test::run_node("LSTM", {to(x, 0.0), to(w, 0.0), to(r, 0.0), to(b, 0.0)}, attrs, 3);
    REQUIRE_MESSAGE(f64.compiled, f64.error.message);
    for (std::size_t k = 0; k < 3; ++k) {
        REQUIRE(f64.outputs[k].type() == ember::dtype::float64);
        std::vector<float> back;
        for (double d : ember::test::values_of<double>(f64.outputs[k])) back.push_back(static_cast<float>(d));
        ember::test::check_close(f32.outputs[k], back, 1e-5f, 1e-4f);
    }
    auto f16 = ember::test::run_node("LSTM", {to(x, ember::float16()), to(w, ember::float16()), to(r, ember::float16()), to(b, ember::float16())},
                                     attrs, 1);
    REQUIRE_MESSAGE(f16.compiled, f16.error.message);
    std::vector<float> back;
    for (ember::float16 v : ember::test::values_of<ember::float16>(f16.outputs[0])) back.push_back(static_cast<float>(v));
    ember::test::check_close(f32.outputs[0], back, 2e-2f, 2e-2f);
}

TEST_CASE("recurrent: bad inputs and attributes are refused with a message") {
    const tensor x = make_f32({2, 1, 3}, {1, 2, 3, 4, 5, 6});
    const tensor w = ember::test::random_f32({1, 8, 3}, 1);
    const tensor r = ember::test::random_f32({1, 8, 2}, 2);
    CHECK(mentions(ember::test::run_node("LSTM", {x, make_f32({1, 8, 2}, std::vector<float>(16)), r}), "input 1 (W) has shape [1, 8, 2], expected [1, 8, 3]"));
    CHECK(mentions(ember::test::run_node("LSTM", {x, w, r}, {attribute::of("direction", "sideways")}), "'direction' is 'sideways'"));
    CHECK(mentions(ember::test::run_node("LSTM", {x, w, r}, {attribute::of("hidden_size", 3)}), "input 1 (W) has shape [1, 8, 3], expected [1, 12, 3]"));
    CHECK(mentions(ember::test::run_node("LSTM", {x, w, r}, {attribute::of("activations", std::vector<std::string>{"Sigmoid", "Tanh", "Swish"})}),
                   "activation 'Swish' is not supported"));
    CHECK(mentions(ember::test::run_node("LSTM", {x, w, r}, {attribute::of("activations", std::vector<std::string>{"Sigmoid"})}),
                   "lists 1 functions, expected 3"));
    CHECK(mentions(ember::test::run_node("LSTM", {x, w, r}, {attribute::of("clip", -1.0f)}), "'clip' is -1"));
    CHECK(mentions(ember::test::run_node("LSTM", {x, w, r}, {attribute::of("linear_before_reset", 1)}), "'linear_before_reset' is not supported"));
    CHECK(mentions(ember::test::run_node("LSTM", {x, w, r, tensor(), make<std::int64_t>({1}, {2})}), "sequence_lens) has dtype int64"));
    CHECK(mentions(ember::test::run_node("LSTM", {make_f32({2, 3}, {1, 2, 3, 4, 5, 6}), w, r}), "expected rank 3"));
    CHECK(mentions(ember::test::run_node("GRU", {x, w, r}), "input 1 (W) has shape [1, 8, 3], expected [1, 6, 3]"));
    CHECK(mentions(ember::test::run_node("RNN", {make<std::int32_t>({2, 1, 3}, {1, 2, 3, 4, 5, 6}), w, r}), "input 0 has dtype int32"));
    CHECK(mentions(ember::test::run_node("RNN", {x, ember::test::random_f32({1, 2, 3}, 1), make_f32({1, 2, 2}, {0, 0, 0, 0}),
                                                 make_f32({1, 4}, {0, 0, 0, 0}), tensor(), make_f32({1, 2, 2}, {0, 0, 0, 0})}),
                   "input 5 (initial_h) has shape [1, 2, 2], expected [1, 1, 2]"));
}
