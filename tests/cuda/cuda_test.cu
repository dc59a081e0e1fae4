// SPDX-License-Identifier: Apache-2.0
// The CUDA extension against the CPU: every op the GPU runs, on small graphs, against the CPU's
// reference kernels; the anchor zoo against the CPU plan; FP32 / TF32 / FP16; CUDA graph replay;
// bindings and errors. Lowering (which needs no GPU) is tested everywhere; the tests that run
// kernels say they are skipped, and why, on a machine without a CUDA device (CI has none).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <ember/cuda/cuda.cuh>
#include <ember/io/npy.hpp>
#include <ember/onnx.hpp>

using ember::attribute;
using ember::dtype;
using ember::shape;
using ember::status;
using ember::tensor;
using ember::value_id;
namespace cuda = ember::cuda;

namespace {

tensor random_f32(const shape& dims, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    auto t = tensor::create(dtype::float32, dims);
    REQUIRE(t);
    float* p = t->data<float>();
    for (std::int64_t i = 0; i < dims.elements(); ++i) p[i] = dist(rng);
    return std::move(*t);
}

tensor clone(const tensor& t) {
    auto c = tensor::create(t.type(), t.dims());
    REQUIRE(c);
    if (t.size_bytes() != 0) std::memcpy(c->bytes(), t.bytes(), t.size_bytes());
    return std::move(*c);
}

bool gpu(std::string& why) {
    const char* reason = nullptr;
    if (cuda::device_present(&reason)) return true;
    why = std::string("no CUDA device (") + (reason ? reason : "?") + "): the GPU half of this test is skipped; lowering is still checked";
    return false;
}

/// Largest |a - b| over the largest |b| (1 when b is all zeros): one number for a whole output.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double diff = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
        if (!std::isnan(b[i])) {
            diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
            scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
        }
    }
    return diff / (scale > 0.0 ? scale : 1.0);
}

/// Runs g on the CPU (reference kernels unless `fast`) and returns every output.
std::vector<std::vector<float>> run_cpu(const ember::graph& g, const std::vector<tensor>& inputs, const ember::compile_options& base, bool fast) {
    ember::compile_options o = base;
    if (!fast) o.isa = "reference";
    auto p = ember::compile(g, o);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    for (std::size_t i = 0; i < inputs.size(); ++i) REQUIRE(s.bind_input(i, inputs[i].bytes(), inputs[i].size_bytes()) == status::ok);
    REQUIRE(s.run() == status::ok);
    std::vector<std::vector<float>> out;
    for (std::size_t i = 0; i < p->output_count(); ++i) {
        const auto y = s.output<float>(i);
        out.emplace_back(y.begin(), y.end());
    }
    return out;
}

/// Runs g on the GPU (plain run, or capture + replay) and returns every output.
std::vector<std::vector<float>> run_gpu(const ember::graph& g, const std::vector<tensor>& inputs, const cuda::options& o, bool graph_replay = false) {
    auto p = cuda::compile(g, o);
    REQUIRE_MESSAGE(p, p.error().message);
    auto st = cuda::stream::create();
    REQUIRE(st);
    auto s = cuda::session::create(*p, st->get());
    REQUIRE_MESSAGE(s, s.error().message);
    for (std::size_t i = 0; i < inputs.size(); ++i) REQUIRE(s->upload_input(i, inputs[i].bytes(), inputs[i].size_bytes()) == status::ok);
    if (graph_replay) {
        REQUIRE_MESSAGE(s->capture() == status::ok, s->last_error());
        REQUIRE(s->replay() == status::ok);
    } else {
        REQUIRE_MESSAGE(s->run() == status::ok, s->last_error());
    }
    std::vector<std::vector<float>> out;
    for (std::size_t i = 0; i < p->output_count(); ++i) {
        out.emplace_back(static_cast<std::size_t>(p->output(i).dims.elements()));
        REQUIRE(s->download_output(i, out.back().data(), p->output(i).bytes) == status::ok);
    }
    REQUIRE_MESSAGE(s->synchronize() == status::ok, s->last_error());
    return out;
}

