// SPDX-License-Identifier: Apache-2.0
// The README's ember::tiny snippets, verbatim (the readme.snippets test keeps them the same), and
// a main() that runs them on a policy built with graph_builder and checks them against the plan.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <ember/ember.hpp>
#include <ember/tiny.hpp>

// A 32-64-64-8 policy with its sizes in the type: weights inline (27 KB), no heap, no arena.
using policy = ember::tiny::network<ember::tiny::dense<32, 64, ember::tiny::relu>,
                                    ember::tiny::dense<64, 64, ember::tiny::relu>,
                                    ember::tiny::dense<64, 8>>;

// At level load: the weights from a graph (ember::onnx::load_file's, or graph_builder's), every
// shape checked; a mismatch names the layer and the node, and leaves net as it was.
ember::status load_policy(policy& net, const ember::graph& graph) {
    ember::result<void> loaded = net.load(graph);
    if (!loaded) std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
    return loaded ? ember::status::ok : loaded.error().code;
}

// Per agent, per frame: noexcept, no allocation, no dispatch.
std::size_t choose_action(const policy& net, const policy::input& observation) {
    const policy::output scores = net(observation);
    return std::size_t(std::max_element(scores.begin(), scores.end()) - scores.begin());
}

// A recurrent head: a GRU cell (ONNX GRU) then a dense layer; the hidden state is the caller's,
// one step per call (value-initialise the state, memory::state h{}, to start from zeros).
using memory = ember::tiny::network<ember::tiny::gru<16, 32>, ember::tiny::dense<32, 4, ember::tiny::tanh>>;

void remember(const memory& net, const float* x, memory::state& h, float* y) { net.run(x, y, h.data()); }

namespace {

int fail(const char* what) {
    std::fprintf(stderr, "readme tiny: %s\n", what);
    return 1;
}

std::vector<float> random_values(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

} // namespace

int main() {
    // The policy as torch exports it: Gemm (transB = 1), Relu, Gemm, Relu, Gemm.
    ember::graph_builder b("policy");
    ember::value_id h = b.input("x", ember::dtype::float32, {1, 32});
    const std::int64_t widths[] = {32, 64, 64, 8};
    for (int l = 0; l < 3; ++l) {
        const std::string n = std::to_string(l);
        h = b.node("Gemm",
                   {h, b.constant<float>("w" + n, {widths[l + 1], widths[l]}, random_values(std::size_t(widths[l] * widths[l + 1]), unsigned(l))),
                    b.constant<float>("b" + n, {widths[l + 1]}, random_values(std::size_t(widths[l + 1]), 10u + unsigned(l)))},
                   {ember::attribute::of("transB", 1)}, "fc" + n);
        if (l < 2) h = b.node("Relu", {h}, {}, "relu" + n);
    }
    b.output(h, "y");
    ember::result<ember::graph> graph = std::move(b).build();
    if (!graph) return fail("graph");

    policy net;
    if (load_policy(net, *graph) != ember::status::ok) return fail("load_policy");
    ember::result<ember::plan> plan = ember::compile(*graph);
    if (!plan) return fail("compile");
    ember::session session(*plan);
    for (unsigned trial = 0; trial < 16; ++trial) {
        policy::input x{};
        const std::vector<float> v = random_values(32, 100 + trial);
        std::copy(v.begin(), v.end(), x.begin());
        std::array<float, 8> y{};
        if (session.bind_input(0, x) != ember::status::ok || session.bind_output(0, y) != ember::status::ok ||
            session.run() != ember::status::ok)
            return fail("plan run");
        const std::size_t want = std::size_t(std::max_element(y.begin(), y.end()) - y.begin());
        if (choose_action(net, x) != want) return fail("choose_action differs from the plan");
    }

    // A wrong graph: the error names the layer and the node; net keeps its weights.
    policy::input x{};
    const std::size_t before = choose_action(net, x);
    ember::graph wrong = *graph;
    wrong.nodes[1].op_type = "Tanh";
    if (load_policy(net, wrong) != ember::status::unsupported_op || choose_action(net, x) != before) return fail("a wrong graph loaded");

    // The recurrent head, weights from arrays: a state that moves step by step and stays bounded.
    memory m;
    if (!m.layer<0>().set_weights(random_values(3 * 32 * 16, 1), random_values(3 * 32 * 32, 2)) ||
        !m.layer<1>().set_weights(random_values(32 * 4, 3), random_values(4, 4)))
        return fail("set_weights");
    memory::state state{};
    float y[4] = {};
    for (int t = 0; t < 8; ++t) {
        const std::vector<float> step_in = random_values(16, 20u + unsigned(t));
        remember(m, step_in.data(), state, y);
    }
    for (float v : state)
        if (!(std::fabs(v) < 1.0f)) return fail("the GRU state left (-1, 1)");
    if (std::all_of(state.begin(), state.end(), [](float v) { return v == 0.0f; })) return fail("the GRU state did not move");
    std::printf("readme tiny: ok\n");
    return 0;
}
