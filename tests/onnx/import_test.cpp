// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>

#include "support/check.hpp"
#include "support/onnx_writer.hpp"

using ember::dtype;
using ember::status;
using ember::value_kind;
namespace w = ember::test::onnx_writer;
using ember::test::pb::message;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

ember::result<ember::graph> load(const message& m, const ember::onnx::load_options& o = {}) {
    return ember::onnx::load_memory(m.bytes.data(), m.bytes.size(), o);
}

std::vector<float> run(const ember::graph& g, const std::vector<std::vector<float>>& inputs, std::size_t output = 0) {
    auto p = ember::compile(g);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    REQUIRE(s.state() == status::ok);
    for (std::size_t i = 0; i < inputs.size(); ++i) REQUIRE(s.bind_input(i, inputs[i]) == status::ok);
    std::vector<float> out(p->output(output).bytes / sizeof(float));
    REQUIRE(s.bind_output(output, out) == status::ok);
    REQUIRE(s.run() == status::ok);
    return out;
}

/// A fresh folder under the temp dir; removed by the destructor.
struct temp_dir {
    std::string path;
    temp_dir() {
        char tmpl[] = "/tmp/ember_onnx_XXXXXX";
        const char* p = mkdtemp(tmpl);
        REQUIRE(p != nullptr);
        path = p;
    }
    ~temp_dir() {
        const std::string cmd = "rm -rf '" + path + "'";
        (void)std::system(cmd.c_str());
    }
    std::string write(const std::string& name, const std::string& bytes) const {
        const std::string full = path + "/" + name;
        std::FILE* f = std::fopen(full.c_str(), "wb");
        REQUIRE(f != nullptr);
        REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
        std::fclose(f);
        return full;
    }
};

// x[2, 3] -> Gemm(W1[3, 4], b1[4]) -> Relu -> Gemm(W2[4, 2], b2[2], transB on W2^T) -> y[2, 2]
const std::vector<float> W1 = {0.1f, -0.2f, 0.3f, 0.4f, 0.5f, 0.6f, -0.7f, 0.8f, -0.9f, 1.0f, 1.1f, -1.2f};
const std::vector<float> B1 = {0.01f, 0.02f, -0.03f, 0.04f};
const std::vector<float> W2T = {1.0f, -1.0f, 0.5f, 2.0f, -0.5f, 0.25f, 1.5f, -2.0f};  // [2, 4]
const std::vector<float> B2 = {0.5f, -0.5f};

message mlp_model(std::int64_t ir_version = 8, bool initializers_as_inputs = false) {
    w::graph_parts p;
    p.name = "mlp";
    p.nodes = {w::node("Gemm", {"x", "W1", "b1"}, {"h"}, "fc1"), w::node("Relu", {"h"}, {"r"}, "relu"),
               w::node("Gemm", {"r", "W2", "b2"}, {"y"}, "fc2", {w::attr_i("transB", 1), w::attr_f("alpha", 1.0f)})};
    p.initializers = {w::tensor_f32("W1", {3, 4}, W1), w::tensor_raw("b1", w::FLOAT, {4}, B1), w::tensor_f32("W2", {2, 4}, W2T),
                      w::tensor_raw("b2", w::FLOAT, {2}, B2)};
    p.inputs = {w::value_info("x", w::FLOAT, {-1, 3})};
    if (initializers_as_inputs)
        for (auto [name, dims] : std::vector<std::pair<std::string, std::vector<std::int64_t>>>{{"W1", {3, 4}}, {"b1", {4}}, {"W2", {2, 4}}, {"b2", {2}}})
            p.inputs.push_back(w::value_info(name, w::FLOAT, dims));
    p.outputs = {w::value_info("y", w::FLOAT, {-1, 2})};
    p.value_infos = {w::value_info("h", w::FLOAT, {-1, 4})};
    return w::model(w::graph(p), 13, ir_version);
}

/// x[1, 3] -> Gemm with W1 [3, 4] stored as external data at `location` (offset and length as
/// written in the model; empty: not written) -> y[1, 4].
message external_w1_model(const std::string& location, const std::string& offset, const std::string& length) {
    message t = w::tensor_header("W1", w::FLOAT, {3, 4});
    auto entry = [&](const char* k, const std::string& v) {
        message e;
        e.str(1, k).str(2, v);
        t.msg(13, e);
    };
    entry("location", location);
    if (!offset.empty()) entry("offset", offset);
    if (!length.empty()) entry("length", length);
    t.varint(14, 1);
    w::graph_parts p;
    p.nodes = {w::node("Gemm", {"x", "W1"}, {"y"}, "fc")};
    p.initializers = {t};
    p.inputs = {w::value_info("x", w::FLOAT, {1, 3})};
    p.outputs = {w::value_info("y", w::FLOAT, {1, 4})};
    return w::model(w::graph(p));
}

