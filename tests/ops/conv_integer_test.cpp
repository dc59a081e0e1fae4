// SPDX-License-Identifier: Apache-2.0
// QLinearConv and ConvInteger on the INT8 fast paths (kernels/gemm_u8s8.hpp, and
// kernels/dwconv_u8.hpp for depthwise convolutions) of every kernel table against the reference
// kernels (compile_options::isa = "reference"): groups, strides, padding,
// dilation, 1x1, int8 and uint8 activations and weights, 8-bit outputs of both signs, per-tensor
// and per-channel scales, with and without a bias; and the fallback to the reference where the
// fast path cannot take a node (a weight zero point it does not fold, weights fed at run time).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <ember/ember.hpp>

#include "support/check.hpp"

namespace {

using ember::attribute;
using ember::tensor;
using ints = std::vector<std::int64_t>;

struct qconv_case {
    std::int64_t n, c, h, w, m, kh, kw, stride, pad, dil, group;
    ember::dtype x_type, w_type, y_type;
    bool per_channel, bias;
};

template <class T>
tensor random_tensor(const ember::shape& s, std::mt19937& rng, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<T> v(static_cast<std::size_t>(s.elements()));
    for (T& x : v) x = static_cast<T>(d(rng));
    return ember::test::make<T>(s, std::move(v));
}

tensor random_of(ember::dtype t, const ember::shape& s, std::mt19937& rng) {
    return t == ember::dtype::uint8 ? random_tensor<std::uint8_t>(s, rng, 0, 255) : random_tensor<std::int8_t>(s, rng, -128, 127);
}

tensor zero_point_of(ember::dtype t, int v) {
    return t == ember::dtype::uint8 ? ember::test::make<std::uint8_t>({}, {static_cast<std::uint8_t>(v)})
                                    : ember::test::make<std::int8_t>({}, {static_cast<std::int8_t>(v)});
}

std::vector<attribute> conv_attributes(const qconv_case& c) {
    return {attribute::of("strides", ints{c.stride, c.stride}), attribute::of("pads", ints{c.pad, c.pad, c.pad, c.pad}),
            attribute::of("dilations", ints{c.dil, c.dil}), attribute::of("group", c.group)};
}

// Runs the node with x fed at run time and every other input a constant, on kernel set `isa`.
tensor run_on(const std::string& op, const std::vector<tensor>& inputs, const std::vector<attribute>& attrs, const std::string& isa,
              const ember::executor* ex = nullptr) {
    ember::test::node_setup setup;
    setup.opset = 13;
    setup.constant.assign(inputs.size(), true);
    setup.constant[0] = false;
    setup.options.isa = isa;
    setup.exec = ex;
    setup.options.max_threads = ex ? 3 : 1;
    ember::test::node_run r = ember::test::run_node_with(op, inputs, attrs, setup);
    INFO(r.error.message);
    REQUIRE(r.compiled);
    REQUIRE(r.run_status == ember::status::ok);
    return std::move(r.outputs[0]);
}

std::vector<int> values_of(const tensor& t) {
    std::vector<int> v;
    for (std::size_t i = 0; i < t.size(); ++i) {
        switch (t.type()) {
        case ember::dtype::uint8: v.push_back(t.data<std::uint8_t>()[i]); break;
        case ember::dtype::int8: v.push_back(t.data<std::int8_t>()[i]); break;
        default: v.push_back(t.data<std::int32_t>()[i]); break;
        }
    }
    return v;
}

// Every element within `tol` of the reference; returns how many differ at all.
int compare(const tensor& fast, const tensor& ref, int tol) {
    REQUIRE(fast.type() == ref.type());
    REQUIRE(fast.dims() == ref.dims());
    const std::vector<int> a = values_of(fast), b = values_of(ref);
    int differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] != b[i]) ++differ;
        if (std::abs(a[i] - b[i]) > tol) {
            CAPTURE(i);
            CHECK(a[i] == b[i]);
            return differ;
        }
    }
    return differ;
}

std::vector<std::string> int8_isas() {
    std::vector<std::string> out;
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
        if (t->gemm_u8s8) out.emplace_back(t->name);
    return out;
}

