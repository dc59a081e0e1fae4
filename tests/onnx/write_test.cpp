// SPDX-License-Identifier: Apache-2.0
// onnx/write.hpp: graphs written as ONNX and read back are the same graph (graph_diff), and their
// compiled plans give the same bits; every attribute kind, subgraphs, domains, declared shapes;
// the errors name what is wrong.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>

#include "support/graph_diff.hpp"

using ember::dtype;
using ember::status;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

ember::graph round_trip(const ember::graph& g) {
    ember::result<std::vector<std::uint8_t>> bytes = ember::onnx::save_memory(g);
    REQUIRE_MESSAGE(bytes, bytes.error().message);
    ember::result<ember::graph> back = ember::onnx::load_memory(bytes->data(), bytes->size());
    REQUIRE_MESSAGE(back, back.error().message);
    return std::move(*back);
}

/// Every output of g compiled (symbolic dimensions = 1) and run on deterministic inputs.
std::vector<std::vector<std::uint8_t>> run_all(const ember::graph& g) {
    ember::compile_options options;
    for (ember::value_id id : g.inputs)
        for (const ember::dim& d : g.values[id].declared.dims)
            if (!d.known() && !d.symbol.empty()) options.dim_values.push_back({d.symbol, 1});
    ember::result<ember::plan> p = ember::compile(g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    REQUIRE(s.state() == status::ok);
    std::vector<std::vector<float>> inputs(p->input_count());
    for (std::size_t i = 0; i < p->input_count(); ++i) {
        REQUIRE(p->input(i).type == dtype::float32);
        inputs[i].resize(p->input(i).bytes / sizeof(float));
        for (std::size_t k = 0; k < inputs[i].size(); ++k) inputs[i][k] = static_cast<float>((k * 37 + i * 11) % 101) / 50.0f - 1.0f;
        REQUIRE(s.bind_input(i, inputs[i]) == status::ok);
    }
    std::vector<std::vector<std::uint8_t>> outputs(p->output_count());
    for (std::size_t i = 0; i < p->output_count(); ++i) {
        outputs[i].resize(p->output(i).bytes);
        REQUIRE(s.bind_output(i, outputs[i].data(), outputs[i].size()) == status::ok);
    }
    REQUIRE(s.run() == status::ok);
    return outputs;
}

ember::attribute graph_attr(std::string name, ember::graph g) {
    ember::attribute a;
    a.name = std::move(name);
    a.kind = ember::attribute_kind::graph;
    a.graphs.push_back(std::move(g));
    return a;
}

} // namespace

TEST_CASE("onnx/write: the bundled model round trips to the same graph and the same outputs") {
    const std::string path = std::string(EMBER_SOURCE_DIR) + "/models/fashion_mnist/model.onnx";
    ember::result<ember::graph> g = ember::onnx::load_file(path);
    REQUIRE_MESSAGE(g, g.error().message);
    const ember::graph back = round_trip(*g);
    CHECK(ember::test::graph_diff(*g, back) == "");
    CHECK(run_all(*g) == run_all(back));

    // Deterministic: the same graph gives the same bytes, and the written file loads.
    auto a = ember::onnx::save_memory(*g);
    auto b = ember::onnx::save_memory(back);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(*a == *b);
    const std::string file = "ember_write_test_model.onnx";
    REQUIRE(ember::onnx::save_file(file, *g));
    ember::result<ember::graph> from_file = ember::onnx::load_file(file);
    REQUIRE_MESSAGE(from_file, from_file.error().message);
    CHECK(ember::test::graph_diff(*g, *from_file) == "");
    std::remove(file.c_str());
}

