// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>

#include <ember/graph/graph_builder.hpp>
#include <ember/graph/validate.hpp>

using ember::dtype;
using ember::graph_builder;

TEST_CASE("graph_builder: inputs, constants, nodes, outputs and attributes") {
    graph_builder b("g");
    const auto x = b.input("x", dtype::float32, {"batch", 4});
    const auto w = b.constant<float>("w", {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    const auto y = b.node("Gemm", {x, w}, {ember::attribute::of("alpha", 0.5f), ember::attribute::of("transB", 0)}, "fc");
    b.output(y, "y");
    auto g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    CHECK(g->values.size() == 3);
    CHECK(g->inputs.size() == 1);
    CHECK(g->constants.size() == 1);
    CHECK(g->nodes[0].op_type == "Gemm");
    CHECK(g->values[y].name == "y");
    CHECK(g->values[y].producer == 0);
    REQUIRE(g->nodes[0].find_attribute("alpha"));
    CHECK(g->nodes[0].find_attribute("alpha")->f == 0.5f);
    CHECK(g->nodes[0].find_attribute("missing") == nullptr);
    CHECK(g->find_value("w") == w);
    CHECK(g->find_value("nope") == ember::no_value);
}

TEST_CASE("graph_builder: a constant with the wrong number of values is reported by build()") {
    graph_builder b;
    b.constant<float>("w", {2, 2}, {1, 2, 3});
    b.output(b.input("x", dtype::float32, {1}));
    auto g = std::move(b).build();
    CHECK_FALSE(g);
    CHECK(g.error().message.find("constant 'w'") != std::string::npos);
}

TEST_CASE("graph_builder: an unknown value id is reported by build()") {
    graph_builder b;
    const auto x = b.input("x", dtype::float32, {1});
    b.output(b.node("Relu", {x + 40}));
    auto g = std::move(b).build();
    CHECK_FALSE(g);
    CHECK(g.error().code == ember::status::invalid_argument);
}

TEST_CASE("validate: duplicate value names") {
    graph_builder b;
    const auto x = b.input("x", dtype::float32, {1});
    b.output(b.node("Relu", {x}, {}, "x"));  // the output would be named "x" too
    auto g = std::move(b).build();
    CHECK_FALSE(g);
    CHECK(g.error().code == ember::status::invalid_model);
    CHECK(g.error().message.find("two values are named 'x'") != std::string::npos);
}

TEST_CASE("validate: duplicate node names") {
    graph_builder b;
    const auto x = b.input("x", dtype::float32, {1});
    auto n1 = b.nodes("Relu", {x}, 1, {}, "n");
    auto g0 = b.peek();
    g0.nodes.push_back(g0.nodes[0]);
    g0.values.push_back(g0.values[n1[0]]);
    g0.values.back().name = "other";
    g0.nodes.back().outputs = {static_cast<ember::value_id>(g0.values.size() - 1)};
    g0.outputs = {n1[0]};
    auto r = ember::validate(g0);
    CHECK_FALSE(r);
    CHECK(r.error().message.find("also named 'n'") != std::string::npos);
}

TEST_CASE("validate: a cycle names a node on it") {
    graph_builder b;
    const auto x = b.input("x", dtype::float32, {1});
    const auto a = b.node("Add", {x, x}, {}, "a");
    const auto c = b.node("Relu", {a}, {}, "c");
    b.output(c);
    ember::graph g = b.peek();
    g.nodes[0].inputs[1] = c;  // a reads c, c reads a
    auto r = ember::validate(g);
    CHECK_FALSE(r);
    CHECK(r.error().code == ember::status::invalid_model);
    CHECK(r.error().message.find("cycle") != std::string::npos);
    CHECK(r.error().node >= 0);
}

TEST_CASE("validate: a value produced twice, a dangling output, no outputs") {
    graph_builder b;
    const auto x = b.input("x", dtype::float32, {1});
    const auto y = b.node("Relu", {x}, {}, "r1");
    b.output(y);
    ember::graph g = b.peek();
    ember::graph twice = g;
    twice.nodes.push_back(twice.nodes[0]);
    twice.nodes.back().name = "r2";
    auto r = ember::validate(twice);
    CHECK_FALSE(r);
    CHECK(r.error().message.find("already produced") != std::string::npos);

    ember::graph dangling = g;
    dangling.outputs = {99};
    CHECK_FALSE(ember::validate(dangling));

    ember::graph none = g;
    none.outputs.clear();
    auto n = ember::validate(none);
    CHECK_FALSE(n);
    CHECK(n.error().message.find("no outputs") != std::string::npos);
}

TEST_CASE("validate: nodes listed out of order are scheduled after their producers") {
    graph_builder b;
    const auto x = b.input("x", dtype::float32, {1});
    const auto a = b.node("Relu", {x}, {}, "first");
    b.output(b.node("Relu", {a}, {}, "second"));
    ember::graph g = b.peek();
    std::swap(g.nodes[0], g.nodes[1]);
    g.values[a].producer = 1;
    auto order = ember::validate(g);
    REQUIRE_MESSAGE(order, order.error().message);
    CHECK(*order == std::vector<std::uint32_t>{1, 0});
}
