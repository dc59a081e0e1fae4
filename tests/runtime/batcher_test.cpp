// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <ember/ember.hpp>
#include <ember/runtime/batcher.hpp>

#include "support/check.hpp"

using ember::dtype;
using ember::status;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t features = 6;
constexpr std::int64_t classes = 5;

// y = softmax(relu(x * w + b)) over [batch, 6] x [6, 5]: each row on its own, as a batcher needs.
ember::graph row_model() {
    ember::graph_builder b("rows");
    const auto x = b.input("x", dtype::float32, {"batch", features});
    const auto w = b.constant("w", ember::test::random_f32({features, classes}, 21));
    const auto bias = b.constant("b", ember::test::random_f32({classes}, 22));
    b.output(b.node("Softmax", {b.node("Relu", {b.node("Gemm", {x, w, bias})})}, {ember::attribute::of("axis", -1)}), "y");
    return *std::move(b).build();
}

// The oracle: the model compiled for one item, run on its own.
std::vector<float> run_alone(const ember::graph& g, const float* x) {
    ember::compile_options o;
    o.dim_values = {{"batch", 1}};
    auto p = ember::compile(g, o);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    std::vector<float> y(classes);
    REQUIRE(s.bind_input(0, x, features * sizeof(float)) == status::ok);
    REQUIRE(s.bind_output(0, y.data(), y.size() * sizeof(float)) == status::ok);
    REQUIRE(s.run() == status::ok);
    return y;
}

std::unique_ptr<ember::batcher> make(const ember::graph& g, const ember::batcher_options& o) {
    auto b = ember::batcher::create(g, {}, o);
    REQUIRE_MESSAGE(b, b.error().message);
    return std::move(*b);
}

status run_rows(ember::batcher& b, const float* x, float* y, std::size_t items) {
    const void* in[] = {x};
    void* out[] = {y};
    return b.run(in, out, items);
}

} // namespace

TEST_CASE("batcher: many threads' requests come back with their own rows, equal to runs alone") {
    const ember::graph g = row_model();
    ember::batcher_options o;
    o.max_batch = 8;
    o.max_delay = 2ms;
    SUBCASE("one instance") { o.instances = 1; }
    SUBCASE("three instances side by side") { o.instances = 3; }
    auto b = make(g, o);
    CHECK(b->max_batch() == 8);
    CHECK(b->input_item_bytes(0) == features * sizeof(float));
    CHECK(b->output_item_bytes(0) == classes * sizeof(float));

    constexpr int threads = 12, rounds = 20;
    const std::vector<float> data = ember::test::values_f32(ember::test::random_f32({threads * rounds * 3, features}, 23));
    std::vector<float> expected;
    for (std::size_t row = 0; row < data.size() / features; ++row) {
        const std::vector<float> y = run_alone(g, &data[row * features]);
        expected.insert(expected.end(), y.begin(), y.end());
    }
    std::atomic<int> wrong{0}, failed{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int r = 0; r < rounds; ++r) {
                const std::size_t items = 1 + static_cast<std::size_t>((t + r) % 3);  // 1, 2 or 3 rows per request
                const std::size_t row = static_cast<std::size_t>((t * rounds + r) * 3);
                std::array<float, 3 * classes> y{};
                if (run_rows(*b, &data[row * features], y.data(), items) != status::ok) {
                    ++failed;
                    continue;
                }
                if (std::memcmp(y.data(), &expected[row * classes], items * classes * sizeof(float)) != 0) ++wrong;
            }
        });
    for (std::thread& t : pool) t.join();
    CHECK(failed == 0);
    CHECK(wrong == 0);

    const ember::batcher_stats s = b->stats();
    CHECK(s.requests == threads * rounds);
    std::uint64_t items = 0, batches = 0, batched_items = 0;
    for (int t = 0; t < threads; ++t)
        for (int r = 0; r < rounds; ++r) items += 1 + static_cast<std::uint64_t>((t + r) % 3);
    REQUIRE(s.batch_items.size() == 9);
    for (std::size_t n = 1; n < s.batch_items.size(); ++n) {
        batches += s.batch_items[n];
        batched_items += n * s.batch_items[n];
    }
    CHECK(s.items == items);
    CHECK(batched_items == items);
    CHECK(batches == s.batches);
    CHECK(s.batches < s.requests);  // twelve threads at once: some batches held more than one request
    CHECK(s.refused == 0);
    CHECK(s.failed == 0);
    CHECK(s.queue_depth == 0);
}

