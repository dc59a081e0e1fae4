// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

#include <ember/ember.hpp>

#include "support/check.hpp"

TEST_CASE("thread_pool: starts no thread until asked") {
    ember::thread_pool pool(3);
    CHECK_FALSE(pool.started());
    const ember::executor exec = pool.as_executor();
    CHECK(exec.concurrency == 3);
    std::atomic<std::size_t> sum{0};
    ember::parallel_for(&exec, 1000, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) sum += i;
    });
    CHECK(pool.started());
    CHECK(sum.load() == 999u * 1000u / 2u);
    pool.stop();
    CHECK_FALSE(pool.started());
}

TEST_CASE("thread_pool: ranges cover [0, n) exactly once, on more than one thread") {
    ember::thread_pool pool(4);
    const ember::executor exec = pool.as_executor();
    for (std::size_t n : {2u, 3u, 17u, 1000u, 100000u}) {
        std::vector<std::atomic<int>> hits(n);
        std::atomic<int> ranges{0};
        ember::parallel_for(&exec, n, [&](std::size_t b, std::size_t e) {
            ++ranges;
            for (std::size_t i = b; i < e; ++i) hits[i]++;
        });
        for (std::size_t i = 0; i < n; ++i) REQUIRE(hits[i].load() == 1);
        if (n >= 17) CHECK(ranges.load() > 1);
    }
}

TEST_CASE("thread_pool: back-to-back jobs and jobs after the workers fell asleep, with and without spinning") {
    using std::chrono::microseconds;
    for (microseconds spin : {microseconds(0), microseconds(5), ember::thread_pool::default_spin}) {
        CAPTURE(spin.count());
        ember::thread_pool pool(3, spin);
        CHECK(pool.spin() == spin);
        const ember::executor exec = pool.as_executor();
        std::atomic<std::size_t> total{0};
        std::size_t expected = 0;
        for (int job = 0; job < 3000; ++job) {  // a lost wake-up or hand-off would hang or miss a range here
            const std::size_t n = 1 + static_cast<std::size_t>(job % 13);
            ember::parallel_for(&exec, n, [&](std::size_t b, std::size_t e) { total += e - b; });
            expected += n;
            if (job % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the spin: asleep
        }
        CHECK(total.load() == expected);
    }
}

TEST_CASE("thread_pool: nested parallel_for runs inline instead of deadlocking") {
    ember::thread_pool pool(2);
    const ember::executor exec = pool.as_executor();
    std::atomic<int> inner{0};
    ember::parallel_for(&exec, 8, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) ember::parallel_for(&exec, 4, [&](std::size_t x, std::size_t y) { inner += int(y - x); });
    });
    CHECK(inner.load() == 32);
}

TEST_CASE("thread_pool: idle workers sleep once their spin is over (process CPU time stays near zero while idle)") {
    ember::thread_pool pool(2);
    pool.start();
    const ember::executor exec = pool.as_executor();
    std::atomic<int> n{0};
    ember::parallel_for(&exec, 100, [&](std::size_t b, std::size_t e) { n += int(e - b); });
    const std::clock_t cpu0 = std::clock();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const double idle_cpu_s = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
    // a spinning worker would burn ~0.3 s of CPU here; a sleeping one almost none
    CHECK(idle_cpu_s < 0.05);
    CHECK(n.load() == 100);
}

TEST_CASE("thread_pool: a session with a pool gives the serial result") {
    ember::graph_builder b("gemm");
    const auto x = b.input("x", ember::dtype::float32, {64, 32});
    b.output(b.node("Gemm", {x, b.constant("w", ember::test::random_f32({32, 16}, 1))}), "y");
    auto p = ember::compile(*std::move(b).build());
    REQUIRE(p);
    const ember::tensor in = ember::test::random_f32({64, 32}, 2);
    std::vector<float> serial(64 * 16), threaded(64 * 16);
    ember::session s(*p);
    REQUIRE(s.bind_input(0, in.bytes(), in.size_bytes()) == ember::status::ok);
    REQUIRE(s.bind_output(0, serial) == ember::status::ok);
    REQUIRE(s.run() == ember::status::ok);
    ember::thread_pool pool(2);
    const ember::executor exec = pool.as_executor();
    s.set_executor(&exec);
    REQUIRE(s.bind_output(0, threaded) == ember::status::ok);
    REQUIRE(s.run() == ember::status::ok);
    CHECK(serial == threaded);
}
