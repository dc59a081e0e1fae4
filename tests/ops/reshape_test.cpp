// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <ember/ops/reshape.hpp>

#include "support/check.hpp"

namespace {

struct reshape_run {
    ember::result<ember::plan> compiled = ember::error_info{ember::status::invalid_argument, -1, "not compiled"};
    ember::tensor y;
    const ember::error_info& error() const { return compiled.error(); }
};

// data -> Reshape(data, shape) -> y, with the shape a constant; the data is a graph input or,
// with feed::constants, a constant too (the node is then folded at compile time).
reshape_run run_reshape(const ember::tensor& data, std::vector<std::int64_t> target, std::vector<ember::attribute> attrs = {},
                        ember::test::feed how = ember::test::feed::inputs, std::int64_t opset = 0) {
    ember::graph_builder b("reshape");
    const ember::value_id x =
        how == ember::test::feed::constants ? b.constant("data", data) : b.input("data", data.type(), ember::partial_shape(data.dims()));
    const auto n = static_cast<std::int64_t>(target.size());
    const ember::value_id s = b.constant("shape", ember::test::make<std::int64_t>({n}, std::move(target)));
    b.output(b.node("Reshape", {x, s}, std::move(attrs), "node"), "y");
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    if (opset != 0) g->opsets.push_back(ember::opset{"", opset});
    reshape_run r;
    r.compiled = ember::compile(*g);
    if (!r.compiled) return r;
    ember::session sess(*r.compiled);
    if (how == ember::test::feed::inputs) REQUIRE(sess.bind_input(0, data.bytes(), data.size_bytes()) == ember::status::ok);
    auto y = ember::tensor::create(r.compiled->output(0).type, r.compiled->output(0).dims);
    REQUIRE(y);
    REQUIRE(sess.bind_output(0, y->bytes(), y->size_bytes()) == ember::status::ok);
    REQUIRE(sess.run() == ember::status::ok);
    r.y = std::move(*y);
    return r;
}

// Both feeds; checks they agree and that the bytes are the input's, unchanged. Returns the shape.
ember::shape reshape_both_ways(const ember::tensor& data, std::vector<std::int64_t> target, std::vector<ember::attribute> attrs = {}) {
    reshape_run a = run_reshape(data, target, attrs, ember::test::feed::inputs);
    REQUIRE_MESSAGE(a.compiled, a.error().message);
    reshape_run b = run_reshape(data, target, attrs, ember::test::feed::constants);
    REQUIRE_MESSAGE(b.compiled, b.error().message);
    REQUIRE(a.y.dims() == b.y.dims());
    CHECK(a.y.type() == data.type());
    REQUIRE(a.y.size_bytes() == data.size_bytes());
    CHECK(ember::test::same_bytes(a.y, data));
    CHECK(ember::test::same_bytes(b.y, data));
    return a.y.dims();
}

bool mentions(const reshape_run& r, const std::string& text) { return r.error().message.find(text) != std::string::npos; }

} // namespace

TEST_CASE("reshape: explicit dims, a -1 inferred, and 0 copying the input's dimension") {
    const auto x = ember::test::random_f32({2, 3, 4}, 1);
    CHECK(reshape_both_ways(x, {4, 6}) == ember::shape{4, 6});
    CHECK(reshape_both_ways(x, {-1, 4}) == ember::shape{6, 4});
    CHECK(reshape_both_ways(x, {2, -1, 2}) == ember::shape{2, 6, 2});
    CHECK(reshape_both_ways(x, {0, -1}) == ember::shape{2, 12});
    CHECK(reshape_both_ways(x, {0, 0, 4}) == ember::shape{2, 3, 4});
    CHECK(reshape_both_ways(x, {24}) == ember::shape{24});
    CHECK(reshape_both_ways(x, {1, 2, 1, 3, 4, 1}) == ember::shape{1, 2, 1, 3, 4, 1});
}

TEST_CASE("reshape: to and from a scalar, and an empty tensor") {
    CHECK(reshape_both_ways(ember::test::make_f32({1, 1}, {5}), {}) == ember::shape{});
    CHECK(reshape_both_ways(ember::test::make_f32({}, {5}), {1, -1}) == ember::shape{1, 1});
    CHECK(reshape_both_ways(ember::test::make_f32({0, 3}, {}), {3, -1}) == ember::shape{3, 0});
}

TEST_CASE("reshape: allowzero=1 makes a 0 mean an empty dimension instead of a copy") {
    const auto empty = ember::test::make_f32({0, 3}, {});
    CHECK(reshape_both_ways(empty, {3, 0}, {ember::attribute::of("allowzero", 1)}) == ember::shape{3, 0});
    // without allowzero the 0 copies dimension 1 (3): [3, 3] holds 9 elements, not 0
    reshape_run r = run_reshape(empty, {3, 0});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error().code == ember::status::shape_mismatch);
    CHECK(mentions(r, "[3, 3]"));
    // and -1 next to a literal 0 is ambiguous
    reshape_run both = run_reshape(empty, {-1, 0}, {ember::attribute::of("allowzero", 1)});
    REQUIRE_FALSE(both.compiled);
    CHECK(both.error().code == ember::status::invalid_model);
}

