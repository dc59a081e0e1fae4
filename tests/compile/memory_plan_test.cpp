// SPDX-License-Identifier: Apache-2.0
// Planner invariants: values alive at the same time never share bytes; values sharing a buffer
// form an in-place chain; arena_bytes() is exactly what the placements need; and memory reuse
// never changes a result (compared with a plan that reuses nothing), on random graphs.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <ember/ember.hpp>

#include "support/check.hpp"

namespace {

struct arena_range {
    std::size_t begin, end;
    std::uint32_t buffer, first, last, value;
};

// Every placement that lives in the arena (intermediates, workspaces, io slots' default buffers).
std::vector<arena_range> arena_ranges(const ember::plan& p) {
    std::vector<arena_range> out;
    for (const ember::value_placement& v : p.placements())
        out.push_back({v.arena_offset, v.arena_offset + v.bytes, v.buffer, v.first_step, v.last_step, v.value});
    return out;
}

void check_no_live_overlap(const ember::plan& p) {
    const std::vector<arena_range> r = arena_ranges(p);
    std::size_t needed = 0;
    for (const arena_range& a : r) needed = std::max(needed, a.end);
    CHECK(p.arena_bytes() >= needed);
    CHECK(p.arena_bytes() < needed + EMBER_ALIGNMENT);  // exact up to the final alignment
    for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = i + 1; j < r.size(); ++j) {
            const arena_range& a = r[i];
            const arena_range& b = r[j];
            const bool bytes_overlap = a.begin < b.end && b.begin < a.end;
            if (a.buffer == b.buffer) {
                // an in-place chain: one ends where the next begins
                CHECK_MESSAGE((a.last <= b.first || b.last <= a.first), "values " << a.value << " and " << b.value);
            } else if (a.first <= b.last && b.first <= a.last) {
                CHECK_MESSAGE(!bytes_overlap, "live values " << a.value << " and " << b.value << " overlap");
            }
        }
}

// A random DAG of element-wise ops over shapes that all broadcast with each other.
ember::graph random_graph(std::uint32_t seed, std::size_t nodes) {
    std::mt19937 rng(seed);
    const ember::shape shapes[] = {{1, 1}, {4, 1}, {1, 8}, {4, 8}};
    ember::graph_builder b("random" + std::to_string(seed));
    std::vector<ember::value_id> pool;
    std::vector<ember::shape> pool_shapes;
    for (int i = 0; i < 3; ++i) {
        const ember::shape& s = shapes[rng() % 4];
        pool.push_back(b.input("x" + std::to_string(i), ember::dtype::float32, ember::partial_shape(s)));
        pool_shapes.push_back(s);
    }
    pool.push_back(b.constant("c", ember::test::random_f32({1, 8}, seed)));
    pool_shapes.push_back({1, 8});
    const char* unary[] = {"Relu", "Sigmoid", "Tanh", "Identity"};
    const char* binary[] = {"Add", "Sub", "Mul"};
    for (std::size_t n = 0; n < nodes; ++n) {
        // prefer recent values so chains (and in-place chances) form
        auto pick = [&] {
            const std::size_t span = std::min<std::size_t>(pool.size(), 6);
            return pool.size() - 1 - rng() % span;
        };
        const std::size_t a = pick();
        if (rng() % 2) {
            pool.push_back(b.node(unary[rng() % 4], {pool[a]}));
            pool_shapes.push_back(pool_shapes[a]);
        } else {
            const std::size_t c = pick();
            pool.push_back(b.node(binary[rng() % 3], {pool[a], pool[c]}));
            ember::shape out;
            ember::broadcast_shapes(pool_shapes[a], pool_shapes[c], out);
            pool_shapes.push_back(out);
        }
    }
    b.output(pool.back(), "y");
    b.output(pool[pool.size() / 2], "mid");
    auto g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    return std::move(*g);
}

std::vector<std::vector<float>> run_all(const ember::plan& p, std::uint32_t seed) {
    ember::session s(p);
    REQUIRE(s.state() == ember::status::ok);
    for (std::size_t i = 0; i < p.input_count(); ++i) {
        ember::tensor_view<float> in = s.input<float>(i);
        REQUIRE(in);
        const ember::tensor values = ember::test::random_f32(in.dims(), seed + static_cast<std::uint32_t>(i));
        std::memcpy(in.data(), values.bytes(), values.size_bytes());
    }
    REQUIRE(s.run() == ember::status::ok);
    std::vector<std::vector<float>> out;
    for (std::size_t k = 0; k < p.output_count(); ++k) {
        auto v = s.output<float>(k);
        out.emplace_back(v.begin(), v.end());
    }
    return out;
}

} // namespace

