// SPDX-License-Identifier: Apache-2.0
// The direct convolution (kernels/conv_direct_f32.hpp) of every kernel table this CPU runs against
// a plain double-precision loop: stems (3 channels, 7x7 and 3x3 at stride 2), planes narrower
// than a vector (a vector's lanes spanning several output rows), wide planes (vectors inside one
// row, and across a row end), strides 1 to 3, dilation, asymmetric padding, output channels that
// leave a narrower last panel, each epilogue; nothing written outside the output; the workspace
// starting full of NaN (an arena's stale bytes); the same bits for any number of slots.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <ember/ember.hpp>

#include "support/kernel_check.hpp"

namespace {

using ember::kernels::activation;
using ember::kernels::activation_spec;
using ember::kernels::conv_direct_f32_problem;
using ember::test::aligned_floats;
using ember::test::plane_case;
using ember::test::plane_geometry;
using ember::test::random_floats;

struct direct_case {
    std::int64_t channels, out_channels;
    plane_case window;  // its planes / channels fields unused
};

struct operands {
    std::vector<float> x, w, bias, res;
};

conv_direct_f32_problem problem_of(const direct_case& dc) {
    conv_direct_f32_problem p;
    p.channels = dc.channels;
    p.out_channels = dc.out_channels;
    p.window = plane_geometry(dc.window);
    return p;
}

std::int64_t out_floats(const conv_direct_f32_problem& p) { return p.out_channels * p.window.out_h * p.window.out_w; }

operands make_operands(const conv_direct_f32_problem& p, std::uint32_t seed) {
    const auto& g = p.window;
    return {random_floats(static_cast<std::size_t>(p.channels * g.in_h * g.in_w), seed),
            random_floats(static_cast<std::size_t>(p.out_channels * p.channels * g.kh * g.kw), seed + 1),
            random_floats(static_cast<std::size_t>(p.out_channels), seed + 2), random_floats(static_cast<std::size_t>(out_floats(p)), seed + 3)};
}

// The oracle: taps outside the input are skipped.
std::vector<float> reference(const conv_direct_f32_problem& p, const operands& in, bool bias, bool res, const activation_spec& act) {
    const auto& g = p.window;
    std::vector<float> y(static_cast<std::size_t>(out_floats(p)));
    for (std::int64_t m = 0; m < p.out_channels; ++m)
        for (std::int64_t oh = 0; oh < g.out_h; ++oh)
            for (std::int64_t ow = 0; ow < g.out_w; ++ow) {
                double acc = bias ? in.bias[static_cast<std::size_t>(m)] : 0.0;
                for (std::int64_t c = 0; c < p.channels; ++c)
                    for (std::int64_t r = 0; r < g.kh; ++r)
                        for (std::int64_t q = 0; q < g.kw; ++q) {
                            const std::int64_t ih = oh * g.stride_h - g.pad_h + r * g.dil_h, iw = ow * g.stride_w - g.pad_w + q * g.dil_w;
                            if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
                            acc += static_cast<double>(in.x[static_cast<std::size_t>((c * g.in_h + ih) * g.in_w + iw)]) *
                                   in.w[static_cast<std::size_t>(((m * p.channels + c) * g.kh + r) * g.kw + q)];
                        }
                const std::size_t o = static_cast<std::size_t>((m * g.out_h + oh) * g.out_w + ow);
                if (res) acc += in.res[o];
                y[o] = static_cast<float>(ember::test::apply_activation(act, acc));
            }
    return y;
}

constexpr std::int64_t guard = 64;  // floats after the output that must stay untouched
constexpr float untouched = -7.0f;

// Runs table t's kernel; the output has `guard` floats after it, checked untouched.
std::vector<float> run(const ember::simd::kernel_table& t, conv_direct_f32_problem p, const operands& in, bool bias, bool res,
                       std::int64_t slots, const ember::executor* ex) {
    const std::int64_t depth = p.channels * p.window.kh * p.window.kw;
    aligned_floats packed(static_cast<std::size_t>(p.out_channels * depth));
    t.pack_conv_direct_weights(in.w.data(), p.out_channels, depth, packed.data());
    const std::int64_t ws_floats = t.conv_direct_workspace_floats(p);
    REQUIRE(ws_floats > 0);
    aligned_floats ws(static_cast<std::size_t>(ws_floats), std::numeric_limits<float>::quiet_NaN());
    std::vector<float> y(static_cast<std::size_t>(out_floats(p) + guard), untouched);
    p.x = in.x.data();
    p.packed_w = packed.data();
    p.y = y.data();
    p.post.bias = bias ? in.bias.data() : nullptr;
    p.post.bias_per_row = true;
    p.post.residual = res ? in.res.data() : nullptr;
    t.conv_direct_f32(p, ws.data(), slots, ex);
    for (std::int64_t i = 0; i < guard; ++i) CHECK(y[static_cast<std::size_t>(out_floats(p) + i)] == untouched);
    y.resize(static_cast<std::size_t>(out_floats(p)));
    return y;
}

// planes / channels of the window unused: 0
const direct_case cases[] = {
    {3, 64, {0, 0, 30, 30, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1}},      // ResNet's stem, smaller
    {3, 32, {0, 0, 31, 33, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1}},      // SqueezeNet's stem: no padding, odd sizes
    {3, 24, {0, 0, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}},      // MobileNet's and ShuffleNet's
    {16, 20, {0, 0, 13, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},     // rows narrower than a vector
    {8, 17, {0, 0, 55, 55, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},      // wide rows; a last panel of 3 (or 1)
    {5, 9, {0, 0, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},         // 7x7: one tile holds the whole plane
    {4, 6, {0, 0, 12, 20, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1}},       // 5x5
    {6, 7, {0, 0, 11, 11, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}},       // dilation
    {5, 15, {0, 0, 17, 19, 3, 3, 2, 3, 0, 1, 2, 0, 1, 1}},      // strides 2 and 3, asymmetric padding
    {7, 1, {0, 0, 9, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1}},         // 1x1, one output channel
    {2, 5, {0, 0, 4, 3, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1}},         // a 2x1 output
    {3, 33, {0, 0, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},        // a 1x1 input, all but one tap in the padding
};

} // namespace

TEST_CASE("conv_direct_f32: every table matches the reference, with each epilogue") {
    const activation_spec acts[] = {{}, {activation::relu}, {activation::clip, 0.0f, 6.0f}, {activation::silu}};
    for (const direct_case& dc : cases) {
        const conv_direct_f32_problem base = problem_of(dc);
        const operands in = make_operands(base, 17);
        CAPTURE(dc.channels);
        CAPTURE(dc.out_channels);
        CAPTURE(dc.window.in_h);
        CAPTURE(dc.window.in_w);
        CAPTURE(dc.window.kh);
        for (int e = 0; e < 4; ++e) {
            const bool bias = e != 1, res = e >= 2;
            conv_direct_f32_problem p = base;
            p.post.act = acts[e];
            const std::vector<float> expected = reference(p, in, bias, res, p.post.act);
            for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
                CAPTURE(t->name);
                CAPTURE(e);
                const std::vector<float> got = run(*t, p, in, bias, res, 1, nullptr);
                ember::test::check_close(got, expected, 1e-4f, 1e-4f);
            }
        }
    }
}

TEST_CASE("conv_direct_f32: the same bits for any number of work slots and threads") {
    ember::thread_pool pool2(2), pool3(3);
    const ember::executor ex2 = pool2.as_executor(), ex3 = pool3.as_executor();
    for (const direct_case& dc : {cases[0], cases[3], cases[4]}) {
        conv_direct_f32_problem p = problem_of(dc);
        p.post.act = {activation::hard_swish};
        const operands in = make_operands(p, 5);
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
            CAPTURE(t->name);
            const std::vector<float> one = run(*t, p, in, true, true, 1, nullptr);
            CHECK(run(*t, p, in, true, true, 2, &ex2) == one);
            CHECK(run(*t, p, in, true, true, 3, &ex3) == one);
            CHECK(run(*t, p, in, true, true, 5, &ex2) == one);
            CHECK(run(*t, p, in, true, true, 1000, &ex3) == one);  // more slots than channels and units
        }
    }
}

TEST_CASE("conv_direct_f32: the kernel declines what its layout cannot hold") {
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
        CAPTURE(t->name);
        conv_direct_f32_problem p = problem_of({3, 8, {0, 0, 40, 40, 9, 9, 1, 1, 4, 4, 4, 4, 1, 1}});  // 81 taps: more than the layout's 64
        CHECK(t->conv_direct_workspace_floats(p) == 0);
        p = problem_of({3, 8, {0, 0, 40, 40, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1}});  // 25 phases
        CHECK(t->conv_direct_workspace_floats(p) == 0);
        p = problem_of({3, 8, {0, 0, 40, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}});
        CHECK(t->conv_direct_workspace_floats(p) > 0);
    }
}
