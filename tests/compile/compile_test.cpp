// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <ember/ember.hpp>

#include "support/check.hpp"
#include "support/counting_allocator.hpp"

using ember::dtype;
using ember::graph_builder;
using ember::status;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

ember::graph one_relu(ember::partial_shape dims) {
    graph_builder b("relu");
    b.output(b.node("Relu", {b.input("x", dtype::float32, std::move(dims))}, {}, "r"), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    return std::move(*g);
}
} // namespace

TEST_CASE("compile: symbolic dimensions come from input_shapes or dim_values") {
    const ember::graph g = one_relu({"batch", 3});
    auto missing = ember::compile(g);
    CHECK_FALSE(missing);
    CHECK(missing.error().code == status::invalid_argument);
    CHECK(contains(missing.error().message, "input 'x' [batch, 3] has dynamic dimension 0 ('batch')"));

    ember::compile_options by_name;
    by_name.input_shapes = {{"x", {5, 3}}};
    auto p = ember::compile(g, by_name);
    REQUIRE_MESSAGE(p, p.error().message);
    CHECK(p->input(0).dims == ember::shape{5, 3});
    CHECK(p->output(0).dims == ember::shape{5, 3});

    ember::compile_options by_symbol;
    by_symbol.dim_values = {{"batch", 2}};
    auto q = ember::compile(g, by_symbol);
    REQUIRE(q);
    CHECK(q->output(0).bytes == 2 * 3 * 4);
}

TEST_CASE("compile: input_shapes that contradict the declaration or name no input are errors") {
    const ember::graph g = one_relu({"batch", 3});
    ember::compile_options wrong_dim;
    wrong_dim.input_shapes = {{"x", {5, 4}}};
    auto a = ember::compile(g, wrong_dim);
    CHECK(a.error().code == status::shape_mismatch);
    CHECK(contains(a.error().message, "declared [batch, 3] but compile_options gives [5, 4]"));

    ember::compile_options unknown;
    unknown.input_shapes = {{"image", {1, 3}}};
    auto b = ember::compile(g, unknown);
    CHECK(b.error().code == status::invalid_argument);
    CHECK(contains(b.error().message, "names 'image', which is not a graph input (inputs: x)"));
}

TEST_CASE("compile: an unsupported op names the node and the op") {
    graph_builder b;
    const auto x = b.input("x", dtype::float32, {2});
    b.output(b.node("Frobnicate", {x}, {}, "f1"));
    auto g = std::move(b).build();
    REQUIRE(g);
    auto p = ember::compile(*g);
    CHECK(p.error().code == status::unsupported_op);
    CHECK(p.error().node == 0);
    CHECK(contains(p.error().message, "node 0 'f1' (Frobnicate): op 'Frobnicate' is not supported"));
}

TEST_CASE("compile: unknown, mistyped and missing attributes are errors naming the attribute") {
    const ember::tensor a = ember::test::random_f32({2, 3}, 1);
    const ember::tensor w = ember::test::random_f32({3, 4}, 2);
    auto unknown = ember::test::run_node("Gemm", {a, w}, {ember::attribute::of("gamma", 1.0f)});
    CHECK(unknown.error.code == status::unsupported_op);
    CHECK(contains(unknown.error.message, "attribute 'gamma' is not supported"));
    auto mistyped = ember::test::run_node("Gemm", {a, w}, {ember::attribute::of("transA", "yes")});
    CHECK(mistyped.error.code == status::invalid_model);
    CHECK(contains(mistyped.error.message, "attribute 'transA' is string, expected int"));
}

TEST_CASE("compile: shape errors come back with the node and both shapes") {
    auto r = ember::test::run_node("Gemm", {ember::test::random_f32({2, 3}, 1), ember::test::random_f32({4, 5}, 2)});
    CHECK(r.error.code == status::shape_mismatch);
    CHECK(contains(r.error.message, "node 0 'node' (Gemm): inner dimensions differ: 3 vs 4 ([2, 3] x [4, 5])"));
}