/// One op: inputs given as tensors (constants where `constant[i]`), CPU reference vs GPU.
struct op_case {
    std::string op;
    std::vector<tensor> inputs;
    std::vector<bool> constant;
    std::vector<attribute> attributes;
    std::size_t outputs = 1;
    std::int64_t opset = 13;
};

ember::graph build(const op_case& c, std::vector<tensor>& live) {
    ember::graph_builder b("case");
    std::vector<value_id> ins;
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        const std::string name = "x" + std::to_string(i);
        if (i < c.constant.size() && c.constant[i]) {
            ins.push_back(b.constant(name, clone(c.inputs[i])));
        } else {
            ins.push_back(b.input(name, c.inputs[i].type(), c.inputs[i].dims()));
            live.push_back(clone(c.inputs[i]));
        }
    }
    const std::vector<value_id> outs = b.nodes(c.op, ins, c.outputs, c.attributes);
    for (std::size_t k = 0; k < outs.size(); ++k) b.output(outs[k], "y" + std::to_string(k));
    auto g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    g->opsets = {ember::opset{"", c.opset}};
    return std::move(*g);
}

void check_op(const op_case& c, double tol = 1e-5) {
    CAPTURE(c.op);
    std::vector<tensor> live;
    const ember::graph g = build(c, live);
    ember::compile_options none;
    none.passes = ember::pass_options::none();
    none.fold_constants = false;
    const auto want = run_cpu(g, live, none, false);
    cuda::options o;
    o.graph = none;
    const auto got = run_gpu(g, live, o);
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
        CAPTURE(k);
        CHECK(relative_error(got[k], want[k]) <= tol);
    }
}

std::string zoo_dir() {
    if (const char* env = std::getenv("EMBER_ANCHORS")) return std::string(env) + "/models";
    if (const char* home = std::getenv("HOME")) return std::string(home) + "/.cache/ember-anchors/models";
    return std::string();
}

bool have_zoo(std::string& why) {
    if (std::ifstream(zoo_dir() + "/models.json").good()) return true;
    why = "no anchor model zoo in '" + zoo_dir() + "' (run ../shared/anchors/setup.sh, or set EMBER_ANCHORS)";
    return false;
}

ember::graph load_zoo_graph(const std::string& name) {
    auto g = ember::onnx::load_file(zoo_dir() + "/" + name + ".onnx");
    REQUIRE_MESSAGE(g, g.error().message);
    return std::move(*g);
}

const char* const zoo_models[] = {"resnet18",     "resnet50",      "mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x1_0",
                                  "efficientnet_b0", "encoder_small", "mlp_tiny",     "resnet50_b8",   "mobilenet_v2_b8"};

} // namespace

// -- lowering: no GPU needed ----------------------------------------------------------------------

TEST_CASE("cuda: every zoo model lowers to GPU steps over the CPU's memory plan") {
    std::string why;
    if (!have_zoo(why)) {
        MESSAGE("skipped: " << why);
        return;
    }
    for (const std::string name : zoo_models) {
        CAPTURE(name);
        const ember::graph g = load_zoo_graph(name);
        auto low = cuda::lower(g);
        REQUIRE_MESSAGE(low, low.error().message);
        CHECK(!low->steps.empty());
        CHECK(low->steps.size() == low->names.size());
        ember::compile_options cpu;
        cpu.isa = "reference";
        auto p = ember::compile(g, cpu);
        REQUIRE(p);
        CHECK(low->host.arena_bytes() == p->arena_bytes());  // the same memory plan
        CHECK(low->host.input_count() == p->input_count());
    }
}

