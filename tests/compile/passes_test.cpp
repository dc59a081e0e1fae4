// SPDX-License-Identifier: Apache-2.0
// The graph passes (compile/passes/): what each does to small graphs (ember::optimize), that
// compile() with the pass on computes what it computes with the pass off, that each pass can be
// turned off, the cases that must stay as they are (outputs that keep their names, a used
// Dropout mask, values bodies capture, an Add that broadcasts), the fused ops' own errors, and
// the anchor model zoo with passes on versus off.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <ember/ember.hpp>
#include <ember/io/npy.hpp>
#include <ember/onnx.hpp>

#include "support/check.hpp"

using ember::attribute;
using ember::dtype;
using ember::graph;
using ember::graph_builder;
using ember::partial_shape;
using ember::shape;
using ember::status;
using ember::tensor;
using ember::value_id;
using ember::test::make_f32;
using ember::test::random_f32;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

graph build(graph_builder& b, std::int64_t opset = 0) {
    ember::result<graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    if (opset != 0) g->opsets.push_back(ember::opset{"", opset});
    return std::move(*g);
}

ember::compile_options with_passes(ember::pass_options p) {
    ember::compile_options o;
    o.passes = p;
    return o;
}
ember::compile_options no_passes() { return with_passes(ember::pass_options::none()); }

graph optimized(const graph& g, const ember::compile_options& options = {}) {
    ember::result<graph> o = ember::optimize(g, options);
    REQUIRE_MESSAGE(o, o.error().message);
    return std::move(*o);
}

std::vector<std::string> op_types(const graph& g) {
    std::vector<std::string> ops;
    for (const ember::node& n : g.nodes) ops.push_back(n.op_type);
    std::sort(ops.begin(), ops.end());
    return ops;
}
std::size_t count_op(const graph& g, const std::string& op) {
    std::size_t n = 0;
    for (const ember::node& node : g.nodes) n += node.op_type == op ? 1 : 0;
    return n;
}
const ember::node& only_node(const graph& g, const std::string& op) {
    REQUIRE(count_op(g, op) == 1);
    for (const ember::node& n : g.nodes)
        if (n.op_type == op) return n;
    return g.nodes[0];
}
std::string activation_of(const ember::node& n) {
    const attribute* a = n.find_attribute("activation");
    return a ? a->s : std::string();
}
std::vector<float> params_of(const ember::node& n) {
    const attribute* a = n.find_attribute("activation_params");
    return a ? a->floats : std::vector<float>();
}