std::vector<float> mlp_reference(const std::vector<float>& x) {
    std::vector<float> y(4);
    for (int n = 0; n < 2; ++n) {
        float r[4];
        for (int j = 0; j < 4; ++j) {
            float acc = B1[j];
            for (int k = 0; k < 3; ++k) acc += x[n * 3 + k] * W1[k * 4 + j];
            r[j] = acc > 0 ? acc : 0;
        }
        for (int j = 0; j < 2; ++j) {
            float acc = B2[j];
            for (int k = 0; k < 4; ++k) acc += r[k] * W2T[j * 4 + k];
            y[n * 2 + j] = acc;
        }
    }
    return y;
}
} // namespace

TEST_CASE("onnx/import: an MLP (Gemm + Relu) loads, compiles and computes") {
    const message m = mlp_model();
    auto g = load(m);
    REQUIRE_MESSAGE(g, g.error().message);
    CHECK(g->name == "mlp");
    CHECK(g->opset_version() == 13);
    REQUIRE(g->nodes.size() == 3);
    CHECK(g->nodes[0].name == "fc1");
    CHECK(g->nodes[0].op_type == "Gemm");
    CHECK(g->nodes[2].find_attribute("transB")->i == 1);
    REQUIRE(g->inputs.size() == 1);
    const ember::value& x = g->values[g->inputs[0]];
    CHECK(x.name == "x");
    CHECK(x.type == dtype::float32);
    REQUIRE(x.declared.rank() == 2);
    CHECK(x.declared.dims[0].symbol == "d0");
    CHECK(x.declared.dims[1].value == 3);
    CHECK(g->constants.size() == 4);
    CHECK(g->values[g->find_value("h")].declared.rank() == 2);  // from value_info

    ember::compile_options o;
    o.dim_values = {{"d0", 2}};
    auto p = ember::compile(*g, o);
    REQUIRE_MESSAGE(p, p.error().message);
    const std::vector<float> in = {1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.25f};
    std::vector<float> out(4);
    ember::session s(*p);
    REQUIRE(s.bind_input(0, in) == status::ok);
    REQUIRE(s.bind_output(0, out) == status::ok);
    REQUIRE(s.run() == status::ok);
    ember::test::check_close(out, mlp_reference(in), 1e-5f, 1e-5f);
}

TEST_CASE("onnx/import: initializers listed as graph inputs (IR 3) become constants, not inputs") {
    auto g = load(mlp_model(3, true));
    REQUIRE_MESSAGE(g, g.error().message);
    REQUIRE(g->inputs.size() == 1);
    CHECK(g->values[g->find_value("W1")].kind == value_kind::constant);
    ember::compile_options o;
    o.input_shapes = {{"x", {2, 3}}};
    auto p = ember::compile(*g, o);
    REQUIRE_MESSAGE(p, p.error().message);
}

TEST_CASE("onnx/import: a Conv model with pads and strides computes like the reference loop") {
    const std::vector<float> wts = {1, 0, -1, 2, 0, -2, 1, 0, -1, 0.5f, 0.5f, 0.5f, 0.5f, 1, 0.5f, 0.5f, 0.5f, 0.5f};
    const std::vector<float> bias = {0.25f, -1.0f};
    w::graph_parts p;
    p.nodes = {w::node("Conv", {"x", "W", "B"}, {"y"}, "conv",
                       {w::attr_ints("kernel_shape", {3, 3}), w::attr_ints("pads", {1, 1, 1, 1}), w::attr_ints("strides", {2, 2})})};
    p.initializers = {w::tensor_raw("W", w::FLOAT, {2, 1, 3, 3}, wts), w::tensor_f32("B", {2}, bias)};
    p.inputs = {w::value_info("x", w::FLOAT, {1, 1, 4, 4})};
    p.outputs = {w::value_info("y", w::FLOAT, {1, 2, 2, 2})};
    auto g = load(w::model(w::graph(p)));
    REQUIRE_MESSAGE(g, g.error().message);
    std::vector<float> x(16);
    for (int i = 0; i < 16; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i % 5) - 1.5f;
    std::vector<float> expected(8);
    for (int c = 0; c < 2; ++c)
        for (int oy = 0; oy < 2; ++oy)
            for (int ox = 0; ox < 2; ++ox) {
                float acc = bias[static_cast<std::size_t>(c)];
                for (int ky = 0; ky < 3; ++ky)
                    for (int kx = 0; kx < 3; ++kx) {
                        const int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
                        if (iy >= 0 && iy < 4 && ix >= 0 && ix < 4)
                            acc += x[static_cast<std::size_t>(iy * 4 + ix)] * wts[static_cast<std::size_t>(c * 9 + ky * 3 + kx)];
                    }
                expected[static_cast<std::size_t>(c * 4 + oy * 2 + ox)] = acc;
            }
    ember::test::check_close(run(*g, {x}), expected, 1e-5f, 1e-5f);
}

