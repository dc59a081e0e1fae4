// SPDX-License-Identifier: Apache-2.0
// run() allocates nothing: every global operator new/delete of this test binary is counted, and
// so is every call to the plan's ember::allocator. The counts during run() must be zero.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include <ember/ember.hpp>

#include "support/check.hpp"

namespace {
std::atomic<long> g_news{0};
std::atomic<long> g_ember_allocs{0};

void* counted(std::size_t n, std::size_t align = 0) {
    g_news.fetch_add(1, std::memory_order_relaxed);
    if (n == 0) n = 1;
    void* p = align ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n);
    return p;
}

void* counting_alloc(void*, std::size_t bytes, std::size_t alignment) noexcept {
    g_ember_allocs.fetch_add(1, std::memory_order_relaxed);
    return ember::default_allocator().allocate(bytes, alignment);
}
void counting_free(void*, void* p, std::size_t bytes, std::size_t alignment) noexcept {
    g_ember_allocs.fetch_add(1, std::memory_order_relaxed);
    ember::default_allocator().deallocate(p, bytes, alignment);
}
} // namespace

// The replaceable global allocation functions (all forms that can be called). They pair new with
// free() on purpose: both sides are ours, which GCC cannot see.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
    if (void* p = counted(n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    if (void* p = counted(n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted(n); }
void* operator new(std::size_t n, std::align_val_t a) {
    if (void* p = counted(n, static_cast<std::size_t>(a))) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
    if (void* p = counted(n, static_cast<std::size_t>(a))) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace {
ember::graph test_model() {
    ember::graph_builder b("model");
    const auto x = b.input("x", ember::dtype::float32, {2, 16});
    auto h = b.node("Gemm", {x, b.constant("w1", ember::test::random_f32({16, 32}, 1)), b.constant("b1", ember::test::random_f32({32}, 2))});
    h = b.node("Relu", {h});
    h = b.node("Gemm", {h, b.constant("w2", ember::test::random_f32({32, 8}, 3))}, {ember::attribute::of("alpha", 0.5f)});
    h = b.node("Add", {h, b.constant("k", ember::test::random_f32({1, 8}, 4))});
    h = b.node("Tanh", {b.node("Mul", {h, h})});
    b.output(b.node("Sigmoid", {h}), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    return std::move(*g);
}
} // namespace

TEST_CASE("zero allocation: the hooks count (the test can fail)") {
    const long before = g_news.load();
    std::vector<int> v(100);
    v[3] = 1;
    CHECK(g_news.load() - before >= 1);
    CHECK(v[3] == 1);
}

TEST_CASE("zero allocation: run() makes no call to operator new or to the ember allocator") {
    ember::compile_options options;
    options.alloc = {nullptr, &counting_alloc, &counting_free};
    auto p = ember::compile(test_model(), options);
    REQUIRE_MESSAGE(p, p.error().message);
    CHECK(g_ember_allocs.load() > 0);  // the plan's weights did come from it

    std::vector<std::byte> arena(p->arena_bytes());
    ember::session s(*p, arena);
    const ember::tensor x = ember::test::random_f32({2, 16}, 5);
    std::vector<float> y(16);
    REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == ember::status::ok);
    REQUIRE(s.bind_output(0, y) == ember::status::ok);

    const long news = g_news.load(), allocs = g_ember_allocs.load();
    ember::status st = ember::status::ok;
    for (int i = 0; i < 10 && st == ember::status::ok; ++i) st = s.run();
    const long news_during = g_news.load() - news, allocs_during = g_ember_allocs.load() - allocs;
    CHECK(st == ember::status::ok);
    CHECK(news_during == 0);
    CHECK(allocs_during == 0);
}

TEST_CASE("zero allocation: run() over a started thread pool allocates nothing either") {
    auto p = ember::compile(test_model());
    REQUIRE(p);
    ember::thread_pool pool(2);
    pool.start();
    const ember::executor exec = pool.as_executor();
    ember::session s(*p, &exec);
    const long news = g_news.load();
    ember::status st = ember::status::ok;
    for (int i = 0; i < 10 && st == ember::status::ok; ++i) st = s.run();
    CHECK(st == ember::status::ok);
    CHECK(g_news.load() - news == 0);
}

TEST_CASE("zero allocation: run() and run_for() with a trace_recorder hooked in allocate nothing") {
    auto p = ember::compile(test_model());
    REQUIRE(p);
    ember::session s(*p);
    ember::trace_recorder recorder(20 * p->steps().size());  // the recorder's one allocation
    s.set_profile_hook(recorder.hook());
    const long news = g_news.load();
    ember::status st = ember::status::ok;
    for (int i = 0; i < 10 && st == ember::status::ok; ++i) {
        st = s.run();
        if (st == ember::status::ok && !s.run_for({}).done()) st = ember::status::invalid_argument;
    }
    const long news_during = g_news.load() - news;
    CHECK(st == ember::status::ok);
    CHECK(news_during == 0);
    CHECK(recorder.size() == 20 * p->steps().size());
}
