// SPDX-License-Identifier: Apache-2.0
// thread_pool's test cases that need nothing but the pool: included by thread_pool_test.cpp (in
// ember_tests, the futex build on Linux) and by thread_pool_condvar_main.cpp (the condition-
// variable build that other systems get, run here too).
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

#include <ember/runtime/thread_pool.hpp>

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

namespace {
// Process CPU time (every thread's) spent while the pool idles `idle` after one job.
double idle_cpu_seconds(ember::thread_pool& pool, std::chrono::milliseconds idle) {
    pool.start();
    const ember::executor exec = pool.as_executor();
    std::atomic<int> n{0};
    ember::parallel_for(&exec, 100, [&](std::size_t b, std::size_t e) { n += int(e - b); });
    REQUIRE(n.load() == 100);
    const std::clock_t cpu0 = std::clock();
    std::this_thread::sleep_for(idle);
    return double(std::clock() - cpu0) / CLOCKS_PER_SEC;
}
} // namespace

TEST_CASE("thread_pool: idle workers park (process CPU time near zero between runs), spinning no longer than its budget") {
    using std::chrono::milliseconds;
    CHECK(ember::thread_pool::default_spin.count() == 0);
    {
        ember::thread_pool pool(3);  // default: no spin, two workers park at once
        const double cpu = idle_cpu_seconds(pool, milliseconds(300));
        MESSAGE("default pool, 3 threads: " << cpu * 1e3 << " ms of CPU in 300 ms idle");
        CHECK(cpu < 0.02);  // two spinning workers would burn ~0.6 s here
    }
    {
        ember::thread_pool pool(2, std::chrono::milliseconds(30));  // one worker, 30 ms budget
        const double cpu = idle_cpu_seconds(pool, milliseconds(300));
        MESSAGE("spin 30 ms, 2 threads: " << cpu * 1e3 << " ms of CPU in 300 ms idle");
        CHECK(cpu < 0.03 + 0.03);  // the budget, and then parked
    }
    {
        // The measurement sees spinning when there is some: a worker whose budget outlasts the
        // window burns CPU for all of it (on a loaded machine it may get less than a whole core).
        ember::thread_pool pool(2, std::chrono::milliseconds(2000));
        const double cpu = idle_cpu_seconds(pool, milliseconds(300));
        MESSAGE("spin 2 s, 2 threads: " << cpu * 1e3 << " ms of CPU in 300 ms idle");
        CHECK(cpu > 0.03);
    }
}

TEST_CASE("thread_pool: callers on several threads at once never wait for each other (a busy pool runs the call inline)") {
    ember::thread_pool pool(3);
    pool.start();
    const ember::executor exec = pool.as_executor();
    constexpr int callers = 4, jobs = 2000;
    std::vector<std::thread> threads;
    std::atomic<std::size_t> total{0}, wrong{0};  // counted here, checked on the test's thread
    for (int c = 0; c < callers; ++c)
        threads.emplace_back([&, c] {
            for (int job = 0; job < jobs; ++job) {
                const std::size_t n = 1 + static_cast<std::size_t>((job + c) % 29);
                std::vector<int> hits(n, 0);
                ember::parallel_for(&exec, n, [&](std::size_t b, std::size_t e) {
                    for (std::size_t i = b; i < e; ++i) ++hits[i];
                });
                for (std::size_t i = 0; i < n; ++i) wrong += hits[i] != 1;
                total += n;
            }
        });
    for (std::thread& t : threads) t.join();
    std::size_t expected = 0;
    for (int c = 0; c < callers; ++c)
        for (int job = 0; job < jobs; ++job) expected += 1 + static_cast<std::size_t>((job + c) % 29);
    CHECK(total.load() == expected);
    CHECK(wrong.load() == 0);
}