TEST_CASE("reshape: any dtype moves unchanged") {
    CHECK(reshape_both_ways(ember::test::make<std::int64_t>({2, 2}, {1, -2, 3, 1ll << 40}), {4}) == ember::shape{4});
    CHECK(reshape_both_ways(ember::test::make<std::uint8_t>({3}, {1, 2, 255}), {3, 1}) == ember::shape{3, 1});
    CHECK(reshape_both_ways(ember::test::make<double>({2}, {0.5, -1.5}), {1, 2, 1}) == ember::shape{1, 2, 1});
}

TEST_CASE("reshape: bad shapes are rejected with a message naming the node and shapes") {
    const auto x = ember::test::random_f32({2, 3}, 2);
    SUBCASE("element count differs") {
        reshape_run r = run_reshape(x, {4, 2});
        REQUIRE_FALSE(r.compiled);
        CHECK(r.error().code == ember::status::shape_mismatch);
        CHECK(mentions(r, "'node' (Reshape)"));
        CHECK(mentions(r, "[2, 3]"));
        CHECK(mentions(r, "[4, 2]"));
    }
    SUBCASE("-1 that does not divide") {
        reshape_run r = run_reshape(x, {4, -1});
        CHECK(r.error().code == ember::status::shape_mismatch);
        CHECK(mentions(r, "-1"));
        CHECK(mentions(r, "[2, 3]"));
    }
    SUBCASE("two -1") {
        reshape_run r = run_reshape(x, {-1, -1});
        CHECK(r.error().code == ember::status::invalid_model);
        CHECK(mentions(r, "more than one -1"));
    }
    SUBCASE("a dimension below -1") {
        reshape_run r = run_reshape(x, {-2, 3});
        CHECK(r.error().code == ember::status::invalid_model);
        CHECK(mentions(r, "-2"));
    }
    SUBCASE("0 past the input's rank") {
        reshape_run r = run_reshape(x, {3, 2, 0});
        CHECK(r.error().code == ember::status::shape_mismatch);
        CHECK(mentions(r, "rank 2"));
    }
    SUBCASE("opset 4 (shape attribute) is not supported") {
        reshape_run r = run_reshape(x, {6}, {}, ember::test::feed::inputs, 4);
        CHECK(r.error().code == ember::status::unsupported_op);
        CHECK(mentions(r, "opset 5"));
    }
}

TEST_CASE("reshape: the shape input must be a 1-D int64 tensor") {
    auto r = ember::test::run_node("Reshape", {ember::test::random_f32({2, 3}, 1), ember::test::make<std::int32_t>({1}, {6})}, {}, 1,
                                   ember::test::feed::constants);
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::invalid_model);
    CHECK(r.error.message.find("int32") != std::string::npos);

    auto m = ember::test::run_node("Reshape", {ember::test::random_f32({2, 3}, 1), ember::test::make<std::int64_t>({1, 2}, {3, 2})}, {}, 1,
                                   ember::test::feed::constants);
    REQUIRE_FALSE(m.compiled);
    CHECK(m.error.code == ember::status::invalid_model);
    CHECK(m.error.message.find("1-D") != std::string::npos);
}

TEST_CASE("reshape: a shape that is a graph input is unsupported, with a message saying why") {
    ember::graph_builder b("dynamic_reshape");
    const ember::value_id x = b.input("data", ember::dtype::float32, {2, 3});
    const ember::value_id s = b.input("shape", ember::dtype::int64, {2});
    b.output(b.node("Reshape", {x, s}, {}, "node"), "y");
    auto g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    auto p = ember::compile(*g);
    REQUIRE_FALSE(p);
    CHECK(p.error().code == ember::status::unsupported_op);
    CHECK(p.error().message.find("'node' (Reshape)") != std::string::npos);
    CHECK(p.error().message.find("compile time") != std::string::npos);
}

TEST_CASE("reshape: a shape computed from constants counts as known") {
    ember::graph_builder b("folded_shape");
    const ember::value_id x = b.input("data", ember::dtype::float32, {2, 3});
    const ember::value_id s = b.node("Identity", {b.constant<std::int64_t>("shape", {2}, {3, -1})}, {}, "shape_copy");
    b.output(b.node("Reshape", {x, s}, {}, "node"), "y");
    auto g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    CHECK(p->output(0).dims == ember::shape{3, 2});
}

TEST_CASE("reshape: in a chain it shares its input's buffer and moves no bytes") {
    const auto c = ember::test::run_in_chain("Reshape", ember::test::make_f32({2, 3}, {-1, 2, -3, 4, -5, 6}),
                                             {ember::test::make<std::int64_t>({1}, {6})});
    CHECK(c.shared);
    ember::test::check_close(c.y, {0, 2, 0, 4, 0, 6}, 0.0f, 0.0f);
}