TEST_CASE("memory plan: assign_offsets never overlaps intersecting lifetimes") {
    std::mt19937 rng(3);
    for (int round = 0; round < 50; ++round) {
        std::vector<ember::lifetime> l;
        for (std::uint32_t i = 0; i < 40; ++i) {
            const std::uint32_t a = rng() % 30, len = rng() % 6;
            l.push_back({i, a, a + len, ember::align_up(1 + rng() % 5000, 64)});
        }
        std::vector<std::size_t> off(l.size());
        const std::size_t total = ember::assign_offsets(ember::span<const ember::lifetime>(l.data(), l.size()),
                                                        ember::span<std::size_t>(off.data(), off.size()), 64);
        std::size_t peak_live = 0;
        for (std::uint32_t t = 0; t < 36; ++t) {
            std::size_t live = 0;
            for (const auto& x : l) live += (x.first_step <= t && t <= x.last_step) ? x.bytes : 0;
            peak_live = std::max(peak_live, live);
        }
        CHECK(total >= peak_live);  // no plan can beat the peak of live bytes
        for (std::size_t i = 0; i < l.size(); ++i) {
            CHECK(off[i] % 64 == 0);
            CHECK(off[i] + l[i].bytes <= total);
            for (std::size_t j = i + 1; j < l.size(); ++j)
                if (ember::lifetimes_intersect(l[i], l[j])) CHECK((off[i] + l[i].bytes <= off[j] || off[j] + l[j].bytes <= off[i]));
        }
    }
}

TEST_CASE("memory plan: a chain of element-wise ops runs in place in one buffer") {
    ember::graph_builder b("chain");
    auto v = b.input("x", ember::dtype::float32, {256});
    v = b.node("Relu", {v});  // graph input -> intermediate: cannot be in place (io slot)
    for (int i = 0; i < 6; ++i) v = b.node(i % 2 ? "Sigmoid" : "Tanh", {v});
    b.output(b.node("Relu", {v}), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    // two io slots of 1 KiB and one shared intermediate buffer
    CHECK(p->arena_bytes() == 3 * 1024);
    check_no_live_overlap(*p);

    ember::compile_options no_reuse;
    no_reuse.reuse_memory = false;
    auto q = ember::compile(*g, no_reuse);
    REQUIRE(q);
    CHECK(q->arena_bytes() == 9 * 1024);
    check_no_live_overlap(*q);
}

TEST_CASE("memory plan: random graphs keep the invariants and give the results of a plan without reuse") {
    for (std::uint32_t seed = 1; seed <= 40; ++seed) {
        CAPTURE(seed);
        const ember::graph g = random_graph(seed, 5 + seed % 25);
        auto p = ember::compile(g);
        REQUIRE_MESSAGE(p, p.error().message);
        check_no_live_overlap(*p);
        ember::compile_options no_reuse;
        no_reuse.reuse_memory = false;
        auto q = ember::compile(g, no_reuse);
        REQUIRE(q);
        CHECK(p->arena_bytes() <= q->arena_bytes());
        const auto a = run_all(*p, seed);
        const auto c = run_all(*q, seed);
        REQUIRE(a.size() == c.size());
        for (std::size_t k = 0; k < a.size(); ++k) CHECK(a[k] == c[k]);
    }
}

TEST_CASE("memory plan: a session refuses an arena one byte short or misaligned") {
    const ember::graph g = random_graph(7, 10);
    auto p = ember::compile(g);
    REQUIRE(p);
    std::vector<std::byte> exact(p->arena_bytes() + 16);
    CHECK(ember::session(*p, ember::span<std::byte>(exact.data(), p->arena_bytes())).state() == ember::status::ok);
    ember::session short_one(*p, ember::span<std::byte>(exact.data(), p->arena_bytes() - 1));
    CHECK(short_one.state() == ember::status::invalid_argument);
    CHECK(short_one.run() == ember::status::invalid_argument);
    CHECK(ember::session(*p, ember::span<std::byte>(exact.data() + 1, p->arena_bytes())).state() == ember::status::invalid_argument);
}
