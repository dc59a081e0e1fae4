// SPDX-License-Identifier: Apache-2.0
// The plane kernels (depthwise convolution, kernels/dwconv_f32.hpp, and max pooling,
// kernels/maxpool_f32.hpp) of every kernel table this CPU runs against a plain double-precision
// loop: the workspace paths (padded, masked, separable) and the row path (no workspace), strides
// 1 to 3, dilation, asymmetric and ceil-mode padding, rows narrower than a vector, kernels wider
// than the input; bias, residual and activation in the epilogue; and the same bits for any number
// of work slots and threads.
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

// Runs table t's kernel; padded: with the workspace (the padded or separable path where it applies).
std::vector<float> run(const ember::simd::kernel_table& t, dwconv_f32_problem p, bool max, const operands& in, bool bias, bool res,
                       bool padded, std::int64_t slots, const ember::executor* ex) {
    p.x = in.x.data();
    p.w = in.w.data();
    if (bias) p.bias = in.bias.data();
    if (res) p.residual = in.res.data();
    std::vector<float> y(static_cast<std::size_t>(p.planes * p.out_h * p.out_w), -7.0f);
    p.y = y.data();
    // max pooling's workspace one float off the vector alignment: the arena aligns it to 16 bytes
    // only, and the kernel promises to need no more than a float's
    const std::int64_t slot_floats = max ? ember::kernels::maxpool_workspace_floats(p) : ember::kernels::dwconv_workspace_floats(p);
    const std::int64_t skew = max && slot_floats > 0 ? 1 : 0;
    // stale NaNs, as an arena's workspace holds whatever a step before left: every padding float
    // the kernel reads must be written by it
    aligned_floats ws(static_cast<std::size_t>(slot_floats * slots + skew), std::numeric_limits<float>::quiet_NaN());
    float* workspace = padded && !ws.empty() ? ws.data() + skew : nullptr;
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
    // the masked path (stride 1, output rows as wide as the input's, up to 28 x 28 outputs)
    {74, 37, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},      // batch 2 x 37 channels (no multiple of a vector), 7x7
    {40, 20, 14, 14, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1},    // EfficientNet's 5x5 over 14x14
    {21, 7, 7, 7, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1},       // 5x5 over 7x7: taps two rows into the planes around
    {6, 3, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},        // 16 outputs: one vector of the widest arch
    {5, 5, 9, 9, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},        // dilation 2
    {3, 3, 8, 8, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1},        // no padding in height: fewer output rows than input rows
    {3, 3, 11, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},      // 143 outputs: the last vector overlaps the one before
    {4, 4, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},      // 28x28 (masked with mask registers only)
    {3, 3, 5, 6, 2, 4, 1, 1, 0, 1, 0, 2, 1, 1},        // even window, asymmetric padding
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

// Max pooling: the geometries of the table above, then SqueezeNet's pools, stride 2 over odd and
// even widths, and every width from 1 to 40 (around the vector sizes: the last vector of a row
// overlaps the one before; a row narrower than a vector is stored whole over the next row, or
// through the workspace on a plane's last row) with 2- and 3-wide windows, strides 1 to 3 and
// ceil-mode end padding.
std::vector<plane_case> maxpool_cases() {
    std::vector<plane_case> all(std::begin(cases), std::end(cases));
    const plane_case more[] = {
        {3, 3, 111, 111, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1},  // SqueezeNet 1.1's first pool (3x3 s2 ceil_mode: 55 x 55 either way)
        {2, 2, 55, 55, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1},    // its second
        {2, 2, 27, 27, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1},    // its third
        {2, 2, 112, 112, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1},  // ceil_mode over an even width: the last window runs past the input
        {2, 2, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},  // ResNet's pool
        {2, 2, 56, 57, 2, 2, 2, 2, 0, 0, 0, 1, 1, 1},    // 2x2 stride 2, odd width with ceil padding
        {2, 2, 20, 33, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1},    // 2x2 stride 2, odd width, floor
        {2, 2, 9, 9, 9, 9, 1, 1, 4, 4, 4, 4, 1, 1},      // 9 rows: the vertical pass in three passes of up to 4 rows
        {2, 2, 30, 30, 5, 4, 3, 3, 2, 1, 2, 3, 3, 2},    // 5 rows 3 apart, 4 columns 2 apart, stride 3
        {1, 1, 40, 40, 3, 3, 2, 2, 0, 0, 0, 0, 5, 5},    // dilation 5, stride 2
        {1, 1, 5, 5, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1},      // the first rows' and columns' windows wholly in the padding: -inf
        {2, 2, 1, 200, 1, 7, 1, 4, 0, 3, 0, 3, 1, 1},    // 1-D, stride 4
    };
    all.insert(all.end(), std::begin(more), std::end(more));
    for (std::int64_t w = 1; w <= 40; ++w)
        for (std::int64_t k = 2; k <= 3; ++k)
            for (std::int64_t s = 1; s <= 3; ++s)
                for (std::int64_t pad = 0; pad <= 1; ++pad) {
                    const std::int64_t ceil_pad = pad + s - 1;  // ceil_mode's extra end padding, at most
                    if (w + pad + ceil_pad < k) continue;
                    all.push_back({2, 2, 3, w, 3, k, 2, s, 1, pad, 1, ceil_pad, 1, 1});
                }
    return all;
}

TEST_CASE("maxpool_f32: both paths of every table give the reference's bits, at every width") {
    std::uint32_t seed = 100;
    for (const plane_case& pc : maxpool_cases()) {
        const dwconv_f32_problem p = plane_geometry(pc);
        REQUIRE(ember::kernels::maxpool_workspace_floats(p) > 0);
        const operands in = make_operands(p, seed);
        const std::vector<float> expected = reference(p, true, in.x, in.w, nullptr, nullptr, {});
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
            for (bool padded : {true, false}) {
                CAPTURE(t->name);
                CAPTURE(seed);
                CAPTURE(pc.in_w);
                CAPTURE(pc.kw);
                CAPTURE(pc.sw);
                CAPTURE(padded);
                CHECK(run(*t, p, true, in, false, false, padded, 1, nullptr) == expected);
            }
        ++seed;
    }
}

TEST_CASE("maxpool_f32: a window wholly in the padding gives -inf; ceil_mode windows past the input keep what is inside") {
    // 5 x 5 input, 2 x 2 windows with 3 rows and columns of padding on each side: output (0, *) and
    // (*, 0) see no input; then windows past the input's end that no padding covers (ceil_mode's
    // geometry without its end padding: 111 columns, 3-wide windows at stride 2, 56 outputs).
    dwconv_f32_problem p = plane_geometry({1, 1, 5, 5, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1});
    const operands in = make_operands(p, 7);
    dwconv_f32_problem past = plane_geometry({2, 2, 111, 111, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1});
    past.out_h = past.out_w = 56;
    const operands in_past = make_operands(past, 8);
    const std::vector<float> expected_past = reference(past, true, in_past.x, in_past.w, nullptr, nullptr, {});
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
        CAPTURE(t->name);
        const std::vector<float> y = run(*t, p, true, in, false, false, true, 1, nullptr);
        for (std::int64_t i = 0; i < p.out_w; ++i) {
            CHECK(y[static_cast<std::size_t>(i)] == -std::numeric_limits<float>::infinity());
            CHECK(y[static_cast<std::size_t>(i * p.out_w)] == -std::numeric_limits<float>::infinity());
        }
        CHECK(y == reference(p, true, in.x, in.w, nullptr, nullptr, {}));
        CHECK(run(*t, past, true, in_past, false, false, true, 1, nullptr) == expected_past);
    }
}

