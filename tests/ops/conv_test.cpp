// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <ember/ops/conv.hpp>

#include "support/check.hpp"

using ember::attribute;
using ember::shape;
using ember::status;
using ints = std::vector<std::int64_t>;

namespace {

// X = 1..9 as one 3x3 plane, the input of most hand-worked cases below.
ember::tensor x3x3() { return ember::test::make_f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }
ember::tensor ones(const shape& dims) { return ember::test::make_f32(dims, std::vector<float>(static_cast<std::size_t>(dims.elements()), 1.0f)); }

// Runs Conv both ways (runtime inputs and folded constants) and returns output 0.
ember::tensor conv_both_ways(const std::vector<ember::tensor>& inputs, std::vector<attribute> attrs = {}) {
    auto r = ember::test::run_node_both_ways("Conv", inputs, std::move(attrs));
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    return std::move(r.outputs[0]);
}

ember::test::node_run conv_fails(const std::vector<ember::tensor>& inputs, std::vector<attribute> attrs = {}) {
    auto r = ember::test::run_node("Conv", inputs, std::move(attrs));
    CHECK_FALSE(r.compiled);
    CHECK(r.error.message.find("(Conv)") != std::string::npos);
    return r;
}

// Conv written the slow way, independently of ops::conv: always 3 spatial dims (callers add unit
// dims), the input first copied into a zero-padded buffer, then plain loops with no bounds checks
// and a double accumulator. Explicit pads [b0, b1, b2, e0, e1, e2].
struct naive_conv_params {
    ints stride{1, 1, 1}, dilation{1, 1, 1}, pads{0, 0, 0, 0, 0, 0};
    std::int64_t group = 1;
};
std::vector<float> naive_conv3d(const std::vector<float>& x, const ints& xd, const std::vector<float>& w, const ints& wd,
                                const std::vector<float>* b, const naive_conv_params& p, ints& yd) {
    const std::int64_t N = xd[0], C = xd[1], M = wd[0], Cg = wd[1], Mg = M / p.group;
    REQUIRE(C == Cg * p.group);
    std::int64_t P[3], O[3];
    for (int d = 0; d < 3; ++d) {
        P[d] = xd[2 + d] + p.pads[d] + p.pads[3 + d];
        O[d] = (P[d] - p.dilation[d] * (wd[2 + d] - 1) - 1) / p.stride[d] + 1;
    }
    std::vector<double> padded(static_cast<std::size_t>(N * C * P[0] * P[1] * P[2]), 0.0);
    for (std::int64_t nc = 0; nc < N * C; ++nc)
        for (std::int64_t a = 0; a < xd[2]; ++a)
            for (std::int64_t bb = 0; bb < xd[3]; ++bb)
                for (std::int64_t c = 0; c < xd[4]; ++c)
                    padded[static_cast<std::size_t>(((nc * P[0] + a + p.pads[0]) * P[1] + bb + p.pads[1]) * P[2] + c + p.pads[2])] =
                        x[static_cast<std::size_t>(((nc * xd[2] + a) * xd[3] + bb) * xd[4] + c)];
    yd = {N, M, O[0], O[1], O[2]};
    std::vector<float> y(static_cast<std::size_t>(N * M * O[0] * O[1] * O[2]));
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t m = 0; m < M; ++m)
            for (std::int64_t a = 0; a < O[0]; ++a)
                for (std::int64_t bb = 0; bb < O[1]; ++bb)
                    for (std::int64_t c = 0; c < O[2]; ++c) {
                        double acc = b ? double((*b)[static_cast<std::size_t>(m)]) : 0.0;
                        for (std::int64_t ci = 0; ci < Cg; ++ci) {
                            const std::int64_t channel = (m / Mg) * Cg + ci;
                            for (std::int64_t k0 = 0; k0 < wd[2]; ++k0)
                                for (std::int64_t k1 = 0; k1 < wd[3]; ++k1)
                                    for (std::int64_t k2 = 0; k2 < wd[4]; ++k2) {
                                        const std::int64_t i0 = a * p.stride[0] + k0 * p.dilation[0];
                                        const std::int64_t i1 = bb * p.stride[1] + k1 * p.dilation[1];
                                        const std::int64_t i2 = c * p.stride[2] + k2 * p.dilation[2];
                                        acc += padded[static_cast<std::size_t>((((n * C + channel) * P[0] + i0) * P[1] + i1) * P[2] + i2)] *
                                               double(w[static_cast<std::size_t>((((m * Cg + ci) * wd[2] + k0) * wd[3] + k1) * wd[4] + k2)]);
                                    }
                        }
                        y[static_cast<std::size_t>((((n * M + m) * O[0] + a) * O[1] + bb) * O[2] + c)] = static_cast<float>(acc);
                    }
    return y;
}

