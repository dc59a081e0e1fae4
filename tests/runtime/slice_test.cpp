// SPDX-License-Identifier: Apache-2.0
// session::run_for(): a run spread over several calls (frames) gives run()'s outputs bit for bit,
// stops within its step budget, resumes where it stopped, and starts anew after done or an error.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <ember/ember.hpp>

#include "support/check.hpp"
#include "support/zoo.hpp"

using ember::dtype;
using ember::run_budget;
using ember::status;

namespace {
// Six steps or so: Gemm, Relu, Gemm, Add, Mul, Tanh (whatever the passes leave), y = [2, 8].
ember::plan chain(const ember::compile_options& options = {}) {
    ember::graph_builder b("chain");
    const auto x = b.input("x", dtype::float32, {2, 16});
    auto h = b.node("Gemm", {x, b.constant("w1", ember::test::random_f32({16, 32}, 1))});
    h = b.node("Relu", {h});
    h = b.node("Gemm", {h, b.constant("w2", ember::test::random_f32({32, 8}, 3))});
    h = b.node("Add", {h, b.constant("k", ember::test::random_f32({1, 8}, 4))});
    h = b.node("Tanh", {b.node("Mul", {h, h})});
    b.output(b.node("Sigmoid", {h}), "y");
    auto p = ember::compile(*std::move(b).build(), options);
    REQUIRE_MESSAGE(p, p.error().message);
    return std::move(*p);
}

std::vector<float> run_whole(const ember::plan& p, const ember::tensor& x) {
    ember::session s(p);
    REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
    REQUIRE(s.run() == status::ok);
    const auto out = s.output<float>(0);
    return std::vector<float>(out.begin(), out.end());
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}
} // namespace

TEST_CASE("slice: one step per call walks the whole plan and gives run()'s bits") {
    ember::compile_options reference;
    reference.isa = "reference";
    for (const ember::compile_options& options : {ember::compile_options{}, reference}) {
        const ember::plan p = chain(options);
        CAPTURE(p.isa());
        const std::size_t steps = p.steps().size();
        REQUIRE(steps >= 2);
        const ember::tensor x = ember::test::random_f32({2, 16}, 5);
        const std::vector<float> want = run_whole(p, x);

        ember::session s(p);
        REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
        for (int round = 0; round < 2; ++round) {  // done resets: the second round is a new run
            std::size_t calls = 0;
            ember::run_progress progress;
            do {
                progress = s.run_for(run_budget::steps(1));
                ++calls;
                REQUIRE(progress.code == status::ok);
                CHECK(progress.steps_done == calls);
            } while (progress.in_progress());
            CHECK(progress.done());
            CHECK(calls == steps);
            const auto out = s.output<float>(0);
            CHECK(same_bits(std::vector<float>(out.begin(), out.end()), want));
        }
    }
}

TEST_CASE("slice: budgets of several steps, no budget, and run() in the middle of a sliced run") {
    const ember::plan p = chain();
    const std::size_t steps = p.steps().size();
    const ember::tensor x = ember::test::random_f32({2, 16}, 6);
    const std::vector<float> want = run_whole(p, x);
    ember::session s(p);
    REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);

    ember::run_progress first = s.run_for(run_budget::steps(2));
    CHECK(first.steps_done == std::min<std::size_t>(2, steps));
    ember::run_progress rest = s.run_for(run_budget{});  // no limit: the rest of the run
    CHECK(rest.done());
    CHECK(rest.steps_done == steps);
    CHECK(same_bits(std::vector<float>(s.output<float>(0).begin(), s.output<float>(0).end()), want));

    // A sliced run dropped half-way: run() starts from the first step, and so does the next run_for.
    REQUIRE(s.run_for(run_budget::steps(1)).in_progress());
    REQUIRE(s.run() == status::ok);
    CHECK(same_bits(std::vector<float>(s.output<float>(0).begin(), s.output<float>(0).end()), want));
    CHECK(s.run_for(run_budget::steps(1)).steps_done == 1);

    // A time budget of zero with no step limit means no limit; a tiny one still runs a step per call.
    ember::session t(p);
    REQUIRE(t.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
    const ember::run_progress whole = t.run_for(run_budget::time(std::chrono::nanoseconds(0)));
    CHECK(whole.done());
    CHECK(whole.steps_done == steps);
    std::size_t calls = 0;
    ember::run_progress progress;
    do {
        progress = t.run_for(run_budget::time(std::chrono::nanoseconds(1)));
        ++calls;
    } while (progress.in_progress() && calls <= steps);
    CHECK(progress.done());
    CHECK(calls >= 1);
    CHECK(calls <= steps);
    CHECK(same_bits(std::vector<float>(t.output<float>(0).begin(), t.output<float>(0).end()), want));
}

