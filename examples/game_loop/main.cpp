// SPDX-License-Identifier: Apache-2.0
// game_loop: a frame loop in which every agent runs a small policy network (32 observations ->
// 64 -> 64 -> 8 action scores, ReLU) each frame, two ways: the compile-time network
// (ember::tiny, one call per agent) and the dynamic plan compiled once for batch = agents (one
// session::run() per frame over all of them). Prints each path's per-frame inference time
// (median and max over the frames) and checks that both pick the same action for every agent
// in every frame. Deterministic: seeded weights, a world without randomness.
//
//     game_loop [--agents 512] [--frames 120]
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <ember/ember.hpp>
#include <ember/tiny.hpp>

namespace {

constexpr std::size_t observations = 32, hidden = 64, actions = 8;

using policy = ember::tiny::network<ember::tiny::dense<observations, hidden, ember::tiny::relu>,
                                    ember::tiny::dense<hidden, hidden, ember::tiny::relu>, ember::tiny::dense<hidden, actions>>;

// The policy as a graph (what an ONNX export would give): Gemm, Relu, Gemm, Relu, Gemm with
// seeded weights; its batch is left symbolic for the plan.
ember::result<ember::graph> policy_graph() {
    std::mt19937 rng(2026);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    ember::graph_builder b("policy");
    ember::value_id h = b.input("observation", ember::dtype::float32, {"agents", std::int64_t(observations)});
    const std::int64_t widths[] = {observations, hidden, hidden, actions};
    for (int l = 0; l < 3; ++l) {
        std::vector<float> w(static_cast<std::size_t>(widths[l] * widths[l + 1])), bias(static_cast<std::size_t>(widths[l + 1]));
        const float scale = std::sqrt(2.0f / float(widths[l]));  // He initialisation
        for (float& v : w) v = normal(rng) * scale;
        for (float& v : bias) v = normal(rng) * 0.1f;
        const std::string n = std::to_string(l);
        h = b.node("Gemm", {h, b.constant<float>("w" + n, {widths[l], widths[l + 1]}, w), b.constant<float>("b" + n, {widths[l + 1]}, bias)}, {},
                   "fc" + n);
        if (l < 2) h = b.node("Relu", {h}, {}, "relu" + n);
    }
    b.output(h, "scores");
    return std::move(b).build();
}

struct agent {
    float x, y, vx, vy, goal_x, goal_y;
};

// What agent a sees this frame: where it is, how it moves, where its goal is, and a few
// features of the world around it, 32 values.
void observe(const agent& a, std::size_t frame, float* obs) {
    const float dx = a.goal_x - a.x, dy = a.goal_y - a.y;
    obs[0] = a.x * 0.1f, obs[1] = a.y * 0.1f, obs[2] = a.vx, obs[3] = a.vy, obs[4] = dx * 0.1f, obs[5] = dy * 0.1f;
    obs[6] = std::sqrt(dx * dx + dy * dy) * 0.1f, obs[7] = std::sin(float(frame) * 0.05f);
    for (std::size_t k = 8; k < observations; ++k)
        obs[k] = std::sin(0.37f * float(k) + a.x * 0.21f) * std::cos(0.11f * float(k) - a.y * 0.17f);
}

std::size_t best(const float* scores) { return std::size_t(std::max_element(scores, scores + actions) - scores); }

// Action k: a push towards one of 8 compass directions.
void act(agent& a, std::size_t action) {
    const float angle = float(action) * 0.78539816f;
    a.vx = 0.9f * a.vx + 0.05f * std::cos(angle);
    a.vy = 0.9f * a.vy + 0.05f * std::sin(angle);
    a.x += a.vx, a.y += a.vy;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// One line on stderr; exit status 1.
int fail(const std::string& why) {
    std::fprintf(stderr, "game_loop: %s\n", why.c_str());
    return 1;
}

// A bad command line: one line on stderr; exit status 2.
int usage(const std::string& why) {
    std::fprintf(stderr, "game_loop: %s (usage: game_loop [--agents N] [--frames F])\n", why.c_str());
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    std::size_t agent_count = 512, frames = 120;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (std::strcmp(argv[i], "--agents") == 0 && has_value)
            agent_count = std::size_t(std::strtoul(argv[++i], nullptr, 10));
        else if (std::strcmp(argv[i], "--frames") == 0 && has_value)
            frames = std::size_t(std::strtoul(argv[++i], nullptr, 10));
        else
            return usage(std::string("unknown argument '") + argv[i] + "'");
    }
    if (agent_count == 0 || frames == 0 || agent_count > 1000000)
        return usage("--agents must be 1 to 1000000 and --frames positive");

    // Level load: the graph, the compile-time network loaded from it, the plan for the batch.
    ember::result<ember::graph> graph = policy_graph();
    if (!graph) return fail(graph.error().message);
    auto net = std::make_unique<policy>();  // 27 KB of weights: on the heap here, not the stack
    if (ember::result<void> loaded = net->load(*graph); !loaded) return fail(loaded.error().message);
    ember::compile_options options;
    options.dim_values = {{"agents", std::int64_t(agent_count)}};
    options.max_threads = 1;
    ember::result<ember::plan> plan = ember::compile(*graph, options);
    if (!plan) return fail(plan.error().message);
    std::vector<std::byte> arena(plan->arena_bytes());
    ember::session session(*plan, arena);
    std::vector<float> obs(agent_count * observations), static_scores(agent_count * actions), plan_scores(agent_count * actions);
    if (session.bind_input(0, obs) != ember::status::ok || session.bind_output(0, plan_scores) != ember::status::ok)
        return fail("binding the plan's buffers failed");

    std::vector<agent> world(agent_count);
    for (std::size_t a = 0; a < agent_count; ++a) {
        const float t = float(a) * 2.39996323f;  // golden angle: spread on a disc
        const float r = 3.0f * std::sqrt(float(a) + 0.5f);
        world[a] = {r * std::cos(t), r * std::sin(t), 0.0f, 0.0f, -r * std::sin(t) * 0.5f, r * std::cos(t) * 0.5f};
    }

    using clock = std::chrono::steady_clock;
    std::vector<double> static_us, plan_us;
    // The two paths sum in different orders, so scores differ by rounding (~1e-6) and an agent
    // whose two best actions score the same to rounding may get either one from each path.
    const float tie = 1e-5f;
    std::size_t same = 0, ties = 0;
    double worst = 0.0;
    for (std::size_t frame = 0; frame < frames; ++frame) {
        for (std::size_t a = 0; a < agent_count; ++a) observe(world[a], frame, &obs[a * observations]);

        const clock::time_point t0 = clock::now();
        for (std::size_t a = 0; a < agent_count; ++a) net->run(&obs[a * observations], &static_scores[a * actions]);
        const clock::time_point t1 = clock::now();
        if (session.run() != ember::status::ok) return fail("session::run failed");
        const clock::time_point t2 = clock::now();
        static_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        plan_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());

        for (std::size_t a = 0; a < agent_count; ++a) {
            const float* s = &static_scores[a * actions];
            const float* p = &plan_scores[a * actions];
            const std::size_t action = best(s), plan_action = best(p);
            if (action == plan_action)
                ++same;
            else if (std::fabs(s[action] - s[plan_action]) <= tie && std::fabs(p[action] - p[plan_action]) <= tie)
                ++ties;  // the two top scores are equal to rounding: either answer is right
            for (std::size_t k = 0; k < actions; ++k) worst = std::max(worst, double(std::fabs(s[k] - p[k])));
            act(world[a], action);
        }
    }

    const std::size_t decisions = agent_count * frames;
    std::printf("game_loop: %zu agents, %zu frames, policy %zu-%zu-%zu-%zu (ReLU)\n", agent_count, frames, observations, hidden, hidden,
                actions);
    const auto report = [&](const char* path, const std::vector<double>& us) {
        std::printf("  %-58s median %7.1f us/frame, max %7.1f us (%.0f ns per agent)\n", path, median(us),
                    *std::max_element(us.begin(), us.end()), median(us) * 1000.0 / double(agent_count));
    };
    const std::string static_path = std::string("ember::tiny, a call per agent (") + xsimd::default_arch::name() + ", this file's flags)";
    const std::string plan_path = "plan, batch " + std::to_string(agent_count) + ", a run per frame (" + std::string(plan->isa()) + ")";
    report(static_path.c_str(), static_us);
    report(plan_path.c_str(), plan_us);
    std::printf("  actions: %zu of %zu the same, the other %zu at ties (top two scores within %g); largest score difference %.2g\n",
                same, decisions, ties, double(tie), worst);
    if (same + ties != decisions || worst > 1e-4) return fail("the two paths disagree");
    std::printf("game_loop: ok\n");
    return 0;
}
