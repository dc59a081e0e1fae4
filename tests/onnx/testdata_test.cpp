// SPDX-License-Identifier: Apache-2.0
// A few models from ONNX's own test data (Debian package libonnx-testdata, which installs
// /usr/share/libonnx-testdata/data/node/<test>/model.onnx and test_data_set_0/*.pb). Skipped,
// with a message, where the package is not installed. The full conformance runner comes later.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>

#include "support/check.hpp"
#include "support/read_file.hpp"

using ember::status;

namespace {
#ifdef EMBER_ONNX_TESTDATA_DIR
const std::string testdata_dir = EMBER_ONNX_TESTDATA_DIR;
#else
const std::string testdata_dir = "/usr/share/libonnx-testdata/data/node";
#endif

using ember::test::read_file;

bool have_testdata() {
    std::string probe;
    if (read_file(testdata_dir + "/test_relu/model.onnx", probe)) return true;
    MESSAGE("skipped: ONNX test data not found under " << testdata_dir
                                                      << " (install Debian's libonnx-testdata: apt-get install -y libonnx-testdata)");
    return false;
}

ember::tensor load_pb(const std::string& path) {
    std::string bytes;
    REQUIRE_MESSAGE(read_file(path, bytes), "cannot read " << path);
    auto t = ember::onnx::load_tensor_memory(bytes.data(), bytes.size());
    REQUIRE_MESSAGE(t, t.error().message);
    return std::move(*t);
}

/// Loads <test>/model.onnx, runs it on test_data_set_0 and compares with output_0.pb.
void run_case(const std::string& test, std::size_t inputs) {
    CAPTURE(test);
    const std::string dir = testdata_dir + "/" + test;
    auto g = ember::onnx::load_file(dir + "/model.onnx");
    REQUIRE_MESSAGE(g, g.error().message);
    auto p = ember::compile(*g);
    REQUIRE_MESSAGE(p, p.error().message);
    REQUIRE(p->input_count() == inputs);
    std::vector<ember::tensor> in;
    for (std::size_t i = 0; i < inputs; ++i) in.push_back(load_pb(dir + "/test_data_set_0/input_" + std::to_string(i) + ".pb"));
    const ember::tensor want = load_pb(dir + "/test_data_set_0/output_0.pb");
    ember::session s(*p);
    for (std::size_t i = 0; i < inputs; ++i) REQUIRE(s.bind_input(i, in[i].bytes(), in[i].size_bytes()) == status::ok);
    auto out = ember::tensor::create(p->output(0).type, p->output(0).dims);
    REQUIRE(out);
    REQUIRE(s.bind_output(0, out->bytes(), out->size_bytes()) == status::ok);
    REQUIRE(s.run() == status::ok);
    REQUIRE(out->dims() == want.dims());
    ember::test::check_close(*out, ember::test::values_f32(want), 1e-5f, 1e-4f);
}
} // namespace

TEST_CASE("onnx/testdata: node/test_relu has the expected structure and numbers") {
    if (!have_testdata()) return;
    auto g = ember::onnx::load_file(testdata_dir + "/test_relu/model.onnx");
    REQUIRE_MESSAGE(g, g.error().message);
    REQUIRE(g->nodes.size() == 1);
    CHECK(g->nodes[0].op_type == "Relu");
    REQUIRE(g->inputs.size() == 1);
    REQUIRE(g->outputs.size() == 1);
    const ember::value& x = g->values[g->inputs[0]];
    CHECK(x.name == "x");
    CHECK(x.type == ember::dtype::float32);
    CHECK(x.declared.fully_known());
    CHECK(g->values[g->outputs[0]].name == "y");
    CHECK(g->opset_version() > 0);
    run_case("test_relu", 1);
}

TEST_CASE("onnx/testdata: node/test_gemm_default_* load and match the reference outputs") {
    if (!have_testdata()) return;
    for (const char* test : {"test_gemm_default_no_bias", "test_gemm_default_matrix_bias", "test_gemm_default_scalar_bias",
                             "test_gemm_default_single_elem_vector_bias", "test_gemm_default_vector_bias",
                             "test_gemm_default_zero_bias"}) {
        CAPTURE(test);
        auto g = ember::onnx::load_file(testdata_dir + "/" + test + "/model.onnx");
        REQUIRE_MESSAGE(g, g.error().message);
        REQUIRE(g->nodes.size() == 1);
        CHECK(g->nodes[0].op_type == "Gemm");
        const std::size_t inputs = g->inputs.size();
        CHECK(g->nodes[0].inputs.size() == inputs);
        run_case(test, inputs);
    }
}
