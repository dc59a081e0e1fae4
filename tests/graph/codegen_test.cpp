// SPDX-License-Identifier: Apache-2.0
// ember::codegen::build_graph() over hand-written tables: every field and attribute kind lands
// where the tables say, and tables that do not hold together fail with invalid_model. The
// round trip through ember-codegen itself is tests/codegen/ (ctest -R codegen).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include <ember/graph/codegen.hpp>

using namespace ember::codegen;
using ember::attribute_kind;
using ember::dtype;
using ember::value_kind;

namespace {

// Main graph: input x [batch, 2], constant w (2 floats), node If(x, w) with one attribute of
// each kind; the If's then_branch is graph 1, which uses x from the outer scope.
constexpr char w_bytes[] = "\x00\x00\x80\x3f\x00\x00\x00\xc0";  // 1.0f, -2.0f
constexpr char t_bytes[] = "\x07\x00\x00\x00\x00\x00\x00\x00";  // int64 7
constexpr graph_entry graphs[] = {
    {{"main", 4}, {0, 3}, {0, 1}, {0, 1}, {1, 1}, {2, 1}, {0, 1}},
    {{"then", 4}, {3, 2}, {1, 1}, {5, 0}, {5, 0}, {5, 1}, {1, 1}},
};
constexpr value_entry values[] = {
    {{"x", 1}, value_kind::input, dtype::float32, 2, 0, -1, -1},
    {{"w", 1}, value_kind::constant, dtype::float32, 1, 2, -1, 0},
    {{"y", 1}, value_kind::node_output, dtype::undefined, -1, 0, 0, -1},
    {{"x", 1}, value_kind::input, dtype::undefined, -1, 0, -1, -1},  // captured
    {{"z", 1}, value_kind::node_output, dtype::undefined, -1, 0, 0, -1},
};
constexpr node_entry nodes[] = {
    {{"if", 2}, {"If", 2}, {"", 0}, {3, 2}, {2, 1}, {0, 10}},
    {{"neg", 3}, {"Neg", 3}, {"", 0}, {6, 1}, {7, 1}, {10, 0}},
};
constexpr attribute_entry attributes[] = {
    {{"f", 1}, attribute_kind::floating, {0, 1}},  {{"i", 1}, attribute_kind::integer, {1, 1}},
    {{"s", 1}, attribute_kind::string, {0, 1}},    {{"t", 1}, attribute_kind::tensor, {8, 1}},
    {{"fs", 2}, attribute_kind::floats, {1, 2}},   {{"is", 2}, attribute_kind::ints, {2, 3}},
    {{"ss", 2}, attribute_kind::strings, {1, 2}},  {{"ts", 2}, attribute_kind::tensors, {8, 2}},
    {{"then_branch", 11}, attribute_kind::graph, {4, 1}}, {{"gs", 2}, attribute_kind::graphs, {10, 0}},
};
constexpr tensor_entry tensors[] = {
    {dtype::float32, {5, 1}, w_bytes, 8},
    {dtype::int64, {0, 0}, t_bytes, 8},
};
constexpr opset_entry opsets[] = {{{"", 0}, 13}, {{"", 0}, 13}};
constexpr dim_entry dims[] = {{-1, {"batch", 5}}, {2, {"", 0}}, {2, {"", 0}}};
// ids: 0 main's constant (tensor 0); 1 its input; 2 its output; 3-4 the If's inputs (4 doubles
// as graph index 1 for then_branch); 5 then's output, 6 Neg's input, 7 Neg's output (then's own
// value ids); 8-9 tensor indices of the tensor attributes.
constexpr std::uint32_t ids[] = {0u, 0u, 2u, 0u, 1u, 1u, 0u, 1u, 1u, 0u};
constexpr std::int64_t ints[] = {-3, 5, 1, 2, 3, 2};
constexpr std::uint32_t float_bits[] = {0x3f000000u, 0x7fc00001u, 0x80000000u};  // 0.5, a NaN, -0.0
constexpr text texts[] = {{"a\0b", 3}, {"", 0}, {"xyz", 3}};

tables valid() { return {graphs, values, nodes, attributes, tensors, opsets, dims, ids, ints, float_bits, texts}; }

std::uint32_t bits(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

} // namespace

TEST_CASE("codegen::build_graph: every field and attribute kind from the tables") {
    auto g = build_graph(valid());
    REQUIRE_MESSAGE(g, g.error().message);
    CHECK(g->name == "main");
    REQUIRE(g->values.size() == 3);
    CHECK(g->values[0].declared.rank_known);
    REQUIRE(g->values[0].declared.dims.size() == 2);
    CHECK(g->values[0].declared.dims[0].symbol == "batch");
    CHECK(g->values[0].declared.dims[1].value == 2);
    CHECK_FALSE(g->values[2].declared.rank_known);
    CHECK(g->values[1].constant == 0);
    CHECK(g->values[2].producer == 0);
    REQUIRE(g->constants.size() == 1);
    CHECK(g->constants[0].type() == dtype::float32);
    CHECK(g->constants[0].dims() == ember::shape{2});
    CHECK(g->constants[0].data<float>()[1] == -2.0f);
    CHECK(g->inputs == std::vector<ember::value_id>{0});
    CHECK(g->outputs == std::vector<ember::value_id>{2});
    REQUIRE(g->opsets.size() == 1);
    CHECK(g->opsets[0].version == 13);
    REQUIRE(g->nodes.size() == 1);
    const ember::node& n = g->nodes[0];
    CHECK(n.op_type == "If");
    CHECK(n.inputs == std::vector<ember::value_id>{0, 1});
    REQUIRE(n.attributes.size() == 10);
    CHECK(n.attributes[0].f == 0.5f);
    CHECK(n.attributes[1].i == 5);
    CHECK(n.attributes[2].s == std::string("a\0b", 3));
    CHECK(n.attributes[3].t.type() == dtype::int64);
    CHECK(n.attributes[3].t.rank() == 0);
    CHECK(n.attributes[3].t.data<std::int64_t>()[0] == 7);
    REQUIRE(n.attributes[4].floats.size() == 2);
    CHECK(bits(n.attributes[4].floats[0]) == 0x7fc00001u);
    CHECK(bits(n.attributes[4].floats[1]) == 0x80000000u);
    CHECK(n.attributes[5].ints == std::vector<std::int64_t>{1, 2, 3});
    CHECK(n.attributes[6].strings == std::vector<std::string>{"", "xyz"});
    REQUIRE(n.attributes[7].tensors.size() == 2);
    CHECK(n.attributes[7].tensors[1].dims() == ember::shape{2});
    REQUIRE(n.attributes[8].graphs.size() == 1);
    CHECK(n.attributes[9].kind == attribute_kind::graphs);
    CHECK(n.attributes[9].graphs.empty());
    const ember::graph& then = n.attributes[8].graphs[0];
    CHECK(then.name == "then");
    CHECK(then.values.size() == 2);
    CHECK(then.inputs.empty());  // x is captured from the outer graph
    REQUIRE(then.nodes.size() == 1);
    CHECK(then.nodes[0].op_type == "Neg");
    CHECK(then.nodes[0].inputs == std::vector<ember::value_id>{0});
}

TEST_CASE("codegen::build_graph: tables that do not hold together fail with invalid_model") {
    auto expect_invalid = [](const tables& t, const char* what) {
        auto g = build_graph(t);
        REQUIRE_FALSE(g);
        CHECK(g.error().code == ember::status::invalid_model);
        CHECK_MESSAGE(g.error().message.find(what) != std::string::npos, g.error().message);
    };
    tables t = valid();
    t.graphs = {};
    expect_invalid(t, "graph 0 is not in the table");

    t = valid();
    t.values = ember::span<const value_entry>(values, 2);  // main's range is 0..3
    expect_invalid(t, "a range runs past the end");

    constexpr tensor_entry short_tensor[] = {{dtype::float32, {5, 1}, w_bytes, 4}, {dtype::int64, {0, 0}, t_bytes, 8}};
    t = valid();
    t.tensors = short_tensor;
    expect_invalid(t, "4 bytes given for float32 [2]");

    constexpr attribute_entry bad_scalar[] = {{{"f", 1}, attribute_kind::floating, {0, 2}}};
    constexpr node_entry one_node[] = {{{"if", 2}, {"If", 2}, {"", 0}, {3, 2}, {2, 1}, {0, 1}}};
    t = valid();
    t.nodes = one_node;
    t.attributes = bad_scalar;
    expect_invalid(t, "has 2 items");

    constexpr attribute_entry bad_items[] = {{{"is", 2}, attribute_kind::ints, {4, 9}}};
    t.attributes = bad_items;
    expect_invalid(t, "items run past the end");

    // A graph attribute naming its own graph: refused after 64 levels, not a stack overflow.
    constexpr attribute_entry self[] = {{{"body", 4}, attribute_kind::graph, {1, 1}}};  // ids[1] == 0: graph 0
    t.attributes = self;
    expect_invalid(t, "nest deeper than 64");
}
