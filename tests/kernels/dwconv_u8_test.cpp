// SPDX-License-Identifier: Apache-2.0
// The INT8 depthwise kernel (kernels/dwconv_u8.hpp) of every kernel table this CPU runs against a
// plain integer loop, bit for bit: strides 1 to 3, dilation, asymmetric padding, rows narrower and
// wider than a vector, 1-D; uint8 and int8 (flipped) inputs; each output (8-bit with its clamp,
// int32, float with the residual and the clamp); the offset as the sums' start (small offsets)
// and added after (offsets past 2^24); and the same bytes for any number of work slots and threads.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <ember/ember.hpp>

#include "support/kernel_check.hpp"

namespace {

using ember::kernels::dwconv_f32_problem;
using ember::kernels::dwconv_u8_problem;
using ember::kernels::qgemm_epilogue;
using ember::test::aligned_floats;
using output = qgemm_epilogue::output;

using ember::test::plane_case;
using ember::test::plane_geometry;

const plane_case cases[] = {
    {3, 3, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    // MobileNet 14x14
    {4, 4, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},      // 7x7: rows narrower than a vector
    {2, 2, 112, 112, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1},  // stride 2, bottom/right padding
    {3, 3, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},    // stride 2
    {3, 3, 15, 17, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1},    // 5x5 stride 2
    {2, 2, 33, 35, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},    // dilation 2
    {1, 1, 10, 31, 2, 4, 3, 2, 1, 0, 2, 3, 1, 3},    // stride 3 x 2, dilation 1 x 3
    {2, 2, 3, 3, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1},      // kernel wider than the input
    {2, 2, 1, 40, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1},     // 1-D
    {2, 2, 9, 9, 8, 8, 1, 1, 3, 3, 4, 4, 1, 1},      // 64 taps, the limit
    {3, 3, 5, 3, 5, 1, 1, 1, 0, 0, 3, 0, 1, 1},      // rows of 3: a vector runs over several padding rows
    {3, 3, 9, 4, 3, 3, 2, 2, 0, 1, 4, 1, 1, 1},      // the same at stride 2
};

struct operands {
    std::vector<std::uint8_t> x;
    std::vector<float> taps, scale, res;
    std::vector<std::int32_t> offset;
};

operands make_operands(const dwconv_f32_problem& p, std::uint32_t seed, bool large_offsets) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255), weight(-128, 127), small(-40000, 40000);
    operands o;
    for (std::int64_t i = 0; i < p.planes * p.in_h * p.in_w; ++i) o.x.push_back(static_cast<std::uint8_t>(byte(rng)));
    for (std::int64_t i = 0; i < p.channels * p.kh * p.kw; ++i) o.taps.push_back(static_cast<float>(weight(rng)));
    std::uniform_real_distribution<float> scale(0.0005f, 0.004f);
    for (std::int64_t c = 0; c < p.channels; ++c) {
        // large: past 2^24, either sign; the scale then keeps some outputs inside the 8-bit range
        o.offset.push_back(large_offsets ? (c % 2 ? -1 : 1) * ((1 << 24) + small(rng) * 10) : small(rng));
        o.scale.push_back(large_offsets ? 1.0f / static_cast<float>(1 << 17) : scale(rng));
    }
    o.res = ember::test::random_floats(static_cast<std::size_t>(p.planes * p.out_h * p.out_w), seed + 1, -20.0f, 20.0f);
    return o;
}

struct epilogue_case {
    output out;
    std::int32_t zero_point, lo, hi;
    float flo, fhi;
    bool residual;
};

// The oracle: exact integer sums (padding taps read the zero point), then the epilogue as
// qgemm_epilogue defines it: 8-bit nearbyint(float(sum + offset) * scale) + zero point, clamped;
// int32 sum + offset; float float(sum + offset) * scale (+ residual), clamped.
std::vector<std::uint8_t> reference(const dwconv_f32_problem& p, const operands& in, std::uint8_t flip, std::uint8_t x_zp, const epilogue_case& e) {
    const std::int64_t n = p.planes * p.out_h * p.out_w;
    const std::size_t width = e.out == output::int32 || e.out == output::float32 ? 4 : 1;
    std::vector<std::uint8_t> y(static_cast<std::size_t>(n) * width);
    for (std::int64_t i = 0; i < p.planes; ++i) {
        const std::int64_t c = i % p.channels;
        for (std::int64_t oh = 0; oh < p.out_h; ++oh)
            for (std::int64_t ow = 0; ow < p.out_w; ++ow) {
                std::int64_t acc = 0;
                for (std::int64_t r = 0; r < p.kh; ++r)
                    for (std::int64_t q = 0; q < p.kw; ++q) {
                        const std::int64_t ih = oh * p.stride_h - p.pad_h + r * p.dil_h, iw = ow * p.stride_w - p.pad_w + q * p.dil_w;
                        const bool inside = ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w;
                        const std::int64_t v = inside ? (in.x[static_cast<std::size_t>((i * p.in_h + ih) * p.in_w + iw)] ^ flip) : x_zp;
                        acc += v * static_cast<std::int64_t>(in.taps[static_cast<std::size_t>((c * p.kh + r) * p.kw + q)]);
                    }
                const std::int64_t o = (i * p.out_h + oh) * p.out_w + ow;
                const auto total = static_cast<std::int32_t>(acc + in.offset[static_cast<std::size_t>(c)]);
                const float real = static_cast<float>(total) * in.scale[static_cast<std::size_t>(c)];
                switch (e.out) {
                case output::uint8:
                case output::int8: {
                    std::int32_t q = static_cast<std::int32_t>(std::nearbyint(real)) + e.zero_point;
                    q = q < e.lo ? e.lo : (q > e.hi ? e.hi : q);
                    y[static_cast<std::size_t>(o)] = static_cast<std::uint8_t>(q);
                    break;
                }
                case output::int32: std::memcpy(&y[static_cast<std::size_t>(o) * 4], &total, 4); break;
                case output::float32: {
                    float v = real + (e.residual ? in.res[static_cast<std::size_t>(o)] : 0.0f);
                    v = v < e.flo ? e.flo : (v > e.fhi ? e.fhi : v);
                    std::memcpy(&y[static_cast<std::size_t>(o) * 4], &v, 4);
                    break;
                }
                }
            }
    }
    return y;
}