// Compiles and runs g once on `inputs` (in graph input order) and returns the outputs.
std::vector<tensor> run(const graph& g, const std::vector<tensor>& inputs, const ember::compile_options& options = {}) {
    ember::result<ember::plan> p = ember::compile(g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    REQUIRE(s.state() == status::ok);
    REQUIRE(p->input_count() == inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) REQUIRE(s.bind_input(i, inputs[i].bytes(), inputs[i].size_bytes()) == status::ok);
    std::vector<tensor> outs;
    for (std::size_t k = 0; k < p->output_count(); ++k) {
        ember::result<tensor> t = tensor::create(p->output(k).type, p->output(k).dims);
        REQUIRE(t);
        REQUIRE(s.bind_output(k, t->bytes(), t->size_bytes()) == status::ok);
        outs.push_back(std::move(*t));
    }
    REQUIRE(s.run() == status::ok);
    return outs;
}

// Element-wise within rtol of the larger magnitude (plus a tiny atol for values near 0).
void check_near(const tensor& a, const tensor& b, float rtol = 1e-5f, float atol = 1e-6f) {
    REQUIRE(a.type() == b.type());
    REQUIRE(a.dims() == b.dims());
    if (a.type() != dtype::float32) {
        CHECK(std::equal(a.bytes(), a.bytes() + a.size_bytes(), b.bytes()));
        return;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        const float x = a.data<float>()[i], y = b.data<float>()[i];
        if (!(std::fabs(x - y) <= atol + rtol * std::max(std::fabs(x), std::fabs(y)))) {
            FAIL_CHECK("element " << i << ": " << x << " with the passes, " << y << " without");
            return;
        }
    }
}

// compile() with the given passes and with none agree on `inputs`; returns the outputs.
std::vector<tensor> same_with_and_without(const graph& g, const std::vector<tensor>& inputs, const ember::compile_options& on = {},
                                          float rtol = 1e-5f) {
    std::vector<tensor> with = run(g, inputs, on);
    std::vector<tensor> without = run(g, inputs, no_passes());
    REQUIRE(with.size() == without.size());
    for (std::size_t k = 0; k < with.size(); ++k) check_near(with[k], without[k], rtol);
    return with;
}

// The plan's output names, in order.
std::vector<std::string> output_names(const graph& g, const ember::compile_options& options = {}) {
    ember::result<ember::plan> p = ember::compile(g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    std::vector<std::string> names;
    for (std::size_t k = 0; k < p->output_count(); ++k) names.push_back(p->output(k).name);
    return names;
}

tensor boolean(bool v) {
    ember::result<tensor> t = tensor::create(dtype::boolean, shape{});
    REQUIRE(t);
    t->bytes()[0] = std::byte{static_cast<unsigned char>(v)};
    return std::move(*t);
}

attribute graph_attr(std::string name, graph g) {
    attribute a;
    a.name = std::move(name);
    a.kind = ember::attribute_kind::graph;
    a.graphs.push_back(std::move(g));
    return a;
}

ember::pass_options only(bool ember::pass_options::*pass) {
    ember::pass_options p = ember::pass_options::none();
    p.*pass = true;
    return p;
}
ember::pass_options all_but(bool ember::pass_options::*pass) {
    ember::pass_options p;
    p.*pass = false;
    return p;
}

// x [1, 2, 5, 5] -> Conv(W [3, 2, 3, 3], B [3], pads 1) -> c, shared by many cases below.
struct conv_graph {
    graph_builder b{"conv"};
    value_id x, c;
    explicit conv_graph(bool bias = true, std::uint32_t seed = 1) {
        x = b.input("x", dtype::float32, {1, 2, 5, 5});
        const value_id w = b.constant("W", random_f32({3, 2, 3, 3}, seed));
        std::vector<value_id> ins{x, w};
        if (bias) ins.push_back(b.constant("B", random_f32({3}, seed + 1)));
        c = b.node("Conv", ins, {attribute::of("pads", std::vector<std::int64_t>{1, 1, 1, 1})}, "conv");
    }
};
tensor conv_input(std::uint32_t seed = 7) { return random_f32({1, 2, 5, 5}, seed, -2.0f, 2.0f); }

} // namespace

// ---- identity removal -------------------------------------------------------------------------

TEST_CASE("passes: Identity nodes are removed and their readers read the input") {
    graph_builder b("ids");
    const value_id x = b.input("x", dtype::float32, {2, 3});
    const value_id w = b.node("Identity", {b.constant("w", random_f32({3, 4}, 1))}, {}, "w_id");
    const value_id r = b.node("Identity", {b.node("MatMul", {x, w}, {}, "mm")}, {}, "mm_id");
    b.output(b.node("Tanh", {r}, {}, "tanh"), "y");
    const graph g = build(b);
    const graph o = optimized(g);
    CHECK(op_types(o) == std::vector<std::string>{"MatMul", "Tanh"});
    CHECK(op_types(optimized(g, with_passes(all_but(&ember::pass_options::identity_removal)))) ==
          std::vector<std::string>{"Identity", "Identity", "MatMul", "Tanh"});
    same_with_and_without(g, {random_f32({2, 3}, 2)});
    CHECK(g.nodes.size() == 4);  // the user's graph is untouched
}

TEST_CASE("passes: an Identity that is a graph output keeps the output's name") {
    SUBCASE("Identity of an input: the node stays") {
        graph_builder b("id_of_input");
        b.output(b.node("Identity", {b.input("x", dtype::float32, {4})}, {}, "id"), "y");
        const graph g = build(b);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Identity"});
        const tensor x = random_f32({4}, 3);
        std::vector<tensor> y = same_with_and_without(g, {x});
        CHECK(ember::test::values_f32(y[0]) == ember::test::values_f32(x));
        CHECK(output_names(g) == std::vector<std::string>{"y"});
    }
    SUBCASE("Identity of a constant: the node stays") {
        graph_builder b("id_of_constant");
        (void)b.input("x", dtype::float32, {2});
        b.output(b.node("Identity", {b.constant("c", make_f32({2}, {1.5f, -2.0f}))}, {}, "id"), "y");
        const graph g = build(b);
        std::vector<tensor> y = same_with_and_without(g, {random_f32({2}, 1)});
        CHECK(ember::test::values_f32(y[0]) == std::vector<float>{1.5f, -2.0f});
    }
    SUBCASE("Identity of a node's output: the producer writes the output, under its name") {
        graph_builder b("id_of_node");
        const value_id r = b.node("Relu", {b.input("x", dtype::float32, {5})}, {}, "relu");
        b.output(b.node("Identity", {r}, {}, "id"), "y");
        b.output(b.node("Neg", {r}, {}, "neg"), "z");  // r has another reader
        const graph g = build(b);
        const graph o = optimized(g);
        CHECK(op_types(o) == std::vector<std::string>{"Neg", "Relu"});
        CHECK(o.values[o.outputs[0]].name == "y");
        CHECK(o.nodes[static_cast<std::size_t>(o.values[o.outputs[0]].producer)].op_type == "Relu");
        same_with_and_without(g, {random_f32({5}, 4)});
        CHECK(output_names(g) == std::vector<std::string>{"y", "z"});
    }
    SUBCASE("Identity of another output: the node stays") {
        graph_builder b("id_of_output");
        const value_id r = b.node("Relu", {b.input("x", dtype::float32, {3})}, {}, "relu");
        b.output(r, "r");
        b.output(b.node("Identity", {r}, {}, "id"), "y");
        const graph g = build(b);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Identity", "Relu"});
        same_with_and_without(g, {random_f32({3}, 5)});
        CHECK(output_names(g) == std::vector<std::string>{"r", "y"});
    }
}

TEST_CASE("passes: inference-mode Dropout is removed; one whose mask is used stays") {
    SUBCASE("opset 13, no training_mode") {
        graph_builder b("dropout");
        const value_id d = b.node("Dropout", {b.node("Relu", {b.input("x", dtype::float32, {2, 3})}, {}, "relu")}, {}, "drop");
        b.output(b.node("Sigmoid", {d}, {}, "sig"), "y");
        const graph g = build(b, 13);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Relu", "Sigmoid"});
        same_with_and_without(g, {random_f32({2, 3}, 6)});
    }
    SUBCASE("opset 13, training_mode a constant false, unused mask output") {
        graph_builder b("dropout_tm");
        const value_id x = b.input("x", dtype::float32, {4});
        const value_id ratio = b.constant("ratio", make_f32({}, {0.3f}));
        const value_id mode = b.constant("mode", boolean(false));
        const std::vector<value_id> outs = b.nodes("Dropout", {x, ratio, mode}, 2, {}, "drop");
        b.output(b.node("Neg", {outs[0]}, {}, "neg"), "y");
        const graph g = build(b, 13);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Neg"});
        same_with_and_without(g, {random_f32({4}, 7)});
    }
    SUBCASE("opset 10 with a ratio attribute") {
        graph_builder b("dropout10");
        const value_id d = b.node("Dropout", {b.input("x", dtype::float32, {4})}, {attribute::of("ratio", 0.2f)}, "drop");
        b.output(b.node("Neg", {d}, {}, "neg"), "y");
        const graph g = build(b, 10);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Neg"});
        same_with_and_without(g, {random_f32({4}, 8)});
    }
    SUBCASE("the mask is a graph output: the node stays and the mask is all ones") {
        graph_builder b("dropout_mask");
        const std::vector<value_id> outs = b.nodes("Dropout", {b.input("x", dtype::float32, {3})}, 2, {}, "drop");
        b.output(b.node("Neg", {outs[0]}, {}, "neg"), "y");
        b.output(outs[1], "mask");
        const graph g = build(b, 13);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Dropout", "Neg"});
        std::vector<tensor> y = same_with_and_without(g, {random_f32({3}, 9)});
        CHECK(ember::test::bools_of(y[1]) == std::vector<int>{1, 1, 1});
    }
    SUBCASE("the mask is read by a node: the node stays") {
        graph_builder b("dropout_mask_read");
        const std::vector<value_id> outs = b.nodes("Dropout", {b.input("x", dtype::float32, {3})}, 2, {}, "drop");
        b.output(b.node("Cast", {outs[1]}, {attribute::of("to", std::int64_t{1})}, "cast"), "m");
        b.output(outs[0], "y");
        const graph g = build(b, 13);
        CHECK(count_op(optimized(g), "Dropout") == 1);
        same_with_and_without(g, {random_f32({3}, 10)});
    }
    SUBCASE("training_mode is a graph input: the node stays") {
        graph_builder b("dropout_runtime_mode");
        const value_id x = b.input("x", dtype::float32, {3});
        const value_id mode = b.input("mode", dtype::boolean, partial_shape(shape{}));
        b.output(b.node("Neg", {b.node("Dropout", {x, ember::no_value, mode}, {}, "drop")}, {}, "neg"), "y");
        const graph g = build(b, 13);
        // kept, so compile() reports what it needs (a compile-time training_mode)
        ember::result<graph> o = ember::optimize(g);
        REQUIRE_FALSE(o);
        CHECK(contains(o.error().message, "'drop' (Dropout): input 2 (training_mode) must be known at compile time"));
    }
}

// ---- dead code --------------------------------------------------------------------------------

TEST_CASE("passes: nodes no output depends on are removed, unsupported ones included") {
    graph_builder b("dead");
    const value_id x = b.input("x", dtype::float32, {3});
    const value_id unused = b.node("Sigmoid", {x}, {}, "unused");
    (void)b.node("NoSuchOp", {b.node("Exp", {unused}, {}, "exp")}, {}, "nope");
    b.output(b.node("Relu", {x}, {}, "relu"), "y");
    const graph g = build(b);
    CHECK(op_types(optimized(g)) == std::vector<std::string>{"Relu"});
    CHECK(op_types(optimized(g, with_passes(only(&ember::pass_options::dead_code)))) == std::vector<std::string>{"Relu"});
    std::vector<tensor> y = run(g, {make_f32({3}, {-1.0f, 0.5f, 2.0f})});
    CHECK(ember::test::values_f32(y[0]) == std::vector<float>{0.0f, 0.5f, 2.0f});
    ember::result<ember::plan> off = ember::compile(g, with_passes(all_but(&ember::pass_options::dead_code)));
    REQUIRE_FALSE(off);
    CHECK(contains(off.error().message, "node 2 'nope' (NoSuchOp): op 'NoSuchOp' is not supported"));
}

TEST_CASE("passes: values an If body uses by name are kept, with their producers and names") {
    // t = Identity(Relu(x)) is read only by name, inside both branches
    auto branch = [](const char* op, const char* out) {
        graph_builder b("body");
        const value_id t = b.input("t", dtype::undefined, partial_shape());
        b.output(b.node(op, {t, t}, {}, std::string(out) + "_node"), out);
        ember::result<graph> g = std::move(b).build();
        REQUIRE_MESSAGE(g, g.error().message);
        g->inputs.clear();  // t is captured, not an input
        return std::move(*g);
    };
    graph_builder b("captures");
    const value_id cond = b.input("cond", dtype::boolean, partial_shape(shape{}));
    const value_id x = b.input("x", dtype::float32, {3});
    const value_id r = b.node("Relu", {x}, {}, "relu");
    const value_id t = b.node("Identity", {r}, {}, "t");
    (void)t;
    b.output(b.node("If", {cond}, {graph_attr("then_branch", branch("Add", "sum")), graph_attr("else_branch", branch("Mul", "prod"))}, "if"),
             "out");
    b.output(b.node("Neg", {x}, {}, "neg"), "n");
    const graph g = build(b);
    const graph o = optimized(g);
    // t keeps its name (a body reads it): the Relu writes it, and the Identity goes
    CHECK(op_types(o) == std::vector<std::string>{"If", "Neg", "Relu"});
    CHECK(o.nodes[static_cast<std::size_t>(o.values[o.find_value("t")].producer)].op_type == "Relu");
    CHECK(only_node(o, "If").inputs.size() == 1);  // optimize()'s graph lists no implicit inputs
    const tensor xv = make_f32({3}, {-1.0f, 2.0f, 3.0f});
    for (bool c : {true, false}) {
        std::vector<tensor> y = same_with_and_without(g, {boolean(c), xv});
        CHECK(ember::test::values_f32(y[0]) == (c ? std::vector<float>{0, 4, 6} : std::vector<float>{0, 4, 9}));
    }
}

// ---- BatchNormalization folding ---------------------------------------------------------------

namespace {
std::vector<value_id> bn_params(graph_builder& b, std::int64_t channels, std::uint32_t seed) {
    return {b.constant("scale", random_f32({channels}, seed, 0.5f, 1.5f)), b.constant("bias", random_f32({channels}, seed + 1)),
            b.constant("mean", random_f32({channels}, seed + 2)), b.constant("var", random_f32({channels}, seed + 3, 0.1f, 2.0f))};
}
value_id batch_norm(graph_builder& b, value_id x, const std::vector<value_id>& p, float epsilon = 1e-3f) {
    return b.node("BatchNormalization", {x, p[0], p[1], p[2], p[3]}, {attribute::of("epsilon", epsilon)}, "bn");
}
} // namespace

TEST_CASE("passes: BatchNormalization after a Conv becomes the Conv's weights") {
    for (bool bias : {true, false}) {
        CAPTURE(bias);
        conv_graph cg(bias);
        cg.b.output(batch_norm(cg.b, cg.c, bn_params(cg.b, 3, 20)), "y");
        const graph g = build(cg.b);
        const graph o = optimized(g);
        const ember::node& conv = only_node(o, "Conv");
        CHECK(o.nodes.size() == 1);
        REQUIRE(conv.inputs.size() == 3);
        CHECK(o.values[conv.inputs[1]].kind == ember::value_kind::constant);
        CHECK(o.constants.size() == g.constants.size() + 2);  // W' and B' are the rewritten graph's own
        CHECK(o.values[conv.outputs[0]].name == "y");
        same_with_and_without(g, {conv_input()});
        CHECK(count_op(optimized(g, with_passes(all_but(&ember::pass_options::batch_norm_folding))), "BatchNormalization") == 1);
    }
}

TEST_CASE("passes: BatchNormalization is not folded when it cannot be") {
    SUBCASE("the Conv's output has another reader") {
        conv_graph cg;
        cg.b.output(batch_norm(cg.b, cg.c, bn_params(cg.b, 3, 30)), "y");
        cg.b.output(cg.b.node("Neg", {cg.c}, {}, "neg"), "z");
        const graph g = build(cg.b);
        CHECK(count_op(optimized(g), "BatchNormalization") == 1);
        same_with_and_without(g, {conv_input()});
    }
    SUBCASE("the statistics are a graph input") {
        conv_graph cg;
        std::vector<value_id> p = bn_params(cg.b, 3, 40);
        p[2] = cg.b.input("running_mean", dtype::float32, {3});
        cg.b.output(batch_norm(cg.b, cg.c, p), "y");
        const graph g = build(cg.b);
        CHECK(count_op(optimized(g), "BatchNormalization") == 1);
        same_with_and_without(g, {conv_input(), random_f32({3}, 41)});
    }
    SUBCASE("the weights are a graph input") {
        graph_builder b("w_input");
        const value_id x = b.input("x", dtype::float32, {1, 2, 4, 4});
        const value_id w = b.input("w", dtype::float32, {3, 2, 1, 1});
        b.output(batch_norm(b, b.node("Conv", {x, w}, {}, "conv"), bn_params(b, 3, 50)), "y");
        const graph g = build(b);
        CHECK(count_op(optimized(g), "BatchNormalization") == 1);
        same_with_and_without(g, {random_f32({1, 2, 4, 4}, 51), random_f32({3, 2, 1, 1}, 52)});
    }
}

TEST_CASE("passes: BatchNormalization after a Gemm folds, transB, alpha, beta and C included") {
    struct gemm_case {
        bool trans_b;
        shape c;  // rank 0: no C
        float alpha, beta;
    };
    for (const gemm_case& k : {gemm_case{false, shape{}, 1.0f, 1.0f}, gemm_case{true, shape{4}, 1.0f, 1.0f}, gemm_case{false, shape{1, 4}, 0.5f, 2.0f},
                               gemm_case{true, shape{3, 4}, 1.5f, -1.0f}, gemm_case{false, shape{3, 1}, 1.0f, 0.5f}}) {
        CAPTURE(k.trans_b);
        CAPTURE(k.c);
        graph_builder b("gemm_bn");
        const value_id a = b.input("a", dtype::float32, {3, 5});
        std::vector<value_id> ins{a, b.constant("B", random_f32(k.trans_b ? shape{4, 5} : shape{5, 4}, 60))};
        if (k.c.rank() != 0) ins.push_back(b.constant("C", random_f32(k.c, 61)));
        const value_id y = b.node("Gemm", ins,
                                  {attribute::of("transB", std::int64_t{k.trans_b}), attribute::of("alpha", k.alpha), attribute::of("beta", k.beta)},
                                  "gemm");
        b.output(batch_norm(b, y, bn_params(b, 4, 62)), "y");
        const graph g = build(b);
        const graph o = optimized(g, with_passes(all_but(&ember::pass_options::epilogue_fusion)));
        CHECK(op_types(o) == std::vector<std::string>{"Gemm"});
        same_with_and_without(g, {random_f32({3, 5}, 63)});
    }
}

// ---- epilogue fusion --------------------------------------------------------------------------

TEST_CASE("passes: Conv + activation becomes one FusedConv") {
    struct act_case {
        std::string op;
        std::vector<attribute> attrs;
        std::string activation;
        std::vector<float> params;
    };
    const std::vector<act_case> cases = {
        {"Relu", {}, "Relu", {}},
        {"LeakyRelu", {attribute::of("alpha", 0.2f)}, "LeakyRelu", {0.2f}},
        {"LeakyRelu", {}, "LeakyRelu", {0.01f}},
        {"HardSigmoid", {attribute::of("alpha", 0.3f), attribute::of("beta", 0.4f)}, "HardSigmoid", {0.3f, 0.4f}},
        {"HardSwish", {}, "HardSwish", {}},
        {"Sigmoid", {}, "Sigmoid", {}},
    };
    for (const act_case& k : cases) {
        CAPTURE(k.op);
        conv_graph cg;
        cg.b.output(cg.b.node(k.op, {cg.c}, k.attrs, "act"), "y");
        const graph g = build(cg.b);
        const graph o = optimized(g);
        REQUIRE(o.nodes.size() == 1);
        const ember::node& f = o.nodes[0];
        CHECK(f.op_type == "FusedConv");
        CHECK(f.domain == "ember");
        CHECK(f.name == "conv");
        CHECK(f.inputs.size() == 3);
        CHECK(activation_of(f) == k.activation);
        CHECK(params_of(f) == k.params);
        CHECK(o.values[f.outputs[0]].name == "y");
        same_with_and_without(g, {conv_input()});
        CHECK(op_types(optimized(g, with_passes(all_but(&ember::pass_options::epilogue_fusion)))) == std::vector<std::string>{"Conv", k.op});
    }
}

TEST_CASE("passes: Conv + Clip (Relu6) fuses from opset 6 attributes and opset 11+ constant inputs") {
    SUBCASE("opset 13: min and max inputs") {
        conv_graph cg;
        const value_id lo = cg.b.constant("lo", make_f32({}, {0.0f})), hi = cg.b.constant("hi", make_f32({}, {6.0f}));
        cg.b.output(cg.b.node("Clip", {cg.c, lo, hi}, {}, "relu6"), "y");
        const graph g = build(cg.b, 13);
        const graph o = optimized(g);
        const ember::node& f = only_node(o, "FusedConv");
        CHECK(activation_of(f) == "Clip");
        CHECK(params_of(f) == std::vector<float>{0.0f, 6.0f});
        same_with_and_without(g, {random_f32({1, 2, 5, 5}, 70, -8.0f, 8.0f)});
    }
    SUBCASE("opset 13: only max, min absent") {
        conv_graph cg;
        cg.b.output(cg.b.node("Clip", {cg.c, ember::no_value, cg.b.constant("hi", make_f32({}, {0.5f}))}, {}, "clip"), "y");
        const graph g = build(cg.b, 13);
        const graph o = optimized(g);
        const ember::node& f = only_node(o, "FusedConv");
        CHECK(params_of(f) == std::vector<float>{std::numeric_limits<float>::lowest(), 0.5f});
        same_with_and_without(g, {conv_input()});
    }
    SUBCASE("opset 6: attributes") {
        conv_graph cg;
        cg.b.output(cg.b.node("Clip", {cg.c}, {attribute::of("min", -0.5f), attribute::of("max", 0.5f)}, "clip"), "y");
        const graph g = build(cg.b, 6);
        CHECK(params_of(only_node(optimized(g), "FusedConv")) == std::vector<float>{-0.5f, 0.5f});
        same_with_and_without(g, {conv_input()});
    }
    SUBCASE("opset 13: a run-time bound stays a Clip") {
        conv_graph cg;
        cg.b.output(cg.b.node("Clip", {cg.c, cg.b.input("lo", dtype::float32, partial_shape(shape{}))}, {}, "clip"), "y");
        const graph g = build(cg.b, 13);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Clip", "Conv"});
        same_with_and_without(g, {conv_input(), make_f32({}, {0.1f})});
    }
}

TEST_CASE("passes: Conv + Sigmoid/Mul (SiLU) fuses in either Mul order") {
    for (bool sigmoid_first : {true, false}) {
        conv_graph cg(true, 3);
        const value_id s = cg.b.node("Sigmoid", {cg.c}, {}, "sig");
        cg.b.output(cg.b.node("Mul", sigmoid_first ? std::vector<value_id>{s, cg.c} : std::vector<value_id>{cg.c, s}, {}, "mul"), "y");
        const graph g = build(cg.b);
        const graph o = optimized(g);
        const ember::node& f = only_node(o, "FusedConv");
        CHECK(activation_of(f) == "Silu");
        CHECK(o.nodes.size() == 1);
        same_with_and_without(g, {conv_input()});
    }
}

TEST_CASE("passes: Conv + residual Add (+ Relu) fuses Z, in either Add order") {
    for (bool conv_first : {true, false})
        for (bool relu : {true, false}) {
            CAPTURE(conv_first);
            CAPTURE(relu);
            conv_graph cg;
            const value_id skip = cg.b.node("Neg", {cg.x}, {}, "skip");  // [1, 2, 5, 5]: project to 3 channels
            const value_id z = cg.b.node("Conv", {skip, cg.b.constant("Wz", random_f32({3, 2, 1, 1}, 80))}, {}, "proj");
            const value_id sum = cg.b.node("Add", conv_first ? std::vector<value_id>{cg.c, z} : std::vector<value_id>{z, cg.c}, {}, "add");
            cg.b.output(relu ? cg.b.node("Relu", {sum}, {}, "relu") : sum, "y");
            const graph g = build(cg.b);
            const graph o = optimized(g);
            // the Add takes the first Conv in schedule order ("conv") with the other as Z
            CHECK(op_types(o) == std::vector<std::string>{"Conv", "FusedConv", "Neg"});
            const ember::node& f = only_node(o, "FusedConv");
            REQUIRE(f.inputs.size() == 4);
            CHECK(o.values[f.inputs[3]].name == "proj");
            CHECK(activation_of(f) == (relu ? "Relu" : ""));
            same_with_and_without(g, {conv_input()});
        }
}

TEST_CASE("passes: an Add that broadcasts is not fused as Z, nor what follows it") {
    SUBCASE("z widens the output (a model that stays valid)") {
        conv_graph cg;
        const value_id z = cg.b.input("z", dtype::float32, {2, 3, 5, 5});
        cg.b.output(cg.b.node("Relu", {cg.b.node("Add", {cg.c, z}, {}, "add")}, {}, "relu"), "y");
        const graph g = build(cg.b);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Add", "Conv", "Relu"});
        std::vector<tensor> y = same_with_and_without(g, {conv_input(), random_f32({2, 3, 5, 5}, 90)});
        CHECK(y[0].dims() == shape{2, 3, 5, 5});
    }
    SUBCASE("z is a per-channel constant [3, 1, 1]") {
        conv_graph cg;
        const value_id z = cg.b.constant("z", random_f32({3, 1, 1}, 91));
        cg.b.output(cg.b.node("Relu", {cg.b.node("Add", {z, cg.c}, {}, "add")}, {}, "relu"), "y");
        const graph g = build(cg.b);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Add", "Conv", "Relu"});
        same_with_and_without(g, {conv_input()});
    }
}

TEST_CASE("passes: values read outside the pattern are not fused away") {
    SUBCASE("the Conv's output is also a graph output") {
        conv_graph cg;
        cg.b.output(cg.b.node("Relu", {cg.c}, {}, "relu"), "y");
        cg.b.output(cg.c, "c");
        const graph g = build(cg.b);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Conv", "Relu"});
        same_with_and_without(g, {conv_input()});
    }
    SUBCASE("the Add's output has a second reader: Conv + Add fuse, the Relu stays") {
        conv_graph cg;
        const value_id sum = cg.b.node("Add", {cg.c, cg.b.input("z", dtype::float32, {1, 3, 5, 5})}, {}, "add");
        cg.b.output(cg.b.node("Relu", {sum}, {}, "relu"), "y");
        cg.b.output(cg.b.node("Neg", {sum}, {}, "neg"), "n");
        const graph g = build(cg.b);
        const graph o = optimized(g);
        CHECK(op_types(o) == std::vector<std::string>{"FusedConv", "Neg", "Relu"});
        CHECK(activation_of(only_node(o, "FusedConv")).empty());
        same_with_and_without(g, {conv_input(), random_f32({1, 3, 5, 5}, 92)});
    }
    SUBCASE("SiLU whose Sigmoid is also a graph output stays as it is") {
        conv_graph cg;
        const value_id s = cg.b.node("Sigmoid", {cg.c}, {}, "sig");
        cg.b.output(cg.b.node("Mul", {cg.c, s}, {}, "mul"), "y");
        cg.b.output(s, "s");
        const graph g = build(cg.b);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Conv", "Mul", "Sigmoid"});
        same_with_and_without(g, {conv_input()});
    }
}

TEST_CASE("passes: Gemm + Relu and Gemm + residual fuse into FusedGemm") {
    graph_builder b("gemm");
    const value_id a = b.input("a", dtype::float32, {4, 6});
    const value_id y = b.node("Gemm", {a, b.constant("B", random_f32({5, 6}, 100)), b.constant("C", random_f32({5}, 101))},
                              {attribute::of("transB", std::int64_t{1}), attribute::of("alpha", 0.5f)}, "fc");
    const value_id z = b.input("z", dtype::float32, {4, 5});
    b.output(b.node("Relu", {b.node("Add", {z, y}, {}, "add")}, {}, "relu"), "out");
    const graph g = build(b);
    const graph o = optimized(g);
    const ember::node& f = only_node(o, "FusedGemm");
    CHECK(o.nodes.size() == 1);
    CHECK(f.inputs.size() == 4);
    CHECK(activation_of(f) == "Relu");
    same_with_and_without(g, {random_f32({4, 6}, 102), random_f32({4, 5}, 103)});
}

namespace {
// x [2, 3, 8] -> MatMul(W [8, 6]) -> Add(bias [6]) -> v
struct matmul_graph {
    graph_builder b{"mlp"};
    value_id x, v;
    matmul_graph() {
        x = b.input("x", dtype::float32, {2, 3, 8});
        const value_id mm = b.node("MatMul", {x, b.constant("W", random_f32({8, 6}, 110))}, {}, "mm");
        v = b.node("Add", {b.constant("bias", random_f32({6}, 111)), mm}, {}, "bias_add");
    }
};
value_id scalar(graph_builder& b, const std::string& name, float v) { return b.constant(name, make_f32({}, {v})); }
} // namespace

TEST_CASE("passes: MatMul + bias (+ Gelu as torch exports it) becomes one FusedMatMul") {
    SUBCASE("bias only") {
        matmul_graph m;
        m.b.output(m.v, "y");
        const graph g = build(m.b);
        const graph o = optimized(g);
        const ember::node& f = only_node(o, "FusedMatMul");
        CHECK(o.nodes.size() == 1);
        CHECK(f.inputs.size() == 3);
        CHECK(activation_of(f).empty());
        same_with_and_without(g, {random_f32({2, 3, 8}, 112)});
    }
    SUBCASE("Gelu: Div, Erf, Add 1, Mul x, Mul 0.5 (torch.nn.GELU)") {
        matmul_graph m;
        const value_id e = m.b.node("Erf", {m.b.node("Div", {m.v, scalar(m.b, "sqrt2", 1.4142135f)}, {}, "div")}, {}, "erf");
        const value_id a = m.b.node("Add", {e, scalar(m.b, "one", 1.0f)}, {}, "add1");
        m.b.output(m.b.node("Mul", {m.b.node("Mul", {m.v, a}, {}, "mul_x"), scalar(m.b, "half", 0.5f)}, {}, "mul_half"), "y");
        const graph g = build(m.b);
        const graph o = optimized(g);
        CHECK(o.nodes.size() == 1);
        CHECK(activation_of(only_node(o, "FusedMatMul")) == "Gelu");
        same_with_and_without(g, {random_f32({2, 3, 8}, 113, -3.0f, 3.0f)});
    }
    SUBCASE("Gelu: Mul 0.5 first, Mul by 1/sqrt(2), Add 1 on the left (x * 0.5 * (1 + erf(x / sqrt 2)))") {
        matmul_graph m;
        const value_id half = m.b.node("Mul", {m.v, scalar(m.b, "half", 0.5f)}, {}, "mul_half");
        const value_id e = m.b.node("Erf", {m.b.node("Mul", {m.v, scalar(m.b, "rsqrt2", 0.70710678f)}, {}, "scale")}, {}, "erf");
        const value_id a = m.b.node("Add", {scalar(m.b, "one", 1.0f), e}, {}, "add1");
        m.b.output(m.b.node("Mul", {a, half}, {}, "mul"), "y");
        const graph g = build(m.b);
        const graph o = optimized(g);
        CHECK(activation_of(only_node(o, "FusedMatMul")) == "Gelu");
        CHECK(o.nodes.size() == 1);
        same_with_and_without(g, {random_f32({2, 3, 8}, 114, -3.0f, 3.0f)});
    }
    SUBCASE("Gelu: x * ((1 + erf) * 0.5)") {
        matmul_graph m;
        const value_id e = m.b.node("Erf", {m.b.node("Div", {m.v, scalar(m.b, "sqrt2", 1.4142135f)}, {}, "div")}, {}, "erf");
        const value_id a = m.b.node("Add", {e, scalar(m.b, "one", 1.0f)}, {}, "add1");
        const value_id h = m.b.node("Mul", {a, scalar(m.b, "half", 0.5f)}, {}, "h");
        m.b.output(m.b.node("Mul", {m.v, h}, {}, "mul"), "y");
        const graph g = build(m.b);
        const graph o = optimized(g);
        CHECK(activation_of(only_node(o, "FusedMatMul")) == "Gelu");
        CHECK(o.nodes.size() == 1);
        same_with_and_without(g, {random_f32({2, 3, 8}, 115, -3.0f, 3.0f)});
    }
    SUBCASE("not Gelu: a divisor other than sqrt(2) leaves the pattern alone") {
        matmul_graph m;
        const value_id e = m.b.node("Erf", {m.b.node("Div", {m.v, scalar(m.b, "two", 2.0f)}, {}, "div")}, {}, "erf");
        const value_id a = m.b.node("Add", {e, scalar(m.b, "one", 1.0f)}, {}, "add1");
        m.b.output(m.b.node("Mul", {m.b.node("Mul", {m.v, a}, {}, "mul_x"), scalar(m.b, "half", 0.5f)}, {}, "mul_half"), "y");
        const graph g = build(m.b);
        const graph o = optimized(g);
        CHECK(activation_of(only_node(o, "FusedMatMul")).empty());
        CHECK(count_op(o, "Erf") == 1);
        same_with_and_without(g, {random_f32({2, 3, 8}, 116)});
    }
    SUBCASE("bias + residual + Relu") {
        matmul_graph m;
        const value_id z = m.b.input("z", dtype::float32, {2, 3, 6});
        m.b.output(m.b.node("Relu", {m.b.node("Add", {m.v, z}, {}, "res")}, {}, "relu"), "y");
        const graph g = build(m.b);
        const graph o = optimized(g);
        const ember::node& f = only_node(o, "FusedMatMul");
        CHECK(f.inputs.size() == 4);
        CHECK(activation_of(f) == "Relu");
        same_with_and_without(g, {random_f32({2, 3, 8}, 117), random_f32({2, 3, 6}, 118)});
    }
}

namespace {
// Replaces the built-in Relu (a custom op is looked up first): adds 100, so fusing it would show.
struct my_relu {
    static constexpr std::string_view onnx_name = "Relu";
    static constexpr ember::op_flags flags = ember::op_flags::none;
    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();
    static status infer(const attributes&, ember::infer_context& ctx) { return ember::infer_same_shape(ctx); }
    static void kernel(const void* p, const ember::run_context& ctx) noexcept {
        const auto& a = *static_cast<const std::pair<ember::operand, ember::operand>*>(p);
        float* y = ctx.at<float>(a.second);
        const float* x = ctx.at<const float>(a.first);
        for (std::size_t i = 0; i < 75; ++i) y[i] = x[i] + 100.0f;  // not a Relu at all
    }
    static status bind(const attributes&, ember::bind_context& ctx) {
        ctx.emit(&kernel, std::make_pair(ctx.input(0), ctx.output(0)));
        return status::ok;
    }
};
} // namespace

TEST_CASE("passes: a user's op of the same name is never fused away") {
    ember::op_registry ops;
    ops.add<my_relu>();
    conv_graph cg;
    cg.b.output(cg.b.node("Relu", {cg.c}, {}, "relu"), "y");
    const graph g = build(cg.b);
    ember::compile_options options;
    options.custom_ops = &ops;
    CHECK(op_types(optimized(g, options)) == std::vector<std::string>{"Conv", "Relu"});
}

// ---- Transpose / Reshape ----------------------------------------------------------------------

TEST_CASE("passes: Transpose pairs merge or cancel, Reshape chains collapse, no-op Reshapes go") {
    using ints = std::vector<std::int64_t>;
    auto perm = [](ints p) { return std::vector<attribute>{attribute::of("perm", std::move(p))}; };
    SUBCASE("Transposes that cancel") {
        graph_builder b("cancel");
        const value_id t = b.node("Transpose", {b.node("Transpose", {b.input("x", dtype::float32, {2, 3, 4})}, perm({1, 2, 0}), "t1")}, perm({2, 0, 1}), "t2");
        b.output(b.node("Neg", {t}, {}, "neg"), "y");
        const graph g = build(b);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Neg"});
        same_with_and_without(g, {random_f32({2, 3, 4}, 120)});
    }
    SUBCASE("Transposes that compose, the second a graph output") {
        graph_builder b("compose");
        b.output(b.node("Transpose", {b.node("Transpose", {b.input("x", dtype::float32, {2, 3, 4})}, perm({1, 0, 2}), "t1")}, perm({0, 2, 1}), "t2"), "y");
        const graph g = build(b);
        const graph o = optimized(g);
        const ember::node& t = only_node(o, "Transpose");
        CHECK(o.nodes.size() == 1);
        CHECK(t.find_attribute("perm")->ints == ints{1, 2, 0});
        std::vector<tensor> y = same_with_and_without(g, {random_f32({2, 3, 4}, 121)}, {}, 0.0f);
        CHECK(y[0].dims() == shape{3, 4, 2});
        CHECK(output_names(g) == std::vector<std::string>{"y"});
    }
    SUBCASE("Reshape chain, and a Reshape to the same shape") {
        graph_builder b("reshapes");
        const value_id x = b.input("x", dtype::float32, {2, 3, 4});
        const value_id r1 = b.node("Reshape", {x, b.constant("s1", ember::test::make<std::int64_t>({2}, {6, 4}))}, {}, "r1");
        const value_id r2 = b.node("Reshape", {r1, b.constant("s2", ember::test::make<std::int64_t>({3}, {4, -1, 2}))}, {}, "r2");
        const value_id r3 = b.node("Reshape", {r2, b.constant("s3", ember::test::make<std::int64_t>({3}, {4, 3, 2}))}, {}, "r3");
        b.output(b.node("Neg", {r3}, {}, "neg"), "y");
        const graph g = build(b);
        const graph o = optimized(g);
        // r1 folds into r2 (whose shape does not read r1's dims), r2 into r3; r3 stays: [4, 3, 2] is
        // not x's shape [2, 3, 4]
        CHECK(op_types(o) == std::vector<std::string>{"Neg", "Reshape"});
        same_with_and_without(g, {random_f32({2, 3, 4}, 122)}, {}, 0.0f);
        CHECK(op_types(optimized(g, with_passes(all_but(&ember::pass_options::layout_simplification)))) ==
              std::vector<std::string>{"Neg", "Reshape", "Reshape", "Reshape"});
    }
    SUBCASE("a Reshape that copies a dimension (0) stays in the chain") {
        graph_builder b("reshape_zero");
        const value_id x = b.input("x", dtype::float32, {2, 3, 4});
        const value_id r1 = b.node("Reshape", {x, b.constant("s1", ember::test::make<std::int64_t>({2}, {6, 4}))}, {}, "r1");
        const value_id r2 = b.node("Reshape", {r1, b.constant("s2", ember::test::make<std::int64_t>({3}, {0, 2, 2}))}, {}, "r2");
        b.output(b.node("Neg", {r2}, {}, "neg"), "y");
        const graph g = build(b);
        CHECK(count_op(optimized(g), "Reshape") == 2);
        same_with_and_without(g, {random_f32({2, 3, 4}, 123)}, {}, 0.0f);
    }
    SUBCASE("a Reshape to its input's shape is removed after shape inference") {
        graph_builder b("reshape_same");
        const value_id x = b.input("x", dtype::float32, {2, 3});
        const value_id r = b.node("Reshape", {b.node("Relu", {x}, {}, "relu"), b.constant("s", ember::test::make<std::int64_t>({2}, {2, -1}))}, {}, "r");
        b.output(b.node("Neg", {r}, {}, "neg"), "y");
        const graph g = build(b);
        CHECK(op_types(optimized(g)) == std::vector<std::string>{"Neg", "Relu"});
        same_with_and_without(g, {random_f32({2, 3}, 124)}, {}, 0.0f);
    }
}

// ---- the fused ops' own checks ----------------------------------------------------------------

namespace {
ember::result<ember::plan> compile_fused(const std::string& op, std::vector<value_id> (*inputs)(graph_builder&), std::vector<attribute> attrs) {
    graph_builder b("fused");
    b.output(b.node(op, inputs(b), std::move(attrs), "f"), "y");
    graph g = build(b);
    g.nodes[0].domain = "ember";
    return ember::compile(g, no_passes());
}
std::vector<value_id> conv_inputs_bad_z(graph_builder& b) {
    return {b.input("x", dtype::float32, {1, 2, 5, 5}), b.constant("W", random_f32({3, 2, 3, 3}, 1)), ember::no_value,
            b.input("z", dtype::float32, {1, 3, 1, 1})};
}
std::vector<value_id> conv_inputs(graph_builder& b) {
    return {b.input("x", dtype::float32, {1, 2, 5, 5}), b.constant("W", random_f32({3, 2, 3, 3}, 1))};
}
std::vector<value_id> gemm_inputs_bad_z(graph_builder& b) {
    return {b.input("a", dtype::float32, {2, 3}), b.constant("B", random_f32({3, 4}, 1)), ember::no_value, b.input("z", dtype::float32, {1, 4})};
}
// QLinearConv's inputs; y_scale a graph input (not constant) when runtime_y_scale
std::vector<value_id> qlinear_conv_inputs(graph_builder& b, bool runtime_y_scale) {
    using ember::test::make;
    return {b.input("x", dtype::uint8, {1, 2, 5, 5}),
            b.constant("xs", make_f32({}, {0.1f})),
            b.constant("xz", make<std::uint8_t>({}, {3})),
            b.constant("w", make<std::int8_t>({3, 2, 1, 1}, {1, -2, 3, -4, 5, -6})),
            b.constant("ws", make_f32({}, {0.02f})),
            b.constant("wz", make<std::int8_t>({}, {0})),
            runtime_y_scale ? b.input("ys", dtype::float32, {}) : b.constant("ys", make_f32({}, {0.05f})),
            b.constant("yz", make<std::uint8_t>({}, {10}))};
}
std::vector<value_id> qlinear_conv_inputs_const(graph_builder& b) { return qlinear_conv_inputs(b, false); }
std::vector<value_id> qlinear_conv_inputs_runtime_scale(graph_builder& b) { return qlinear_conv_inputs(b, true); }
std::vector<value_id> matmul_inputs_bad_bias(graph_builder& b) {
    return {b.input("a", dtype::float32, {2, 3}), b.constant("B", random_f32({3, 4}, 1)), b.constant("bias", random_f32({3}, 2))};
}
} // namespace

TEST_CASE("passes: the fused ops check Z, the bias and the activation") {
    auto z = compile_fused("FusedConv", conv_inputs_bad_z, {});
    REQUIRE_FALSE(z);
    CHECK(z.error().code == status::shape_mismatch);
    CHECK(contains(z.error().message, "node 0 'f' (FusedConv): input 3 (Z, the residual) has shape [1, 3, 1, 1]; it must have the output's shape [1, 3, 3, 3] exactly"));
    auto zg = compile_fused("FusedGemm", gemm_inputs_bad_z, {});
    REQUIRE_FALSE(zg);
    CHECK(contains(zg.error().message, "input 3 (Z, the residual) has shape [1, 4]; it must have the output's shape [2, 4] exactly"));
    auto bias = compile_fused("FusedMatMul", matmul_inputs_bad_bias, {});
    REQUIRE_FALSE(bias);
    CHECK(contains(bias.error().message, "input 2 (bias) must be [4] (one value per column of the output [2, 4]), got [3]"));
    auto act = compile_fused("FusedConv", conv_inputs, {attribute::of("activation", "Swish")});
    REQUIRE_FALSE(act);
    CHECK(act.error().code == status::unsupported_op);
    CHECK(contains(act.error().message, "activation 'Swish' is not supported"));
    auto params = compile_fused("FusedConv", conv_inputs, {attribute::of("activation", "Clip"), attribute::of("activation_params", std::vector<float>{1.0f})});
    REQUIRE_FALSE(params);
    CHECK(contains(params.error().message, "activation 'Clip' takes 2 activation_params (or none for the defaults), got 1"));
    auto ok = compile_fused("FusedConv", conv_inputs, {attribute::of("activation", "LeakyRelu")});
    CHECK_MESSAGE(ok, ok.error().message);
    // FusedQLinearConv: Relu or Clip only, and Clip's quantized bounds need y_scale and y_zp constant
    auto qact = compile_fused("FusedQLinearConv", qlinear_conv_inputs_const, {attribute::of("activation", "Sigmoid")});
    REQUIRE_FALSE(qact);
    CHECK(qact.error().code == status::unsupported_op);
    CHECK(contains(qact.error().message, "activation 'Sigmoid' is not supported (expected Relu, Clip or none)"));
    auto qclip = compile_fused("FusedQLinearConv", qlinear_conv_inputs_runtime_scale,
                               {attribute::of("activation", "Clip"), attribute::of("activation_params", std::vector<float>{0.0f, 6.0f})});
    REQUIRE_FALSE(qclip);
    CHECK(contains(qclip.error().message, "activation Clip needs a constant one-value y_scale and y_zero_point"));
    auto qok = compile_fused("FusedQLinearConv", qlinear_conv_inputs_const,
                             {attribute::of("activation", "Clip"), attribute::of("activation_params", std::vector<float>{0.0f, 6.0f})});
    CHECK_MESSAGE(qok, qok.error().message);
}

TEST_CASE("passes: an error in a fused node names the user's node") {
    // Conv + Relu would fuse, but the Conv's W has the wrong channel count: the Conv's own infer()
    // runs before fusion and fails, naming the node as the user wrote it (index 0, not 0 of the
    // graph without the Identity).
    graph_builder b("bad");
    const value_id x = b.input("x", dtype::float32, {1, 2, 5, 5});
    const value_id c = b.node("Conv", {x, b.constant("W", random_f32({3, 4, 3, 3}, 1))}, {}, "conv1");
    b.output(b.node("Relu", {b.node("Identity", {c}, {}, "id")}, {}, "relu"), "y");
    const graph g = build(b);
    ember::result<ember::plan> p = ember::compile(g);
    REQUIRE_FALSE(p);
    CHECK(p.error().node == 0);
    CHECK(contains(p.error().message, "node 0 'conv1' (Conv): X [1, 2, 5, 5] has 2 channels"));
}

TEST_CASE("passes: step names and node indices refer to the user's graph") {
    conv_graph cg;
    const value_id id = cg.b.node("Identity", {cg.b.node("Relu", {cg.c}, {}, "relu")}, {}, "id");
    cg.b.output(cg.b.node("Neg", {id}, {}, "neg"), "y");
    const graph g = build(cg.b);
    ember::result<ember::plan> p = ember::compile(g);
    REQUIRE_MESSAGE(p, p.error().message);
    REQUIRE(p->steps().size() == 2);
    CHECK(p->step_op(0) == "FusedConv");
    CHECK(p->step_name(0) == "conv");
    CHECK(p->steps()[0].node == 0);
    CHECK(p->step_name(1) == "neg");
    CHECK(p->steps()[1].node == 3);
}

// ---- the anchor model zoo ---------------------------------------------------------------------

namespace {
bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

std::string zoo_dir() {
    if (const char* env = std::getenv("EMBER_ANCHORS")) return std::string(env) + "/models";
    if (const char* home = std::getenv("HOME")) return std::string(home) + "/.cache/ember-anchors/models";
    return std::string();
}

// max |a - b| / max |b| over all elements, as tools/model_tests.sh measures models
double relative_difference(const tensor& a, const tensor& b) {
    double diff = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, double(std::fabs(a.data<float>()[i] - b.data<float>()[i])));
        scale = std::max(scale, double(std::fabs(b.data<float>()[i])));
    }
    return scale > 0.0 ? diff / scale : diff;
}
} // namespace

