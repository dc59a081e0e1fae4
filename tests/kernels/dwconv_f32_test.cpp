// SPDX-License-Identifier: Apache-2.0
// The plane kernels (depthwise convolution and max pooling, kernels/dwconv_f32.hpp) of every
// kernel table this CPU runs against a plain double-precision loop: the padded path (workspace
// given) and the row path (none), strides 1 to 3, dilation, asymmetric and ceil-mode padding,
// rows narrower than a vector, kernels wider than the input; bias, residual and activation in the
// epilogue; and the same bits for any number of work slots and threads.
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
using ember::kernels::dwconv_f32_problem;
using ember::test::aligned_floats;
using ember::test::random_floats;

using ember::test::plane_case;
using ember::test::plane_geometry;

// The oracle: taps outside the input are skipped; max pooling of no tap is -inf.
std::vector<float> reference(const dwconv_f32_problem& p, bool max, const std::vector<float>& x, const std::vector<float>& w,
                             const float* bias, const float* res, const activation_spec& act) {
    std::vector<float> y(static_cast<std::size_t>(p.planes * p.out_h * p.out_w));
    for (std::int64_t i = 0; i < p.planes; ++i) {
        const std::int64_t c = i % p.channels;
        for (std::int64_t oh = 0; oh < p.out_h; ++oh)
            for (std::int64_t ow = 0; ow < p.out_w; ++ow) {
                double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
                for (std::int64_t r = 0; r < p.kh; ++r)
                    for (std::int64_t q = 0; q < p.kw; ++q) {
                        const std::int64_t ih = oh * p.stride_h - p.pad_h + r * p.dil_h, iw = ow * p.stride_w - p.pad_w + q * p.dil_w;
                        if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
                        const double v = x[static_cast<std::size_t>((i * p.in_h + ih) * p.in_w + iw)];
                        if (max)
                            acc = std::fmax(acc, v);
                        else
                            acc += v * w[static_cast<std::size_t>((c * p.kh + r) * p.kw + q)];
                    }
                const std::size_t o = static_cast<std::size_t>((i * p.out_h + oh) * p.out_w + ow);
                if (!max) {
                    if (bias) acc += bias[c];
                    if (res) acc += res[o];
                    acc = ember::test::apply_activation(act, acc);
                }
                y[o] = static_cast<float>(acc);
            }
    }
    return y;
}

struct operands {
    std::vector<float> x, w, bias, res;
};

operands make_operands(const dwconv_f32_problem& p, std::uint32_t seed) {
    return {random_floats(static_cast<std::size_t>(p.planes * p.in_h * p.in_w), seed),
            random_floats(static_cast<std::size_t>(p.channels * p.kh * p.kw), seed + 1),
            random_floats(static_cast<std::size_t>(p.channels), seed + 2),
            random_floats(static_cast<std::size_t>(p.planes * p.out_h * p.out_w), seed + 3)};
}

// Runs table t's kernel; padded: with the workspace (the padded path where it applies).
std::vector<float> run(const ember::simd::kernel_table& t, dwconv_f32_problem p, bool max, const operands& in, bool bias, bool res,
                       bool padded, std::int64_t slots, const ember::executor* ex) {
    p.x = in.x.data();
    p.w = in.w.data();
    if (bias) p.bias = in.bias.data();
    if (res) p.residual = in.res.data();
    std::vector<float> y(static_cast<std::size_t>(p.planes * p.out_h * p.out_w), -7.0f);
    p.y = y.data();
    aligned_floats ws(static_cast<std::size_t>(ember::kernels::dwconv_workspace_floats(p) * slots));
    float* workspace = padded && !ws.empty() ? ws.data() : nullptr;
    (max ? t.maxpool_f32 : t.dwconv_f32)(p, workspace, slots, ex);
    return y;
}

