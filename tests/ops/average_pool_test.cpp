// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <ember/ops/average_pool.hpp>

#include "support/check.hpp"

using ember::test::iota;

using ember::attribute;
using ember::shape;
using ember::status;
using ints = std::vector<std::int64_t>;

namespace {


std::vector<attribute> with_kernel(ints kernel, std::vector<attribute> rest = {}) {
    rest.push_back(attribute::of("kernel_shape", std::move(kernel)));
    return rest;
}

ember::tensor pool(const ember::tensor& x, std::vector<attribute> attrs) {
    auto r = ember::test::run_node_both_ways("AveragePool", {x}, std::move(attrs));
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    return std::move(r.outputs[0]);
}

// 2-D average pooling written the slow way, independently of ops::average_pool: the plane is
// copied into a padded buffer with a mask of which cells are real, then each floor-mode window
// sums its cells and counts the real ones (or all of them, with count_include_pad).
std::vector<float> naive_average_pool2d(const ember::tensor& x, ints k, ints s, ints d, ints pads, bool include_pad, shape& out) {
    const shape& xd = x.dims();
    const std::int64_t planes = xd[0] * xd[1], H = xd[2], W = xd[3];
    const std::int64_t PH = H + pads[0] + pads[2], PW = W + pads[1] + pads[3];
    const std::int64_t OH = (PH - d[0] * (k[0] - 1) - 1) / s[0] + 1, OW = (PW - d[1] * (k[1] - 1) - 1) / s[1] + 1;
    out = shape{xd[0], xd[1], OH, OW};
    std::vector<double> padded(static_cast<std::size_t>(planes * PH * PW), 0.0);
    std::vector<int> real(padded.size(), 0);
    const float* xv = x.data<float>();
    for (std::int64_t p = 0; p < planes; ++p)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t w = 0; w < W; ++w) {
                const auto at = static_cast<std::size_t>((p * PH + h + pads[0]) * PW + w + pads[1]);
                padded[at] = xv[(p * H + h) * W + w];
                real[at] = 1;
            }
    std::vector<float> y(static_cast<std::size_t>(planes * OH * OW));
    for (std::int64_t p = 0; p < planes; ++p)
        for (std::int64_t oh = 0; oh < OH; ++oh)
            for (std::int64_t ow = 0; ow < OW; ++ow) {
                double sum = 0.0;
                int count = 0;
                for (std::int64_t i = 0; i < k[0]; ++i)
                    for (std::int64_t j = 0; j < k[1]; ++j) {
                        const auto at = static_cast<std::size_t>((p * PH + oh * s[0] + i * d[0]) * PW + ow * s[1] + j * d[1]);
                        sum += padded[at];
                        count += include_pad ? 1 : real[at];
                    }
                y[static_cast<std::size_t>((p * OH + oh) * OW + ow)] = static_cast<float>(sum / count);
            }
    return y;
}

} // namespace

TEST_CASE("average_pool: 2x2 windows over a 3x3 plane") {
    const ember::tensor y = pool(iota({1, 1, 3, 3}), with_kernel({2, 2}));
    CHECK(y.dims() == shape{1, 1, 2, 2});
    ember::test::check_close(y, {3, 4, 6, 7});
}

TEST_CASE("average_pool: count_include_pad 0 divides by the cells inside the plane, 1 by the whole window") {
    const ember::tensor x = iota({1, 1, 3, 3});
    const ember::tensor excl = pool(x, with_kernel({3, 3}, {attribute::of("pads", ints{1, 1, 1, 1})}));
    CHECK(excl.dims() == shape{1, 1, 3, 3});
    ember::test::check_close(excl, {12.f / 4, 21.f / 6, 16.f / 4, 27.f / 6, 45.f / 9, 33.f / 6, 24.f / 4, 39.f / 6, 28.f / 4});
    const ember::tensor incl = pool(x, with_kernel({3, 3}, {attribute::of("pads", ints{1, 1, 1, 1}), attribute::of("count_include_pad", 1)}));
    ember::test::check_close(incl, {12.f / 9, 21.f / 9, 16.f / 9, 27.f / 9, 45.f / 9, 33.f / 9, 24.f / 9, 39.f / 9, 28.f / 9});
}

TEST_CASE("average_pool: with ceil_mode the last window counts up to the end padding only") {
    // in 4, kernel 3, stride 2, pads 1 + 1: windows start at -1, 1 and 3; the last one covers
    // x[3], one end pad, and one position past the padding that never counts.
    const auto x = ember::test::make_f32({1, 1, 4}, {1, 2, 3, 4});
    const std::vector<attribute> base{attribute::of("pads", ints{1, 1}), attribute::of("strides", ints{2}), attribute::of("ceil_mode", 1)};
    const ember::tensor excl = pool(x, with_kernel({3}, base));
    CHECK(excl.dims() == shape{1, 1, 3});
    ember::test::check_close(excl, {3.f / 2, 3, 4});
    std::vector<attribute> with_pad = base;
    with_pad.push_back(attribute::of("count_include_pad", 1));
    const ember::tensor incl = pool(x, with_kernel({3}, with_pad));
    ember::test::check_close(incl, {3.f / 3, 3, 4.f / 2});

    const ember::tensor floor = pool(x, with_kernel({3}, {attribute::of("pads", ints{1, 1}), attribute::of("strides", ints{2})}));
    CHECK(floor.dims() == shape{1, 1, 2});
    ember::test::check_close(floor, {3.f / 2, 3});
}