TEST_CASE("onnx/import: attributes of every kind, with subgraphs that use outer-scope names") {
    w::graph_parts body;
    body.name = "body";
    body.nodes = {w::node("Add", {"outer_c", "local"}, {"z"}), w::node("Relu", {"z"}, {"out"})};
    body.initializers = {w::tensor_f32("local", {1}, {1.0f})};
    body.outputs = {w::value_info("out", w::FLOAT, {1})};
    w::graph_parts second;
    second.name = "second";
    second.nodes = {w::node("Identity", {"outer_c"}, {"o2"})};
    second.outputs = {w::value_info("o2", 0, {})};

    w::graph_parts p;
    p.nodes = {w::node("Custom", {"outer_c", "", "x"}, {"y", ""}, "k",
                       {w::attr_f("f", 0.5f), w::attr_i("i", -7), w::attr_s("s", "hello"),
                        w::attr_t("t", w::tensor_raw("", w::INT64, {2}, std::vector<std::int64_t>{3, -4})), w::attr_g("g", w::graph(body)),
                        w::attr_floats("floats", {1.5f, -2.5f}), w::attr_ints("ints", {1, -2, 3}), w::attr_strings("strings", {"a", "", "c"}),
                        w::attr_tensors("tensors", {w::tensor_f32("", {1}, {9.0f}), w::tensor_f32("", {0}, {})}),
                        w::attr_graphs("graphs", {w::graph(second), w::graph(body)})},
                       "com.example")};
    p.initializers = {w::tensor_f32("outer_c", {1}, {2.0f})};
    p.inputs = {w::value_info("x", w::FLOAT, {1})};
    p.outputs = {w::value_info("y", w::FLOAT, {1})};
    auto g = load(w::model(w::graph(p)));
    REQUIRE_MESSAGE(g, g.error().message);
    const ember::node& n = g->nodes[0];
    CHECK(n.domain == "com.example");
    REQUIRE(n.inputs.size() == 3);
    CHECK(n.inputs[1] == ember::no_value);
    REQUIRE(n.outputs.size() == 2);
    CHECK(n.outputs[1] == ember::no_value);
    REQUIRE(n.attributes.size() == 10);
    CHECK(n.find_attribute("f")->kind == ember::attribute_kind::floating);
    CHECK(n.find_attribute("f")->f == 0.5f);
    CHECK(n.find_attribute("i")->i == -7);
    CHECK(n.find_attribute("s")->s == "hello");
    const ember::tensor& t = n.find_attribute("t")->t;
    REQUIRE(t.type() == dtype::int64);
    CHECK(t.data<std::int64_t>()[1] == -4);
    CHECK(n.find_attribute("floats")->floats == std::vector<float>{1.5f, -2.5f});
    CHECK(n.find_attribute("ints")->ints == std::vector<std::int64_t>{1, -2, 3});
    CHECK(n.find_attribute("strings")->strings == std::vector<std::string>{"a", "", "c"});
    REQUIRE(n.find_attribute("tensors")->tensors.size() == 2);
    CHECK(n.find_attribute("tensors")->tensors[0].data<float>()[0] == 9.0f);
    CHECK(n.find_attribute("tensors")->tensors[1].size() == 0);

    const ember::attribute* ga = n.find_attribute("g");
    REQUIRE(ga->kind == ember::attribute_kind::graph);
    REQUIRE(ga->graphs.size() == 1);
    const ember::graph& sub = ga->graphs[0];
    CHECK(sub.name == "body");
    CHECK(sub.inputs.empty());
    const ember::value_id captured = sub.find_value("outer_c");
    REQUIRE(captured != ember::no_value);
    CHECK(sub.values[captured].kind == value_kind::input);  // captured from the outer graph, not a listed input
    CHECK(sub.values[sub.find_value("local")].kind == value_kind::constant);
    CHECK(sub.opset_version() == 13);
    REQUIRE(ember::validate(sub));
    const ember::attribute* gs = n.find_attribute("graphs");
    REQUIRE(gs->kind == ember::attribute_kind::graphs);
    REQUIRE(gs->graphs.size() == 2);
    CHECK(gs->graphs[0].name == "second");
    CHECK(gs->graphs[0].outputs.size() == 1);
}