TEST_CASE("passes: the anchor model zoo computes the same with the passes on and off") {
    const std::string dir = zoo_dir();
    if (dir.empty() || !file_exists(dir + "/models.json")) {
        MESSAGE("skipped: no anchor model zoo in '" << dir << "' (run ../shared/anchors/setup.sh, or set EMBER_ANCHORS)");
        return;
    }
    for (const std::string model : {"mlp_tiny", "resnet18", "mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x1_0", "efficientnet_b0", "encoder_small"}) {
        CAPTURE(model);
        const std::string path = dir + "/" + model + ".onnx";
        if (!file_exists(path) || !file_exists(dir + "/" + model + ".in.npy")) {
            MESSAGE(model << ": skipped, not in the zoo");
            continue;
        }
        ember::result<graph> g = ember::onnx::load_file(path.c_str());
        REQUIRE_MESSAGE(g, g.error().message);
        ember::result<tensor> x = ember::npy::load_file((dir + "/" + model + ".in.npy").c_str());
        REQUIRE_MESSAGE(x, x.error().message);
        REQUIRE(g->inputs.size() == 1);
        ember::compile_options options;
        options.input_shapes = {{g->values[g->inputs[0]].name, x->dims()}};
        const graph o = optimized(*g, options);
        std::size_t with_activation = 0;
        for (const ember::node& n : o.nodes) with_activation += n.domain == "ember" && !activation_of(n).empty() ? 1 : 0;
        MESSAGE(model << ": " << g->nodes.size() << " nodes -> " << o.nodes.size() << "; FusedConv " << count_op(o, "FusedConv") << ", FusedGemm "
                      << count_op(o, "FusedGemm") << ", FusedMatMul " << count_op(o, "FusedMatMul") << " (" << with_activation
                      << " with an activation); left: Conv " << count_op(o, "Conv") << ", MatMul " << count_op(o, "MatMul") << ", Identity "
                      << count_op(o, "Identity") << ", BatchNormalization " << count_op(o, "BatchNormalization"));
        CHECK(count_op(o, "Identity") == 0);
        CHECK(count_op(o, "BatchNormalization") == 0);
        if (model == "resnet18") {
            // 20 Convs: every Relu and every residual Add fused; the 3 downsample Convs feed their
            // block's Add as Z (the Add fuses into the first of its two Convs), so they stay Convs.
            CHECK(count_op(o, "Relu") == 0);
            CHECK(count_op(o, "Add") == 0);
            CHECK(count_op(o, "FusedConv") + count_op(o, "Conv") == 20);
            CHECK(count_op(o, "Conv") <= 3);
        } else if (model == "mobilenet_v2") {
            CHECK(count_op(o, "Clip") == 0);  // every Relu6
        } else if (model == "efficientnet_b0") {
            std::size_t silu = 0;
            for (const ember::node& n : o.nodes) silu += activation_of(n) == "Silu" ? 1 : 0;
            CHECK(silu > 0);
        } else if (model == "encoder_small") {
            CHECK(count_op(o, "FusedMatMul") > 0);
        }
        const std::vector<tensor> on = run(*g, {*x}, options);
        ember::compile_options off = options;
        off.passes = ember::pass_options::none();
        const std::vector<tensor> without = run(*g, {*x}, off);
        REQUIRE(on.size() == without.size());
        for (std::size_t k = 0; k < on.size(); ++k) {
            const double d = relative_difference(on[k], without[k]);
            MESSAGE(model << ": output " << k << " differs by " << d << " of its largest magnitude");
            CHECK(d <= 1e-5);
        }
    }
}

