// SPDX-License-Identifier: Apache-2.0
// ember::tiny against ember's dynamic plan (compile() with isa = "reference", the oracle): each
// layer and activation on seeded random weights and inputs, weights loaded from the graph and
// from arrays, GRU sequences of both linear_before_reset values, the anchor zoo's mlp_tiny, and
// graphs that do not fit the network (a status naming the layer and the node, nothing changed).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <ember/ember.hpp>
#include <ember/tiny.hpp>

#include "support/check.hpp"
#include "support/zoo.hpp"

namespace {

namespace tiny = ember::tiny;
using ember::attribute;
using ember::value_id;

std::vector<float> random_values(std::size_t n, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

ember::tensor f32(const ember::shape& dims, const std::vector<float>& values) { return ember::test::make_f32(dims, values); }

// The plan's outputs for these inputs (one vector per graph input, in order).
std::vector<std::vector<float>> run_plan(const ember::graph& g, const std::vector<std::vector<float>>& inputs) {
    ember::compile_options options;
    options.isa = "reference";
    ember::result<ember::plan> p = ember::compile(g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    REQUIRE(s.state() == ember::status::ok);
    for (std::size_t i = 0; i < inputs.size(); ++i) REQUIRE(s.bind_input(i, inputs[i]) == ember::status::ok);
    REQUIRE(s.run() == ember::status::ok);
    std::vector<std::vector<float>> outs;
    for (std::size_t k = 0; k < p->output_count(); ++k) {
        ember::tensor_view<const float> o = s.output<float>(k);
        outs.emplace_back(o.begin(), o.end());
    }
    return outs;
}

// max |got - want| <= tolerance * max |want| (relative to the output's scale: element-wise
// relative error is meaningless next to zero).
void check_close(const float* got, const std::vector<float>& want, double tolerance = 1e-5) {
    double scale = 0.0, worst = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        scale = std::max(scale, std::fabs(double(want[i])));
        worst = std::max(worst, std::fabs(double(got[i]) - double(want[i])));
    }
    CAPTURE(worst);
    CAPTURE(scale);
    CHECK(worst <= tolerance * std::max(scale, 1e-30));
}

bool says(const ember::result<void>& r, const std::string& text) {
    if (r) return false;
    INFO(r.error().message);
    CHECK(r.error().message.find(text) != std::string::npos);
    return r.error().message.find(text) != std::string::npos;
}

enum class dense_form { gemm, gemm_trans_b, matmul_add, matmul };

// x [1, In] -> (Gemm | MatMul [+ Add]) -> activation node (when given) -> y.
ember::graph dense_graph(std::size_t in, std::size_t out, dense_form form, const char* activation, float alpha, std::uint32_t seed,
                         std::vector<float>* w_out = nullptr, std::vector<float>* b_out = nullptr) {
    const std::int64_t i = static_cast<std::int64_t>(in), o = static_cast<std::int64_t>(out);
    ember::graph_builder b("dense");
    value_id x = b.input("x", ember::dtype::float32, {1, i});
    const std::vector<float> w = random_values(in * out, seed), bias = random_values(out, seed + 1);
    if (w_out != nullptr) *w_out = w;
    if (b_out != nullptr) *b_out = bias;
    value_id h = ember::no_value;
    if (form == dense_form::gemm || form == dense_form::gemm_trans_b) {
        const bool tb = form == dense_form::gemm_trans_b;  // then w is read as [out][in]
        h = b.node("Gemm", {x, b.constant("w", f32(tb ? ember::shape{o, i} : ember::shape{i, o}, w)), b.constant("b", f32({o}, bias))},
                   {attribute::of("transB", tb ? 1 : 0), attribute::of("alpha", 0.75f), attribute::of("beta", 1.25f)}, "fc");
    } else {
        h = b.node("MatMul", {x, b.constant("w", f32({i, o}, w))}, {}, "fc");
        if (form == dense_form::matmul_add) h = b.node("Add", {b.constant("b", f32({o}, bias)), h}, {}, "bias");
    }
    if (activation != nullptr) {
        std::vector<attribute> attrs;
        if (std::string(activation) == "LeakyRelu") attrs.push_back(attribute::of("alpha", alpha));
        h = b.node(activation, {h}, std::move(attrs), "act");
    }
    b.output(h, "y");
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    return std::move(*g);
}

template <std::size_t In, std::size_t Out, class Act>
void check_dense(const char* activation, dense_form form, std::uint32_t seed) {
    CAPTURE(In);
    CAPTURE(Out);
    CAPTURE(Act::name);
    CAPTURE(int(form));
    const ember::graph g = dense_graph(In, Out, form, activation, 0.2f, seed);
    tiny::network<tiny::dense<In, Out, Act>> net;
    ember::result<void> r = net.load(g);
    REQUIRE_MESSAGE(r, r.error().message);
    for (std::uint32_t trial = 0; trial < 3; ++trial) {
        const std::vector<float> x = random_values(In, seed + 100 + trial, -2.0f, 2.0f);
        std::array<float, Out> y{};
        net.run(x.data(), y.data());
        check_close(y.data(), run_plan(g, {x})[0]);
    }
}

template <class Act>
void check_dense_sizes(const char* activation, std::uint32_t seed) {
    for (dense_form form : {dense_form::gemm, dense_form::gemm_trans_b, dense_form::matmul_add, dense_form::matmul}) {
        check_dense<32, 64, Act>(activation, form, seed);  // 4 zmm / 8 ymm / 16 xmm accumulators
        check_dense<64, 8, Act>(activation, form, seed + 1);  // one ymm, partial sums over inputs
        check_dense<7, 5, Act>(activation, form, seed + 2);   // no SIMD width divides 5: plain loops
        check_dense<3, 36, Act>(activation, form, seed + 3);  // In < partial sums; 36 = 9 xmm
        check_dense<130, 136, Act>(activation, form, seed + 4);  // more than one block of 8 vectors
    }
}

} // namespace

TEST_CASE("tiny dense: Gemm (transB 0/1, alpha, beta), MatMul + Add and MatMul equal the plan, every activation") {
    check_dense_sizes<tiny::identity>(nullptr, 1);
    check_dense_sizes<tiny::relu>("Relu", 10);
    check_dense_sizes<tiny::tanh>("Tanh", 20);
    check_dense_sizes<tiny::sigmoid>("Sigmoid", 30);
    check_dense_sizes<tiny::leaky_relu>("LeakyRelu", 40);
}

TEST_CASE("tiny dense: leaky_relu's alpha comes from the node; set_weights in both layouts gives load()'s outputs") {
    std::vector<float> w, bias;
    const ember::graph g = dense_graph(16, 24, dense_form::gemm_trans_b, "LeakyRelu", 0.3f, 7, &w, &bias);
    tiny::network<tiny::dense<16, 24, tiny::leaky_relu>> loaded;
    REQUIRE(loaded.load(g));
    CHECK(loaded.layer<0>().activation().alpha == 0.3f);

    // the graph's Gemm scales B by alpha 0.75 and C by beta 1.25
    std::vector<float> scaled_w = w, scaled_b = bias, w_in_out(w.size());
    for (float& v : scaled_w) v *= 0.75f;
    for (float& v : scaled_b) v *= 1.25f;
    for (std::size_t o = 0; o < 24; ++o)
        for (std::size_t i = 0; i < 16; ++i) w_in_out[i * 24 + o] = scaled_w[o * 16 + i];
    tiny::network<tiny::dense<16, 24, tiny::leaky_relu>> out_in, in_out;
    REQUIRE(out_in.layer<0>().set_weights(scaled_w, scaled_b, tiny::weight_layout::out_in));
    REQUIRE(in_out.layer<0>().set_weights(w_in_out, scaled_b));
    out_in.layer<0>().activation().alpha = 0.3f;
    in_out.layer<0>().activation().alpha = 0.3f;
    const std::vector<float> x = random_values(16, 8, -2.0f, 2.0f);
    std::array<float, 16> xa{};
    std::copy(x.begin(), x.end(), xa.begin());
    const std::array<float, 24> a = loaded(xa), b = out_in(xa), c = in_out(xa);
    CHECK(a == b);
    CHECK(a == c);
    check_close(a.data(), run_plan(g, {x})[0]);

    // wrong sizes: invalid_argument, weights unchanged
    CHECK(says(in_out.layer<0>().set_weights(std::vector<float>(10)), "10 weights given, expected 384"));
    CHECK(says(in_out.layer<0>().set_weights(w_in_out, std::vector<float>(3)), "3 biases given, expected 24"));
    CHECK(in_out(xa) == c);
}

namespace {

ember::graph conv_graph(std::size_t cin, std::size_t cout, std::size_t length, std::size_t kernel, std::size_t stride, std::size_t pad,
                        const char* activation, bool with_bias, std::uint32_t seed) {
    ember::graph_builder b("conv1d");
    const auto d = [](std::size_t v) { return static_cast<std::int64_t>(v); };
    value_id x = b.input("x", ember::dtype::float32, {1, d(cin), d(length)});
    std::vector<value_id> inputs = {x, b.constant("w", f32({d(cout), d(cin), d(kernel)}, random_values(cout * cin * kernel, seed)))};
    if (with_bias) inputs.push_back(b.constant("b", f32({d(cout)}, random_values(cout, seed + 1))));
    value_id h = b.node("Conv", inputs,
                        {attribute::of("kernel_shape", std::vector<std::int64_t>{d(kernel)}),
                         attribute::of("strides", std::vector<std::int64_t>{d(stride)}),
                         attribute::of("pads", std::vector<std::int64_t>{d(pad), d(pad)})},
                        "conv");
    if (activation != nullptr) h = b.node(activation, {h}, {}, "act");
    b.output(h, "y");
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    return std::move(*g);
}

template <std::size_t Cin, std::size_t Cout, std::size_t L, std::size_t K, std::size_t S, std::size_t P, class Act>
void check_conv(const char* activation, bool with_bias, std::uint32_t seed) {
    using layer = tiny::conv1d<Cin, Cout, L, K, S, P, Act>;
    CAPTURE(layer::describe());
    const ember::graph g = conv_graph(Cin, Cout, L, K, S, P, activation, with_bias, seed);
    tiny::network<layer> net;
    ember::result<void> r = net.load(g);
    REQUIRE_MESSAGE(r, r.error().message);
    const std::vector<float> x = random_values(Cin * L, seed + 2, -2.0f, 2.0f);
    std::array<float, layer::out_size> y{};
    net.run(x.data(), y.data());
    const std::vector<float> want = run_plan(g, {x})[0];
    REQUIRE(want.size() == layer::out_size);
    check_close(y.data(), want);
}

} // namespace

TEST_CASE("tiny conv1d: ONNX Conv over one axis (kernel, stride, padding, bias or none, activation) equals the plan") {
    check_conv<3, 8, 16, 3, 1, 1, tiny::relu>("Relu", true, 1);
    check_conv<4, 16, 20, 5, 2, 0, tiny::tanh>("Tanh", true, 2);
    check_conv<2, 5, 9, 4, 3, 2, tiny::identity>(nullptr, false, 3);   // 5 outputs: plain loops
    check_conv<1, 12, 32, 7, 1, 3, tiny::sigmoid>("Sigmoid", true, 4);
}

namespace {

// X [T, 1, In] (and initial_h [1, 1, H] as a graph input when with_h0) -> GRU -> Y, Y_h.
ember::graph gru_graph(std::size_t in, std::size_t hidden, std::size_t steps, bool lbr, bool with_h0, std::uint32_t seed) {
    const auto d = [](std::size_t v) { return static_cast<std::int64_t>(v); };
    ember::graph_builder b("gru");
    value_id x = b.input("x", ember::dtype::float32, {d(steps), 1, d(in)});
    value_id h0 = with_h0 ? b.input("h0", ember::dtype::float32, {1, 1, d(hidden)}) : ember::no_value;
    value_id w = b.constant("W", f32({1, d(3 * hidden), d(in)}, random_values(3 * hidden * in, seed)));
    value_id r = b.constant("R", f32({1, d(3 * hidden), d(hidden)}, random_values(3 * hidden * hidden, seed + 1)));
    value_id bias = b.constant("B", f32({1, d(6 * hidden)}, random_values(6 * hidden, seed + 2)));
    std::vector<value_id> outs = b.nodes("GRU", {x, w, r, bias, ember::no_value, h0}, 2,
                                         {attribute::of("hidden_size", d(hidden)), attribute::of("linear_before_reset", lbr ? 1 : 0)}, "gru");
    b.output(outs[0], "y");
    b.output(outs[1], "y_h");
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    return std::move(*g);
}

template <std::size_t In, std::size_t H, bool Lbr>
void check_gru(std::uint32_t seed) {
    using layer = tiny::gru<In, H, Lbr>;
    CAPTURE(layer::describe());
    constexpr std::size_t steps = 5;
    const ember::graph g = gru_graph(In, H, steps, Lbr, true, seed);
    tiny::network<layer> net;
    ember::result<void> r = net.load(g);
    REQUIRE_MESSAGE(r, r.error().message);
    const std::vector<float> x = random_values(steps * In, seed + 3, -2.0f, 2.0f);
    const std::vector<float> h0 = random_values(H, seed + 4);
    const std::vector<std::vector<float>> want = run_plan(g, {x, h0});
    REQUIRE(want[0].size() == steps * H);

    // one step per call over a state the caller holds
    typename tiny::network<layer>::state state{};
    std::copy(h0.begin(), h0.end(), state.begin());
    for (std::size_t t = 0; t < steps; ++t) {
        CAPTURE(t);
        std::array<float, H> y{};
        net.run(x.data() + t * In, y.data(), state.data());
        check_close(y.data(), std::vector<float>(want[0].begin() + t * H, want[0].begin() + (t + 1) * H));
    }
    check_close(state.data(), want[1]);

    // the layer's own sequence form gives the same bits
    std::vector<float> h(h0), ys(steps * H);
    net.template layer<0>().run_sequence(x.data(), steps, h.data(), ys.data());
    for (std::size_t k = 0; k < H; ++k) CHECK(h[k] == state[k]);
    check_close(ys.data(), want[0]);
}

} // namespace

TEST_CASE("tiny gru: ONNX GRU, linear_before_reset 0 and 1, five steps from an initial_h, equals the plan") {
    check_gru<5, 8, false>(1);
    check_gru<5, 8, true>(2);
    check_gru<16, 32, false>(3);
    check_gru<16, 32, true>(4);
    check_gru<3, 6, false>(5);  // 6, 12, 18: xmm only for 12; plain loops for 6 and 18
    check_gru<3, 6, true>(6);
}

TEST_CASE("tiny gru: set_weights gives load()'s outputs; no initial_h starts from zeros") {
    const ember::graph g = gru_graph(4, 8, 1, true, false, 9);
    tiny::network<tiny::gru<4, 8, true>> loaded, manual;
    REQUIRE(loaded.load(g));
    const std::vector<float> w = random_values(3 * 8 * 4, 9), r = random_values(3 * 8 * 8, 10), b = random_values(6 * 8, 11);
    REQUIRE(manual.layer<0>().set_weights(w, r, b));
    const std::vector<float> x = random_values(4, 12);
    std::array<float, 8> state_a{}, state_b{}, ya{}, yb{};
    loaded.run(x.data(), ya.data(), state_a.data());
    manual.run(x.data(), yb.data(), state_b.data());
    CHECK(ya == yb);
    check_close(ya.data(), run_plan(g, {x})[0]);
    CHECK(says(manual.layer<0>().set_weights(w, r, std::vector<float>(5)), "5 B values given, expected 48"));
    CHECK(says(manual.layer<0>().set_weights(w, std::vector<float>(1)), "1 R values given, expected 192"));
}

TEST_CASE("tiny network: a GRU, Squeeze and a MatMul + Add + Relu head, stepped, equals the plan over the sequence") {
    constexpr std::size_t in = 6, hidden = 16, out = 4, steps = 3;
    ember::graph_builder b("gru_head");
    value_id x = b.input("x", ember::dtype::float32, {steps, 1, in});
    value_id w = b.constant("W", f32({1, 3 * hidden, in}, random_values(3 * hidden * in, 1)));
    value_id r = b.constant("R", f32({1, 3 * hidden, hidden}, random_values(3 * hidden * hidden, 2)));
    std::vector<value_id> g_out = b.nodes("GRU", {x, w, r}, 2, {attribute::of("hidden_size", std::int64_t{hidden})}, "gru");
    value_id squeezed = b.node("Squeeze", {g_out[0], b.constant<std::int64_t>("axes", {1}, {1})}, {}, "squeeze");
    value_id h = b.node("MatMul", {squeezed, b.constant("head_w", f32({hidden, out}, random_values(hidden * out, 3)))}, {}, "head");
    h = b.node("Add", {h, b.constant("head_b", f32({out}, random_values(out, 4)))}, {}, "head_bias");
    b.output(b.node("Relu", {h}, {}, "head_relu"), "y");
    b.output(g_out[1], "state");
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);