TEST_CASE("onnx/write: a built graph with symbolic dimensions computes the same after a round trip") {
    ember::graph_builder b("cnn");
    auto x = b.input("x", dtype::float32, {"batch", 2, 5, 5});
    std::vector<float> w(3 * 2 * 3 * 3), fc(3 * 9 * 4), bias = {0.5f, -0.25f, 0.125f};
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) / 8.0f;
    for (std::size_t i = 0; i < fc.size(); ++i) fc[i] = static_cast<float>(static_cast<int>(i % 5) - 2) / 4.0f;
    auto wc = b.constant<float>("w", {3, 2, 3, 3}, ember::span<const float>(w.data(), w.size()));
    auto bc = b.constant<float>("b", {3}, ember::span<const float>(bias.data(), bias.size()));
    auto conv = b.node("Conv", {x, wc, bc}, {ember::attribute::of("pads", std::vector<std::int64_t>{0, 0, 0, 0})}, "conv");
    auto relu = b.node("Relu", {conv}, {}, "relu");
    auto flat = b.node("Flatten", {relu}, {ember::attribute::of("axis", 1)}, "flat");
    auto fcw = b.constant<float>("fc", {27, 4}, ember::span<const float>(fc.data(), fc.size()));
    auto y = b.node("Gemm", {flat, fcw}, {ember::attribute::of("alpha", 0.5f)}, "gemm");
    b.output(y, "y");
    b.output(relu);
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    g->opsets = {{"", 13}};
    const ember::graph once = round_trip(*g);
    CHECK(ember::test::graph_diff(once, round_trip(once)) == "");  // a fixed point after one trip
    CHECK(once.values[once.inputs[0]].declared.dims[0].symbol == "batch");
    CHECK(run_all(*g) == run_all(once));
}

TEST_CASE("onnx/write: every attribute kind, subgraphs and custom domains survive") {
    ember::graph_builder body_builder("then");
    auto c = body_builder.constant<float>("k", {2}, {1.0f, 2.0f});
    body_builder.output(body_builder.node("Identity", {c}, {}, "id"), "out");
    ember::result<ember::graph> body = std::move(body_builder).build();
    REQUIRE(body);

    ember::graph_builder b("attrs");
    auto x = b.input("x", dtype::float32, {2});
    std::vector<ember::attribute> attrs = {
        ember::attribute::of("f", 1.5f),
        ember::attribute::of("i", std::int64_t{-7}),
        ember::attribute::of("s", "text"),
        ember::attribute::of("t", *ember::tensor::copy_of<std::int64_t>({3}, {4, 5, 6})),
        graph_attr("g", *body),
        ember::attribute::of("floats", std::vector<float>{0.25f, -1.0f}),
        ember::attribute::of("ints", std::vector<std::int64_t>{1, -2, 3}),
        ember::attribute::of("strings", std::vector<std::string>{"a", "", "c"}),
        ember::attribute::of("empty_ints", std::vector<std::int64_t>{}),
    };
    ember::attribute tensors;
    tensors.name = "tensors";
    tensors.kind = ember::attribute_kind::tensors;
    tensors.tensors.push_back(*ember::tensor::copy_of<float>({1}, {3.0f}));
    tensors.tensors.push_back(*ember::tensor::copy_of<std::uint8_t>({2}, {1, 2}));
    attrs.push_back(tensors);
    ember::attribute graphs;
    graphs.name = "graphs";
    graphs.kind = ember::attribute_kind::graphs;
    graphs.graphs = {*body, *body};
    attrs.push_back(graphs);
    auto y = b.node("Custom", {x}, attrs, "custom");
    b.output(y, "y");
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE(g);
    g->nodes[0].domain = "com.example";
    g->opsets = {{"", 17}};

    const ember::graph once = round_trip(*g);
    CHECK(ember::test::graph_diff(once, round_trip(once)) == "");
    REQUIRE(once.nodes.size() == 1);
    CHECK(once.nodes[0].domain == "com.example");
    REQUIRE(once.opsets.size() == 2);
    CHECK(once.opsets[1].domain == "com.example");
    CHECK(once.opsets[1].version == 1);
    const ember::node& n = once.nodes[0];
    REQUIRE(n.attributes.size() == g->nodes[0].attributes.size());
    for (std::size_t k = 0; k < n.attributes.size(); ++k) {
        CAPTURE(n.attributes[k].name);
        CHECK(n.attributes[k].name == g->nodes[0].attributes[k].name);
        CHECK(n.attributes[k].kind == g->nodes[0].attributes[k].kind);
    }
    CHECK(n.find_attribute("f")->f == 1.5f);
    CHECK(n.find_attribute("i")->i == -7);
    CHECK(n.find_attribute("s")->s == "text");
    CHECK(n.find_attribute("t")->t.data<std::int64_t>()[2] == 6);
    CHECK(n.find_attribute("floats")->floats == std::vector<float>{0.25f, -1.0f});
    CHECK(n.find_attribute("ints")->ints == std::vector<std::int64_t>{1, -2, 3});
    CHECK(n.find_attribute("empty_ints")->ints.empty());
    CHECK(n.find_attribute("strings")->strings == std::vector<std::string>{"a", "", "c"});
    CHECK(n.find_attribute("tensors")->tensors[1].data<std::uint8_t>()[1] == 2);
    REQUIRE(n.find_attribute("graphs")->graphs.size() == 2);
    const ember::graph& sub = n.find_attribute("g")->graphs[0];
    CHECK(sub.name == "then");
    REQUIRE(sub.outputs.size() == 1);
    CHECK(sub.values[sub.outputs[0]].name == "out");
}