const qconv_case cases[] = {
    {1, 3, 9, 11, 8, 3, 3, 1, 1, 1, 1, ember::dtype::uint8, ember::dtype::int8, ember::dtype::uint8, true, true},
    {2, 16, 7, 7, 20, 3, 3, 2, 1, 1, 1, ember::dtype::uint8, ember::dtype::int8, ember::dtype::uint8, false, true},
    {1, 24, 6, 6, 32, 1, 1, 1, 0, 1, 1, ember::dtype::int8, ember::dtype::int8, ember::dtype::int8, true, false},
    {1, 8, 10, 10, 12, 3, 3, 1, 1, 1, 4, ember::dtype::uint8, ember::dtype::uint8, ember::dtype::uint8, true, true},
    {1, 6, 12, 12, 6, 3, 3, 2, 2, 2, 1, ember::dtype::int8, ember::dtype::uint8, ember::dtype::uint8, false, false},
    {1, 5, 8, 8, 5, 3, 3, 1, 1, 1, 5, ember::dtype::uint8, ember::dtype::int8, ember::dtype::int8, true, true},  // depthwise
    {1, 40, 5, 5, 70, 5, 5, 1, 2, 1, 1, ember::dtype::uint8, ember::dtype::int8, ember::dtype::uint8, true, true},
};

// QLinearConv's inputs for case c: random x and w, symmetric weights (zero point 0 for int8, 128
// for uint8), random weight scales and bias.
std::vector<tensor> qlinear_inputs(const qconv_case& c, std::mt19937& rng) {
    const std::int64_t cg = c.c / c.group;
    const tensor x = random_of(c.x_type, {c.n, c.c, c.h, c.w}, rng);
    const tensor w = random_of(c.w_type, {c.m, cg, c.kh, c.kw}, rng);
    const tensor w_zp = c.per_channel ? (c.w_type == ember::dtype::uint8 ? ember::test::make<std::uint8_t>({c.m}, std::vector<std::uint8_t>(static_cast<std::size_t>(c.m), 128))
                                                                         : ember::test::make<std::int8_t>({c.m}, std::vector<std::int8_t>(static_cast<std::size_t>(c.m), 0)))
                                      : zero_point_of(c.w_type, c.w_type == ember::dtype::uint8 ? 128 : 0);
    std::vector<float> ws;
    std::uniform_real_distribution<float> sd(0.002f, 0.02f);
    for (std::int64_t i = 0; i < (c.per_channel ? c.m : 1); ++i) ws.push_back(sd(rng));
    const tensor w_scale = c.per_channel ? ember::test::make_f32({c.m}, ws) : ember::test::make_f32({}, ws);
    std::vector<std::int32_t> bias;
    std::uniform_int_distribution<int> bd(-3000, 3000);
    for (std::int64_t i = 0; i < c.m; ++i) bias.push_back(bd(rng));
    std::vector<tensor> in = {x,
                              ember::test::make_f32({}, {0.05f}),
                              zero_point_of(c.x_type, c.x_type == ember::dtype::uint8 ? 117 : -9),
                              w,
                              w_scale,
                              w_zp,
                              ember::test::make_f32({}, {0.6f}),
                              zero_point_of(c.y_type, c.y_type == ember::dtype::uint8 ? 100 : 3)};
    if (c.bias) in.push_back(ember::test::make<std::int32_t>({c.m}, bias));
    return in;
}

// Case c on every table of `isas` against the reference: each output within one step; adds to
// how many differ at all, of how many.
void check_qlinear(const qconv_case& c, const std::vector<std::string>& isas, std::mt19937& rng, int& differ, int& total) {
    const std::vector<tensor> in = qlinear_inputs(c, rng);
    const tensor ref = run_on("QLinearConv", in, conv_attributes(c), "reference");
    for (const std::string& isa : isas) {
        CAPTURE(isa);
        CAPTURE(c.c);
        CAPTURE(c.h);
        CAPTURE(c.group);
        differ += compare(run_on("QLinearConv", in, conv_attributes(c), isa), ref, 1);
        total += static_cast<int>(ref.size());
    }
}

