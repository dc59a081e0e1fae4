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
    std::uint32_t buffer, first, last, value, part_of;
};

// Every placement that lives in the arena (intermediates, workspaces, io slots' default buffers).
std::vector<arena_range> arena_ranges(const ember::plan& p) {
    std::vector<arena_range> out;
    for (const ember::value_placement& v : p.placements())
        out.push_back({v.arena_offset, v.arena_offset + v.bytes, v.buffer, v.first_step, v.last_step, v.value, v.part_of});
    return out;
}

constexpr std::uint32_t whole = 0xffffffffu;  // value_placement::part_of of a value that is no part

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
            if (a.part_of != whole && a.part_of == b.value) {  // a joined Concat's input inside its output
                CHECK((a.buffer == b.buffer && b.begin <= a.begin && a.end <= b.end));
            } else if (b.part_of != whole && b.part_of == a.value) {
                CHECK((a.buffer == b.buffer && a.begin <= b.begin && b.end <= a.end));
            } else if (a.part_of != whole && a.part_of == b.part_of) {  // two inputs of one: side by side
                CHECK_MESSAGE((a.buffer == b.buffer && !bytes_overlap), "parts " << a.value << " and " << b.value);
            } else if (a.buffer == b.buffer && bytes_overlap) {
                // an in-place chain: one ends where the next begins
                CHECK_MESSAGE((a.last <= b.first || b.last <= a.first), "values " << a.value << " and " << b.value);
            } else if (a.buffer != b.buffer && a.first <= b.last && b.first <= a.last) {
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

namespace {

bool has_step(const ember::plan& p, std::string_view op) {
    for (std::size_t i = 0; i < p.steps().size(); ++i)
        if (p.step_op(i) == op) return true;
    return false;
}

const ember::value_placement* placement_of(const ember::plan& p, ember::value_id v) {
    for (const ember::value_placement& x : p.placements())
        if (x.value == v) return &x;
    return nullptr;
}

// Runs p and a plan of g that reuses nothing on the same inputs; they must agree bit for bit.
void check_same_as_without_reuse(const ember::graph& g, const ember::plan& p, std::uint32_t seed) {
    ember::compile_options no_reuse;
    no_reuse.reuse_memory = false;
    auto q = ember::compile(g, no_reuse);
    REQUIRE_MESSAGE(q, q.error().message);
    const auto a = run_all(p, seed);
    const auto c = run_all(*q, seed);
    REQUIRE(a.size() == c.size());
    for (std::size_t k = 0; k < a.size(); ++k) CHECK(a[k] == c[k]);
}

} // namespace

TEST_CASE("memory plan: a channel Concat of one image is computed in place and runs no step") {
    // SqueezeNet's fire module in small: two branches of one value, joined on the channels, read on
    ember::graph_builder b("fire");
    const auto x = b.input("x", ember::dtype::float32, {1, 4, 8, 8});
    const auto squeeze = b.node("Relu", {x});
    const auto left = b.node("Sigmoid", {squeeze});
    const auto right = b.node("Tanh", {squeeze});
    const auto mid = b.node("Exp", {squeeze});
    const auto joined = b.node("Concat", {left, right, mid}, {ember::attribute::of("axis", 1)});
    b.output(b.node("Relu", {joined}), "y");
    const auto neg = b.node("Neg", {right});  // a part read again after the Concat: in place over its bytes
    b.output(b.node("Sigmoid", {neg}), "z");
    auto g = std::move(b).build();
    REQUIRE(g);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    CHECK_FALSE(has_step(*p, "Concat"));
    const ember::value_placement* whole_value = placement_of(*p, joined);
    REQUIRE(whole_value);
    const std::size_t part_bytes = 4 * 8 * 8 * sizeof(float);
    const ember::value_id parts[] = {left, right, mid};
    for (std::size_t k = 0; k < 3; ++k) {
        const ember::value_placement* part = placement_of(*p, parts[k]);
        REQUIRE(part);
        CHECK(part->part_of == joined);
        CHECK(part->buffer == whole_value->buffer);
        CHECK(part->arena_offset == whole_value->arena_offset + k * part_bytes);
    }
    const ember::value_placement* in_place = placement_of(*p, neg);
    REQUIRE(in_place);
    CHECK(in_place->buffer == whole_value->buffer);
    CHECK(in_place->arena_offset == whole_value->arena_offset + part_bytes);
    check_no_live_overlap(*p);
    check_same_as_without_reuse(*g, *p, 5);
}

TEST_CASE("memory plan: a Concat that cannot be computed in place still copies, with the right result") {
    struct shape_case {
        const char* what;
        ember::shape a, b;
        std::int64_t axis;
    };
    const shape_case cases[] = {
        {"a batch of two: each input is two runs of the output", {2, 4, 4, 4}, {2, 4, 4, 4}, 1},
        {"axis 2 with 4 channels before it", {1, 4, 4, 4}, {1, 4, 4, 4}, 2},
        {"the second input starts 12 bytes in", {1, 3}, {1, 16}, 1},
    };
    for (const shape_case& c : cases) {
        CAPTURE(c.what);
        ember::graph_builder b("copy");
        const auto x = b.input("x", ember::dtype::float32, ember::partial_shape(c.a));
        const auto y = b.input("y", ember::dtype::float32, ember::partial_shape(c.b));
        const auto joined = b.node("Concat", {b.node("Relu", {x}), b.node("Sigmoid", {y})}, {ember::attribute::of("axis", c.axis)});
        b.output(b.node("Tanh", {joined}), "out");
        auto g = std::move(b).build();
        REQUIRE(g);
        auto p = ember::compile(*g);
        REQUIRE_MESSAGE(p, p.error().message);
        CHECK(has_step(*p, "Concat"));
        check_no_live_overlap(*p);
        check_same_as_without_reuse(*g, *p, 9);
    }
    // inputs that are no node's output of this plan, or a graph output, or listed twice; an output that is a graph output
    ember::graph_builder b("inputs");
    const auto x = b.input("x", ember::dtype::float32, {1, 16});
    const auto r = b.node("Relu", {x});
    const auto s = b.node("Sigmoid", {x});
    const auto t = b.node("Tanh", {x});
    const auto c1 = b.node("Concat", {x, r}, {ember::attribute::of("axis", 1)});                     // a graph input
    const auto c2 = b.node("Concat", {r, r}, {ember::attribute::of("axis", 1)});                     // twice
    const auto c3 = b.node("Concat", {s, b.constant("k", ember::test::random_f32({1, 16}, 2))}, {ember::attribute::of("axis", 1)});
    const auto c4 = b.node("Concat", {t, s}, {ember::attribute::of("axis", 1)});                     // a graph output
    b.output(b.node("Relu", {c1}), "o1");
    b.output(b.node("Relu", {c2}), "o2");
    b.output(b.node("Relu", {c3}), "o3");
    b.output(c4, "o4");
    b.output(t, "t");
    auto g = std::move(b).build();
    REQUIRE(g);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    std::size_t copies = 0;
    for (std::size_t i = 0; i < p->steps().size(); ++i) copies += p->step_op(i) == "Concat" ? 1 : 0;
    CHECK(copies == 4);
    check_no_live_overlap(*p);
    check_same_as_without_reuse(*g, *p, 11);
}

TEST_CASE("memory plan: random graphs with Concats give the results of a plan without reuse") {
    // values of shape [1, 16 m], m = 1..4 (whole cache lines); unary ops, Adds of equal shapes, and
    // Concats of two or three values on axis 1, some listing a value twice or a graph input
    std::size_t joined_total = 0, copied_total = 0;
    for (std::uint32_t seed = 1; seed <= 40; ++seed) {
        CAPTURE(seed);
        std::mt19937 rng(seed);
        ember::graph_builder b("concats" + std::to_string(seed));
        std::vector<ember::value_id> pool;
        std::vector<std::int64_t> width;
        for (std::int64_t m = 1; m <= 2; ++m) {
            pool.push_back(b.input("x" + std::to_string(m), ember::dtype::float32, {1, 16 * m}));
            width.push_back(m);
        }
        const char* unary[] = {"Relu", "Sigmoid", "Tanh", "Neg"};
        for (int n = 0; n < 12 + static_cast<int>(seed % 12); ++n) {
            const std::size_t span = std::min<std::size_t>(pool.size(), 5);
            auto pick = [&] { return pool.size() - 1 - rng() % span; };
            const std::uint32_t kind = rng() % 4;
            const std::size_t a = pick();
            if (kind <= 1) {
                pool.push_back(b.node(unary[rng() % 4], {pool[a]}));
                width.push_back(width[a]);
            } else if (kind == 2) {
                std::size_t c = pick();
                if (width[c] != width[a]) c = a;
                pool.push_back(b.node("Add", {pool[a], pool[c]}));
                width.push_back(width[a]);
            } else {
                std::vector<ember::value_id> ins{pool[a]};
                std::int64_t w = width[a];
                for (int k = rng() % 2; k < 2; ++k) {
                    const std::size_t c = pick();
                    if (w + width[c] > 4) break;
                    ins.push_back(pool[c]);
                    w += width[c];
                }
                pool.push_back(b.node("Concat", ins, {ember::attribute::of("axis", 1)}));
                width.push_back(w);
            }
        }
        b.output(pool.back(), "y");
        b.output(pool[pool.size() / 2], "mid");
        auto g = std::move(b).build();
        REQUIRE_MESSAGE(g, g.error().message);
        auto p = ember::compile(*g);
        REQUIRE_MESSAGE(p, p.error().message);
        check_no_live_overlap(*p);
        check_same_as_without_reuse(*g, *p, seed);
        std::size_t concats = 0, copied = 0;
        for (const ember::node& n : g->nodes) concats += n.op_type == "Concat" ? 1 : 0;
        for (std::size_t i = 0; i < p->steps().size(); ++i) copied += p->step_op(i) == "Concat" ? 1 : 0;
        joined_total += concats - copied;
        copied_total += copied;
    }
    CHECK(joined_total >= 20);  // both kinds happen, often
    CHECK(copied_total >= 5);
}