// ---- QDQ folding ------------------------------------------------------------------------------

namespace {

// x (float) -> Q -> DQ -> Conv(DQ(w int8, per channel on axis 0), DQ(b int32, x_scale * w_scale))
// [-> Relu] -> Q -> DQ -> y: the QDQ form ONNX Runtime's quantizer writes. bias_scale_factor
// other than 1 dequantizes the bias with another scale (not foldable). With a float output the
// Conv's output is not quantized: Conv [-> Add(z)] [-> Relu] -> y, z a second input [1, M, 9, 9].
enum class qdq_output { quantized, float_out, residual };
// act replaces the Relu (float output only): "Sigmoid" or "Clip" (to [0, 6]). depthwise: M = C = 6,
// one group per channel.
graph qdq_conv_graph(bool relu, bool bias, float bias_scale_factor = 1.0f, bool float_bias = false, qdq_output out = qdq_output::quantized,
                     const std::string& act = "Relu", float clip_lo = 0.0f, float clip_hi = 6.0f, bool clip_constant_nodes = false,
                     bool depthwise = false) {
    const std::int64_t C = 6, M = depthwise ? C : 10, CG = depthwise ? 1 : C;
    graph_builder b("qdq_conv");
    const value_id x = b.input("x", dtype::float32, {1, C, 9, 9});
    const value_id z = out == qdq_output::residual ? b.input("z", dtype::float32, {1, M, 9, 9}) : ember::no_value;
    const float xs = 0.02f, ys = 0.05f;
    const value_id xs_v = b.constant("xs", make_f32({}, {xs}));
    const value_id xz_v = b.constant("xz", ember::test::make<std::uint8_t>({}, {128}));
    const value_id xq = b.node("QuantizeLinear", {x, xs_v, xz_v}, {}, "qx");
    const value_id xd = b.node("DequantizeLinear", {xq, xs_v, xz_v}, {}, "dqx");
    std::vector<std::int8_t> w(static_cast<std::size_t>(M * CG * 9));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::int8_t>(static_cast<int>((i * 37) % 255) - 127);
    std::vector<float> ws(static_cast<std::size_t>(M));
    std::vector<std::int32_t> bq(static_cast<std::size_t>(M));
    std::vector<float> bs(static_cast<std::size_t>(M));
    for (std::int64_t m = 0; m < M; ++m) {
        ws[static_cast<std::size_t>(m)] = 0.001f * static_cast<float>(m + 1);
        bq[static_cast<std::size_t>(m)] = static_cast<std::int32_t>(m * 97 - 400);
        bs[static_cast<std::size_t>(m)] = xs * ws[static_cast<std::size_t>(m)] * bias_scale_factor;
    }
    const value_id wq = b.constant("w_quantized", ember::test::make<std::int8_t>({M, CG, 3, 3}, w));
    const value_id ws_v = b.constant("w_scale", make_f32({M}, ws));
    const value_id wz_v = b.constant("w_zero_point", ember::test::make<std::int8_t>({M}, std::vector<std::int8_t>(static_cast<std::size_t>(M), 0)));
    const value_id wd = b.node("DequantizeLinear", {wq, ws_v, wz_v}, {attribute::of("axis", std::int64_t{0})}, "dqw");
    std::vector<value_id> conv_in{xd, wd};
    if (float_bias) {
        std::vector<float> bf(static_cast<std::size_t>(M));
        for (std::size_t m = 0; m < bf.size(); ++m) bf[m] = 0.0123f * static_cast<float>(m) - 0.05f;
        conv_in.push_back(b.constant("b", make_f32({M}, bf)));
    } else if (bias) {
        const value_id bqv = b.constant("b_quantized", ember::test::make<std::int32_t>({M}, bq));
        const value_id bsv = b.constant("b_scale", make_f32({M}, bs));
        conv_in.push_back(b.node("DequantizeLinear", {bqv, bsv}, {attribute::of("axis", std::int64_t{0})}, "dqb"));
    }
    value_id y = b.node("Conv", conv_in, {attribute::of("pads", std::vector<std::int64_t>{1, 1, 1, 1}), attribute::of("group", depthwise ? C : 1)},
                        "conv");
    if (out == qdq_output::residual) y = b.node("Add", {y, z}, {}, "add");
    if (relu && act == "Clip" && clip_constant_nodes)  // Relu6's bounds as torch exports them
        y = b.node("Clip",
                   {y, b.node("Constant", {}, {attribute::of("value", make_f32({}, {clip_lo}))}, "lo"),
                    b.node("Constant", {}, {attribute::of("value", make_f32({}, {clip_hi}))}, "hi")},
                   {}, "clip");
    else if (relu && act == "Clip")
        y = b.node("Clip", {y, b.constant("lo", make_f32({}, {clip_lo})), b.constant("hi", make_f32({}, {clip_hi}))}, {}, "clip");
    else if (relu)
        y = b.node(act, {y}, {}, "act");
    if (out != qdq_output::quantized) {
        b.output(y, "y");
        return build(b, 13);
    }
    const value_id ys_v = b.constant("ys", make_f32({}, {ys}));
    const value_id yz_v = b.constant("yz", ember::test::make<std::uint8_t>({}, {100}));
    const value_id yq = b.node("QuantizeLinear", {y, ys_v, yz_v}, {}, "qy");
    b.output(b.node("DequantizeLinear", {yq, ys_v, yz_v}, {}, "dqy"), "y");
    return build(b, 13);
}

// The compile options of the reference kernels and of every kernel table with an INT8 GEMM.
std::vector<ember::compile_options> int8_isas() {
    std::vector<ember::compile_options> out(1);
    out[0].isa = "reference";
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
        if (t->gemm_u8s8) out.emplace_back().isa = std::string(t->name);
    return out;
}

// Outputs with and without QDQ folding: the folded one differs at most by one quantization step
// (0.05), and rarely; on the reference kernels and on every INT8 table.
void check_folded_matches(const graph& g) {
    const tensor x = random_f32({1, 6, 9, 9}, 77);
    const tensor without = run(g, {x}, with_passes(all_but(&ember::pass_options::qdq_folding)))[0];
    for (const ember::compile_options& o : int8_isas()) {
        CAPTURE(o.isa);
        const tensor with = run(g, {x}, o)[0];
        std::size_t differ = 0;
        for (std::size_t i = 0; i < with.size(); ++i) {
            const float d = std::fabs(with.data<float>()[i] - without.data<float>()[i]);
            CHECK(d <= 0.05f * 1.001f);
            differ += d > 0.0f ? 1 : 0;
        }
        CHECK(differ * 100 <= with.size());
    }
}

} // namespace

