// SPDX-License-Identifier: Apache-2.0
// The element-wise kernels (kernels/elementwise_f32.hpp) of every kernel table this CPU runs:
// the binary row against the same scalar operation (bit for bit), QuantizeLinear's and
// DequantizeLinear's per-tensor kernels against their formulas, the activations, the row mean
// and softmax against double-precision loops; then the ops that run them (Add, Sub, Mul, Div with
// broadcasting, Relu, Sigmoid, LeakyRelu, HardSigmoid, HardSwish, GlobalAveragePool, Softmax)
// compiled for each table against the reference kernels (compile_options::isa = "reference"),
// serial and on a thread pool.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <ember/ember.hpp>

#include "support/check.hpp"
#include "support/kernel_check.hpp"

namespace {

using ember::kernels::activation;
using ember::kernels::activation_spec;
using ember::kernels::binary_kind;
using ember::test::random_floats;

float scalar_op(binary_kind op, float a, float b) {
    switch (op) {
        case binary_kind::add: return a + b;
        case binary_kind::sub: return a - b;
        case binary_kind::mul: return a * b;
        case binary_kind::div: return a / b;
    }
    return 0.0f;
}

const std::int64_t lengths[] = {0, 1, 3, 7, 15, 16, 17, 31, 33, 49, 100, 257};

} // namespace

TEST_CASE("binary_row_f32: every table, op and operand layout gives the scalar operation's bits") {
    const binary_kind ops[] = {binary_kind::add, binary_kind::sub, binary_kind::mul, binary_kind::div};
    const std::vector<float> a = random_floats(300, 1), b = random_floats(300, 2, 0.5f, 2.0f);
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
        for (binary_kind op : ops)
            for (std::int64_t n : lengths)
                for (int layout = 0; layout < 4; ++layout) {
                    const std::int64_t sa = layout & 1 ? 0 : 1, sb = layout & 2 ? 0 : 1;
                    CAPTURE(t->name);
                    CAPTURE(static_cast<int>(op));
                    CAPTURE(n);
                    CAPTURE(layout);
                    std::vector<float> y(static_cast<std::size_t>(n) + 1, -7.0f);  // one past the end must stay
                    t->binary_row_f32(op, a.data(), sa, b.data(), sb, y.data(), n);
                    for (std::int64_t i = 0; i < n; ++i) {
                        const float expected = scalar_op(op, a[static_cast<std::size_t>(i * sa)], b[static_cast<std::size_t>(i * sb)]);
                        REQUIRE(std::memcmp(&y[static_cast<std::size_t>(i)], &expected, sizeof(float)) == 0);
                    }
                    CHECK(y[static_cast<std::size_t>(n)] == -7.0f);
                }
}

TEST_CASE("binary_row_f32: y may be a") {
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
        std::vector<float> a = random_floats(37, 3);
        const std::vector<float> b = random_floats(37, 4), before = a;
        t->binary_row_f32(binary_kind::mul, a.data(), 1, b.data(), 1, a.data(), 37);
        for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == before[i] * b[i]);
    }
}

TEST_CASE("activation_f32: every table and activation matches the double formula, tails included") {
    const activation_spec specs[] = {
        {activation::relu},      {activation::clip, -0.5f, 0.7f},          {activation::leaky_relu, 0.1f, 0.0f},
        {activation::hard_swish}, {activation::hard_sigmoid, 0.2f, 0.5f}, {activation::sigmoid},
        {activation::silu},      {activation::gelu},                       {activation::none},
    };
    const std::vector<float> x = random_floats(300, 5, -8.0f, 8.0f);
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
        for (const activation_spec& spec : specs)
            for (std::int64_t n : lengths) {
                CAPTURE(t->name);
                CAPTURE(static_cast<int>(spec.kind));
                CAPTURE(n);
                std::vector<float> y(static_cast<std::size_t>(n) + 1, -7.0f), expected(static_cast<std::size_t>(n));
                t->activation_f32(spec, x.data(), y.data(), n);
                for (std::int64_t i = 0; i < n; ++i)
                    expected[static_cast<std::size_t>(i)] = static_cast<float>(ember::test::apply_activation(spec, x[static_cast<std::size_t>(i)]));
                CHECK(y[static_cast<std::size_t>(n)] == -7.0f);
                y.pop_back();
                ember::test::check_close(y, expected, 1e-6f, 1e-5f);
            }
}