TEST_CASE("average_pool: strides, dilation and auto_pad") {
    const ember::tensor x = iota({1, 1, 4, 4});
    const ember::tensor s = pool(x, with_kernel({2, 2}, {attribute::of("strides", ints{2, 2})}));
    ember::test::check_close(s, {3.5f, 5.5f, 11.5f, 13.5f});
    const ember::tensor d = pool(x, with_kernel({2, 2}, {attribute::of("dilations", ints{2, 2})}));
    CHECK(d.dims() == shape{1, 1, 2, 2});
    ember::test::check_close(d, {6, 7, 10, 11});

    const ember::tensor x3 = iota({1, 1, 3, 3});
    const ember::tensor upper = pool(x3, with_kernel({2, 2}, {attribute::of("auto_pad", "SAME_UPPER")}));
    CHECK(upper.dims() == shape{1, 1, 3, 3});
    ember::test::check_close(upper, {3, 4, 4.5f, 6, 7, 7.5f, 7.5f, 8.5f, 9});
    const ember::tensor lower = pool(x3, with_kernel({2, 2}, {attribute::of("auto_pad", "SAME_LOWER"), attribute::of("count_include_pad", 1)}));
    ember::test::check_close(lower, {1.f / 4, 3.f / 4, 5.f / 4, 5.f / 4, 3, 4, 11.f / 4, 6, 7});
    const ember::tensor valid = pool(x3, with_kernel({2, 2}, {attribute::of("auto_pad", "VALID")}));
    CHECK(valid.dims() == shape{1, 1, 2, 2});
}

TEST_CASE("average_pool: 1-D and 3-D") {
    const ember::tensor y1 = pool(ember::test::make_f32({1, 1, 5}, {1, 2, 3, 4, 5}), with_kernel({2}, {attribute::of("strides", ints{2})}));
    CHECK(y1.dims() == shape{1, 1, 2});
    ember::test::check_close(y1, {1.5f, 3.5f});
    const ember::tensor y3 = pool(iota({1, 1, 2, 2, 2}), with_kernel({2, 2, 2}));
    CHECK(y3.dims() == shape{1, 1, 1, 1, 1});
    ember::test::check_close(y3, {4.5f});
}

TEST_CASE("average_pool: random shapes agree with a naive pool over a padded copy") {
    struct pool_case {
        ints x, k, s, d, pads;
        bool include_pad;
    };
    const pool_case cases[] = {
        {{2, 3, 7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},
        {{1, 4, 9, 8}, {3, 2}, {2, 3}, {1, 1}, {2, 0, 1, 1}, false},
        {{1, 4, 9, 8}, {3, 2}, {2, 3}, {1, 1}, {2, 0, 1, 1}, true},
        {{3, 2, 10, 11}, {2, 3}, {1, 2}, {2, 2}, {1, 2, 0, 1}, false},
        {{1, 1, 6, 6}, {4, 4}, {2, 2}, {1, 1}, {3, 3, 3, 3}, true},
    };
    std::uint32_t seed = 21;
    for (const pool_case& c : cases) {
        CAPTURE(seed);
        const ember::tensor x = ember::test::random_f32(shape(ember::span<const std::int64_t>(c.x.data(), c.x.size())), seed++);
        shape want;
        const std::vector<float> expected = naive_average_pool2d(x, c.k, c.s, c.d, c.pads, c.include_pad, want);
        const ember::tensor y = pool(x, with_kernel(c.k, {attribute::of("strides", c.s), attribute::of("dilations", c.d), attribute::of("pads", c.pads),
                                                          attribute::of("count_include_pad", c.include_pad ? 1 : 0)}));
        REQUIRE(y.dims() == want);
        ember::test::check_close(y, expected, 1e-5f, 1e-5f);
    }
}

TEST_CASE("average_pool: kernel_shape is required and the input needs a spatial dimension") {
    auto missing = ember::test::run_node("AveragePool", {iota({1, 1, 3, 3})});
    CHECK_FALSE(missing.compiled);
    CHECK(missing.error.code == status::invalid_model);
    CHECK(missing.error.message.find("'kernel_shape'") != std::string::npos);

    auto rank = ember::test::run_node("AveragePool", {iota({1, 1, 3, 3})}, with_kernel({2, 2, 2}));
    CHECK_FALSE(rank.compiled);
    CHECK(rank.error.code == status::invalid_model);
    CHECK(rank.error.message.find("expected 2") != std::string::npos);

    auto flat = ember::test::run_node("AveragePool", {iota({2, 3})}, with_kernel({2}));
    CHECK_FALSE(flat.compiled);
    CHECK(flat.error.code == status::shape_mismatch);
    CHECK(flat.error.message.find("[2, 3]") != std::string::npos);

    auto pads = ember::test::run_node("AveragePool", {iota({1, 1, 3, 3})}, with_kernel({2, 2}, {attribute::of("pads", ints{-1, 0, 0, 0})}));
    CHECK_FALSE(pads.compiled);
    CHECK(pads.error.code == status::invalid_model);
}