TEST_CASE("passes: the QDQ form of a convolution folds into QLinearConv, with a Relu or Clip into FusedQLinearConv") {
    for (bool bias : {true, false}) {
        CAPTURE(bias);
        const graph plain = qdq_conv_graph(false, bias);
        const graph o = optimized(plain);
        CHECK(count_op(o, "Conv") == 0);
        const ember::node& q = only_node(o, "QLinearConv");
        CHECK(q.inputs.size() == (bias ? 9u : 8u));
        CHECK(count_op(o, "QuantizeLinear") == 1);    // the input's
        CHECK(count_op(o, "DequantizeLinear") == 1);  // the output's; the weights' and the bias's are gone
        check_folded_matches(plain);

        const graph with_relu = qdq_conv_graph(true, bias);
        const graph r = optimized(with_relu);
        CHECK(count_op(r, "Relu") == 0);
        const ember::node& f = only_node(r, "FusedQLinearConv");
        CHECK(f.domain == "ember");
        CHECK(activation_of(f) == "Relu");
        check_folded_matches(with_relu);
    }
    // a Clip (MobileNet's Relu6) before the QuantizeLinear: clamped between the quantized bounds,
    // both inside the outputs' range here so that each side clamps
    // (the bounds as constants, then as Constant nodes)
    // (a struct, not structured bindings: clang 14 cannot capture those in CAPTURE's lambda)
    struct clip_case {
        float lo, hi;
        bool nodes;
    };
    for (const clip_case& cc : {clip_case{0.0f, 6.0f, false}, clip_case{-0.4f, 0.35f, false}, clip_case{-0.4f, 0.35f, true}}) {
        CAPTURE(cc.lo);
        CAPTURE(cc.hi);
        CAPTURE(cc.nodes);
        const graph clip = qdq_conv_graph(true, true, 1.0f, false, qdq_output::quantized, "Clip", cc.lo, cc.hi, cc.nodes);
        const graph c = optimized(clip);
        CHECK(count_op(c, "Clip") == 0);
        const ember::node& f = only_node(c, "FusedQLinearConv");
        CHECK(activation_of(f) == "Clip");
        check_folded_matches(clip);
    }
    // a float bias (left float by the quantizer) is quantized with x_scale * w_scale
    const graph float_bias = qdq_conv_graph(true, false, 1.0f, true);
    CHECK(only_node(optimized(float_bias), "FusedQLinearConv").inputs.size() == 9u);
    check_folded_matches(float_bias);
}