TEST_CASE("maxpool_f32: the separable path needs a workspace unless a row is too wide for it") {
    CHECK(ember::kernels::maxpool_workspace_floats(plane_geometry(cases[11])) > 0);  // 81 taps: no limit on the window
    CHECK(ember::kernels::maxpool_workspace_floats(plane_geometry({1, 1, 2000, 2000, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1})) > 0);
    CHECK(ember::kernels::maxpool_workspace_floats(plane_geometry({1, 1, 1, 1 << 20, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1})) == 0);  // 4 MiB rows
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

TEST_CASE("dwconv_f32: the masked path gives the same bits for any number of work slots and threads") {
    // batch 3 x 37 channels of 7x7 (3x3) and 14x14 (5x5): uneven shares, and on the archs without
    // mask registers the first and last planes on the padded path, in the first and last slots
    ember::thread_pool pool2(2), pool3(3);
    const ember::executor ex2 = pool2.as_executor(), ex3 = pool3.as_executor();
    for (const plane_case& pc : {plane_case{111, 37, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, plane_case{111, 37, 14, 14, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1}}) {
        dwconv_f32_problem p = plane_geometry(pc);
        const operands in = make_operands(p, 13);
        p.act = {activation::clip, 0.0f, 6.0f};
        for (bool res : {false, true}) {
            const std::vector<float> expected = reference(p, false, in.x, in.w, in.bias.data(), res ? in.res.data() : nullptr, p.act);
            for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
                CAPTURE(t->name);
                CAPTURE(pc.in_w);
                CAPTURE(res);
                const std::vector<float> one = run(*t, p, false, in, true, res, true, 1, nullptr);
                const float tol = 2e-6f * static_cast<float>(p.kh * p.kw);
                ember::test::check_close(one, expected, tol, tol);
                CHECK(run(*t, p, false, in, true, res, true, 2, &ex2) == one);
                CHECK(run(*t, p, false, in, true, res, true, 3, &ex3) == one);
                CHECK(run(*t, p, false, in, true, res, true, 5, &ex2) == one);
                CHECK(run(*t, p, false, in, true, res, true, 7, &ex3) == one);
                CHECK(run(*t, p, false, in, true, res, true, 200, &ex3) == one);  // more slots than planes
            }
        }
    }
}

TEST_CASE("maxpool_f32: the same bits for any number of work slots and threads") {
    ember::thread_pool pool2(2), pool3(3);
    const ember::executor ex2 = pool2.as_executor(), ex3 = pool3.as_executor();
    // SqueezeNet's first pool over 37 planes (uneven shares), and a 2x2 one with ceil padding
    for (const plane_case& pc : {plane_case{37, 37, 111, 111, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1}, plane_case{37, 37, 28, 27, 2, 2, 2, 2, 0, 0, 0, 1, 1, 1}}) {
        const dwconv_f32_problem p = plane_geometry(pc);
        const operands in = make_operands(p, 11);
        const std::vector<float> expected = reference(p, true, in.x, in.w, nullptr, nullptr, {});
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
            CAPTURE(t->name);
            CAPTURE(pc.in_w);
            const std::vector<float> one = run(*t, p, true, in, false, false, true, 1, nullptr);
            CHECK(one == expected);
            CHECK(run(*t, p, true, in, false, false, true, 2, &ex2) == one);
            CHECK(run(*t, p, true, in, false, false, true, 3, &ex3) == one);
            CHECK(run(*t, p, true, in, false, false, true, 5, &ex2) == one);
            CHECK(run(*t, p, true, in, false, false, true, 64, &ex3) == one);  // more slots than planes
            CHECK(run(*t, p, true, in, false, false, false, 1, &ex3) == one);  // the row path, on the pool
        }
    }
}