// Depthwise convolutions (kernels/dwconv_u8.hpp, on every table, with an INT8 GEMM or not):
// strides 1 to 3, padding, dilation, kernels 1x1 to 8x8, planes narrower and wider than a vector
// (and a row tail), batches, int8 / uint8 of each operand.
const qconv_case depthwise_cases[] = {
    {2, 12, 13, 17, 12, 3, 3, 2, 1, 1, 12, ember::dtype::uint8, ember::dtype::int8, ember::dtype::uint8, true, true},
    {1, 7, 9, 9, 7, 5, 5, 1, 2, 2, 7, ember::dtype::int8, ember::dtype::int8, ember::dtype::int8, false, true},
    {1, 4, 40, 37, 4, 3, 3, 1, 1, 1, 4, ember::dtype::uint8, ember::dtype::uint8, ember::dtype::uint8, true, false},
    {1, 3, 11, 10, 3, 3, 3, 3, 0, 1, 3, ember::dtype::int8, ember::dtype::uint8, ember::dtype::uint8, true, true},
    {1, 6, 7, 7, 6, 3, 3, 1, 1, 1, 6, ember::dtype::uint8, ember::dtype::int8, ember::dtype::int8, true, true},
    {1, 5, 12, 9, 5, 8, 8, 1, 3, 1, 5, ember::dtype::uint8, ember::dtype::int8, ember::dtype::uint8, false, true},
    {1, 9, 6, 21, 9, 1, 1, 2, 0, 1, 9, ember::dtype::uint8, ember::dtype::int8, ember::dtype::uint8, true, true},
};

std::vector<std::string> all_isas() {
    std::vector<std::string> out;
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) out.emplace_back(t->name);
    return out;
}

} // namespace

TEST_CASE("qlinearconv: the INT8 fast path of every table matches the reference kernel (within one step)") {
    REQUIRE(!int8_isas().empty());
    std::mt19937 rng(7);
    int differ = 0, total = 0;
    for (const qconv_case& c : cases) check_qlinear(c, int8_isas(), rng, differ, total);
    for (const qconv_case& c : depthwise_cases) check_qlinear(c, all_isas(), rng, differ, total);
    // the float multiply differs from the exact one in rare half-step cases only
    CHECK(differ * 1000 < total);
    MESSAGE("QLinearConv fast vs reference: " << differ << " of " << total << " outputs one step apart");
}

TEST_CASE("convinteger: the INT8 fast path of every table gives the reference's exact sums") {
    std::mt19937 rng(11);
    std::vector<qconv_case> all(std::begin(cases), std::end(cases));
    all.insert(all.end(), std::begin(depthwise_cases), std::end(depthwise_cases));
    for (const qconv_case& c : all) {
        const std::int64_t cg = c.c / c.group;
        const tensor x = random_of(c.x_type, {c.n, c.c, c.h, c.w}, rng);
        const tensor w = random_of(c.w_type, {c.m, cg, c.kh, c.kw}, rng);
        const std::vector<tensor> in = {x, w, zero_point_of(c.x_type, c.x_type == ember::dtype::uint8 ? 200 : -50),
                                        zero_point_of(c.w_type, c.w_type == ember::dtype::uint8 ? 128 : 0)};
        const tensor ref = run_on("ConvInteger", in, conv_attributes(c), "reference");
        CAPTURE(c.c);
        CAPTURE(c.group);
        for (const std::string& isa : c.group > 1 && c.group == c.c && c.group == c.m ? all_isas() : int8_isas()) {
            CAPTURE(isa);
            CHECK(compare(run_on("ConvInteger", in, conv_attributes(c), isa), ref, 0) == 0);
        }
    }
}

TEST_CASE("qlinearconv: the same bytes for any thread count; a weight zero point the fast path does not fold runs the reference") {
    std::mt19937 rng(3);
    const qconv_case c = cases[1];
    const tensor x = random_of(c.x_type, {c.n, c.c, c.h, c.w}, rng);
    const tensor w = random_of(c.w_type, {c.m, c.c, c.kh, c.kw}, rng);
    std::vector<tensor> in = {x, ember::test::make_f32({}, {0.05f}), zero_point_of(c.x_type, 117), w, ember::test::make_f32({}, {0.01f}),
                              zero_point_of(c.w_type, 0), ember::test::make_f32({}, {0.6f}), zero_point_of(c.y_type, 100)};
    ember::thread_pool pool(3);
    const ember::executor ex = pool.as_executor();
    const tensor one = run_on("QLinearConv", in, conv_attributes(c), "");
    CHECK(values_of(run_on("QLinearConv", in, conv_attributes(c), "", &ex)) == values_of(one));
    // w_zp = 5: not symmetric, so the node keeps the reference kernel, which is exact
    in[5] = zero_point_of(c.w_type, 5);
    CHECK(compare(run_on("QLinearConv", in, conv_attributes(c), ""), run_on("QLinearConv", in, conv_attributes(c), "reference"), 0) == 0);
}