TEST_CASE("onnx/import: tensors of every supported dtype, from raw_data and from the typed fields") {
    struct dtype_case {
        std::int32_t onnx;
        dtype type;
        std::vector<double> values;
    };
    const std::vector<dtype_case> cases = {
        {w::FLOAT, dtype::float32, {1.5, -2.0, 0.0}},    {w::DOUBLE, dtype::float64, {1e-300, -2.5, 3.0}},
        {w::INT64, dtype::int64, {-9e15, 4.0, 0.0}},     {w::INT32, dtype::int32, {-2e9, 7.0, 1.0}},
        {w::INT16, dtype::int16, {-32768, 32767, 5}},    {w::INT8, dtype::int8, {-128, 127, -1}},
        {w::UINT8, dtype::uint8, {0, 255, 17}},          {w::BOOL, dtype::boolean, {1, 0, 1}},
        {w::FLOAT16, dtype::float16, {1.0, -0.5, 65504}}, {w::BFLOAT16, dtype::bfloat16, {1.0, -3.0, 256.0}},
        {w::UINT16, dtype::uint16, {0, 65535, 9}},       {w::UINT32, dtype::uint32, {0, 4294967295.0, 3}},
        {w::UINT64, dtype::uint64, {0, 9e15, 12}},
    };
    for (const dtype_case& c : cases) {
        CAPTURE(ember::onnx::data_type_name(c.onnx));
        // The expected bytes, built from the values in ember's own types.
        ember::result<ember::tensor> want_r = ember::tensor::create(c.type, {3});
        REQUIRE(want_r);
        ember::tensor want = std::move(*want_r);
        ember::visit_dtype(c.type, [&](auto tag) {
            using T = decltype(tag);
            for (std::size_t i = 0; i < 3; ++i) {
                T v;
                if constexpr (std::is_same_v<T, ember::float16> || std::is_same_v<T, ember::bfloat16>)
                    v = T(static_cast<float>(c.values[i]));
                else
                    v = static_cast<T>(c.values[i]);
                std::memcpy(want.bytes() + i * sizeof(T), &v, sizeof(T));
            }
        });
        // raw_data
        message raw = w::tensor_raw("c", c.onnx, {3}, want.bytes(), want.size_bytes());
        // the typed field the spec assigns to this type
        message typed = w::tensor_header("c", c.onnx, {3});
        switch (c.type) {
            case dtype::float32: typed.packed_fixed(4, std::vector<float>(want.data<float>(), want.data<float>() + 3)); break;
            case dtype::float64: typed.packed_fixed(10, std::vector<double>(want.data<double>(), want.data<double>() + 3)); break;
            case dtype::int64: for (std::size_t i = 0; i < 3; ++i) typed.i64(7, want.data<std::int64_t>()[i]); break;  // unpacked
            default: {
                std::vector<std::int64_t> ints;
                ember::visit_dtype(c.type, [&](auto tag) {
                    using T = decltype(tag);
                    for (std::size_t i = 0; i < 3; ++i) {
                        T v;
                        std::memcpy(&v, want.bytes() + i * sizeof(T), sizeof(T));
                        if constexpr (std::is_same_v<T, ember::float16> || std::is_same_v<T, ember::bfloat16>)
                            ints.push_back(v.bits);
                        else if constexpr (std::is_arithmetic_v<T>)
                            ints.push_back(static_cast<std::int64_t>(v));
                    }
                });
                // uint32 and uint64 live in uint64_data (field 11), the other small types in int32_data (5)
                typed.packed_varints(c.type == dtype::uint32 || c.type == dtype::uint64 ? 11 : 5, ints);
            }
        }
        for (const message* t : {&raw, &typed}) {
            w::graph_parts p;
            p.nodes = {w::node("Identity", {"c"}, {"y"})};
            p.initializers = {*t};
            p.outputs = {w::value_info("y", c.onnx, {3})};
            auto g = load(w::model(w::graph(p)));
            REQUIRE_MESSAGE(g, g.error().message);
            REQUIRE(g->constants.size() == 1);
            const ember::tensor& got = g->constants[0];
            CHECK(got.type() == c.type);
            CHECK(got.dims() == ember::shape{3});
            REQUIRE(got.size_bytes() == want.size_bytes());
            CHECK(std::memcmp(got.bytes(), want.bytes(), want.size_bytes()) == 0);
        }
    }
}