namespace {

// A float-output fold against the unfolded graph, on the reference kernels and on every INT8
// table: the same sums in another order and one more rounding of the scale, nothing more.
void check_float_folded(const graph& g, const std::vector<tensor>& inputs) {
    const tensor without = run(g, inputs, with_passes(all_but(&ember::pass_options::qdq_folding)))[0];
    float largest = 0.0f;
    for (std::size_t i = 0; i < without.size(); ++i) largest = std::max(largest, std::fabs(without.data<float>()[i]));
    REQUIRE(largest > 0.0f);
    for (const ember::compile_options& o : int8_isas()) {
        CAPTURE(o.isa);
        const tensor with = run(g, inputs, o)[0];
        REQUIRE(with.size() == without.size());
        float worst = 0.0f;
        for (std::size_t i = 0; i < with.size(); ++i) worst = std::max(worst, std::fabs(with.data<float>()[i] - without.data<float>()[i]));
        CHECK(worst <= 1e-4f * largest);  // the float path may be Winograd (its own roundings)
    }
}

} // namespace

TEST_CASE("passes: a QDQ convolution whose output stays float folds into FusedQConv, which takes the residual Add and the Relu") {
    const tensor x = random_f32({1, 6, 9, 9}, 78), z = random_f32({1, 10, 9, 9}, 79);
    for (bool bias : {true, false}) {
        CAPTURE(bias);
        const graph plain = qdq_conv_graph(false, bias, 1.0f, false, qdq_output::float_out);
        const graph o = optimized(plain);
        CHECK(count_op(o, "Conv") + count_op(o, "FusedConv") == 0);
        const ember::node& f = only_node(o, "FusedQConv");
        CHECK(f.domain == "ember");
        CHECK(f.inputs.size() == (bias ? 7u : 6u));
        CHECK(activation_of(f).empty());
        CHECK(count_op(o, "DequantizeLinear") == 0);  // the input's, the weights' and the bias's are gone
        check_float_folded(plain, {x});

        const graph relu = qdq_conv_graph(true, bias, 1.0f, false, qdq_output::float_out);
        const graph r = optimized(relu);
        CHECK(count_op(r, "Relu") == 0);
        CHECK(activation_of(only_node(r, "FusedQConv")) == "Relu");
        check_float_folded(relu, {x});

        const graph residual = qdq_conv_graph(true, bias, 1.0f, false, qdq_output::residual);
        const graph a = optimized(residual);
        CHECK(count_op(a, "Add") + count_op(a, "Relu") == 0);
        const ember::node& fa = only_node(a, "FusedQConv");
        CHECK(fa.inputs.size() == 8u);
        CHECK(activation_of(fa) == "Relu");
        check_float_folded(residual, {x, z});
    }
    // the activations the kernel applies as a clamp (Clip) and after the GEMM (Sigmoid)
    for (const char* act : {"Clip", "Sigmoid"}) {
        CAPTURE(act);
        const graph g = qdq_conv_graph(true, true, 1.0f, false, qdq_output::residual, act);
        CHECK(activation_of(only_node(optimized(g), "FusedQConv")) == act);
        check_float_folded(g, {x, z});
    }
    // a float bias is quantized as for QLinearConv
    const graph float_bias = qdq_conv_graph(false, false, 1.0f, true, qdq_output::residual);
    CHECK(only_node(optimized(float_bias), "FusedQConv").inputs.size() == 8u);
    // epilogue fusion off: FusedQConv without the Add
    const graph no_fusion = optimized(float_bias, with_passes(all_but(&ember::pass_options::epilogue_fusion)));
    CHECK(only_node(no_fusion, "FusedQConv").inputs.size() == 7u);
    CHECK(count_op(no_fusion, "Add") == 1);
}