TEST_CASE("compile: constant subgraphs are folded and leave no steps") {
    graph_builder b("fold");
    const auto x = b.input("x", dtype::float32, {2});
    const auto c1 = b.constant<float>("c1", {2}, {1.0f, -2.0f});
    const auto c2 = b.constant<float>("c2", {2}, {3.0f, 4.0f});
    const auto folded = b.node("Relu", {b.node("Mul", {c1, c2})});  // [3, 0], known now
    b.output(b.node("Add", {x, folded}), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    REQUIRE(p->steps().size() == 1);
    CHECK(p->step_op(0) == "Add");
    CHECK(p->weights_bytes() == EMBER_ALIGNMENT);  // only the folded [3, 0], not c1 and c2

    ember::compile_options no_fold;
    no_fold.fold_constants = false;
    auto q = ember::compile(*g, no_fold);
    REQUIRE(q);
    CHECK(q->steps().size() == 3);

    for (const ember::plan* plan : {&*p, &*q}) {
        ember::session s(*plan);
        const float in[2] = {10.0f, 20.0f};
        float out[2] = {};
        REQUIRE(s.bind_input(0, in) == status::ok);
        REQUIRE(s.bind_output(0, out) == status::ok);
        REQUIRE(s.run() == status::ok);
        CHECK(out[0] == 13.0f);
        CHECK(out[1] == 20.0f);
    }
}

TEST_CASE("compile: outputs that are inputs, constants or listed twice get their own copies") {
    graph_builder b("passthrough");
    const auto x = b.input("x", dtype::float32, {3});
    const auto k = b.constant<float>("k", {3}, {7.0f, 8.0f, 9.0f});
    const auto r = b.node("Relu", {x}, {}, "r");
    b.output(x);
    b.output(k);
    b.output(r);
    b.output(r);
    auto g = std::move(b).build();
    REQUIRE(g);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    CHECK(p->output_count() == 4);
    ember::session s(*p);
    const float in[3] = {-1.0f, 2.0f, -3.0f};
    REQUIRE(s.bind_input(0, in) == status::ok);
    REQUIRE(s.run() == status::ok);
    CHECK(std::vector<float>(s.output<float>(0).begin(), s.output<float>(0).end()) == std::vector<float>{-1, 2, -3});
    CHECK(std::vector<float>(s.output<float>(1).begin(), s.output<float>(1).end()) == std::vector<float>{7, 8, 9});
    CHECK(std::vector<float>(s.output<float>(2).begin(), s.output<float>(2).end()) == std::vector<float>{0, 2, 0});
    CHECK(std::vector<float>(s.output<float>(3).begin(), s.output<float>(3).end()) == std::vector<float>{0, 2, 0});
}

namespace {
// A user op: y = x * factor, registered through compile_options::custom_ops.
struct scale_op {
    static constexpr std::string_view onnx_name = "Scale";
    static constexpr std::string_view onnx_domain = "com.example";
    static constexpr ember::op_flags flags = ember::op_flags::elementwise | ember::op_flags::in_place;
    struct attributes {
        float factor = 2.0f;
    };
    static constexpr auto onnx_attributes = std::make_tuple(ember::attr("factor", &attributes::factor));
    struct args {
        ember::operand x, y;
        std::size_t n;
        float factor;
    };
    static ember::status infer(const attributes&, ember::infer_context& ctx) { return ember::infer_same_shape(ctx); }
    static void kernel(const void* p, const ember::run_context& ctx) noexcept {
        const auto& a = *static_cast<const args*>(p);
        const float* x = ctx.at<const float>(a.x);
        float* y = ctx.at<float>(a.y);
        for (std::size_t i = 0; i < a.n; ++i) y[i] = x[i] * a.factor;
    }
    static ember::status bind(const attributes& at, ember::bind_context& ctx) {
        ctx.emit(&kernel, args{ctx.input(0), ctx.output(0), static_cast<std::size_t>(ctx.input_shape(0).elements()), at.factor});
        return ember::status::ok;
    }
};
} // namespace

TEST_CASE("compile: custom ops from an op_registry, looked up by name and domain") {
    graph_builder b("custom");
    const auto x = b.input("x", dtype::float32, {2});
    auto ids = b.nodes("Scale", {x}, 1, {ember::attribute::of("factor", 3.0f)}, "s");
    b.output(ids[0]);
    ember::graph g = *std::move(b).build();
    g.nodes[0].domain = "com.example";
    CHECK(ember::compile(g).error().code == status::unsupported_op);
    ember::op_registry ops;
    ops.add<scale_op>();
    ember::compile_options options;
    options.custom_ops = &ops;
    auto p = ember::compile(g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    const float in[2] = {1.5f, -2.0f};
    float out[2];
    REQUIRE(s.bind_input(0, in) == status::ok);
    REQUIRE(s.bind_output(0, out) == status::ok);
    REQUIRE(s.run() == status::ok);
    CHECK(out[0] == 4.5f);
    CHECK(out[1] == -6.0f);
}

TEST_CASE("compile: the log sink hears about the compiled plan") {
    std::vector<std::string> lines;
    ember::compile_options options;
    options.dim_values = {{"batch", 1}};
    options.log = {[](void* ctx, ember::log_level, std::string_view m) { static_cast<std::vector<std::string>*>(ctx)->emplace_back(m); },
                   &lines};
    auto p = ember::compile(one_relu({"batch", 3}), options);
    REQUIRE(p);
    REQUIRE(lines.size() == 1);
    CHECK(contains(lines[0], "compiled 'relu': 1 steps"));
}

TEST_CASE("compile: a failing allocator gives out_of_memory, not a crash") {
    ember::compile_options options;
    options.alloc = {nullptr, [](void*, std::size_t, std::size_t) noexcept -> void* { return nullptr; },
                     [](void*, void*, std::size_t, std::size_t) noexcept {}};
    graph_builder b;
    const auto x = b.input("x", dtype::float32, {2});
    b.output(b.node("Add", {x, b.constant<float>("k", {2}, {1.0f, 2.0f})}));
    auto p = ember::compile(*std::move(b).build(), options);
    CHECK_FALSE(p);
    CHECK(p.error().code == status::out_of_memory);
}

TEST_CASE("compile and session: an allocator failing at any one of its calls gives out_of_memory, never a crash or a leak") {
    // Conv (weights packed at compile) + ReLU, a pooled Gemm with constant weights and a
    // constant sub-graph to fold: every kind of allocation compile() and a session make.
    graph_builder b("alloc");
    const auto x = b.input("x", dtype::float32, {1, 3, 8, 8});
    const auto w = b.constant("W", ember::test::random_f32({4, 3, 3, 3}, 1));
    const auto conv = b.node("Conv", {x, w, b.constant("B", ember::test::random_f32({4}, 2))},
                             {ember::attribute::of("pads", std::vector<std::int64_t>{1, 1, 1, 1})}, "conv");
    const auto pooled = b.node("Flatten", {b.node("GlobalAveragePool", {b.node("Relu", {conv}, {}, "relu")}, {}, "gap")}, {}, "flat");
    const auto k = b.node("Mul", {b.constant("k0", ember::test::random_f32({4, 5}, 3)), b.constant<float>("two", {1}, {2.0f})}, {}, "fold");
    b.output(b.node("Gemm", {pooled, k}, {}, "fc"), "y");
    const ember::graph g = *std::move(b).build();

    int total = -1;
    for (int n = 0; total < 0 && n < 10000; ++n) {
        ember::test::counting_allocator heap;
        heap.fail_after = n;
        ember::compile_options options;
        options.alloc = heap.get();
        options.max_threads = 1;
        {
            auto p = ember::compile(g, options);
            if (!p) {
                CAPTURE(n);
                CHECK(p.error().code == status::out_of_memory);
                CHECK_FALSE(p.error().message.empty());
            } else {
                ember::session s(*p);
                if (s.state() != status::ok) {
                    CAPTURE(n);
                    CHECK(s.state() == status::out_of_memory);
                    CHECK(s.run() == status::invalid_argument);
                } else {
                    CHECK(s.run() == status::ok);
                    total = n;  // every allocation succeeded
                }
            }
        }
        CHECK(heap.allocs == heap.frees);  // nothing leaked
    }
    // compile() allocates the packed weights and folded constants, the session its arena:
    // each allocation was failed once above
    MESSAGE("allocations by compile() and the session: " << total);
    CHECK(total >= 3);
}

TEST_CASE("compile: values and arenas past compile_options' limits give out_of_memory naming them") {
    // A ConstantOfShape asking for 2^40 floats: folding it would take 4 TiB.
    graph_builder b("huge");
    const auto shape = b.constant<std::int64_t>("shape", {2}, {std::int64_t{1} << 20, std::int64_t{1} << 20});
    b.output(b.node("ConstantOfShape", {shape}, {}, "fill"), "y");
    const ember::graph g = *std::move(b).build();
    auto huge = ember::compile(g);
    REQUIRE_FALSE(huge);
    CHECK(huge.error().code == status::out_of_memory);
    CHECK(contains(huge.error().message, "more than compile_options::max_value_bytes"));

    // A modest model under tight limits: each value 4 KiB, two live at once.
    const ember::graph relu = one_relu({1024});
    ember::compile_options tight;
    tight.max_value_bytes = 4095;
    auto value = ember::compile(relu, tight);
    REQUIRE_FALSE(value);
    CHECK(value.error().code == status::out_of_memory);
    CHECK(contains(value.error().message, "'x' of shape float32 [1024] would take 4096 bytes"));
    tight.max_value_bytes = 4096;
    tight.max_arena_bytes = 4096;
    auto arena = ember::compile(relu, tight);
    REQUIRE_FALSE(arena);
    CHECK(arena.error().code == status::out_of_memory);
    CHECK(contains(arena.error().message, "more than compile_options::max_arena_bytes (4096)"));
    tight.max_arena_bytes = 8192;
    auto fits = ember::compile(relu, tight);
    CHECK_MESSAGE(fits, fits.error().message);
}

TEST_CASE("compile: input_values fix an input's value at compile time, so a shape input can be a graph input") {
    graph_builder b("reshape_by_input");
    const auto x = b.input("x", dtype::float32, {2, 3});
    const auto target = b.input("target", dtype::int64, {2});
    b.output(b.node("Reshape", {x, target}, {}, "r"), "y");
    const ember::graph g = *std::move(b).build();

    auto plain = ember::compile(g);
    CHECK(plain.error().code == status::unsupported_op);
    CHECK(contains(plain.error().message, "input 1 (shape) must be known at compile time"));

    ember::compile_options options;
    options.input_values = {{"target", ember::test::make<std::int64_t>({2}, {3, 2})}};
    auto p = ember::compile(g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    REQUIRE(p->input_count() == 1);  // the fixed input is no longer an input of the plan
    CHECK(p->input(0).name == "x");
    CHECK(p->output(0).dims == ember::shape{3, 2});
    ember::session s(*p);
    const float in[6] = {1, 2, 3, 4, 5, 6};
    float out[6] = {};
    REQUIRE(s.bind_input("x", in) == status::ok);
    REQUIRE(s.bind_output(0, out) == status::ok);
    REQUIRE(s.run() == status::ok);
    CHECK(std::vector<float>(out, out + 6) == std::vector<float>{1, 2, 3, 4, 5, 6});

    ember::compile_options wrong_type;
    wrong_type.input_values = {{"target", ember::test::make<std::int32_t>({2}, {3, 2})}};
    auto w = ember::compile(g, wrong_type);
    CHECK(w.error().code == status::shape_mismatch);
    CHECK(contains(w.error().message, "input 'target' is int64 but compile_options::input_values gives int32"));
    ember::compile_options unknown;
    unknown.input_values = {{"shape", ember::test::make<std::int64_t>({2}, {3, 2})}};
    CHECK(contains(ember::compile(g, unknown).error().message, "compile_options::input_values names 'shape', which is not a graph input"));
}

namespace {
// A user op whose kernel rejects negative data at run time through run_context::fail.
struct check_positive_op {
    static constexpr std::string_view onnx_name = "CheckPositive";
    static constexpr std::string_view onnx_domain = "com.example";
    static constexpr ember::op_flags flags = ember::op_flags::none;
    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();
    struct args {
        ember::operand x, y;
        std::size_t n;
    };
    static ember::status infer(const attributes&, ember::infer_context& ctx) { return ember::infer_same_shape(ctx); }
    static void kernel(const void* p, const ember::run_context& ctx) noexcept {
        const auto& a = *static_cast<const args*>(p);
        const float* x = ctx.at<const float>(a.x);
        for (std::size_t i = 0; i < a.n; ++i)
            if (x[i] < 0.0f) return ctx.fail(static_cast<std::uint8_t>(status::invalid_argument));
        std::copy(x, x + a.n, ctx.at<float>(a.y));
    }
    static ember::status bind(const attributes&, ember::bind_context& ctx) {
        ctx.emit(&kernel, args{ctx.input(0), ctx.output(0), static_cast<std::size_t>(ctx.input_shape(0).elements())});
        return ember::status::ok;
    }
};
} // namespace

TEST_CASE("compile: a kernel's run-time failure stops run() with its status, and folding reports it") {
    ember::op_registry ops;
    ops.add<check_positive_op>();
    ember::compile_options options;
    options.custom_ops = &ops;

    graph_builder b("checked");
    const auto x = b.input("x", dtype::float32, {3});
    const auto checked = b.node("CheckPositive", {x}, {}, "check");
    b.output(b.node("Relu", {checked}, {}, "after"), "y");
    ember::graph g = *std::move(b).build();
    g.nodes[0].domain = "com.example";
    auto p = ember::compile(g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    const float good[3] = {1, 2, 3}, bad[3] = {1, -2, 3};
    float out[3] = {-7, -7, -7};
    REQUIRE(s.bind_output(0, out) == status::ok);
    REQUIRE(s.bind_input(0, bad) == status::ok);
    CHECK(s.run() == status::invalid_argument);
    CHECK(out[0] == -7);  // the steps after the failing one did not run
    REQUIRE(s.bind_input(0, good) == status::ok);
    CHECK(s.run() == status::ok);  // the error does not stick to the session
    CHECK(out[2] == 3);

    graph_builder c("checked_constant");
    const auto k = c.constant("k", ember::test::make_f32({2}, {1.0f, -1.0f}));
    c.output(c.node("CheckPositive", {k}, {}, "check"), "y");
    ember::graph gc = *std::move(c).build();
    gc.nodes[0].domain = "com.example";
    auto folded = ember::compile(gc, options);
    CHECK(folded.error().code == status::invalid_argument);
    CHECK(contains(folded.error().message, "'check' (CheckPositive): evaluating the node at compile time failed"));
}