TEST_CASE("onnx/import: unsupported and inconsistent tensors name the tensor") {
    auto one = [](const message& t) {
        w::graph_parts p;
        p.nodes = {w::node("Identity", {"c"}, {"y"})};
        p.initializers = {t};
        p.outputs = {w::value_info("y", w::FLOAT, {})};
        return load(w::model(w::graph(p)));
    };
    constexpr std::int32_t complex64 = 14;
    auto cplx = one(w::tensor_raw("c", complex64, {1}, std::vector<float>{1.0f, 0.0f}));
    CHECK(cplx.error().code == status::unsupported_op);
    CHECK(contains(cplx.error().message, "initializer 'c': element type COMPLEX64 (14) is not supported"));
    auto str = one(w::tensor_header("c", w::STRING, {1}).str(6, "text"));
    CHECK(str.error().code == status::unsupported_op);
    CHECK(contains(str.error().message, "string tensors are not supported"));
    auto short_raw = one(w::tensor_raw("c", w::FLOAT, {2}, std::vector<float>{1.0f}));
    CHECK(short_raw.error().code == status::invalid_model);
    CHECK(contains(short_raw.error().message, "initializer 'c': raw_data has 4 bytes, expected 8"));
    auto few = one(w::tensor_f32("c", {3}, {1.0f, 2.0f}));
    CHECK(contains(few.error().message, "float_data has 2 values, expected 3"));
    auto none = one(w::tensor_header("c", w::FLOAT, {2}));
    CHECK(contains(none.error().message, "no data"));
    auto huge = one(w::tensor_raw("c", w::FLOAT, {1 << 20, 1 << 20}, std::vector<float>{1.0f}));  // checked before allocating
    CHECK(huge.error().code == status::invalid_model);
    CHECK(contains(huge.error().message, "raw_data has 4 bytes, expected 4398046511104"));
    auto overflow = one(w::tensor_raw("c", w::FLOAT, {std::int64_t{1} << 40, std::int64_t{1} << 40}, std::vector<float>{1.0f}));
    CHECK(contains(overflow.error().message, "is too large"));
    auto neg = one(w::tensor_f32("c", {-1}, {}));
    CHECK(contains(neg.error().message, "negative dimension"));

    w::graph_parts p;
    p.nodes = {w::node("Relu", {"x"}, {"y"})};
    p.inputs = {w::value_info("x", complex64, {1})};
    p.outputs = {w::value_info("y", w::FLOAT, {1})};
    auto in = load(w::model(w::graph(p)));
    CHECK(in.error().code == status::unsupported_op);
    CHECK(contains(in.error().message, "graph input 'x' has element type COMPLEX64 (14)"));

    message ref;
    ref.str(1, "alpha").varint(20, 1).str(21, "parent_alpha");
    w::graph_parts q;
    q.nodes = {w::node("LeakyRelu", {"x"}, {"y"}, "lr", {ref})};
    q.inputs = {w::value_info("x", w::FLOAT, {1})};
    q.outputs = {w::value_info("y", w::FLOAT, {1})};
    auto r = load(w::model(w::graph(q)));
    CHECK(r.error().code == status::unsupported_op);
    CHECK(contains(r.error().message, "node 0 'lr' (LeakyRelu): attribute 'alpha' refers to function attribute 'parent_alpha'"));
}

TEST_CASE("onnx/import: unknown names and duplicate outputs are invalid_model with the node") {
    w::graph_parts p;
    p.nodes = {w::node("Relu", {"nope"}, {"y"}, "r")};
    p.inputs = {w::value_info("x", w::FLOAT, {1})};
    p.outputs = {w::value_info("y", w::FLOAT, {1})};
    auto a = load(w::model(w::graph(p)));
    CHECK(a.error().code == status::invalid_model);
    CHECK(a.error().node == 0);
    CHECK(contains(a.error().message, "node 0 'r' (Relu): input 0 'nope' is not a graph input, initializer or node output"));

    p.nodes = {w::node("Relu", {"x"}, {"x"}, "r")};
    auto b = load(w::model(w::graph(p)));
    CHECK(contains(b.error().message, "output 0 'x' is already defined"));

    p.nodes = {w::node("Relu", {"x"}, {"y"}, "r")};
    p.outputs = {w::value_info("missing", w::FLOAT, {1})};
    auto c = load(w::model(w::graph(p)));
    CHECK(contains(c.error().message, "graph output 'missing' is not produced"));

    message no_graph;
    no_graph.i64(1, 8);
    auto d = load(no_graph);
    CHECK(d.error().code == status::invalid_model);
    CHECK(contains(d.error().message, "no graph"));
}