TEST_CASE("row_mean_f32: every table matches a double mean, for rows shorter and longer than a vector") {
    const std::int64_t sizes[] = {1, 3, 7, 16, 49, 196, 1001};
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
        for (std::int64_t size : sizes) {
            CAPTURE(t->name);
            CAPTURE(size);
            const std::int64_t rows = 5;
            const std::vector<float> x = random_floats(static_cast<std::size_t>(rows * size), 6, -2.0f, 3.0f);
            std::vector<float> y(rows), expected(rows);
            t->row_mean_f32(x.data(), rows, size, y.data());
            for (std::int64_t r = 0; r < rows; ++r) {
                double sum = 0;
                for (std::int64_t i = 0; i < size; ++i) sum += x[static_cast<std::size_t>(r * size + i)];
                expected[static_cast<std::size_t>(r)] = static_cast<float>(sum / static_cast<double>(size));
            }
            ember::test::check_close(y, expected, 1e-6f, 1e-5f);
        }
}

TEST_CASE("quantize_f32 and dequantize_8bit: every table gives the scalar formulas' bytes and floats, every byte value, tails") {
    // QuantizeLinear's and DequantizeLinear's vector kernels (whole vectors through byte_lanes'
    // narrowing store and widening load, the rest lane by lane), here so that QEMU runs them on
    // every ISA; uint8 and int8, ties, NaN, infinities and saturation
    std::vector<float> x;
    for (int k = -1100; k <= 1100; ++k) x.push_back(static_cast<float>(k) * 0.125f);  // ties every other step
    for (float v : {std::nanf(""), std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 3e9f, -0.0f})
        x.push_back(v);
    std::vector<std::uint8_t> bytes;
    for (int rep = 0; rep < 3; ++rep)
        for (int v = 0; v < 256; ++v) bytes.push_back(static_cast<std::uint8_t>(v * 7 + rep));
    const float scale = 0.25f, dscale = 0.37f;
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
        for (const bool is_signed : {false, true})
            for (std::int64_t n : {std::int64_t{5}, std::int64_t{17}, std::int64_t{701}, static_cast<std::int64_t>(x.size())}) {
                CAPTURE(t->name);
                CAPTURE(is_signed);
                CAPTURE(n);
                const std::int32_t zp = is_signed ? -7 : 131, lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
                std::vector<std::uint8_t> q(static_cast<std::size_t>(n)), expected_q(static_cast<std::size_t>(n));
                t->quantize_f32(x.data(), n, scale, zp, lo, hi, q.data());
                for (std::int64_t i = 0; i < n; ++i) {
                    const float r = std::nearbyint(x[static_cast<std::size_t>(i)] / scale) + static_cast<float>(zp);
                    const float c = std::isnan(r) ? static_cast<float>(zp) : std::fmin(std::fmax(r, static_cast<float>(lo)), static_cast<float>(hi));
                    expected_q[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(static_cast<std::int32_t>(c));
                }
                CHECK(q == expected_q);
                const std::int64_t m = n < static_cast<std::int64_t>(bytes.size()) ? n : static_cast<std::int64_t>(bytes.size());
                std::vector<float> y(static_cast<std::size_t>(m)), expected_y(static_cast<std::size_t>(m));
                t->dequantize_8bit(bytes.data(), m, is_signed, dscale, zp, y.data());
                for (std::int64_t i = 0; i < m; ++i) {
                    const std::uint8_t b = bytes[static_cast<std::size_t>(i)];
                    const float v = is_signed ? static_cast<float>(static_cast<std::int8_t>(b)) : static_cast<float>(b);
                    expected_y[static_cast<std::size_t>(i)] = (v - static_cast<float>(zp)) * dscale;
                }
                CHECK(std::memcmp(y.data(), expected_y.data(), y.size() * sizeof(float)) == 0);
            }
}

TEST_CASE("softmax_rows_f32: every table matches a double softmax; -inf entries give 0; rows sum to 1; in place") {
    const float inf = std::numeric_limits<float>::infinity();
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
        for (std::int64_t n : lengths) {
            if (n == 0) continue;  // a softmax over nothing is not a row
            CAPTURE(t->name);
            CAPTURE(n);
            const std::int64_t rows = 3;
            std::vector<float> x = random_floats(static_cast<std::size_t>(rows * n), 7, -20.0f, 20.0f);
            if (n > 2) x[1] = -inf;  // a masked position (attention masks)
            std::vector<float> expected(x.size());
            for (std::int64_t r = 0; r < rows; ++r) {
                const float* xr = x.data() + r * n;
                double max = xr[0], sum = 0;
                for (std::int64_t i = 1; i < n; ++i) max = std::fmax(max, xr[i]);
                for (std::int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(xr[i]) - max);
                for (std::int64_t i = 0; i < n; ++i)
                    expected[static_cast<std::size_t>(r * n + i)] = static_cast<float>(std::exp(static_cast<double>(xr[i]) - max) / sum);
            }
            std::vector<float> y = x;
            t->softmax_rows_f32(y.data(), y.data(), rows, n);  // in place
            ember::test::check_close(y, expected, 1e-7f, 1e-5f);
            if (n > 2) CHECK(y[1] == 0.0f);
        }
}

// ---------------------------------------------------------------------------------------------
// The ops on the fast kernels against the same ops on the reference kernels.

namespace {

struct op_case {
    std::string op;
    std::vector<ember::shape> shapes;
    std::vector<ember::attribute> attrs;
    bool exact;  // IEEE arithmetic: the same bits as the reference
};

std::vector<float> run_op(const op_case& c, const std::string& isa, const ember::executor* ex) {
    std::vector<ember::tensor> inputs;
    std::uint32_t seed = 11;
    for (const ember::shape& s : c.shapes) inputs.push_back(ember::test::random_f32(s, seed++, c.op == "Div" && inputs.size() == 1 ? 0.5f : -3.0f, 3.0f));
    ember::test::node_setup setup;
    setup.options.isa = isa;
    setup.exec = ex;
    ember::test::node_run r = ember::test::run_node_with(c.op, inputs, c.attrs, setup);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    REQUIRE(r.run_status == ember::status::ok);
    return ember::test::values_f32(r.outputs[0]);
}

} // namespace

TEST_CASE("element-wise ops: every kernel table matches the reference kernels, serial and on a thread pool") {
    using ember::attribute;
    const std::vector<op_case> cases = {
        {"Add", {{2, 3, 5, 7}, {2, 3, 5, 7}}, {}, true},
        {"Mul", {{1, 24, 7, 7}, {1, 24, 1, 1}}, {}, true},     // squeeze-excitation scale
        {"Mul", {{1, 24, 1, 1}, {1, 24, 7, 7}}, {}, true},     // broadcast on the left
        {"Add", {{4, 33, 64}, {64}}, {}, true},                // bias over the last axis
        {"Sub", {{3, 1, 5}, {1, 4, 1}}, {}, true},             // both broadcast
        {"Div", {{2, 6, 17}, {2, 6, 1}}, {}, true},            // layer-norm style division
        {"Mul", {{1, 64, 32, 32}, {}}, {}, true},              // a scalar
        {"Add", {{}, {}}, {}, true},                           // rank 0
        {"Add", {{2, 0, 3}, {1, 3}}, {}, true},                // empty
        {"Add", {{1, 96, 56, 56}, {1, 96, 56, 56}}, {}, true}, // large enough to be split over threads
        {"Mul", {{2, 3, 1, 40000}, {1, 3, 1, 1}}, {}, true},
        {"Relu", {{3, 5, 11}}, {}, false},
        {"Sigmoid", {{1, 96, 56, 56}}, {}, false},
        {"LeakyRelu", {{37}}, {attribute::of("alpha", 0.2f)}, false},
        {"HardSigmoid", {{5, 9}}, {attribute::of("alpha", 0.3f), attribute::of("beta", 0.4f)}, false},
        {"HardSwish", {{2, 40}}, {}, false},
        {"GlobalAveragePool", {{2, 20, 7, 7}}, {}, false},
        {"GlobalAveragePool", {{1, 1280, 14, 14}}, {}, false},
        {"GlobalAveragePool", {{2, 3, 5}}, {}, false},
        {"Softmax", {{4, 8, 128}}, {}, false},
        {"Softmax", {{3, 1000}}, {}, false},
        {"Softmax", {{2, 5, 3}}, {attribute::of("axis", std::int64_t{1})}, false},  // strided lines: the reference runs
        {"Softmax", {{512, 128}}, {}, false},
    };
    ember::thread_pool pool(3);
    const ember::executor ex = pool.as_executor();
    for (const op_case& c : cases) {
        CAPTURE(c.op);
        CAPTURE(c.shapes[0]);
        const std::vector<float> expected = run_op(c, "reference", nullptr);
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
            CAPTURE(t->name);
            const std::vector<float> serial = run_op(c, std::string(t->name), nullptr);
            const std::vector<float> threaded = run_op(c, std::string(t->name), &ex);
            REQUIRE(serial.size() == expected.size());
            if (serial.empty()) continue;
            CHECK(std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float)) == 0);
            if (c.exact)
                CHECK(std::memcmp(serial.data(), expected.data(), serial.size() * sizeof(float)) == 0);
            else
                ember::test::check_close(serial, expected, 1e-6f, 1e-5f);
        }
    }
}