namespace {

// DQ(Q(x)), DQ(w) -> Conv (kernel k x k, `group`, C inputs, M outputs) -> Q -> DQ, for the depth rule.
graph qdq_narrow_conv(std::int64_t C, std::int64_t M, std::int64_t group, std::int64_t k) {
    graph_builder b("qdq_narrow");
    const value_id x = b.input("x", dtype::float32, {1, C, 8, 8});
    const value_id xs = b.constant("xs", make_f32({}, {0.02f})), xz = b.constant("xz", ember::test::make<std::uint8_t>({}, {128}));
    const value_id xd = b.node("DequantizeLinear", {b.node("QuantizeLinear", {x, xs, xz}, {}, "qx"), xs, xz}, {}, "dqx");
    std::vector<std::int8_t> w(static_cast<std::size_t>(M * (C / group) * k * k));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::int8_t>(static_cast<int>((i * 53) % 255) - 127);
    const value_id wd = b.node("DequantizeLinear",
                               {b.constant("wq", ember::test::make<std::int8_t>({M, C / group, k, k}, w)), b.constant("ws", make_f32({}, {0.01f}))},
                               {}, "dqw");
    const value_id y = b.node("Conv", {xd, wd}, {attribute::of("group", group)}, "conv");
    const value_id ys = b.constant("ys", make_f32({}, {0.05f})), yz = b.constant("yz", ember::test::make<std::uint8_t>({}, {100}));
    b.output(b.node("DequantizeLinear", {b.node("QuantizeLinear", {y, ys, yz}, {}, "qy"), ys, yz}, {}, "dqy"), "y");
    return build(b, 13);
}

} // namespace