    using net_t = tiny::network<tiny::gru<in, hidden>, tiny::dense<hidden, out, tiny::relu>>;
    static_assert(net_t::in_size == in && net_t::out_size == out && net_t::state_size == hidden);
    net_t net;
    ember::result<void> loaded = net.load(*g);
    REQUIRE_MESSAGE(loaded, loaded.error().message);
    const std::vector<float> xs = random_values(steps * in, 5, -2.0f, 2.0f);
    const std::vector<std::vector<float>> want = run_plan(*g, {xs});
    net_t::state state{};
    for (std::size_t t = 0; t < steps; ++t) {
        std::array<float, out> y{};
        net.run(xs.data() + t * in, y.data(), state.data());
        check_close(y.data(), std::vector<float>(want[0].begin() + t * out, want[0].begin() + (t + 1) * out));
    }
    check_close(state.data(), want[1]);
}

TEST_CASE("tiny network: conv1d, Flatten and dense in one chain equal the plan") {
    ember::graph_builder b("conv_head");
    value_id x = b.input("x", ember::dtype::float32, {1, 2, 12});
    value_id h = b.node("Conv", {x, b.constant("w", f32({8, 2, 3}, random_values(48, 1))), b.constant("b", f32({8}, random_values(8, 2)))},
                        {attribute::of("pads", std::vector<std::int64_t>{1, 1})}, "conv");
    h = b.node("Relu", {h}, {}, "relu");
    h = b.node("Flatten", {h}, {}, "flatten");
    h = b.node("Gemm", {h, b.constant("fc_w", f32({96, 3}, random_values(288, 3))), b.constant("fc_b", f32({3}, random_values(3, 4)))}, {}, "fc");
    b.output(h, "y");
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE(g);
    tiny::network<tiny::conv1d<2, 8, 12, 3, 1, 1, tiny::relu>, tiny::dense<96, 3>> net;
    ember::result<void> r = net.load(*g);
    REQUIRE_MESSAGE(r, r.error().message);
    const std::vector<float> xs = random_values(24, 5, -2.0f, 2.0f);
    std::array<float, 3> y{};
    net.run(xs.data(), y.data());
    check_close(y.data(), run_plan(*g, {xs})[0]);
}