TEST_CASE("slice: over a thread pool the bits are those of run() on one thread") {
    const ember::plan p = chain();
    const ember::tensor x = ember::test::random_f32({2, 16}, 7);
    const std::vector<float> want = run_whole(p, x);
    ember::thread_pool pool(2);
    pool.start();
    const ember::executor exec = pool.as_executor();
    ember::session s(p, &exec);
    REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
    ember::run_progress progress;
    do progress = s.run_for(run_budget::steps(2));
    while (progress.in_progress());
    CHECK(progress.done());
    CHECK(same_bits(std::vector<float>(s.output<float>(0).begin(), s.output<float>(0).end()), want));
}

TEST_CASE("slice: a failing step ends the run with its status; the next call starts anew") {
    // Gather over [4, 3] with runtime indices: an index of 9 fails in the Gather step.
    ember::graph_builder b("gather");
    const auto data = b.constant("data", ember::test::random_f32({4, 3}, 8));
    const auto idx = b.input("idx", dtype::int64, {2});
    b.output(b.node("Relu", {b.node("Gather", {data, idx})}), "y");
    auto p = ember::compile(*std::move(b).build());
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    std::int64_t bad[2] = {1, 9}, good[2] = {3, 0};
    REQUIRE(s.bind_input(0, bad) == status::ok);
    ember::run_progress progress;
    do progress = s.run_for(run_budget::steps(1));
    while (progress.in_progress());
    CHECK(progress.code == status::invalid_argument);
    CHECK_FALSE(progress.done());
    REQUIRE(s.bind_input(0, good) == status::ok);
    do progress = s.run_for(run_budget::steps(1));
    while (progress.in_progress());
    CHECK(progress.done());
    CHECK(progress.steps_done == p->steps().size());

    std::vector<std::byte> short_arena(p->arena_bytes() > 0 ? p->arena_bytes() - 1 : 0);
    if (p->arena_bytes() > 0) {
        ember::session broken(*p, short_arena);
        CHECK(broken.run_for(run_budget::steps(1)).code == status::invalid_argument);
    }
}

TEST_CASE("slice: resnet18 spread over frames of 2 ms gives run()'s bits") {
    std::string why;
    if (!ember::test::have_zoo(why)) {
        MESSAGE("skipped: " << why);
        return;
    }
    ember::result<ember::test::zoo_model> m = ember::test::load_zoo_model("resnet18");
    REQUIRE_MESSAGE(m, m.error().message);
    auto p = ember::compile(m->g);
    REQUIRE_MESSAGE(p, p.error().message);
    const std::vector<float> want = run_whole(*p, m->input);

    ember::session s(*p);
    REQUIRE(s.bind_input(0, m->input.bytes(), m->input.size_bytes()) == status::ok);
    constexpr auto frame = std::chrono::milliseconds(2);
    using clock = std::chrono::steady_clock;
    for (int round = 0; round < 2; ++round) {  // the first round learns each step's time
        std::vector<double> slice_ms;
        ember::run_progress progress;
        do {
            const clock::time_point t0 = clock::now();
            progress = s.run_for(run_budget::time(frame));
            slice_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
        } while (progress.in_progress());
        REQUIRE(progress.code == status::ok);
        CHECK(progress.steps_done == p->steps().size());
        CHECK(slice_ms.size() >= 2);  // a resnet18 run takes well over 2 ms on any CPU of today
        const auto out = s.output<float>(0);
        CHECK(same_bits(std::vector<float>(out.begin(), out.end()), want));
        std::sort(slice_ms.begin(), slice_ms.end());
        MESSAGE("round " << round << ": " << p->steps().size() << " steps in " << slice_ms.size() << " frames of 2 ms; slice time median "
                         << slice_ms[slice_ms.size() / 2] << " ms, max " << slice_ms.back() << " ms");
    }
}