TEST_CASE("onnx/import: external data relative to the model's folder") {
    temp_dir dir;
    std::vector<float> w1(W1);
    std::string blob(16, '\0');  // some padding first, so offset matters
    blob.append(reinterpret_cast<const char*>(w1.data()), w1.size() * sizeof(float));
    dir.write("weights.bin", blob);

    const std::string path = dir.write("model.onnx", external_w1_model("weights.bin", "16", "48").bytes);
    auto g = ember::onnx::load_file(path);
    REQUIRE_MESSAGE(g, g.error().message);
    const std::vector<float> out = run(*g, {{1.0f, 0.0f, 0.0f}});
    ember::test::check_close(out, {W1[0], W1[1], W1[2], W1[3]});

    // load_memory needs the folder
    const message m = external_w1_model("weights.bin", "16", "");
    auto no_dir = load(m);
    CHECK(no_dir.error().code == status::invalid_argument);
    CHECK(contains(no_dir.error().message, "no base directory is known"));
    ember::onnx::load_options o;
    o.base_directory = dir.path;
    CHECK(load(m, o));

    for (const char* bad : {"../weights.bin", "sub/../../x.bin", "/etc/passwd", "..", "C:\\w.bin", "a\\..\\..\\b"}) {
        CAPTURE(bad);
        auto r = load(external_w1_model(bad, "", ""), o);
        CHECK(r.error().code == status::invalid_model);
        CHECK(contains(r.error().message, "must be a relative path inside the model's folder"));
    }
    auto missing = load(external_w1_model("absent.bin", "", ""), o);
    CHECK(missing.error().code == status::io_error);
    CHECK(contains(missing.error().message, "absent.bin"));
    auto past = load(external_w1_model("weights.bin", "40", ""), o);
    CHECK(past.error().code == status::invalid_model);
    CHECK(contains(past.error().message, "runs past the end"));
    auto wrong_len = load(external_w1_model("weights.bin", "16", "12"), o);
    CHECK(contains(wrong_len.error().message, "length 12 differs from the 48 bytes"));
    auto nan_off = load(external_w1_model("weights.bin", "-4", ""), o);
    CHECK(contains(nan_off.error().message, "offset '-4' is not a number"));
}

TEST_CASE("onnx/import: load_file and load(reader) report missing files and short reads") {
    auto missing = ember::onnx::load_file("/nonexistent/dir/model.onnx");
    CHECK(missing.error().code == status::io_error);
    CHECK(contains(missing.error().message, "'/nonexistent/dir/model.onnx'"));

    const message m = mlp_model();
    struct source {
        const std::string* bytes;
        std::size_t fail_at;
    };
    auto read = [](void* ctx, std::uint64_t offset, void* dst, std::size_t n) -> std::size_t {
        const source& s = *static_cast<const source*>(ctx);
        if (offset + n > s.fail_at) return 0;
        std::memcpy(dst, s.bytes->data() + offset, n);
        return n;
    };
    source ok_src{&m.bytes, m.bytes.size()};
    ember::onnx::byte_reader reader{m.bytes.size(), read, &ok_src};
    auto g = ember::onnx::load(reader);
    REQUIRE_MESSAGE(g, g.error().message);
    CHECK(g->nodes.size() == 3);
    source bad_src{&m.bytes, 10};
    reader.ctx = &bad_src;
    CHECK(ember::onnx::load(reader).error().code == status::io_error);

    ember::onnx::load_options small;
    small.max_model_bytes = 10;
    auto big = load(m, small);
    CHECK(big.error().code == status::invalid_model);
    CHECK(contains(big.error().message, "max_model_bytes"));

    // a folder opens like a file on Linux, and ftell would call it 2^63 bytes long
    auto folder = ember::onnx::load_file("/tmp");
    CHECK(folder.error().code == status::io_error);
    CHECK(contains(folder.error().message, "cannot read '/tmp'"));
}

TEST_CASE("onnx/import: a model truncated at every byte is an error, never a crash") {
    const message m = mlp_model();
    REQUIRE(load(m));
    for (std::size_t n = 0; n < m.bytes.size(); ++n) {
        std::vector<char> prefix(m.bytes.begin(), m.bytes.begin() + static_cast<std::ptrdiff_t>(n));  // own buffer: ASan sees overreads
        auto g = ember::onnx::load_memory(prefix.data(), prefix.size());
        if (g) FAIL_CHECK("prefix of " << n << " bytes loaded");
        else CHECK(g.error().code == status::invalid_model);
    }
}