TEST_CASE("tiny network: the anchor zoo's mlp_tiny (32-64-64-8) equals the plan within 1e-5") {
    std::string why;
    if (!ember::test::have_zoo(why)) {
        MESSAGE("skipped: " << why);
        return;
    }
    ember::result<ember::test::zoo_model> m = ember::test::load_zoo_model("mlp_tiny");
    REQUIRE_MESSAGE(m, m.error().message);
    using mlp = tiny::network<tiny::dense<32, 64, tiny::relu>, tiny::dense<64, 64, tiny::relu>, tiny::dense<64, 8>>;
    mlp net;
    ember::result<void> r = net.load(m->g);
    REQUIRE_MESSAGE(r, r.error().message);
    const float* in = m->input.data<float>();
    REQUIRE(m->input.size() == 32);
    std::vector<std::vector<float>> inputs = {std::vector<float>(in, in + 32)};
    for (std::uint32_t k = 0; k < 8; ++k) inputs.push_back(random_values(32, 50 + k, -3.0f, 3.0f));
    for (const std::vector<float>& x : inputs) {
        mlp::output y{};
        net.run(x.data(), y.data());
        check_close(y.data(), run_plan(m->g, {x})[0]);
    }
}

TEST_CASE("tiny network: a graph that does not fit gives a status naming the layer and the node, and changes nothing") {
    using mlp = tiny::network<tiny::dense<32, 64, tiny::relu>, tiny::dense<64, 64, tiny::relu>, tiny::dense<64, 8>>;
    // the zoo's shape, built here: fc0, relu0, fc1, relu1, fc2 (Gemm with transB = 1)
    const auto mlp_graph = [](std::size_t hidden, const char* act, const char* last_op) {
        ember::graph_builder b("mlp");
        value_id h = b.input("x", ember::dtype::float32, {1, 32});
        const std::int64_t widths[] = {32, static_cast<std::int64_t>(hidden), 64, 8};
        for (int l = 0; l < 3; ++l) {
            const std::string n = std::to_string(l);
            const char* op = l == 2 ? last_op : "Gemm";
            value_id w = b.constant("w" + n, f32({widths[l + 1], widths[l]}, random_values(std::size_t(widths[l] * widths[l + 1]), l)));
            if (std::string(op) == "Conv")
                h = b.node(op, {h, w}, {}, "fc" + n);
            else
                h = b.node(op, {h, w, b.constant("b" + n, f32({widths[l + 1]}, random_values(std::size_t(widths[l + 1]), 9 + l)))},
                           {attribute::of("transB", 1)}, "fc" + n);
            if (l < 2) h = b.node(act, {h}, {}, "act" + n);
        }
        b.output(h, "y");
        ember::result<ember::graph> g = std::move(b).build();
        REQUIRE_MESSAGE(g, g.error().message);
        return std::move(*g);
    };
    const ember::graph good = mlp_graph(64, "Relu", "Gemm");
    mlp net;
    REQUIRE(net.load(good));
    const std::vector<float> x = random_values(32, 99);
    mlp::output before{};
    net.run(x.data(), before.data());
    const auto unchanged = [&] {
        mlp::output after{};
        net.run(x.data(), after.data());
        CHECK(after == before);
    };

    SUBCASE("a hidden width of 48: shape_mismatch at node fc0") {
        ember::result<void> r = net.load(mlp_graph(48, "Relu", "Gemm"));
        REQUIRE(!r);
        CHECK(r.error().code == ember::status::shape_mismatch);
        CHECK(r.error().node == 0);
        CHECK(says(r, "tiny network layer 1 of 3 (dense<32, 64, relu>): node 0 'fc0' (Gemm): B has shape [48, 32] with transB = 1; expected [64, 32]"));
    }
    SUBCASE("Tanh where the layer's Relu should be") {
        ember::result<void> r = net.load(mlp_graph(64, "Tanh", "Gemm"));
        CHECK(says(r, "layer 1 of 3 (dense<32, 64, relu>): node 1 'act0' (Tanh): expected Relu, the layer's activation"));
        CHECK(r.error().code == ember::status::unsupported_op);
    }
    SUBCASE("an op the layer does not take") {
        ember::result<void> r = net.load(mlp_graph(64, "Relu", "Conv"));
        CHECK(says(r, "layer 3 of 3 (dense<64, 8, identity>): node 4 'fc2' (Conv): expected Gemm or MatMul"));
    }
    SUBCASE("more layers in the network than in the graph") {
        tiny::network<tiny::dense<32, 64, tiny::relu>, tiny::dense<64, 64, tiny::relu>, tiny::dense<64, 8>, tiny::dense<8, 8>> longer;
        ember::result<void> r = longer.load(good);
        CHECK(says(r, "layer 4 of 4 (dense<8, 8, identity>): the graph ends at 'y'; expected Gemm or MatMul here"));
        CHECK(r.error().code == ember::status::invalid_model);
    }
    SUBCASE("fewer layers in the network than in the graph") {
        tiny::network<tiny::dense<32, 64, tiny::relu>, tiny::dense<64, 64, tiny::relu>> shorter;
        ember::result<void> r = shorter.load(good);
        CHECK(says(r, "node 4 'fc2' (Gemm): the network has 2 layers and they end at 'act1', but the graph goes on"));
    }
    SUBCASE("an input of the wrong width") {
        tiny::network<tiny::dense<16, 64, tiny::relu>, tiny::dense<64, 64, tiny::relu>, tiny::dense<64, 8>> narrow;
        CHECK(says(narrow.load(good), "graph input 'x' has shape [1, 32]; layer 1 (dense<16, 64, relu>) reads [N, 16]"));
    }
    SUBCASE("a weight computed at run time, and a branch") {
        ember::graph_builder b("bad");
        value_id in = b.input("x", ember::dtype::float32, {1, 4});
        value_id w = b.input("w", ember::dtype::float32, {4, 4});
        b.output(b.node("MatMul", {in, w}, {}, "mm"), "y");
        tiny::network<tiny::dense<4, 4>> small;
        CHECK(says(small.load(*std::move(b).build()), "node 0 'mm' (MatMul): input 1 (B) 'w' is computed at run time"));

        ember::graph_builder c("branch");
        value_id cx = c.input("x", ember::dtype::float32, {1, 4});
        value_id y = c.node("Gemm", {cx, c.constant("w", f32({4, 4}, random_values(16, 1)))}, {}, "fc");
        c.output(c.node("Add", {c.node("Relu", {y}, {}, "relu"), y}, {}, "residual"), "out");
        tiny::network<tiny::dense<4, 4, tiny::relu>> chain;
        CHECK(says(chain.load(*std::move(c).build()), "node 2 'residual' (Add): reads 'fc', which node 1 'relu' (Relu) already reads"));
    }
    SUBCASE("GRU and Conv attributes the layer does not do") {
        tiny::network<tiny::gru<5, 8, false>> g;
        ember::result<void> r = g.load(gru_graph(5, 8, 1, true, false, 1));
        CHECK(says(r, "layer 1 of 1 (gru<5, 8, false>): node 0 'gru' (GRU): linear_before_reset 1; this layer is gru<5, 8, false>"));
        tiny::network<tiny::gru<5, 4, true>> narrow;
        CHECK(says(narrow.load(gru_graph(5, 8, 1, true, false, 1)), "hidden_size 8; expected 4"));
        tiny::network<tiny::conv1d<3, 8, 16, 3, 2, 1>> strided;
        CHECK(says(strided.load(conv_graph(3, 8, 16, 3, 1, 1, nullptr, true, 1)), "node 0 'conv' (Conv): strides is [1]; expected [2]"));
        tiny::network<tiny::conv1d<3, 8, 16, 5, 1, 1>> wide;
        CHECK(says(wide.load(conv_graph(3, 8, 16, 3, 1, 1, nullptr, true, 1)), "kernel_shape is [3]; expected [5]"));
    }
    unchanged();
}