TEST_CASE("cuda: an op without a GPU kernel fails to lower, naming the node and the op") {
    ember::graph_builder b("g");
    const auto x = b.input("x", dtype::float32, {4});
    b.output(b.node("Sign", {x}, {}, "my_sign"), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    auto low = cuda::lower(*g);
    REQUIRE(!low);
    CHECK(low.error().code == status::unsupported_op);
    CHECK(low.error().message.find("my_sign") != std::string::npos);
    CHECK(low.error().message.find("Sign") != std::string::npos);
}

TEST_CASE("cuda: integer element-wise ops and asymmetric conv padding are refused with a reason") {
    {
        ember::graph_builder b("ints");
        const auto x = b.input("x", dtype::int32, {4});
        b.output(b.node("Add", {x, x}), "y");
        auto low = cuda::lower(*std::move(b).build());
        REQUIRE(!low);
        CHECK(low.error().code == status::unsupported_op);
        CHECK(low.error().message.find("int32") != std::string::npos);
    }
    {
        ember::graph_builder b("pads");
        const auto x = b.input("x", dtype::float32, {1, 2, 6, 6});
        const auto w = b.constant("w", random_f32({3, 2, 3, 3}, 1));
        b.output(b.node("Conv", {x, w}, {attribute::of("pads", std::vector<std::int64_t>{0, 0, 1, 1})}), "y");
        auto low = cuda::lower(*std::move(b).build());
        REQUIRE(!low);
        CHECK(low.error().code == status::unsupported_op);
        CHECK(low.error().message.find("asymmetric") != std::string::npos);
    }
}

// -- ops on the GPU against the CPU reference ------------------------------------------------------

TEST_CASE("cuda: element-wise ops match the CPU reference") {
    std::string why;
    if (!gpu(why)) {
        MESSAGE("skipped: " << why);
        return;
    }
    const tensor x = random_f32({2, 3, 5, 7}, 1, -3.0f, 3.0f);
    const tensor pos = random_f32({2, 3, 5, 7}, 2, 0.1f, 4.0f);
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Erf", "Floor", "Ceil", "HardSwish", "Softplus"})
        check_op(op_case{op, {clone(x)}, {}, {}}, 2e-6);
    for (const char* op : {"Sqrt", "Log", "Reciprocal"}) check_op(op_case{op, {clone(pos)}, {}, {}}, 2e-6);
    check_op(op_case{"LeakyRelu", {clone(x)}, {}, {attribute::of("alpha", 0.2f)}}, 1e-6);
    check_op(op_case{"Elu", {clone(x)}, {}, {attribute::of("alpha", 0.7f)}}, 2e-6);
    check_op(op_case{"HardSigmoid", {clone(x)}, {}, {attribute::of("alpha", 0.3f), attribute::of("beta", 0.4f)}}, 1e-6);
    auto lo = tensor::create(dtype::float32, shape{});
    auto hi = tensor::create(dtype::float32, shape{});
    lo->data<float>()[0] = -0.5f;
    hi->data<float>()[0] = 1.5f;
    check_op(op_case{"Clip", {clone(x), clone(*lo), clone(*hi)}, {false, true, false}}, 0.0);
    check_op(op_case{"Clip", {clone(x)}, {}, {attribute::of("min", -1.0f), attribute::of("max", 0.25f)}, 1, 6}, 0.0);
    // binary ops: same shape, scalar, per-channel and two-sided broadcasts
    const tensor c = random_f32({1, 3, 1, 1}, 3, 0.5f, 2.0f);
    const tensor row = random_f32({7}, 4, 0.5f, 2.0f);
    const tensor col = random_f32({2, 1, 5, 1}, 5, 0.5f, 2.0f);
    const tensor scalar = random_f32({}, 6, 0.5f, 2.0f);
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
        check_op(op_case{op, {clone(x), clone(pos)}}, 1e-6);
        check_op(op_case{op, {clone(x), clone(c)}, {false, true}}, 1e-6);
        check_op(op_case{op, {clone(x), clone(row)}}, 1e-6);
        check_op(op_case{op, {clone(x), clone(col)}}, 1e-6);
        check_op(op_case{op, {clone(x), clone(scalar)}}, 1e-6);
        check_op(op_case{op, {clone(col), clone(x)}}, 1e-6);  // the first operand broadcasts
    }
    check_op(op_case{"Pow", {clone(pos), clone(scalar)}}, 1e-5);
    check_op(op_case{"Pow", {clone(pos), clone(c)}}, 1e-5);
}