TEST_CASE("onnx/import: corrupt bytes give invalid_model naming the field and the offset") {
    // TensorProto.dims with a truncated varint, inside graph.initializer
    message t;
    t.tag(1, 0);
    t.bytes.push_back(static_cast<char>(0x80));
    w::graph_parts p;
    p.initializers = {t};
    const message m = w::model(w::graph(p));
    auto a = load(m);
    CHECK(a.error().code == status::invalid_model);
    CHECK(contains(a.error().message, "TensorProto.dims: truncated varint at byte "));

    // unknown wire type in a NodeProto
    message n = w::node("Relu", {"x"}, {"y"});
    n.tag(9, 7);
    w::graph_parts q;
    q.nodes = {n};
    auto b = load(w::model(w::graph(q)));
    CHECK(contains(b.error().message, "NodeProto: field 9: unknown wire type 7 at byte "));

    // a length that runs past the end of the enclosing message
    message bad;
    bad.i64(1, 8);
    bad.tag(7, 2).raw_varint(1000);
    bad.bytes.append("abc");
    auto c = load(bad);
    CHECK(contains(c.error().message, "ModelProto.graph: length 1000 at byte 3 runs past the end"));

    // an overlong varint
    message ov;
    ov.tag(1, 0);
    ov.bytes.append(std::string(10, static_cast<char>(0xff)));
    ov.bytes.push_back(0x01);
    auto d = load(ov);
    CHECK(contains(d.error().message, "ModelProto.ir_version: varint"));
}

TEST_CASE("onnx/import: subgraphs nested past max_depth are refused") {
    w::graph_parts leaf;
    leaf.nodes = {w::node("Identity", {"x"}, {"y"})};
    leaf.outputs = {w::value_info("y", w::FLOAT, {1})};
    message g = w::graph(leaf);
    for (int i = 0; i < 40; ++i) {
        w::graph_parts p;
        p.nodes = {w::node("If", {"x"}, {"y"}, "", {w::attr_g("then_branch", g)})};
        p.outputs = {w::value_info("y", w::FLOAT, {1})};
        if (i == 39) p.inputs = {w::value_info("x", w::BOOL, {})};
        g = w::graph(p);
    }
    const message m = w::model(g);
    auto deep = load(m);
    CHECK(deep.error().code == status::invalid_model);
    CHECK(contains(deep.error().message, "nested deeper than 64 levels"));
    ember::onnx::load_options o;
    o.max_depth = 200;
    auto ok = load(m, o);
    REQUIRE_MESSAGE(ok, ok.error().message);
    CHECK(ok->nodes[0].find_attribute("then_branch")->graphs[0].nodes[0].op_type == "If");
}

TEST_CASE("onnx/import: more nodes than max_nodes, subgraphs included, are refused before they are kept") {
    w::graph_parts body;
    body.nodes = {w::node("Identity", {"x"}, {"y"}), w::node("Identity", {"y"}, {"z"})};
    body.outputs = {w::value_info("z", w::FLOAT, {1})};
    w::graph_parts top;
    top.nodes = {w::node("If", {"c"}, {"y"}, "", {w::attr_g("then_branch", w::graph(body)), w::attr_g("else_branch", w::graph(body))}),
                 w::node("Identity", {"y"}, {"out"})};
    top.inputs = {w::value_info("c", w::BOOL, {}), w::value_info("x", w::FLOAT, {1})};
    top.outputs = {w::value_info("out", w::FLOAT, {1})};
    const message m = w::model(w::graph(top));
    ember::onnx::load_options o;
    o.max_nodes = 6;  // 2 + 2 in the branches, 2 at the top
    auto fits = load(m, o);
    REQUIRE_MESSAGE(fits, fits.error().message);
    o.max_nodes = 5;
    auto over = load(m, o);
    REQUIRE_FALSE(over);
    CHECK(over.error().code == status::invalid_model);
    CHECK(contains(over.error().message, "more than load_options::max_nodes (5) nodes"));
}

