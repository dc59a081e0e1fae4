// SPDX-License-Identifier: Apache-2.0
// If, Loop and Scan: bodies that capture outer values, compile-time and run-time conditions,
// loop-carried values and stacked scan outputs, unrolled bodies, nesting, folding and errors.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ember/ops/control_flow.hpp>

#include "support/check.hpp"

namespace {

using ember::attribute;
using ember::dtype;
using ember::graph;
using ember::graph_builder;
using ember::partial_shape;
using ember::shape;
using ember::tensor;
using ember::value_id;
using ember::test::make;
using ember::test::make_f32;

attribute graph_attr(std::string name, graph g) {
    attribute a;
    a.name = std::move(name);
    a.kind = ember::attribute_kind::graph;
    a.graphs.push_back(std::move(g));
    return a;
}

// Builds a body: `formals` are its inputs, `captured` outer names it uses (kind input, not listed
// in graph::inputs, as the importer makes them); fill() adds the nodes and marks the outputs.
template <class Fill>
graph body(const std::vector<std::pair<std::string, std::pair<dtype, shape>>>& formals, const std::vector<std::string>& captured, Fill fill) {
    graph_builder b("body");
    std::vector<value_id> ids;
    for (const auto& f : formals) ids.push_back(b.input(f.first, f.second.first, partial_shape(f.second.second)));
    std::vector<value_id> caps;
    for (const std::string& name : captured) caps.push_back(b.input(name, dtype::undefined, partial_shape()));
    fill(b, ids, caps);
    ember::result<graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    g->inputs.resize(formals.size());  // the captured ones are not inputs
    return std::move(*g);
}

struct compiled_graph {
    ember::result<ember::plan> plan = ember::error_info{ember::status::invalid_argument, -1, "not compiled"};
    bool ok() const { return static_cast<bool>(plan); }
    const std::string& message() const { return plan.error().message; }
};

compiled_graph compile_graph(graph_builder& b, std::int64_t opset = 0) {
    ember::result<graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    if (opset != 0) g->opsets.push_back(ember::opset{"", opset});
    compiled_graph c;
    c.plan = ember::compile(*g);
    return c;
}

// Runs a plan on the given inputs (in plan input order); returns run()'s status and the outputs.
ember::status run_plan(const ember::plan& p, const std::vector<const tensor*>& inputs, std::vector<tensor>& outputs) {
    ember::session s(p);
    REQUIRE(s.state() == ember::status::ok);
    REQUIRE(inputs.size() == p.input_count());
    for (std::size_t i = 0; i < inputs.size(); ++i) REQUIRE(s.bind_input(i, inputs[i]->bytes(), inputs[i]->size_bytes()) == ember::status::ok);
    outputs.clear();
    for (std::size_t k = 0; k < p.output_count(); ++k) {
        auto t = tensor::create(p.output(k).type, p.output(k).dims);
        REQUIRE(t);
        REQUIRE(s.bind_output(k, t->bytes(), t->size_bytes()) == ember::status::ok);
        outputs.push_back(std::move(*t));
    }
    return s.run();
}

tensor boolean(bool v) {
    auto t = tensor::create(dtype::boolean, shape{});
    REQUIRE(t);
    t->bytes()[0] = std::byte{static_cast<unsigned char>(v)};
    return std::move(*t);
}

tensor int64_scalar(std::int64_t v) { return make<std::int64_t>({}, {v}); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// then: x + x; else: x * x (x captured from the outer graph)
graph doubling() {
    return body({}, {"x"}, [](graph_builder& b, const std::vector<value_id>&, const std::vector<value_id>& c) { b.output(b.node("Add", {c[0], c[0]}, {}, "twice"), "y"); });
}
graph squaring() {
    return body({}, {"x"}, [](graph_builder& b, const std::vector<value_id>&, const std::vector<value_id>& c) { b.output(b.node("Mul", {c[0], c[0]}, {}, "square"), "y2"); });
}

} // namespace

TEST_CASE("if: a run-time cond picks the branch on every run, reading captured values") {
    graph_builder b("g");
    const value_id cond = b.input("cond", dtype::boolean, partial_shape(shape{}));
    const value_id x = b.input("x", dtype::float32, partial_shape(shape{3}));
    b.output(b.node("If", {cond}, {graph_attr("then_branch", doubling()), graph_attr("else_branch", squaring())}, "if"), "out");
    (void)x;
    compiled_graph c = compile_graph(b);
    REQUIRE_MESSAGE(c.ok(), c.message());
    CHECK(c.plan->output(0).dims == shape{3});
    const tensor xv = make_f32({3}, {1, -2, 3});
    const tensor yes = boolean(true), no = boolean(false);
    std::vector<tensor> out;
    REQUIRE(run_plan(*c.plan, {&yes, &xv}, out) == ember::status::ok);
    ember::test::check_close(out[0], {2, -4, 6});
    REQUIRE(run_plan(*c.plan, {&no, &xv}, out) == ember::status::ok);
    ember::test::check_close(out[0], {1, 4, 9});
}

TEST_CASE("if: a compile-time cond compiles only the chosen branch; a run-time one needs both, with equal shapes") {
    graph bad = body({}, {"x"}, [](graph_builder& b, const std::vector<value_id>&, const std::vector<value_id>& c) { b.output(b.node("NoSuchOp", {c[0]}, {}, "bad"), "z"); });
    {
        graph_builder b("g");
        const value_id cond = b.constant("cond", boolean(true));
        b.input("x", dtype::float32, partial_shape(shape{2}));
        b.output(b.node("If", {cond}, {graph_attr("then_branch", doubling()), graph_attr("else_branch", bad)}, "if"), "out");
        compiled_graph c = compile_graph(b);
        REQUIRE_MESSAGE(c.ok(), c.message());
        const tensor xv = make_f32({2}, {1.5f, 2.0f});
        std::vector<tensor> out;
        REQUIRE(run_plan(*c.plan, {&xv}, out) == ember::status::ok);
        ember::test::check_close(out[0], {3, 4});
    }
    {
        graph_builder b("g");
        const value_id cond = b.input("cond", dtype::boolean, partial_shape(shape{}));
        b.input("x", dtype::float32, partial_shape(shape{2}));
        b.output(b.node("If", {cond}, {graph_attr("then_branch", doubling()), graph_attr("else_branch", bad)}, "if"), "out");
        compiled_graph c = compile_graph(b);
        REQUIRE_FALSE(c.ok());
        CHECK(contains(c.message(), "else_branch"));
        CHECK(contains(c.message(), "op 'NoSuchOp' is not supported"));
    }
    {
        graph other = body({}, {"x"}, [](graph_builder& b, const std::vector<value_id>&, const std::vector<value_id>& c) {
            b.output(b.node("Concat", {c[0], c[0]}, {attribute::of("axis", 0)}, "cat"), "z");
        });
        graph_builder b("g");
        const value_id cond = b.input("cond", dtype::boolean, partial_shape(shape{}));
        b.input("x", dtype::float32, partial_shape(shape{2}));
        b.output(b.node("If", {cond}, {graph_attr("then_branch", doubling()), graph_attr("else_branch", other)}, "if"), "out");
        compiled_graph c = compile_graph(b);
        REQUIRE_FALSE(c.ok());
        CHECK(contains(c.message(), "output 0 is float32 [2] in then_branch but float32 [4] in else_branch"));
    }
}

TEST_CASE("if: with every input known at compile time it is folded") {
    graph_builder b("g");
    const value_id cond = b.constant("cond", boolean(false));
    b.constant("x", make_f32({2}, {3, 4}));
    b.output(b.node("If", {cond}, {graph_attr("then_branch", doubling()), graph_attr("else_branch", squaring())}, "if"), "out");
    compiled_graph c = compile_graph(b);
    REQUIRE_MESSAGE(c.ok(), c.message());
    for (std::size_t i = 0; i < c.plan->steps().size(); ++i) CHECK(c.plan->step_op(i) != "If");
    std::vector<tensor> out;
    REQUIRE(run_plan(*c.plan, {}, out) == ember::status::ok);
    ember::test::check_close(out[0], {9, 16});
}

TEST_CASE("if: wrong cond and a capture from nowhere are refused") {
    {
        graph_builder b("g");
        const value_id cond = b.input("cond", dtype::float32, partial_shape(shape{}));
        b.input("x", dtype::float32, partial_shape(shape{2}));
        b.output(b.node("If", {cond}, {graph_attr("then_branch", doubling()), graph_attr("else_branch", squaring())}, "if"), "out");
        compiled_graph c = compile_graph(b);
        REQUIRE_FALSE(c.ok());
        CHECK(contains(c.message(), "input 0 (cond) is float32 of shape [], expected one bool"));
    }
    {
        graph_builder b("g");
        const value_id cond = b.input("cond", dtype::boolean, partial_shape(shape{}));
        b.output(b.node("If", {cond}, {graph_attr("then_branch", doubling()), graph_attr("else_branch", squaring())}, "if"), "out");
        compiled_graph c = compile_graph(b);
        REQUIRE_FALSE(c.ok());
        CHECK(contains(c.message(), "a subgraph uses 'x', which is not a value of the enclosing graph"));
    }
}

namespace {

// Loop body: (i, cond, y) -> (cond, y + x, y + x as a scan output); x captured
graph accumulate(bool with_scan) {
    return body({{"i", {dtype::int64, shape{}}}, {"c", {dtype::boolean, shape{}}}, {"y", {dtype::float32, shape{2}}}}, {"x"},
                [&](graph_builder& b, const std::vector<value_id>& in, const std::vector<value_id>& cap) {
                    b.output(b.node("Identity", {in[1]}, {}, "cond_out"), "c_out");
                    const value_id y = b.node("Add", {in[2], cap[0]}, {}, "sum");
                    b.output(y, "y_out");
                    if (with_scan) b.output(b.node("Identity", {y}, {}, "scan"), "scan_out");
                });
}

compiled_graph loop_graph(graph g, std::size_t outputs, bool runtime_m = false, std::int64_t m = 3) {
    graph_builder b("g");
    const value_id mv = runtime_m ? b.input("M", dtype::int64, partial_shape(shape{})) : b.constant("M", int64_scalar(m));
    const value_id cond = b.input("cond", dtype::boolean, partial_shape(shape{}));
    const value_id y0 = b.input("y0", dtype::float32, partial_shape(shape{2}));
    b.input("x", dtype::float32, partial_shape(shape{2}));
    auto outs = b.nodes("Loop", {mv, cond, y0}, outputs, {graph_attr("body", std::move(g))}, "loop");
    for (std::size_t k = 0; k < outs.size(); ++k) b.output(outs[k], "out" + std::to_string(k));
    return compile_graph(b);
}

} // namespace

TEST_CASE("loop: M iterations of loop-carried values, scan outputs stacked") {
    compiled_graph c = loop_graph(accumulate(true), 2);
    REQUIRE_MESSAGE(c.ok(), c.message());
    CHECK(c.plan->output(0).dims == shape{2});
    CHECK(c.plan->output(1).dims == shape{3, 2});
    const tensor yes = boolean(true), y0 = make_f32({2}, {10, 20}), x = make_f32({2}, {1, 2});
    std::vector<tensor> out;
    REQUIRE(run_plan(*c.plan, {&yes, &y0, &x}, out) == ember::status::ok);
    ember::test::check_close(out[0], {13, 26});
    ember::test::check_close(out[1], {11, 22, 12, 24, 13, 26});
    // a false cond runs no iteration: fine without scan outputs, refused at run time with them
    const tensor no = boolean(false);
    CHECK(run_plan(*c.plan, {&no, &y0, &x}, out) == ember::status::invalid_argument);
    compiled_graph plain = loop_graph(accumulate(false), 1);
    REQUIRE_MESSAGE(plain.ok(), plain.message());
    REQUIRE(run_plan(*plain.plan, {&no, &y0, &x}, out) == ember::status::ok);
    ember::test::check_close(out[0], {10, 20});
    REQUIRE(run_plan(*plain.plan, {&yes, &y0, &x}, out) == ember::status::ok);
    ember::test::check_close(out[0], {13, 26});
}

TEST_CASE("loop: the body's cond output stops the loop early") {
    // cond_out = i < 1: iterations 0 and 1 run
    graph g = body({{"i", {dtype::int64, shape{}}}, {"c", {dtype::boolean, shape{}}}, {"y", {dtype::float32, shape{2}}}}, {"x"},
                   [](graph_builder& b, const std::vector<value_id>& in, const std::vector<value_id>& cap) {
                       const value_id one = b.constant("one", int64_scalar(1));
                       b.output(b.node("Less", {in[0], one}, {}, "less"), "c_out");
                       b.output(b.node("Add", {in[2], cap[0]}, {}, "sum"), "y_out");
                   });
    compiled_graph c = loop_graph(std::move(g), 1, false, 10);
    REQUIRE_MESSAGE(c.ok(), c.message());
    const tensor yes = boolean(true), y0 = make_f32({2}, {0, 0}), x = make_f32({2}, {1, 2});
    std::vector<tensor> out;
    REQUIRE(run_plan(*c.plan, {&yes, &y0, &x}, out) == ember::status::ok);
    ember::test::check_close(out[0], {2, 4});
}

TEST_CASE("loop: a body that needs iteration_num at compile time is unrolled") {
    // y_out = y + x[i : i + 1] (Slice with the iteration number as its start)
    graph g = body({{"i", {dtype::int64, shape{}}}, {"c", {dtype::boolean, shape{}}}, {"y", {dtype::float32, shape{1}}}}, {"data"},
                   [](graph_builder& b, const std::vector<value_id>& in, const std::vector<value_id>& cap) {
                       const value_id one = b.constant("one", make<std::int64_t>({1}, {1}));
                       const value_id start = b.node("Reshape", {in[0], one}, {}, "start");
                       const value_id end = b.node("Add", {start, one}, {}, "end");
                       const value_id piece = b.node("Slice", {cap[0], start, end}, {}, "slice");
                       b.output(b.node("Identity", {in[1]}, {}, "cond_out"), "c_out");
                       const value_id y = b.node("Add", {in[2], piece}, {}, "sum");
                       b.output(y, "y_out");
                       b.output(b.node("Identity", {y}, {}, "scan"), "scan_out");
                   });
    graph_builder b("g");
    const value_id mv = b.constant("M", int64_scalar(4));
    const value_id cond = b.input("cond", dtype::boolean, partial_shape(shape{}));
    const value_id y0 = b.input("y0", dtype::float32, partial_shape(shape{1}));
    b.input("data", dtype::float32, partial_shape(shape{4}));
    auto outs = b.nodes("Loop", {mv, cond, y0}, 2, {graph_attr("body", std::move(g))}, "loop");
    b.output(outs[0], "y");
    b.output(outs[1], "scan");
    compiled_graph c = compile_graph(b);
    REQUIRE_MESSAGE(c.ok(), c.message());
    const tensor yes = boolean(true), start = make_f32({1}, {100}), data = make_f32({4}, {1, 2, 3, 4});
    std::vector<tensor> out;
    REQUIRE(run_plan(*c.plan, {&yes, &start, &data}, out) == ember::status::ok);
    ember::test::check_close(out[0], {110});
    ember::test::check_close(out[1], {101, 103, 106, 110});
}

TEST_CASE("loop: without a compile-time M, or with a carried value changing shape, it is refused") {
    compiled_graph runtime_m = loop_graph(accumulate(false), 1, true);
    REQUIRE_FALSE(runtime_m.ok());
    CHECK(contains(runtime_m.message(), "input 0 (trip count M) must be known at compile time"));

    graph_builder b("g");
    const value_id cond = b.input("cond", dtype::boolean, partial_shape(shape{}));
    const value_id y0 = b.input("y0", dtype::float32, partial_shape(shape{2}));
    b.input("x", dtype::float32, partial_shape(shape{2}));
    b.output(b.node("Loop", {ember::no_value, cond, y0}, {graph_attr("body", accumulate(false))}, "loop"), "y");
    compiled_graph no_m = compile_graph(b);
    REQUIRE_FALSE(no_m.ok());
    CHECK(contains(no_m.message(), "a Loop without a trip count M"));

    graph growing = body({{"i", {dtype::int64, shape{}}}, {"c", {dtype::boolean, shape{}}}, {"y", {dtype::float32, shape{2}}}}, {},
                         [](graph_builder& bb, const std::vector<value_id>& in, const std::vector<value_id>&) {
                             bb.output(bb.node("Identity", {in[1]}, {}, "cond_out"), "c_out");
                             bb.output(bb.node("Concat", {in[2], in[2]}, {attribute::of("axis", 0)}, "grow"), "y_out");
                         });
    graph_builder b2("g");
    const value_id m2 = b2.constant("M", int64_scalar(2));
    const value_id c2 = b2.input("cond", dtype::boolean, partial_shape(shape{}));
    const value_id y2 = b2.input("y0", dtype::float32, partial_shape(shape{2}));
    b2.output(b2.node("Loop", {m2, c2, y2}, {graph_attr("body", std::move(growing))}, "loop"), "y");
    compiled_graph grow = compile_graph(b2);
    REQUIRE_FALSE(grow.ok());
    CHECK(contains(grow.message(), "loop-carried value 0 ('y_out') is float32 [4] after an iteration but float32 [2] before"));
}

TEST_CASE("loop: an If nested in the body reads a value captured two scopes out") {
    // body: y_out = If(c, then: y + x, else: y) where x is the outer graph's input
    graph inner_then = body({}, {"y", "x"}, [](graph_builder& b, const std::vector<value_id>&, const std::vector<value_id>& cap) {
        b.output(b.node("Add", {cap[0], cap[1]}, {}, "add"), "t");
    });
    graph inner_else = body({}, {"y"}, [](graph_builder& b, const std::vector<value_id>&, const std::vector<value_id>& cap) {
        b.output(b.node("Identity", {cap[0]}, {}, "same"), "e");
    });
    graph g = body({{"i", {dtype::int64, shape{}}}, {"c", {dtype::boolean, shape{}}}, {"y", {dtype::float32, shape{2}}}}, {},
                   [&](graph_builder& b, const std::vector<value_id>& in, const std::vector<value_id>&) {
                       b.output(b.node("Identity", {in[1]}, {}, "cond_out"), "c_out");
                       b.output(b.node("If", {in[1]}, {graph_attr("then_branch", inner_then), graph_attr("else_branch", inner_else)}, "inner_if"),
                                "y_out");
                   });
    compiled_graph c = loop_graph(std::move(g), 1);
    REQUIRE_MESSAGE(c.ok(), c.message());
    const tensor yes = boolean(true), y0 = make_f32({2}, {0, 1}), x = make_f32({2}, {0.5f, 0.25f});
    std::vector<tensor> out;
    REQUIRE(run_plan(*c.plan, {&yes, &y0, &x}, out) == ember::status::ok);
    ember::test::check_close(out[0], {1.5f, 1.75f});
}

TEST_CASE("scan (opset 9+): axes and directions of scan inputs and outputs") {
    // running sum of the columns of x [2, 3] scanned along axis 1 in reverse; outputs stacked on axis 1
    graph g = body({{"s", {dtype::float32, shape{2}}}, {"col", {dtype::float32, shape{2}}}}, {},
                   [](graph_builder& b, const std::vector<value_id>& in, const std::vector<value_id>&) {
                       const value_id s = b.node("Add", {in[0], in[1]}, {}, "sum");
                       b.output(s, "s_out");
                       b.output(b.node("Identity", {s}, {}, "copy"), "scan_out");
                   });
    graph_builder b("g");
    const value_id s0 = b.input("s0", dtype::float32, partial_shape(shape{2}));
    const value_id x = b.input("x", dtype::float32, partial_shape(shape{2, 3}));
    auto outs = b.nodes("Scan", {s0, x}, 2,
                        {graph_attr("body", std::move(g)), attribute::of("num_scan_inputs", 1), attribute::of("scan_input_axes", std::vector<std::int64_t>{1}),
                         attribute::of("scan_input_directions", std::vector<std::int64_t>{1}), attribute::of("scan_output_axes", std::vector<std::int64_t>{-1})},
                        "scan");
    b.output(outs[0], "final");
    b.output(outs[1], "stacked");
    compiled_graph c = compile_graph(b, 11);
    REQUIRE_MESSAGE(c.ok(), c.message());
    CHECK(c.plan->output(1).dims == shape{2, 3});
    const tensor sv = make_f32({2}, {0, 100}), xv = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    std::vector<tensor> out;
    REQUIRE(run_plan(*c.plan, {&sv, &xv}, out) == ember::status::ok);
    ember::test::check_close(out[0], {6, 115});
    // iteration t reads column 2 - t and writes column t: [3, 5, 6], [106, 111, 115]
    ember::test::check_close(out[1], {3, 5, 6, 106, 111, 115});
}

TEST_CASE("scan (opset 8): batch rows scanned one by one; sequence_lens is refused") {
    graph g = body({{"s", {dtype::float32, shape{1}}}, {"v", {dtype::float32, shape{1}}}}, {},
                   [](graph_builder& b, const std::vector<value_id>& in, const std::vector<value_id>&) {
                       const value_id s = b.node("Add", {in[0], in[1]}, {}, "sum");
                       b.output(s, "s_out");
                       b.output(b.node("Identity", {s}, {}, "copy"), "scan_out");
                   });
    auto make_graph = [&](bool with_lens) {
        graph_builder b("g");
        const value_id lens = with_lens ? b.input("lens", dtype::int32, partial_shape(shape{2})) : ember::no_value;
        const value_id s0 = b.input("s0", dtype::float32, partial_shape(shape{2, 1}));
        const value_id x = b.input("x", dtype::float32, partial_shape(shape{2, 3, 1}));
        auto outs = b.nodes("Scan", {lens, s0, x}, 2, {graph_attr("body", g), attribute::of("num_scan_inputs", 1)}, "scan");
        b.output(outs[0], "final");
        b.output(outs[1], "stacked");
        return compile_graph(b, 8);
    };
    compiled_graph c = make_graph(false);
    REQUIRE_MESSAGE(c.ok(), c.message());
    CHECK(c.plan->output(1).dims == shape{2, 3, 1});
    const tensor sv = make_f32({2, 1}, {0, 10}), xv = make_f32({2, 3, 1}, {1, 2, 3, 4, 5, 6});
    std::vector<tensor> out;
    REQUIRE(run_plan(*c.plan, {&sv, &xv}, out) == ember::status::ok);
    ember::test::check_close(out[0], {6, 25});
    ember::test::check_close(out[1], {1, 3, 6, 14, 19, 25});
    compiled_graph lens = make_graph(true);
    REQUIRE_FALSE(lens.ok());
    CHECK(contains(lens.message(), "input 0 (sequence_lens) of Scan-8 is not supported"));
}

TEST_CASE("scan: mismatched scan lengths and bad attributes are refused") {
    graph g = body({{"s", {dtype::float32, shape{2}}}, {"a", {dtype::float32, shape{2}}}, {"b", {dtype::float32, shape{2}}}}, {},
                   [](graph_builder& b, const std::vector<value_id>& in, const std::vector<value_id>&) {
                       b.output(b.node("Add", {in[0], in[1]}, {}, "sum"), "s_out");
                       b.output(b.node("Identity", {in[2]}, {}, "copy"), "scan_out");
                   });
    auto make_graph = [&](shape b_shape, std::vector<attribute> extra, std::int64_t opset = 16) {
        graph_builder b("g");
        const value_id s0 = b.input("s0", dtype::float32, partial_shape(shape{2}));
        const value_id x = b.input("x", dtype::float32, partial_shape(shape{3, 2}));
        const value_id y = b.input("y", dtype::float32, partial_shape(b_shape));
        extra.push_back(graph_attr("body", g));
        extra.push_back(attribute::of("num_scan_inputs", 2));
        auto outs = b.nodes("Scan", {s0, x, y}, 2, std::move(extra), "scan");
        b.output(outs[0], "final");
        b.output(outs[1], "stacked");
        return compile_graph(b, opset);
    };
    CHECK(make_graph(shape{3, 2}, {}).ok());
    CHECK(make_graph(shape{3, 2}, {attribute::of("scan_input_axes", std::vector<std::int64_t>{0, -2})}).ok());
    compiled_graph negative = make_graph(shape{3, 2}, {attribute::of("scan_input_axes", std::vector<std::int64_t>{0, -2})}, 10);
    REQUIRE_FALSE(negative.ok());
    CHECK(contains(negative.message(), "negative scan axis -2 needs opset 11"));
    compiled_graph lengths = make_graph(shape{4, 2}, {});
    REQUIRE_FALSE(lengths.ok());
    CHECK(contains(lengths.message(), "scan input 1 of shape [4, 2] has length 4 on its scan axis, scan input 0 has 3"));
    compiled_graph dirs = make_graph(shape{3, 2}, {attribute::of("scan_input_directions", std::vector<std::int64_t>{0, 2})});
    REQUIRE_FALSE(dirs.ok());
    CHECK(contains(dirs.message(), "directions must be 2 values of 0 or 1"));
    compiled_graph axes = make_graph(shape{3, 2}, {attribute::of("scan_input_axes", std::vector<std::int64_t>{0, 2})});
    REQUIRE_FALSE(axes.ok());
    CHECK(contains(axes.message(), "scan input axis 2 is out of range for scan input 1 of shape [3, 2]"));
}