struct random_case {
    ints x, w;  // shapes with S spatial dims
    ints strides, dilations, pads;  // ONNX layout for the S dims
    std::int64_t group = 1;
    bool bias = false;
};

void check_against_naive(const random_case& rc, std::uint32_t seed) {
    const std::size_t S = rc.x.size() - 2;
    const ember::tensor x = ember::test::random_f32(shape(ember::span<const std::int64_t>(rc.x.data(), rc.x.size())), seed);
    const ember::tensor w = ember::test::random_f32(shape(ember::span<const std::int64_t>(rc.w.data(), rc.w.size())), seed + 1);
    const ember::tensor b = rc.bias ? ember::test::random_f32({rc.w[0]}, seed + 2) : ember::tensor();

    // the same problem as 3 spatial dims, the missing ones leading and of size 1
    ints xd = rc.x, wd = rc.w;
    naive_conv_params p;
    p.group = rc.group;
    for (std::size_t k = S; k < 3; ++k) {
        xd.insert(xd.begin() + 2, 1);
        wd.insert(wd.begin() + 2, 1);
    }
    for (std::size_t i = 0; i < S; ++i) {
        const std::size_t d = 3 - S + i;
        if (!rc.strides.empty()) p.stride[d] = rc.strides[i];
        if (!rc.dilations.empty()) p.dilation[d] = rc.dilations[i];
        if (!rc.pads.empty()) {
            p.pads[d] = rc.pads[i];
            p.pads[3 + d] = rc.pads[S + i];
        }
    }
    const std::vector<float> bv = rc.bias ? ember::test::values_f32(b) : std::vector<float>();
    ints yd;
    const std::vector<float> expected =
        naive_conv3d(ember::test::values_f32(x), xd, ember::test::values_f32(w), wd, rc.bias ? &bv : nullptr, p, yd);

    std::vector<attribute> attrs{attribute::of("group", rc.group)};
    if (!rc.strides.empty()) attrs.push_back(attribute::of("strides", rc.strides));
    if (!rc.dilations.empty()) attrs.push_back(attribute::of("dilations", rc.dilations));
    if (!rc.pads.empty()) attrs.push_back(attribute::of("pads", rc.pads));
    std::vector<ember::tensor> inputs{x, w};
    if (rc.bias) inputs.push_back(b);
    const ember::tensor y = conv_both_ways(inputs, attrs);
    shape want{yd[0], yd[1]};
    for (std::size_t i = 0; i < S; ++i) want.push_back(yd[2 + (3 - S) + i]);
    REQUIRE(y.dims() == want);
    ember::test::check_close(y, expected, 1e-5f, 1e-5f);
}

} // namespace

TEST_CASE("conv: a 2x2 kernel over a 3x3 plane, worked by hand") {
    const auto w = ember::test::make_f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const ember::tensor y = conv_both_ways({x3x3(), w});
    CHECK(y.dims() == shape{1, 1, 2, 2});
    // y00 = 1*1 + 2*2 + 3*4 + 4*5, and so on
    ember::test::check_close(y, {37, 47, 67, 77});
}

TEST_CASE("conv: the bias is added to every output of its channel") {
    const auto w = ember::test::make_f32({2, 1, 2, 2}, {1, 2, 3, 4, 0, 0, 0, 1});
    const auto b = ember::test::make_f32({2}, {0.5f, -1.0f});
    const ember::tensor y = conv_both_ways({x3x3(), w, b});
    CHECK(y.dims() == shape{1, 2, 2, 2});
    ember::test::check_close(y, {37.5f, 47.5f, 67.5f, 77.5f, 4, 5, 7, 8});
}

TEST_CASE("conv: symmetric padding, and stride 2 over the same padding") {
    const ember::tensor y = conv_both_ways({x3x3(), ones({1, 1, 3, 3})}, {attribute::of("pads", ints{1, 1, 1, 1})});
    CHECK(y.dims() == shape{1, 1, 3, 3});
    // each output is the sum of its 3x3 neighbourhood inside the plane
    ember::test::check_close(y, {12, 21, 16, 27, 45, 33, 24, 39, 28});

    const ember::tensor s = conv_both_ways({x3x3(), ones({1, 1, 3, 3})}, {attribute::of("pads", ints{1, 1, 1, 1}), attribute::of("strides", ints{2, 2})});
    CHECK(s.dims() == shape{1, 1, 2, 2});
    ember::test::check_close(s, {12, 16, 24, 28});
}