TEST_CASE("onnx/write: If bodies that use outer values run the same") {
    auto branch = [](const char* name, const char* op) {
        ember::graph body;
        body.name = name;
        ember::value captured;
        captured.name = "x";
        captured.kind = ember::value_kind::input;  // from the enclosing graph
        body.values.push_back(captured);
        ember::value out;
        out.name = std::string(name) + "_out";
        out.producer = 0;
        body.values.push_back(out);
        ember::node n;
        n.op_type = op;
        n.inputs = {0};
        n.outputs = {1};
        body.nodes.push_back(n);
        body.outputs = {1};
        return body;
    };
    ember::graph_builder b("if");
    b.input("x", dtype::float32, {3});  // the bodies capture it
    auto cond = b.constant<bool>("cond", {}, {true});
    auto y = b.node("If", {cond}, {graph_attr("then_branch", branch("then", "Relu")), graph_attr("else_branch", branch("else", "Neg"))}, "if");
    b.output(y, "y");
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE(g);
    g->opsets = {{"", 13}};
    const ember::graph once = round_trip(*g);
    CHECK(ember::test::graph_diff(once, round_trip(once)) == "");
    CHECK(run_all(*g) == run_all(once));
}

TEST_CASE("onnx/write: errors name what is wrong") {
    ember::graph g;
    ember::value v;
    v.kind = ember::value_kind::input;
    g.values.push_back(v);  // no name
    g.inputs = {0};
    g.outputs = {0};
    auto unnamed = ember::onnx::save_memory(g);
    REQUIRE_FALSE(unnamed);
    CHECK(unnamed.error().code == status::invalid_model);
    CHECK(contains(unnamed.error().message, "value 0 has no name"));

    ember::graph_builder b("bad_attr");
    auto x = b.input("x", dtype::float32, {1});
    ember::attribute t;
    t.name = "value";
    t.kind = ember::attribute_kind::tensor;  // with an empty tensor
    b.output(b.node("Custom", {x}, {t}, "c"), "y");
    ember::result<ember::graph> bad = std::move(b).build();
    REQUIRE(bad);
    auto no_dtype = ember::onnx::save_memory(*bad);
    REQUIRE_FALSE(no_dtype);
    CHECK(no_dtype.error().code == status::invalid_argument);
    CHECK(contains(no_dtype.error().message, "node 0 'c' (Custom): attribute 'value'"));

    ember::graph_builder ok("ok");
    ok.output(ok.node("Relu", {ok.input("x", dtype::float32, {1})}), "y");
    ember::result<ember::graph> good = std::move(ok).build();
    REQUIRE(good);
    auto unwritable = ember::onnx::save_file("/nonexistent/dir/out.onnx", *good);
    REQUIRE_FALSE(unwritable);
    CHECK(unwritable.error().code == status::io_error);
    CHECK(contains(unwritable.error().message, "'/nonexistent/dir/out.onnx'"));
}