TEST_CASE("batcher: a batch waits max_delay for company, and runs at once when max_batch items wait") {
    const ember::graph g = row_model();
    const std::vector<float> x = ember::test::values_f32(ember::test::random_f32({4, features}, 24));
    std::vector<float> y(4 * classes);

    ember::batcher_options o;
    o.max_batch = 4;
    o.max_delay = 300ms;
    auto b = make(g, o);
    auto t0 = std::chrono::steady_clock::now();
    CHECK(run_rows(*b, x.data(), y.data(), 1) == status::ok);
    CHECK(std::chrono::steady_clock::now() - t0 >= 300ms);  // alone: it waited for company

    t0 = std::chrono::steady_clock::now();
    CHECK(run_rows(*b, x.data(), y.data(), 4) == status::ok);  // a full batch does not wait
    CHECK(std::chrono::steady_clock::now() - t0 < 250ms);
    CHECK(std::memcmp(&y[3 * classes], run_alone(g, &x[3 * features]).data(), classes * sizeof(float)) == 0);

    o.max_delay = 0us;  // no waiting: a lone request runs as soon as the worker sees it
    auto eager = make(g, o);
    t0 = std::chrono::steady_clock::now();
    CHECK(run_rows(*eager, x.data(), y.data(), 1) == status::ok);
    CHECK(std::chrono::steady_clock::now() - t0 < 250ms);
}

TEST_CASE("batcher: shedding, a full queue and stop() answer busy at once") {
    const ember::graph g = row_model();
    const std::vector<float> x = ember::test::values_f32(ember::test::random_f32({1, features}, 25));

    SUBCASE("the oldest request waited past shed_after: a new one is refused, the old one still runs") {
        ember::batcher_options o;
        o.max_batch = 4;
        o.max_delay = 300ms;  // the first request waits here, long past shed_after
        o.shed_after = 5ms;
        auto b = make(g, o);
        std::vector<float> y_first(classes), y(classes);
        status first = status::invalid_argument;
        std::thread waiting([&] { first = run_rows(*b, x.data(), y_first.data(), 1); });
        while (b->queue_depth() == 0) std::this_thread::yield();
        std::this_thread::sleep_for(20ms);
        const auto t0 = std::chrono::steady_clock::now();
        CHECK(run_rows(*b, x.data(), y.data(), 1) == status::busy);
        CHECK(std::chrono::steady_clock::now() - t0 < 100ms);  // refused at once, not after the wait
        waiting.join();
        CHECK(first == status::ok);
        CHECK(y_first == run_alone(g, x.data()));
        const ember::batcher_stats s = b->stats();
        CHECK(s.refused == 1);
        CHECK(s.shed == 1);
        CHECK(s.requests == 1);
    }
    SUBCASE("max_queue requests wait: one more is refused") {
        ember::batcher_options o;
        o.max_batch = 4;
        o.max_queue = 1;
        o.max_delay = 200ms;
        auto b = make(g, o);
        std::vector<float> y(classes);
        std::thread waiting([&] { CHECK(run_rows(*b, x.data(), y.data(), 1) == status::ok); });
        while (b->queue_depth() == 0) std::this_thread::yield();
        std::vector<float> y2(classes);
        CHECK(run_rows(*b, x.data(), y2.data(), 1) == status::busy);
        waiting.join();
        CHECK(b->stats().refused == 1);
        CHECK(b->stats().shed == 0);
    }
    SUBCASE("stop() runs what is queued, then refuses") {
        ember::batcher_options o;
        o.max_batch = 4;
        o.max_delay = 10s;  // only stop() can end this wait
        auto b = make(g, o);
        std::vector<float> y(classes);
        status first = status::invalid_argument;
        std::thread waiting([&] { first = run_rows(*b, x.data(), y.data(), 1); });
        while (b->queue_depth() == 0) std::this_thread::yield();
        const auto t0 = std::chrono::steady_clock::now();
        b->stop();
        waiting.join();
        CHECK(std::chrono::steady_clock::now() - t0 < 5s);
        CHECK(first == status::ok);
        CHECK(y == run_alone(g, x.data()));
        CHECK(run_rows(*b, x.data(), y.data(), 1) == status::busy);
        b->stop();  // again: nothing happens
    }
}