TEST_CASE("conv: pads are [h_begin, w_begin, h_end, w_end]") {
    // one row of zeros above, one column of zeros on the right
    const ember::tensor y = conv_both_ways({x3x3(), ones({1, 1, 2, 2})}, {attribute::of("pads", ints{1, 0, 0, 1})});
    CHECK(y.dims() == shape{1, 1, 3, 3});
    ember::test::check_close(y, {3, 5, 3, 12, 16, 9, 24, 28, 15});
}

TEST_CASE("conv: dilation spreads the kernel over the plane") {
    const auto w = ember::test::make_f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const ember::tensor y = conv_both_ways({x3x3(), w}, {attribute::of("dilations", ints{2, 2})});
    CHECK(y.dims() == shape{1, 1, 1, 1});
    ember::test::check_close(y, {1 * 1 + 2 * 3 + 3 * 7 + 4 * 9});
}

TEST_CASE("conv: auto_pad SAME_UPPER puts the odd pad at the end, SAME_LOWER at the beginning, VALID pads nothing") {
    const auto w = ones({1, 1, 2, 2});
    const ember::tensor upper = conv_both_ways({x3x3(), w}, {attribute::of("auto_pad", "SAME_UPPER")});
    CHECK(upper.dims() == shape{1, 1, 3, 3});
    ember::test::check_close(upper, {12, 16, 9, 24, 28, 15, 15, 17, 9});

    const ember::tensor lower = conv_both_ways({x3x3(), w}, {attribute::of("auto_pad", "SAME_LOWER")});
    CHECK(lower.dims() == shape{1, 1, 3, 3});
    ember::test::check_close(lower, {1, 3, 5, 5, 12, 16, 11, 24, 28});

    const ember::tensor valid = conv_both_ways({x3x3(), w}, {attribute::of("auto_pad", "VALID")});
    CHECK(valid.dims() == shape{1, 1, 2, 2});
    ember::test::check_close(valid, {12, 16, 24, 28});
}

TEST_CASE("conv: SAME padding with stride 2 gives ceil(in / stride) outputs") {
    const auto w = ones({1, 1, 2, 2});
    const std::vector<attribute> stride2{attribute::of("strides", ints{2, 2})};
    std::vector<attribute> up = stride2, low = stride2;
    up.push_back(attribute::of("auto_pad", "SAME_UPPER"));
    low.push_back(attribute::of("auto_pad", "SAME_LOWER"));
    const ember::tensor u = conv_both_ways({x3x3(), w}, up);
    CHECK(u.dims() == shape{1, 1, 2, 2});
    ember::test::check_close(u, {12, 9, 15, 9});  // total pad 1, at the end
    const ember::tensor l = conv_both_ways({x3x3(), w}, low);
    CHECK(l.dims() == shape{1, 1, 2, 2});
    ember::test::check_close(l, {1, 5, 11, 28});  // total pad 1, at the beginning
}

TEST_CASE("conv: groups split the channels; depthwise with a channel multiplier") {
    // 2 groups of 1 channel, 2 outputs per group: outputs 0 and 1 see channel 0, 2 and 3 see 1
    const auto x = ember::test::make_f32({1, 2, 1, 2}, {1, 2, 10, 20});
    const auto w = ember::test::make_f32({4, 1, 1, 1}, {1, 2, 3, 4});
    const ember::tensor y = conv_both_ways({x, w}, {attribute::of("group", 2)});
    CHECK(y.dims() == shape{1, 4, 1, 2});
    ember::test::check_close(y, {1, 2, 2, 4, 30, 60, 40, 80});

    // 2 groups of 2 channels, one output each
    const auto x4 = ember::test::make_f32({1, 4, 1, 1}, {1, 2, 3, 4});
    const auto w2 = ember::test::make_f32({2, 2, 1, 1}, {1, 10, 100, 1000});
    const ember::tensor g = conv_both_ways({x4, w2}, {attribute::of("group", 2)});
    CHECK(g.dims() == shape{1, 2, 1, 1});
    ember::test::check_close(g, {1 + 20, 300 + 4000});
}