TEST_CASE("Pow with the constant exponent 2 runs as x * x on every table; other exponents and graph-input exponents as pow") {
    const ember::tensor x = ember::test::random_f32({3, 17, 40}, 21, -4.0f, 4.0f);
    const std::vector<float> xs = ember::test::values_f32(x);
    for (float exponent : {2.0f, 3.0f, 0.5f}) {
        for (bool constant : {true, false}) {
            CAPTURE(exponent);
            CAPTURE(constant);
            const ember::tensor e = ember::test::make_f32({1}, {exponent});
            for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
                CAPTURE(t->name);
                ember::test::node_setup setup;
                setup.options.isa = std::string(t->name);
                setup.constant = {false, constant};
                ember::test::node_run r = ember::test::run_node_with("Pow", {x, e}, {}, setup);
                REQUIRE_MESSAGE(r.compiled, r.error.message);
                REQUIRE(r.run_status == ember::status::ok);
                std::vector<float> expected(xs.size());
                for (std::size_t i = 0; i < xs.size(); ++i) expected[i] = exponent == 2.0f ? xs[i] * xs[i] : std::pow(xs[i], exponent);
                const std::vector<float> y = ember::test::values_f32(r.outputs[0]);
                if (exponent == 2.0f && constant)
                    CHECK(std::memcmp(y.data(), expected.data(), y.size() * sizeof(float)) == 0);  // the multiply itself
                else
                    ember::test::check_close(y, expected, 1e-6f, 1e-5f);  // NaN for x < 0 ^ 0.5 on both sides
            }
        }
    }
}