TEST_CASE("cuda: Gemm and MatMul (transposes, alpha/beta, C broadcasts, batches) match the CPU reference") {
    std::string why;
    if (!gpu(why)) {
        MESSAGE("skipped: " << why);
        return;
    }
    const tensor a = random_f32({17, 33}, 1), at = random_f32({33, 17}, 2);
    const tensor b = random_f32({33, 9}, 3), bt = random_f32({9, 33}, 4);
    const tensor c_row = random_f32({9}, 5), c_col = random_f32({17, 1}, 6), c_full = random_f32({17, 9}, 7), c_one = random_f32({1}, 8);
    check_op(op_case{"Gemm", {clone(a), clone(b)}}, 1e-5);
    check_op(op_case{"Gemm", {clone(at), clone(bt), clone(c_full)}, {false, true, false},
                     {attribute::of("transA", 1), attribute::of("transB", 1), attribute::of("alpha", 0.5f), attribute::of("beta", 2.0f)}},
             1e-5);
    for (const tensor* cc : {&c_row, &c_col, &c_one}) check_op(op_case{"Gemm", {clone(a), clone(b), clone(*cc)}, {false, true, true}}, 1e-5);
    check_op(op_case{"Gemm", {clone(a), clone(bt), clone(c_row)}, {false, true, true}, {attribute::of("transB", 1)}}, 1e-5);
    // MatMul: plain, batched (both), a stack against one shared B (folded into M), 1-D operands
    check_op(op_case{"MatMul", {clone(a), clone(b)}}, 1e-5);
    check_op(op_case{"MatMul", {random_f32({4, 17, 33}, 9), random_f32({4, 33, 9}, 10)}}, 1e-5);
    check_op(op_case{"MatMul", {random_f32({2, 3, 17, 33}, 11), clone(b)}, {false, true}}, 1e-5);
    check_op(op_case{"MatMul", {random_f32({2, 3, 17, 33}, 12), random_f32({1, 3, 33, 9}, 13)}}, 1e-5);
    check_op(op_case{"MatMul", {random_f32({33}, 14), clone(b)}}, 1e-5);
    check_op(op_case{"MatMul", {random_f32({1, 3, 17, 33}, 15), random_f32({2, 1, 33, 9}, 16)}}, 1e-5);  // both broadcast
    check_op(op_case{"MatMul", {random_f32({17, 33}, 17), random_f32({2, 3, 33, 9}, 18)}}, 1e-5);       // A shared
}