TEST_CASE("conv: 1-D with padding and stride") {
    const auto x = ember::test::make_f32({1, 1, 5}, {1, 2, 3, 4, 5});
    const auto w = ember::test::make_f32({1, 1, 3}, {1, 0, -1});
    const ember::tensor y = conv_both_ways({x, w}, {attribute::of("pads", ints{1, 1})});
    CHECK(y.dims() == shape{1, 1, 5});
    ember::test::check_close(y, {-2, -2, -2, -2, 4});  // x[i - 1] - x[i + 1]
    const ember::tensor s = conv_both_ways({x, w}, {attribute::of("pads", ints{1, 1}), attribute::of("strides", ints{2})});
    CHECK(s.dims() == shape{1, 1, 3});
    ember::test::check_close(s, {-2, -2, 4});
}

TEST_CASE("conv: 3-D, one padded depth") {
    std::vector<float> v(8);
    for (std::size_t i = 0; i < 8; ++i) v[i] = float(i + 1);
    const auto x = ember::test::make_f32({1, 1, 2, 2, 2}, v);
    const ember::tensor y = conv_both_ways({x, ones({1, 1, 2, 2, 2})}, {attribute::of("pads", ints{1, 0, 0, 1, 0, 0})});
    CHECK(y.dims() == shape{1, 1, 3, 1, 1});
    ember::test::check_close(y, {1 + 2 + 3 + 4, 36, 5 + 6 + 7 + 8});
}

TEST_CASE("conv: kernel_shape equal to W's is accepted") {
    const auto w = ember::test::make_f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const ember::tensor y = conv_both_ways({x3x3(), w}, {attribute::of("kernel_shape", ints{2, 2})});
    ember::test::check_close(y, {37, 47, 67, 77});
}

TEST_CASE("conv: random shapes agree with a naive convolution over a padded copy") {
    const random_case cases[] = {
        {{1, 3, 7, 6}, {4, 3, 3, 3}, {}, {}, {1, 1, 1, 1}, 1, true},
        {{2, 4, 9, 8}, {6, 2, 3, 2}, {2, 1}, {1, 2}, {0, 1, 2, 0}, 2, true},
        {{1, 6, 8, 8}, {6, 1, 3, 3}, {2, 2}, {}, {1, 1, 1, 1}, 6, false},      // depthwise
        {{1, 4, 10, 5}, {8, 1, 5, 1}, {3, 1}, {2, 1}, {3, 0, 1, 0}, 4, true},  // depthwise x2
        {{3, 2, 17}, {5, 2, 4}, {2}, {3}, {2, 1}, 1, true},                    // 1-D
        {{1, 6, 12}, {9, 2, 3}, {1}, {1}, {0, 0}, 3, false},                   // 1-D grouped
        {{1, 2, 5, 4, 6}, {3, 2, 2, 3, 2}, {1, 2, 2}, {2, 1, 1}, {1, 0, 1, 0, 1, 1}, 1, true},  // 3-D
        {{2, 16, 5, 5}, {8, 16, 1, 1}, {}, {}, {}, 1, true},                    // pointwise
    };
    std::uint32_t seed = 11;
    for (const random_case& rc : cases) {
        CAPTURE(seed);
        check_against_naive(rc, seed);
        seed += 10;
    }
}

TEST_CASE("conv: the result is the same with a thread pool") {
    const ember::tensor x = ember::test::random_f32({2, 3, 11, 9}, 3);
    const ember::tensor w = ember::test::random_f32({5, 3, 3, 3}, 4);
    const ember::tensor b = ember::test::random_f32({5}, 5);
    const std::vector<attribute> attrs{attribute::of("pads", ints{1, 1, 1, 1})};
    auto serial = ember::test::run_node("Conv", {x, w, b}, attrs);
    REQUIRE_MESSAGE(serial.compiled, serial.error.message);

    ember::thread_pool pool(4);
    const ember::executor ex = pool.as_executor();
    ember::session s(*serial.compiled, &ex);
    REQUIRE(s.state() == status::ok);
    REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
    REQUIRE(s.bind_input(1, w.bytes(), w.size_bytes()) == status::ok);
    REQUIRE(s.bind_input(2, b.bytes(), b.size_bytes()) == status::ok);
    auto y = ember::tensor::create(ember::dtype::float32, serial.outputs[0].dims());
    REQUIRE(y);
    REQUIRE(s.bind_output(0, y->bytes(), y->size_bytes()) == status::ok);
    REQUIRE(s.run() == status::ok);
    CHECK(std::memcmp(y->bytes(), serial.outputs[0].bytes(), y->size_bytes()) == 0);
}