std::vector<std::uint8_t> run(const ember::simd::kernel_table& t, const dwconv_f32_problem& geo, const operands& in, std::uint8_t flip, std::uint8_t x_zp,
                              const epilogue_case& e, bool offset_in_sums, std::int64_t slots, const ember::executor* ex) {
    dwconv_u8_problem p;
    p.geo = geo;
    p.geo.w = in.taps.data();
    p.x = in.x.data();
    p.flip = flip;
    p.x_zero_point = x_zp;
    p.offset_in_sums = offset_in_sums;
    p.post.offset = in.offset.data();
    p.post.scale = in.scale.data();
    p.post.out = e.out;
    p.post.zero_point = e.zero_point;
    p.post.lo = e.lo;
    p.post.hi = e.hi;
    p.post.flo = e.flo;
    p.post.fhi = e.fhi;
    p.post.residual = e.residual ? in.res.data() : nullptr;
    p.post.rs = geo.out_h * geo.out_w;
    const std::size_t width = e.out == output::int32 || e.out == output::float32 ? 4 : 1;
    std::vector<std::uint8_t> y(static_cast<std::size_t>(geo.planes * geo.out_h * geo.out_w) * width, 0xA5);
    p.post.c = y.data();
    aligned_floats ws(static_cast<std::size_t>(ember::kernels::dwconv_u8_workspace_floats(geo) * slots));
    REQUIRE(!ws.empty());
    t.dwconv_u8(p, ws.data(), slots, ex);
    return y;
}

constexpr float inf = std::numeric_limits<float>::infinity();
const epilogue_case epilogues[] = {
    {output::uint8, 100, 0, 255, 0, 0, false},
    {output::uint8, 128, 128, 200, 0, 0, false},  // Relu (lo = zero point) and a Clip's upper bound
    {output::int8, -3, -128, 127, 0, 0, false},
    {output::int32, 0, 0, 0, 0, 0, false},
    {output::float32, 0, 0, 0, -inf, inf, false},
    {output::float32, 0, 0, 0, 0.0f, 6.0f, true},  // residual, then the clamp
};

} // namespace

TEST_CASE("dwconv_u8: every table gives the integer reference's bits, for each output and input type") {
    std::uint32_t seed = 1;
    for (const plane_case& pc : cases) {
        const dwconv_f32_problem geo = plane_geometry(pc);
        REQUIRE(ember::kernels::dwconv_u8_workspace_floats(geo) > 0);
        for (bool large : {false, true}) {
            const operands in = make_operands(geo, seed, large);
            for (const std::uint8_t flip : {std::uint8_t{0}, std::uint8_t{0x80}}) {
                const std::uint8_t x_zp = flip ? 125 : 17;
                for (const epilogue_case& e : epilogues) {
                    const std::vector<std::uint8_t> expected = reference(geo, in, flip, x_zp, e);
                    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
                        CAPTURE(t->name);
                        CAPTURE(seed);
                        CAPTURE(large);
                        CAPTURE(static_cast<int>(flip));
                        CAPTURE(static_cast<int>(e.out));
                        CHECK(run(*t, geo, in, flip, x_zp, e, false, 1, nullptr) == expected);
                        if (!large) CHECK(run(*t, geo, in, flip, x_zp, e, true, 1, nullptr) == expected);
                    }
                }
            }
        }
        ++seed;
    }
}

TEST_CASE("dwconv_u8: the same bytes for any number of work slots and threads") {
    ember::thread_pool pool2(2), pool3(3);
    const ember::executor ex2 = pool2.as_executor(), ex3 = pool3.as_executor();
    const dwconv_f32_problem geo = plane_geometry({37, 37, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1});
    const operands in = make_operands(geo, 9, false);
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
        CAPTURE(t->name);
        const std::vector<std::uint8_t> one = run(*t, geo, in, 0, 7, epilogues[0], true, 1, nullptr);
        CHECK(run(*t, geo, in, 0, 7, epilogues[0], true, 2, &ex2) == one);
        CHECK(run(*t, geo, in, 0, 7, epilogues[0], true, 3, &ex3) == one);
        CHECK(run(*t, geo, in, 0, 7, epilogues[0], true, 5, &ex2) == one);
    }
}