TEST_CASE("passes: QDQ folding takes convolutions of depth C/group * kernel >= 16, and depthwise ones") {
    const graph pointwise16 = qdq_narrow_conv(16, 24, 1, 1);  // MobileNetV2's 16-channel expand conv
    CHECK(count_op(optimized(pointwise16), "QLinearConv") == 1);
    const graph depthwise = qdq_narrow_conv(8, 8, 8, 3);  // depth 9: the INT8 depthwise kernel's
    CHECK(count_op(optimized(depthwise), "QLinearConv") == 1);
    const graph grouped = qdq_narrow_conv(8, 8, 4, 3);  // depth 18, two channels a group
    CHECK(count_op(optimized(grouped), "QLinearConv") == 1);
    const graph narrow_grouped = qdq_narrow_conv(8, 8, 4, 1);  // depth 2, not depthwise: stays float
    CHECK(count_op(optimized(narrow_grouped), "QLinearConv") == 0);
    const graph narrow = qdq_narrow_conv(15, 4, 1, 1);  // depth 15
    CHECK(count_op(optimized(narrow), "QLinearConv") == 0);
}

TEST_CASE("passes: a depthwise QDQ convolution folds (QLinearConv, FusedQLinearConv, FusedQConv) and runs on the INT8 depthwise kernel") {
    const bool dw = true;
    for (bool bias : {true, false}) {
        CAPTURE(bias);
        const graph plain = qdq_conv_graph(false, bias, 1.0f, false, qdq_output::quantized, "Relu", 0.0f, 6.0f, false, dw);
        CHECK(only_node(optimized(plain), "QLinearConv").inputs.size() == (bias ? 9u : 8u));
        check_folded_matches(plain);
        const graph relu = qdq_conv_graph(true, bias, 1.0f, false, qdq_output::quantized, "Relu", 0.0f, 6.0f, false, dw);
        CHECK(activation_of(only_node(optimized(relu), "FusedQLinearConv")) == "Relu");
        check_folded_matches(relu);
    }
    // MobileNet's Relu6 as Constant nodes, and bounds that clamp on both sides
    for (const bool nodes : {false, true}) {
        CAPTURE(nodes);
        const graph clip = qdq_conv_graph(true, true, 1.0f, false, qdq_output::quantized, "Clip", -0.4f, 0.35f, nodes, dw);
        CHECK(activation_of(only_node(optimized(clip), "FusedQLinearConv")) == "Clip");
        check_folded_matches(clip);
    }
    // float output, with the residual Add and an activation the kernel clamps (Relu) or applies after (Sigmoid)
    const tensor x = random_f32({1, 6, 9, 9}, 80), z = random_f32({1, 6, 9, 9}, 81);
    const graph float_out = qdq_conv_graph(false, true, 1.0f, false, qdq_output::float_out, "Relu", 0.0f, 6.0f, false, dw);
    CHECK(count_op(optimized(float_out), "FusedQConv") == 1);
    check_float_folded(float_out, {x});
    for (const char* act : {"Relu", "Sigmoid"}) {
        CAPTURE(act);
        const graph residual = qdq_conv_graph(true, true, 1.0f, false, qdq_output::residual, act, 0.0f, 6.0f, false, dw);
        CHECK(activation_of(only_node(optimized(residual), "FusedQConv")) == act);
        check_float_folded(residual, {x, z});
    }
}

TEST_CASE("passes: a QDQ convolution is not folded when the integer form would compute something else") {
    // the bias dequantized with a scale other than x_scale * w_scale: Conv + Relu stay float (fused)
    const graph mismatched = optimized(qdq_conv_graph(true, true, 1.5f));
    CHECK(count_op(mismatched, "FusedConv") == 1);
    CHECK(count_op(mismatched, "FusedQLinearConv") + count_op(mismatched, "QLinearConv") == 0);
    // the pass turned off
    const graph off = optimized(qdq_conv_graph(true, true), with_passes(all_but(&ember::pass_options::qdq_folding)));
    CHECK(count_op(off, "FusedConv") == 1);
    CHECK(count_op(off, "FusedQLinearConv") + count_op(off, "QLinearConv") == 0);
}