TEST_CASE("conv: channels that do not match W and group are rejected, naming both shapes") {
    auto r = conv_fails({ember::test::random_f32({1, 3, 4, 4}, 1), ember::test::random_f32({2, 2, 3, 3}, 2)});
    CHECK(r.error.code == status::shape_mismatch);
    CHECK(r.error.message.find("[1, 3, 4, 4]") != std::string::npos);
    CHECK(r.error.message.find("[2, 2, 3, 3]") != std::string::npos);

    auto g = conv_fails({ember::test::random_f32({1, 4, 4, 4}, 1), ember::test::random_f32({3, 2, 3, 3}, 2)}, {attribute::of("group", 2)});
    CHECK(g.error.code == status::shape_mismatch);
    CHECK(g.error.message.find("multiple of group 2") != std::string::npos);

    auto z = conv_fails({ember::test::random_f32({1, 4, 4, 4}, 1), ember::test::random_f32({2, 2, 3, 3}, 2)}, {attribute::of("group", 0)});
    CHECK(z.error.code == status::invalid_model);
}

TEST_CASE("conv: wrong ranks are rejected") {
    auto w_rank = conv_fails({ember::test::random_f32({1, 1, 4, 4}, 1), ember::test::random_f32({1, 1, 3}, 2)});
    CHECK(w_rank.error.code == status::shape_mismatch);
    CHECK(w_rank.error.message.find("rank 4") != std::string::npos);

    auto x_rank = conv_fails({ember::test::random_f32({1, 4}, 1), ember::test::random_f32({1, 4}, 2)});
    CHECK(x_rank.error.code == status::shape_mismatch);

    auto four_d = conv_fails({ember::test::random_f32({1, 1, 2, 2, 2, 2}, 1), ember::test::random_f32({1, 1, 1, 1, 1, 1}, 2)});
    CHECK(four_d.error.code == status::unsupported_op);
    CHECK(four_d.error.message.find("4 spatial dimensions") != std::string::npos);
}

TEST_CASE("conv: a bias of the wrong size is rejected") {
    auto r = conv_fails({x3x3(), ones({2, 1, 2, 2}), ember::test::make_f32({3}, {1, 2, 3})});
    CHECK(r.error.code == status::shape_mismatch);
    CHECK(r.error.message.find("B must be [2]") != std::string::npos);
}

TEST_CASE("conv: bad window attributes are rejected with what was expected") {
    auto ks = conv_fails({x3x3(), ones({1, 1, 2, 2})}, {attribute::of("kernel_shape", ints{3, 3})});
    CHECK(ks.error.code == status::shape_mismatch);
    CHECK(ks.error.message.find("kernel_shape [3, 3]") != std::string::npos);

    auto pads = conv_fails({x3x3(), ones({1, 1, 2, 2})}, {attribute::of("pads", ints{1, 1})});
    CHECK(pads.error.code == status::invalid_model);
    CHECK(pads.error.message.find("expected 4") != std::string::npos);

    auto strides = conv_fails({x3x3(), ones({1, 1, 2, 2})}, {attribute::of("strides", ints{0, 1})});
    CHECK(strides.error.code == status::invalid_model);

    auto mode = conv_fails({x3x3(), ones({1, 1, 2, 2})}, {attribute::of("auto_pad", "SAME")});
    CHECK(mode.error.code == status::invalid_model);
    CHECK(mode.error.message.find("SAME_UPPER") != std::string::npos);

    auto both = conv_fails({x3x3(), ones({1, 1, 2, 2})}, {attribute::of("auto_pad", "VALID"), attribute::of("pads", ints{1, 1, 1, 1})});
    CHECK(both.error.code == status::invalid_model);

    auto big = conv_fails({x3x3(), ones({1, 1, 5, 5})});
    CHECK(big.error.code == status::shape_mismatch);
    CHECK(big.error.message.find("extent 5") != std::string::npos);
}

TEST_CASE("conv: an int64 input is rejected") {
    auto r = conv_fails({ember::test::make<std::int64_t>({1, 1, 1, 1}, {1}), ones({1, 1, 1, 1})});
    CHECK(r.error.code == status::unsupported_op);
    CHECK(r.error.message.find("int64") != std::string::npos);
}