TEST_CASE("cuda: Conv (strides, pads, dilations, groups, depthwise, bias, 1-D) and fused epilogues match the CPU reference") {
    std::string why;
    if (!gpu(why)) {
        MESSAGE("skipped: " << why);
        return;
    }
    using ints = std::vector<std::int64_t>;
    const tensor x = random_f32({2, 4, 11, 13}, 1);
    check_op(op_case{"Conv", {clone(x), random_f32({6, 4, 3, 3}, 2), random_f32({6}, 3)}, {false, true, true}, {attribute::of("pads", ints{1, 1, 1, 1})}},
             1e-5);
    check_op(op_case{"Conv", {clone(x), random_f32({5, 4, 3, 3}, 4)}, {false, true},
                     {attribute::of("strides", ints{2, 2}), attribute::of("dilations", ints{2, 1}), attribute::of("pads", ints{2, 1, 2, 1})}},
             1e-5);
    check_op(op_case{"Conv", {clone(x), random_f32({6, 2, 1, 1}, 5)}, {false, true}, {attribute::of("group", 2)}}, 1e-5);
    check_op(op_case{"Conv", {clone(x), random_f32({4, 1, 3, 3}, 6), random_f32({4}, 7)}, {false, true, true},
                     {attribute::of("group", 4), attribute::of("pads", ints{1, 1, 1, 1}), attribute::of("strides", ints{2, 2})}},
             1e-5);
    check_op(op_case{"Conv", {random_f32({1, 3, 20}, 8), random_f32({5, 3, 4}, 9)}, {false, true}, {attribute::of("pads", ints{1, 1})}}, 1e-5);
    check_op(op_case{"Conv", {clone(x), random_f32({4, 4, 3, 3}, 10)}, {false, false}, {attribute::of("pads", ints{1, 1, 1, 1})}}, 1e-5);  // W at run time
    {  // algorithms chosen by timing, and FP16 data: the same convolution within their precision
        std::vector<tensor> live;
        const ember::graph g = build(op_case{"Conv", {clone(x), random_f32({6, 4, 3, 3}, 2)}, {false, true}, {attribute::of("pads", ints{1, 1, 1, 1})}},
                                     live);
        const auto want = run_cpu(g, live, {}, false);
        cuda::options timed;
        timed.measure_algorithms = true;
        CHECK(relative_error(run_gpu(g, live, timed)[0], want[0]) <= 1e-5);
        cuda::options half;
        half.math = cuda::precision::fp16;
        CHECK(relative_error(run_gpu(g, live, half)[0], want[0]) <= 5e-3);
        std::vector<tensor> dw_live;  // depthwise, strided, in FP16
        const ember::graph dw = build(op_case{"Conv", {clone(x), random_f32({4, 1, 3, 3}, 6)}, {false, true},
                                              {attribute::of("group", 4), attribute::of("pads", ints{1, 1, 1, 1}), attribute::of("strides", ints{2, 2})}},
                                      dw_live);
        CHECK(relative_error(run_gpu(dw, dw_live, half)[0], run_cpu(dw, dw_live, {}, false)[0]) <= 5e-3);
    }

    // the passes fuse Conv + bias + residual Add + activation into one FusedConv; Gemm/MatMul too
    for (const char* act : {"Relu", "Sigmoid", "HardSwish"}) {
        CAPTURE(act);
        ember::graph_builder b("fused");
        const auto in = b.input("x", dtype::float32, {2, 4, 11, 13});
        const auto y = b.node("Conv", {in, b.constant("w", random_f32({4, 4, 3, 3}, 11)), b.constant("b", random_f32({4}, 12))},
                              {attribute::of("pads", ints{1, 1, 1, 1})});
        b.output(b.node(act, {b.node("Add", {y, in})}), "y");
        const auto m = b.input("m", dtype::float32, {6, 16});
        const auto z = b.node("Add", {b.node("MatMul", {m, b.constant("wm", random_f32({16, 8}, 13))}), b.constant("bm", random_f32({8}, 14))});
        b.output(b.node("Relu", {z}), "z");
        auto g = std::move(b).build();
        REQUIRE(g);
        const std::vector<tensor> inputs = {clone(x), random_f32({6, 16}, 15)};
        auto low = cuda::lower(*g);
        REQUIRE(low);
        bool fused = false;
        for (const std::string& op : low->ops) fused = fused || op == "FusedConv";
        CHECK(fused);
        const auto want = run_cpu(*g, inputs, {}, false);
        const auto got = run_gpu(*g, inputs, cuda::options{});
        for (std::size_t k = 0; k < got.size(); ++k) CHECK(relative_error(got[k], want[k]) <= 1e-5);
    }
}

