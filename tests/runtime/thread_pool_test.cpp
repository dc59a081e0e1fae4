// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

#include <ember/ember.hpp>

#include "runtime/thread_pool_cases.hpp"
#include "support/check.hpp"

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