const plane_case cases[] = {
    {3, 3, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},      // MobileNet 14x14
    {4, 4, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},        // 7x7: rows narrower than a vector
    {2, 2, 112, 112, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1},    // stride 2, TF-style bottom/right padding
    {2, 1, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},      // stride 2
    {3, 3, 15, 17, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1},      // EfficientNet's 5x5 stride 2
    {2, 2, 20, 21, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1},      // 5x5
    {2, 2, 33, 33, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},      // dilation 2
    {2, 2, 19, 23, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2},      // dilation 2, stride 2
    {1, 1, 10, 31, 2, 4, 3, 2, 1, 0, 2, 3, 1, 3},      // stride 3 x 2, dilation 1 x 3, ceil-mode-like end padding
    {2, 2, 3, 3, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1},        // kernel wider than the input
    {1, 1, 1, 40, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1},       // 1-D
    {2, 2, 9, 9, 9, 9, 1, 1, 4, 4, 4, 4, 1, 1},        // 81 taps: past the padded path's limit
};

} // namespace

TEST_CASE("dwconv_f32: both paths of every table match the reference, with each epilogue") {
    const activation_spec acts[] = {{activation::none}, {activation::clip, 0.0f, 6.0f}, {activation::hard_swish}, {activation::silu}};
    std::uint32_t seed = 1;
    for (const plane_case& pc : cases) {
        const dwconv_f32_problem p = plane_geometry(pc);
        const operands in = make_operands(p, seed);
        for (int variant = 0; variant < 4; ++variant) {
            const bool bias = variant != 0, res = variant >= 2;
            const activation_spec& act = acts[variant];
            dwconv_f32_problem q = p;
            q.act = act;
            const std::vector<float> expected = reference(q, false, in.x, in.w, bias ? in.bias.data() : nullptr, res ? in.res.data() : nullptr, act);
            for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
                for (bool padded : {true, false}) {
                    CAPTURE(t->name);
                    CAPTURE(seed);
                    CAPTURE(variant);
                    CAPTURE(padded);
                    const float tol = 2e-6f * static_cast<float>(p.kh * p.kw);
                    ember::test::check_close(run(*t, q, false, in, bias, res, padded, 1, nullptr), expected, tol, tol);
                }
        }
        ++seed;
    }
}

TEST_CASE("maxpool_f32: both paths of every table give the reference's values") {
    std::uint32_t seed = 50;
    for (const plane_case& pc : cases) {
        const dwconv_f32_problem p = plane_geometry(pc);
        const operands in = make_operands(p, seed);
        const std::vector<float> expected = reference(p, true, in.x, in.w, nullptr, nullptr, {});
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
            for (bool padded : {true, false}) {
                CAPTURE(t->name);
                CAPTURE(seed);
                CAPTURE(padded);
                CHECK(run(*t, p, true, in, false, false, padded, 1, nullptr) == expected);
            }
        ++seed;
    }
}

TEST_CASE("dwconv_f32: the padded path only needs a workspace where it applies") {
    CHECK(ember::kernels::dwconv_workspace_floats(plane_geometry(cases[0])) > 0);
    CHECK(ember::kernels::dwconv_workspace_floats(plane_geometry(cases[11])) == 0);  // 81 taps
    CHECK(ember::kernels::dwconv_workspace_floats(plane_geometry({1, 1, 2000, 2000, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1})) == 0);  // plane too large
}

TEST_CASE("dwconv_f32: the same bits for any number of work slots and threads") {
    ember::thread_pool pool2(2), pool3(3);
    const ember::executor ex2 = pool2.as_executor(), ex3 = pool3.as_executor();
    const dwconv_f32_problem base = plane_geometry({37, 37, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1});
    const operands in = make_operands(base, 9);
    dwconv_f32_problem p = base;
    p.act = {activation::hard_swish};
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
        CAPTURE(t->name);
        const std::vector<float> one = run(*t, p, false, in, true, true, true, 1, nullptr);
        CHECK(run(*t, p, false, in, true, true, true, 2, &ex2) == one);
        CHECK(run(*t, p, false, in, true, true, true, 3, &ex3) == one);
        CHECK(run(*t, p, false, in, true, true, true, 5, &ex2) == one);
        CHECK(run(*t, p, false, in, true, true, false, 1, &ex3) == run(*t, p, false, in, true, true, false, 1, nullptr));
        const std::vector<float> pooled = run(*t, base, true, in, false, false, true, 1, nullptr);
        CHECK(run(*t, base, true, in, false, false, true, 3, &ex3) == pooled);
    }
}