namespace {
// An XOR stream keyed on (seed, source, offset): the kind of cipher load_options::decrypt is for.
std::uint8_t key_byte(std::uint64_t seed, const char* source, std::uint64_t i) {
    std::uint64_t h = seed;
    for (const char* c = source; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 0x100000001b3ull;
    h ^= (i + 1) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return static_cast<std::uint8_t>(h);
}
struct xor_key {
    std::uint64_t seed = 0;
    bool refuse = false;
    int calls = 0;
};
bool xor_in_place(void* ctx, const char* source, std::uint64_t offset, std::uint8_t* data, std::size_t bytes) noexcept {
    xor_key& k = *static_cast<xor_key*>(ctx);
    ++k.calls;
    if (k.refuse) return false;
    for (std::size_t i = 0; i < bytes; ++i) data[i] ^= key_byte(k.seed, source, offset + i);
    return true;
}
std::string obfuscated(std::string bytes, std::uint64_t seed, const char* source) {
    xor_key k{seed};
    (void)xor_in_place(&k, source, 0, reinterpret_cast<std::uint8_t*>(bytes.data()), bytes.size());
    return bytes;
}
} // namespace

TEST_CASE("onnx/import: load_options::decrypt decrypts the model and its external weights in place, from every source") {
    const message m = mlp_model();
    const std::string secret = obfuscated(m.bytes, 42, "");
    REQUIRE(secret != m.bytes);
    xor_key key{42};
    ember::onnx::load_options o;
    o.decrypt = {xor_in_place, &key};
    const std::vector<float> in = {1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.25f};
    const std::vector<float> want = mlp_reference(in);
    const auto run_mlp = [&](const ember::graph& g) {  // batch 2
        ember::compile_options co;
        co.dim_values = {{"d0", 2}};
        auto p = ember::compile(g, co);
        REQUIRE_MESSAGE(p, p.error().message);
        std::vector<float> out(4);
        ember::session s(*p);
        REQUIRE(s.bind_input(0, in) == status::ok);
        REQUIRE(s.bind_output(0, out) == status::ok);
        REQUIRE(s.run() == status::ok);
        return out;
    };

    // Not decrypted, the bytes are not a model.
    auto raw = ember::onnx::load_memory(secret.data(), secret.size());
    CHECK(raw.error().code == status::invalid_model);

    // load_memory decrypts a copy: the caller's bytes stay as they were.
    const std::string before = secret;
    auto g = ember::onnx::load_memory(secret.data(), secret.size(), o);
    REQUIRE_MESSAGE(g, g.error().message);
    CHECK(secret == before);
    ember::test::check_close(run_mlp(*g), want, 1e-5f, 1e-5f);

    // load_file and load(reader)
    temp_dir dir;
    const std::string path = dir.write("model.bin", secret);
    auto from_file = ember::onnx::load_file(path, o);
    REQUIRE_MESSAGE(from_file, from_file.error().message);
    ember::test::check_close(run_mlp(*from_file), want, 1e-5f, 1e-5f);
    auto read = [](void* ctx, std::uint64_t offset, void* dst, std::size_t n) -> std::size_t {
        std::memcpy(dst, static_cast<const std::string*>(ctx)->data() + offset, n);
        return n;
    };
    auto from_reader = ember::onnx::load(ember::onnx::byte_reader{secret.size(), read, const_cast<std::string*>(&secret)}, o);
    REQUIRE_MESSAGE(from_reader, from_reader.error().message);
    ember::test::check_close(run_mlp(*from_reader), want, 1e-5f, 1e-5f);

    // A wrong key: an error that points at the hook, never a crash.
    xor_key wrong{43};
    ember::onnx::load_options bad = o;
    bad.decrypt.ctx = &wrong;
    auto w1 = ember::onnx::load_memory(secret.data(), secret.size(), bad);
    CHECK(w1.error().code == status::invalid_model);
    CHECK(contains(w1.error().message, "after load_options::decrypt"));
    auto w2 = ember::onnx::load_file(path, bad);
    CHECK(w2.error().code == status::invalid_model);
    CHECK(contains(w2.error().message, path));
    // A hook that refuses.
    xor_key no{42, true};
    bad.decrypt.ctx = &no;
    auto refused = ember::onnx::load_file(path, bad);
    CHECK(refused.error().code == status::invalid_model);
    CHECK(contains(refused.error().message, "load_options::decrypt refused the model's bytes [0, +"));
    CHECK(no.calls == 1);

    // External weights: each file is its own stream, decrypted in the weight tensor's buffer.
    std::string blob(8, '\x5a');
    blob.append(reinterpret_cast<const char*>(W1.data()), W1.size() * sizeof(float));
    dir.write("weights.bin", obfuscated(blob, 7, "weights.bin"));
    const std::string ext_path = dir.write("ext.onnx", obfuscated(external_w1_model("weights.bin", "8", "").bytes, 7, ""));
    xor_key key7{7};
    o.decrypt.ctx = &key7;
    auto ext = ember::onnx::load_file(ext_path, o);
    REQUIRE_MESSAGE(ext, ext.error().message);
    CHECK(key7.calls == 2);  // the model, then the weights
    ember::test::check_close(run(*ext, {{1.0f, 0.0f, 0.0f}}), {W1[0], W1[1], W1[2], W1[3]});
    // A hook that decrypts the model but refuses the weights' file.
    struct refuse_second {
        static bool apply(void* ctx, const char* source, std::uint64_t offset, std::uint8_t* data, std::size_t bytes) noexcept {
            return std::string(source).empty() && xor_in_place(ctx, source, offset, data, bytes);
        }
    };
    xor_key key_half{7};
    ember::onnx::load_options half = o;
    half.decrypt = {&refuse_second::apply, &key_half};
    auto ext_refused = ember::onnx::load_file(ext_path, half);
    CHECK(ext_refused.error().code == status::invalid_model);
    CHECK(contains(ext_refused.error().message, "refused bytes [8, +48) of external data 'weights.bin'"));
}