TEST_CASE("cuda: pooling, softmax, reductions and layout ops match the CPU reference") {
    std::string why;
    if (!gpu(why)) {
        MESSAGE("skipped: " << why);
        return;
    }
    using ints = std::vector<std::int64_t>;
    const tensor x = random_f32({2, 3, 9, 10}, 1, -2.0f, 2.0f);
    check_op(op_case{"MaxPool", {clone(x)}, {}, {attribute::of("kernel_shape", ints{3, 3}), attribute::of("strides", ints{2, 2}),
                                                   attribute::of("pads", ints{1, 1, 1, 1})}},
             0.0);
    check_op(op_case{"MaxPool", {clone(x)}, {}, {attribute::of("kernel_shape", ints{2, 3}), attribute::of("ceil_mode", 1), attribute::of("strides", ints{2, 2})}},
             0.0);
    check_op(op_case{"AveragePool", {clone(x)}, {}, {attribute::of("kernel_shape", ints{3, 3}), attribute::of("pads", ints{1, 1, 1, 1})}}, 1e-6);
    check_op(op_case{"AveragePool", {clone(x)}, {}, {attribute::of("kernel_shape", ints{3, 3}), attribute::of("pads", ints{1, 1, 1, 1}),
                                                       attribute::of("count_include_pad", 1), attribute::of("strides", ints{2, 2})}},
             1e-6);
    check_op(op_case{"GlobalAveragePool", {clone(x)}}, 1e-6);
    for (std::int64_t axis : {-1, 1, 0}) check_op(op_case{"Softmax", {clone(x)}, {}, {attribute::of("axis", axis)}}, 1e-6);
    check_op(op_case{"Softmax", {clone(x)}, {}, {attribute::of("axis", 1)}, 1, 11}, 1e-6);  // opset 11: coerced to 2-D
    for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"}) {
        check_op(op_case{op, {clone(x)}, {}, {attribute::of("axes", ints{-1})}, 1, 11}, 1e-5);
        check_op(op_case{op, {clone(x)}, {}, {attribute::of("axes", ints{1, 3}), attribute::of("keepdims", 0)}, 1, 11}, 1e-5);
        check_op(op_case{op, {clone(x)}, {}, {}, 1, 11}, 1e-5);  // all axes (opset 11: axes is an attribute)
    }
    check_op(op_case{"Transpose", {clone(x)}, {}, {attribute::of("perm", ints{0, 2, 3, 1})}}, 0.0);
    check_op(op_case{"Transpose", {clone(x)}, {}, {}}, 0.0);
    auto starts = tensor::copy_of<std::int64_t>(shape{2}, {1, 0});
    auto ends = tensor::copy_of<std::int64_t>(shape{2}, {8, 100});
    auto axes = tensor::copy_of<std::int64_t>(shape{2}, {2, 3});
    auto steps = tensor::copy_of<std::int64_t>(shape{2}, {3, -2});
    REQUIRE((starts && ends && axes && steps));
    check_op(op_case{"Slice", {clone(x), clone(*starts), clone(*ends), clone(*axes), clone(*steps)}, {false, true, true, true, true}}, 0.0);
    auto split = tensor::copy_of<std::int64_t>(shape{2}, {1, 2});
    REQUIRE(split);
    check_op(op_case{"Split", {clone(x), clone(*split)}, {false, true}, {attribute::of("axis", 1)}, 2}, 0.0);
    check_op(op_case{"Concat", {clone(x), random_f32({2, 1, 9, 10}, 2), clone(x)}, {}, {attribute::of("axis", 1)}}, 0.0);
    auto target = tensor::copy_of<std::int64_t>(shape{2}, {6, -1});
    REQUIRE(target);
    check_op(op_case{"Reshape", {clone(x), clone(*target)}, {false, true}}, 0.0);
    check_op(op_case{"Flatten", {clone(x)}, {}, {attribute::of("axis", 2)}}, 0.0);
    check_op(op_case{"LayerNormalization", {clone(x), random_f32({10}, 3), random_f32({10}, 4)}, {false, true, true}, {}, 1, 17}, 1e-5);
    check_op(op_case{"LayerNormalization", {clone(x), random_f32({9, 10}, 5)}, {false, true}, {attribute::of("axis", -2),
                                                                                             attribute::of("epsilon", 1e-3f)}, 1, 17},
             1e-5);
}

// -- sessions ---------------------------------------------------------------------------------------