TEST_CASE("batcher: wrong counts are invalid_argument; models without a batch axis are refused at create") {
    const ember::graph g = row_model();
    ember::batcher_options o;
    o.max_batch = 3;
    o.max_delay = 0us;
    auto b = make(g, o);
    float x[4 * features] = {}, y[4 * classes] = {};
    const void* in[] = {x};
    void* out[] = {y};
    CHECK(b->run(in, out, 0) == status::invalid_argument);
    CHECK(b->run(in, out, 4) == status::invalid_argument);  // more than max_batch
    CHECK(b->run(ember::span<const void* const>(), out, 1) == status::invalid_argument);
    CHECK(b->run(in, ember::span<void* const>(), 1) == status::invalid_argument);
    CHECK(b->run(in, out, 3) == status::ok);

    o.max_batch = 0;
    auto zero = ember::batcher::create(g, {}, o);
    REQUIRE_FALSE(zero);
    CHECK(zero.error().message.find("max_batch") != std::string::npos);
    o.max_batch = 4;
    o.instances = 0;
    auto no_instance = ember::batcher::create(g, {}, o);
    REQUIRE_FALSE(no_instance);
    CHECK(no_instance.error().message.find("instances") != std::string::npos);
    o.instances = 1;
    o.max_batch = 4;
    o.batch_sizes = {2, 9};
    auto outside = ember::batcher::create(g, {}, o);
    REQUIRE_FALSE(outside);
    CHECK(outside.error().message.find("batch size 9") != std::string::npos);
    o.batch_sizes.clear();

    SUBCASE("an output that sums over the batch") {
        ember::graph_builder gb("pooled");
        const auto x_in = gb.input("x", dtype::float32, {"batch", features});
        gb.output(gb.node("ReduceMean", {x_in}, {ember::attribute::of("axes", std::vector<std::int64_t>{0}), ember::attribute::of("keepdims", 1)}), "total");
        auto r = ember::batcher::create(*std::move(gb).build(), {}, o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("output 'total' does not have the batch as its first axis") != std::string::npos);
    }
    SUBCASE("an input whose first axis is fixed above 1: maybe not a batch at all") {
        ember::graph_builder gb("fixed");
        const auto x_in = gb.input("x", dtype::float32, {2, features});
        gb.output(gb.node("Relu", {x_in}), "y");
        const ember::graph fixed = *std::move(gb).build();
        auto r = ember::batcher::create(fixed, {}, o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("input 'x' is declared [2, 6]: its first axis is fixed at 2") != std::string::npos);
        ember::compile_options given;  // ... unless its item shape is given
        given.input_shapes = {{"x", {1, features}}};
        auto ok = ember::batcher::create(fixed, given, o);
        CHECK_MESSAGE(ok, ok.error().message);
    }
    SUBCASE("an input with an unknown inner dimension") {
        ember::graph_builder gb("unknown");
        const auto x_in = gb.input("x", dtype::float32, {"batch", "width"});
        gb.output(gb.node("Relu", {x_in}), "y");
        const ember::graph unknown = *std::move(gb).build();
        auto r = ember::batcher::create(unknown, {}, o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("input 'x' has an unknown dimension 1") != std::string::npos);
        ember::compile_options given;  // ... unless its item shape is given
        given.input_shapes = {{"x", {1, 7}}};
        auto ok = ember::batcher::create(unknown, given, o);
        CHECK_MESSAGE(ok, ok.error().message);
    }
}

TEST_CASE("batcher: batches run on the executor given, with the same bits") {
    const ember::graph g = row_model();
    ember::thread_pool pool(2);
    const ember::executor exec = pool.as_executor();
    ember::batcher_options o;
    o.max_batch = 16;
    o.max_delay = 1ms;
    o.exec = &exec;
    auto b = make(g, o);
    const std::vector<float> x = ember::test::values_f32(ember::test::random_f32({16, features}, 26));
    std::vector<float> y(16 * classes);
    REQUIRE(run_rows(*b, x.data(), y.data(), 16) == status::ok);
    for (std::size_t row = 0; row < 16; ++row)
        CHECK(std::memcmp(&y[row * classes], run_alone(g, &x[row * features]).data(), classes * sizeof(float)) == 0);
}