TEST_CASE("ReduceMean over trailing axes runs the row mean on every table; other axes the reference") {
    using ints = std::vector<std::int64_t>;
    const ember::tensor x = ember::test::random_f32({4, 6, 50}, 23, -2.0f, 2.0f);
    for (const ints& axes : {ints{-1}, ints{1, 2}, ints{0, 1, 2}, ints{0}, ints{1}}) {
        for (std::int64_t keepdims : {0, 1}) {
            CAPTURE(axes.size());
            CAPTURE(axes[0]);
            const std::vector<ember::attribute> attrs{ember::attribute::of("axes", axes), ember::attribute::of("keepdims", keepdims)};
            ember::test::node_setup setup;
            setup.opset = 13;
            setup.options.isa = "reference";
            ember::test::node_run ref = ember::test::run_node_with("ReduceMean", {x}, attrs, setup);
            REQUIRE_MESSAGE(ref.compiled, ref.error.message);
            for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
                CAPTURE(t->name);
                setup.options.isa = std::string(t->name);
                ember::test::node_run r = ember::test::run_node_with("ReduceMean", {x}, attrs, setup);
                REQUIRE_MESSAGE(r.compiled, r.error.message);
                REQUIRE(r.outputs[0].dims() == ref.outputs[0].dims());
                ember::test::check_close(ember::test::values_f32(r.outputs[0]), ember::test::values_f32(ref.outputs[0]), 1e-6f, 1e-5f);
            }
        }
    }
}

TEST_CASE("LayerNormalization runs the vector kernel on every table where Scale and B are per row; elsewhere the reference") {
    using ember::attribute;
    struct ln_case {
        ember::shape x, scale, b;  // b empty: no B
        std::int64_t axis;
        std::size_t outputs;
    };
    const ln_case cases[] = {
        {{4, 33, 64}, {64}, {64}, -1, 1},         {{2, 128, 256}, {256}, {256}, -1, 3},  // the transformer case, with Mean and InvStdDev
        {{3, 5, 7}, {5, 7}, {}, 1, 3},            {{6, 17}, {17}, {1}, -1, 1},            // B broadcast: reference
        {{2, 3, 5}, {3, 1}, {}, 1, 1},            {{5, 3}, {5, 1}, {}, 0, 2},             // Scale not per row: reference
    };
    std::uint32_t seed = 31;
    for (const ln_case& c : cases) {
        CAPTURE(c.x);
        std::vector<ember::tensor> inputs{ember::test::random_f32(c.x, seed++, -3.0f, 5.0f), ember::test::random_f32(c.scale, seed++)};
        if (!c.b.empty()) inputs.push_back(ember::test::random_f32(c.b, seed++));
        const std::vector<attribute> attrs{attribute::of("axis", c.axis), attribute::of("epsilon", 1e-5f)};
        ember::test::node_setup setup;
        setup.output_count = c.outputs;
        setup.options.isa = "reference";
        const ember::test::node_run ref = ember::test::run_node_with("LayerNormalization", inputs, attrs, setup);
        REQUIRE_MESSAGE(ref.compiled, ref.error.message);
        ember::thread_pool pool(2);
        const ember::executor ex = pool.as_executor();
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
            for (const ember::executor* e : {static_cast<const ember::executor*>(nullptr), &ex}) {
                CAPTURE(t->name);
                setup.options.isa = std::string(t->name);
                setup.exec = e;
                const ember::test::node_run r = ember::test::run_node_with("LayerNormalization", inputs, attrs, setup);
                REQUIRE_MESSAGE(r.compiled, r.error.message);
                REQUIRE(r.run_status == ember::status::ok);
                for (std::size_t k = 0; k < c.outputs; ++k)
                    ember::test::check_close(ember::test::values_f32(r.outputs[k]), ember::test::values_f32(ref.outputs[k]), 1e-5f, 1e-4f);
            }
    }
}