TEST_CASE("cuda: a captured CUDA graph replays run()'s results; bindings and bad arguments") {
    std::string why;
    if (!gpu(why)) {
        MESSAGE("skipped: " << why);
        return;
    }
    ember::graph_builder b("mlp");
    const auto x = b.input("x", dtype::float32, {8, 32});
    auto h = b.node("Relu", {b.node("Gemm", {x, b.constant("w1", random_f32({32, 64}, 1)), b.constant("b1", random_f32({64}, 2))})});
    b.output(b.node("Softmax", {b.node("Gemm", {h, b.constant("w2", random_f32({64, 10}, 3))})}), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    const std::vector<tensor> in = {random_f32({8, 32}, 4)};
    const auto plain = run_gpu(*g, in, cuda::options{}, false);
    const auto replayed = run_gpu(*g, in, cuda::options{}, true);
    CHECK(relative_error(replayed[0], plain[0]) == 0.0);
    CHECK(relative_error(plain[0], run_cpu(*g, in, {}, false)[0]) <= 1e-5);

    auto p = cuda::compile(*g);
    REQUIRE(p);
    CHECK(p->weights_bytes() >= (32 * 64 + 64 + 64 * 10) * sizeof(float));
    auto s = cuda::session::create(*p, nullptr);
    REQUIRE(s);
    CHECK(s->replay() == status::invalid_argument);   // nothing captured yet
    CHECK(s->capture() == status::invalid_argument);  // the legacy default stream cannot be captured
    CHECK(std::string(s->last_error()).find("default stream") != std::string::npos);
    CHECK(s->upload_input(0, in[0].bytes(), 3) == status::invalid_argument);
    CHECK(s->upload_input(5, in[0].bytes(), in[0].size_bytes()) == status::invalid_argument);
    CHECK(s->bind_input(0, nullptr, in[0].size_bytes()) == status::invalid_argument);
    // caller-owned device buffers for input and output
    auto dx = cuda::device_buffer::allocate(in[0].size_bytes());
    auto dy = cuda::device_buffer::allocate(p->output(0).bytes);
    REQUIRE((dx && dy));
    REQUIRE(cudaMemcpy(dx->data(), in[0].bytes(), in[0].size_bytes(), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(s->bind_input(0, dx->data(), dx->size_bytes()) == status::ok);
    REQUIRE(s->bind_output(0, dy->data(), dy->size_bytes()) == status::ok);
    CHECK(s->input(0) == dx->data());
    REQUIRE(s->run() == status::ok);
    std::vector<float> y(p->output(0).dims.elements());
    REQUIRE(cudaMemcpy(y.data(), dy->data(), dy->size_bytes(), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(relative_error(y, plain[0]) == 0.0);
}

TEST_CASE("cuda: the zoo matches the CPU plan (FP32; TF32 and FP16 tensor cores within their precision)") {
    std::string why;
    if (!have_zoo(why) || !gpu(why)) {
        MESSAGE("skipped: " << why);
        return;
    }
    for (const std::string name : zoo_models) {
        CAPTURE(name);
        const ember::graph g = load_zoo_graph(name);
        auto x = ember::npy::load_file((zoo_dir() + "/" + name + ".in.npy").c_str());
        REQUIRE(x);
        std::vector<tensor> in;
        in.push_back(std::move(*x));
        ember::compile_options cpu;
        const auto want = run_cpu(g, in, cpu, true);
        double scale = 0.0;
        for (float v : want[0]) scale = std::max(scale, static_cast<double>(std::fabs(v)));
        for (cuda::precision math : {cuda::precision::fp32, cuda::precision::tf32, cuda::precision::fp16}) {
            const char* label = math == cuda::precision::fp32 ? "fp32" : math == cuda::precision::tf32 ? "tf32" : "fp16";
            if (math == cuda::precision::fp16 && scale < 1e-3) {
                // the seeded random weights shrink some models' activations far below FP16's
                // smallest normal (6.1e-5): FP16 cannot hold them, so there is nothing to compare
                MESSAGE(name << " fp16: not compared, the outputs are at most " << scale << " (below FP16's range)");
                continue;
            }
            cuda::options o;
            o.math = math;
            const auto got = run_gpu(g, in, o, math == cuda::precision::fp32);
            const double err = relative_error(got[0], want[0]);
            const double tol = math == cuda::precision::fp32 ? 1e-5 : (math == cuda::precision::tf32 ? 1e-2 : 2e-2);
            MESSAGE(name << " " << std::string(label) << ": largest error / largest |y| = " << err << " (largest |y| " << scale << ")");
            CHECK(err <= tol);
        }
    }
}
