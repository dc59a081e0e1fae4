// SPDX-License-Identifier: Apache-2.0
// Conv on every kernel table this CPU runs against the reference kernel (compile_options::isa =
// "reference"): the implicit-im2col GEMM path (1x1, 3x3, 5x5, 7x7, strides, padding, dilation,
// groups, constant and input weights) and the depthwise path, at batch 1 and 2.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <ember/ember.hpp>

#include "support/check.hpp"
#include "support/kernel_check.hpp"

namespace {

struct conv_case {
    std::int64_t n, c, h, w, m, k, stride, pad, dilation, group;
    bool bias, weights_constant;
};

std::vector<float> run_conv(const conv_case& cc, const std::string& isa, std::uint32_t seed, std::string& used) {
    ember::graph_builder b("conv");
    const auto x = b.input("x", ember::dtype::float32, {cc.n, cc.c, cc.h, cc.w});
    const ember::tensor wt = ember::test::random_f32({cc.m, cc.c / cc.group, cc.k, cc.k}, seed + 1);
    const ember::tensor xt = ember::test::random_f32({cc.n, cc.c, cc.h, cc.w}, seed);
    std::vector<ember::value_id> ins{x};
    ins.push_back(cc.weights_constant ? b.constant("w", wt) : b.input("w", ember::dtype::float32, {cc.m, cc.c / cc.group, cc.k, cc.k}));
    if (cc.bias) ins.push_back(b.constant("b", ember::test::random_f32({cc.m}, seed + 2)));
    const std::vector<ember::attribute> attrs{
        ember::attribute::of("strides", std::vector<std::int64_t>{cc.stride, cc.stride}),
        ember::attribute::of("pads", std::vector<std::int64_t>{cc.pad, cc.pad, cc.pad, cc.pad}),
        ember::attribute::of("dilations", std::vector<std::int64_t>{cc.dilation, cc.dilation}),
        ember::attribute::of("group", cc.group)};
    b.output(b.node("Conv", ins, attrs), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    ember::compile_options options;
    options.isa = isa;
    auto p = ember::compile(*g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    used = std::string(p->isa());
    ember::session s(*p);
    REQUIRE(s.bind_input(0, xt.bytes(), xt.size_bytes()) == ember::status::ok);
    if (!cc.weights_constant) REQUIRE(s.bind_input(1, wt.bytes(), wt.size_bytes()) == ember::status::ok);
    REQUIRE(s.run() == ember::status::ok);
    const auto out = s.output<float>(0);
    return std::vector<float>(out.data(), out.data() + out.size());
}

} // namespace

TEST_CASE("conv: every kernel table matches the reference kernel") {
    const conv_case cases[] = {
        {1, 3, 17, 19, 8, 3, 1, 1, 1, 1, true, true},    {2, 16, 9, 9, 33, 1, 1, 0, 1, 1, true, true},
        {1, 8, 15, 15, 16, 3, 2, 1, 1, 1, false, true},  {1, 5, 12, 20, 7, 5, 1, 2, 1, 1, true, true},
        {1, 3, 30, 30, 10, 7, 2, 3, 1, 1, true, true},   {1, 6, 11, 11, 6, 3, 1, 2, 2, 1, true, true},
        {2, 8, 10, 10, 12, 3, 1, 1, 1, 2, true, true},   {1, 4, 8, 8, 6, 3, 1, 1, 1, 1, true, false},
        {1, 300, 6, 6, 40, 3, 1, 1, 1, 1, true, true},   {1, 2, 70, 70, 3, 1, 2, 0, 1, 1, false, true},
        {1, 4, 19, 23, 6, 3, 2, 2, 2, 1, true, true},    {1, 3, 41, 9, 5, 7, 2, 3, 1, 1, false, true},  // stride 2: dilated, narrow
        // depthwise
        {1, 16, 14, 14, 16, 3, 1, 1, 1, 16, true, true}, {2, 8, 15, 17, 8, 3, 2, 1, 1, 8, true, true},
        {1, 24, 20, 20, 24, 5, 1, 2, 1, 24, false, true}, {1, 8, 9, 9, 8, 5, 2, 2, 1, 8, true, false},
        {1, 4, 33, 33, 4, 3, 1, 2, 2, 4, true, true},
    };
    std::uint32_t seed = 1;
    for (const conv_case& cc : cases) {
        std::string used;
        const std::vector<float> expected = run_conv(cc, "reference", seed, used);
        CHECK(used == "reference");
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
            CAPTURE(t->name);
            CAPTURE(seed);
            const std::vector<float> actual = run_conv(cc, std::string(t->name), seed, used);
            CHECK(used == t->name);
            const float tol = 2e-5f * std::sqrt(static_cast<float>(cc.c * cc.k * cc.k / cc.group));
            ember::test::check_close(actual, expected, tol, tol);
        }
        seed += 10;
    }
}

TEST_CASE("compile_options::isa: an ISA that is not there fails with the ones that are") {
    ember::graph_builder b("relu");
    b.output(b.node("Relu", {b.input("x", ember::dtype::float32, {4})}), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    ember::compile_options options;
    options.isa = "avx1024";
    auto p = ember::compile(*g, options);
    REQUIRE_FALSE(p);
    CHECK(p.error().code == ember::status::invalid_argument);
    CHECK(p.error().message.find("ISA 'avx1024' is not available") != std::string::npos);
    const auto tables = ember::simd::available_kernel_tables();
    REQUIRE(tables.size() >= 1);
    CHECK(p.error().message.find(std::string(tables[tables.size() - 1]->name)) != std::string::npos);  // sse2, or neon
}

namespace {

std::vector<float> run_max_pool(const std::vector<std::int64_t>& dims, std::vector<ember::attribute> attrs, const std::string& isa,
                                std::uint32_t seed) {
    ember::graph_builder b("pool");
    const auto x = b.input("x", ember::dtype::float32, ember::shape(dims));
    b.output(b.node("MaxPool", {x}, std::move(attrs)), "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    ember::compile_options options;
    options.isa = isa;
    auto p = ember::compile(*g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    const ember::tensor xt = ember::test::random_f32(ember::shape(dims), seed);
    REQUIRE(s.bind_input(0, xt.bytes(), xt.size_bytes()) == ember::status::ok);
    REQUIRE(s.run() == ember::status::ok);
    const auto out = s.output<float>(0);
    return std::vector<float>(out.data(), out.data() + out.size());
}

} // namespace

TEST_CASE("max_pool: every kernel table gives the reference kernel's values") {
    using ints = std::vector<std::int64_t>;
    struct pool_case {
        ints dims, kernel, strides, pads, dilations;
        int ceil_mode;
    };
    const pool_case cases[] = {
        {{1, 4, 112, 112}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0},  // ResNet's
        {{2, 3, 55, 55}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1},    // SqueezeNet's, ceil_mode
        {{1, 5, 17, 40}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 0},
        {{1, 2, 9, 33}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0},
        {{1, 2, 20, 20}, {3, 2}, {1, 2}, {2, 1, 0, 1}, {2, 1}, 1},
        {{1, 3, 6, 6}, {3, 3}, {1, 1}, {2, 2, 2, 2}, {1, 1}, 0},
    };
    std::uint32_t seed = 7;
    for (const pool_case& pc : cases) {
        const std::vector<ember::attribute> attrs{ember::attribute::of("kernel_shape", pc.kernel), ember::attribute::of("strides", pc.strides),
                                                  ember::attribute::of("pads", pc.pads), ember::attribute::of("dilations", pc.dilations),
                                                  ember::attribute::of("ceil_mode", pc.ceil_mode)};
        const std::vector<float> expected = run_max_pool(pc.dims, attrs, "reference", seed);
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
            CAPTURE(t->name);
            CAPTURE(seed);
            CHECK(run_max_pool(pc.dims, attrs, std::string(t->name), seed) == expected);  // a max is exact
        }
        ++seed;
    }
}

namespace {

// The rest of a conv test graph's life: y (a Conv, maybe followed by Add(r) -> Relu) as the
// output, compiled with `options` for `threads` slots (a pool runs it when there are several), x
// bound (and r when given), run. Returns the output and the plan's arena bytes.
struct conv_run {
    std::vector<float> y;
    std::size_t arena_bytes = 0;
};

conv_run finish_and_run(ember::graph_builder&& b, ember::value_id y, ember::compile_options options, std::size_t threads, const ember::tensor& xt,
                        const ember::tensor* rt) {
    b.output(y, "y");
    auto g = std::move(b).build();
    REQUIRE(g);
    options.max_threads = threads;
    auto p = ember::compile(*g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::thread_pool pool(threads);
    const ember::executor ex = pool.as_executor();
    ember::session s(*p, threads > 1 ? &ex : nullptr);
    REQUIRE(s.bind_input(0, xt.bytes(), xt.size_bytes()) == ember::status::ok);
    if (rt) REQUIRE(s.bind_input(1, rt->bytes(), rt->size_bytes()) == ember::status::ok);
    REQUIRE(s.run() == ember::status::ok);
    const auto out = s.output<float>(0);
    return {std::vector<float>(out.data(), out.data() + out.size()), p->arena_bytes()};
}

struct winograd_case {
    std::int64_t n, c, h, w, m, pad;
    bool bias, residual_relu;  // residual_relu: Conv -> Add(r) -> Relu, which fuses into FusedConv
};

struct winograd_run {
    std::string isa;
    bool winograd = true;
    std::size_t threads = 1;
};

std::vector<float> run_winograd_case(const winograd_case& wc, const winograd_run& how, std::uint32_t seed) {
    const std::int64_t oh = wc.h + 2 * wc.pad - 2, ow = wc.w + 2 * wc.pad - 2;
    ember::graph_builder b("winograd");
    const auto x = b.input("x", ember::dtype::float32, {wc.n, wc.c, wc.h, wc.w});
    std::vector<ember::value_id> ins{x, b.constant("w", ember::test::random_f32({wc.m, wc.c, 3, 3}, seed + 1))};
    if (wc.bias) ins.push_back(b.constant("b", ember::test::random_f32({wc.m}, seed + 2)));
    const std::vector<ember::attribute> attrs{ember::attribute::of("pads", std::vector<std::int64_t>{wc.pad, wc.pad, wc.pad, wc.pad})};
    ember::value_id y = b.node("Conv", ins, attrs);
    const ember::tensor rt = ember::test::random_f32({wc.n, wc.m, oh, ow}, seed + 3);
    if (wc.residual_relu) y = b.node("Relu", {b.node("Add", {y, b.input("r", ember::dtype::float32, {wc.n, wc.m, oh, ow})})});
    ember::compile_options options;
    options.isa = how.isa;
    options.winograd = how.winograd;
    options.direct_conv = false;  // some of these shapes run as the direct kernel otherwise
    const ember::tensor xt = ember::test::random_f32({wc.n, wc.c, wc.h, wc.w}, seed);
    return finish_and_run(std::move(b), y, options, how.threads, xt, wc.residual_relu ? &rt : nullptr).y;
}

} // namespace

// Shapes that take the Winograd path on every table (ops/conv.hpp use_winograd: 3x3, stride 1,
// enough channels and tiles): outputs that are not whole 4x4 tiles, padding 0 to 2, batch 2,
// more input channels than one GEMM depth block (KC = 256: two blocks of the packed V), the fused
// residual and activation; few column panels a slot (the steps split in turn) and many (whole
// panels a slot). The Winograd path's sums round differently from the direct ones, so
// its results must differ from compile_options::winograd = false in some bits (which proves the
// path ran) while staying within a tolerance of the reference; they must be the same bits on
// 1, 2 and 3 threads.
TEST_CASE("conv: Winograd F(4x4, 3x3) on every kernel table matches the reference kernel, for any thread count") {
    const winograd_case cases[] = {
        {1, 16, 17, 17, 24, 1, true, false}, {2, 8, 20, 13, 8, 1, true, false},   {1, 32, 30, 30, 16, 0, false, false},
        {1, 9, 26, 31, 10, 2, true, true},   {1, 300, 22, 22, 40, 1, true, false}, {1, 64, 28, 28, 64, 1, true, true},
        {1, 8, 66, 66, 8, 1, true, true},  // 289 tiles: 10 or more column panels, whole panels a slot on 2 and 3 threads
    };
    std::uint32_t seed = 101;
    for (const winograd_case& wc : cases) {
        CAPTURE(seed);
        const std::vector<float> expected = run_winograd_case(wc, {"reference"}, seed);
        for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
            const std::string isa(t->name);
            CAPTURE(isa);
            const std::vector<float> actual = run_winograd_case(wc, {isa}, seed);
            const std::vector<float> direct = run_winograd_case(wc, {isa, false}, seed);
            CHECK(actual != direct);
            // the error grows with the depth (C * 9 terms) and with the transforms (entries up to 8): 2.5x
            // the direct test's bound; errors seen here are 10-20x under it, a coefficient off by 1e-4 fails
            const float tol = 5e-5f * std::sqrt(static_cast<float>(wc.c * 9));
            ember::test::check_close(actual, expected, tol, tol);
            CHECK(run_winograd_case(wc, {isa, true, 2}, seed) == actual);
            CHECK(run_winograd_case(wc, {isa, true, 3}, seed) == actual);
        }
        seed += 10;
    }
}

namespace {

struct narrow_case {
    std::int64_t n, c, h, w, m, k, stride, pad, dilation;
    bool residual_relu;  // Conv -> Add(r) -> Relu, fused into FusedConv
};

struct narrow_run {
    std::string isa;
    bool transposed = true;
    std::size_t threads = 1;
    bool direct = false;  // compile_options::direct_conv
};

conv_run run_narrow_case(const narrow_case& nc, const narrow_run& how, std::uint32_t seed) {
    const std::int64_t oh = (nc.h + 2 * nc.pad - nc.dilation * (nc.k - 1) - 1) / nc.stride + 1;
    const std::int64_t ow = (nc.w + 2 * nc.pad - nc.dilation * (nc.k - 1) - 1) / nc.stride + 1;
    ember::graph_builder b("narrow");
    const auto x = b.input("x", ember::dtype::float32, {nc.n, nc.c, nc.h, nc.w});
    const std::vector<ember::value_id> ins{x, b.constant("w", ember::test::random_f32({nc.m, nc.c, nc.k, nc.k}, seed + 1)),
                                           b.constant("b", ember::test::random_f32({nc.m}, seed + 2))};
    const std::vector<ember::attribute> attrs{
        ember::attribute::of("strides", std::vector<std::int64_t>{nc.stride, nc.stride}),
        ember::attribute::of("pads", std::vector<std::int64_t>{nc.pad, nc.pad, nc.pad, nc.pad}),
        ember::attribute::of("dilations", std::vector<std::int64_t>{nc.dilation, nc.dilation})};
    ember::value_id y = b.node("Conv", ins, attrs);
    if (nc.residual_relu) y = b.node("Relu", {b.node("Add", {y, b.input("r", ember::dtype::float32, {nc.n, nc.m, oh, ow})})});
    ember::compile_options options;
    options.isa = how.isa;
    options.transposed_gemm = how.transposed;
    options.direct_conv = how.direct;
    const ember::tensor xt = ember::test::random_f32({nc.n, nc.c, nc.h, nc.w}, seed);
    const ember::tensor rt = ember::test::random_f32({nc.n, nc.m, oh, ow}, seed + 3);
    return finish_and_run(std::move(b), y, options, how.threads, xt, nc.residual_relu ? &rt : nullptr);
}

} // namespace

// Convolutions with few output positions, which run as the transposed GEMM (ops/conv.hpp
// use_transposed) where the positions would leave the register tile's columns idle: 1x1 and 3x3
// at 7x7 (stride 1 and 2: the stride-2 im2col rows overrun into the next packed row), dilation, a
// 1x1 output (one position: the GEMV tile), depth over one block (KC = 256), more channels than one
// column block (NC) on 1-3 threads, batch 2, bias, residual and Relu written at the transposition.
// The transposed GEMM sums each output in the same order, so its results are the same bits as with
// compile_options::transposed_gemm = false; every table must take the path in five cases or more
// (its scratch makes the arena larger: avx512 takes 7, the others 6), and all must match the
// reference kernel.
TEST_CASE("conv: the transposed GEMM of narrow outputs matches the reference and the direct GEMM's bits, for any thread count") {
    const narrow_case cases[] = {
        {1, 40, 7, 7, 96, 1, 1, 0, 1, false}, {2, 20, 13, 13, 96, 3, 2, 1, 1, true}, {1, 64, 14, 14, 64, 1, 1, 0, 1, true},
        {1, 12, 9, 9, 72, 3, 1, 0, 2, false}, {1, 30, 1, 1, 50, 1, 1, 0, 1, true},  {1, 300, 7, 7, 64, 1, 1, 0, 1, false},
        {1, 16, 7, 7, 600, 1, 1, 0, 1, true}, {1, 33, 5, 9, 80, 3, 1, 1, 1, true},
    };
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
        const std::string isa(t->name);
        CAPTURE(isa);
        std::uint32_t seed = 201;
        int transposed_cases = 0;
        for (const narrow_case& nc : cases) {
            CAPTURE(seed);
            const conv_run expected = run_narrow_case(nc, {"reference"}, seed);
            const conv_run actual = run_narrow_case(nc, {isa}, seed);
            const conv_run direct = run_narrow_case(nc, {isa, false}, seed);
            if (actual.arena_bytes > direct.arena_bytes) ++transposed_cases;
            const float tol = 2e-5f * std::sqrt(static_cast<float>(nc.c * nc.k * nc.k));
            ember::test::check_close(actual.y, expected.y, tol, tol);
            CHECK(actual.y == direct.y);
            CHECK(run_narrow_case(nc, {isa, true, 2}, seed).y == actual.y);
            CHECK(run_narrow_case(nc, {isa, true, 3}, seed).y == actual.y);
            seed += 10;
        }
        CHECK(transposed_cases >= 5);
    }
}

// Convolutions that run as the direct kernel (ops/conv.hpp use_direct, kernels/conv_direct_f32.hpp):
// 3-channel stems (7x7 and 3x3 at stride 2, with and without padding), 3x3 layers of 16 channels
// at 55x55 and of 48 at 13x13 (taken over Winograd), a 3x3 stride-2 layer of 64 channels, batch 2,
// bias, and a residual and Relu fused in. Each must match the reference kernel, give the same
// bits on 1, 2 and 3 threads, and take the path (its workspace makes the arena differ from
// compile_options::direct_conv = false). The packed GEMM sums depths up to 256 in the same order
// (one depth block), so the stems give its bits.
TEST_CASE("conv: the direct kernel matches the reference, for any thread count") {
    const narrow_case cases[] = {
        {1, 3, 46, 46, 64, 7, 2, 3, 1, false}, {2, 3, 35, 33, 32, 3, 2, 0, 1, true}, {1, 3, 28, 28, 24, 3, 2, 1, 1, false},
        {1, 16, 55, 55, 64, 3, 1, 1, 1, true}, {1, 48, 13, 13, 40, 3, 1, 1, 1, false}, {1, 64, 28, 28, 24, 3, 2, 1, 1, true},
    };
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
        const std::string isa(t->name);
        CAPTURE(isa);
        std::uint32_t seed = 301;
        for (const narrow_case& nc : cases) {
            CAPTURE(seed);
            const conv_run expected = run_narrow_case(nc, {"reference"}, seed);
            const conv_run actual = run_narrow_case(nc, {isa, true, 1, true}, seed);
            const conv_run packed = run_narrow_case(nc, {isa, true, 1, false}, seed);
            CHECK(actual.arena_bytes != packed.arena_bytes);
            const float tol = 2e-5f * std::sqrt(static_cast<float>(nc.c * nc.k * nc.k));
            ember::test::check_close(actual.y, expected.y, tol, tol);
            if (nc.stride > 1 && nc.c * nc.k * nc.k <= 256) CHECK(actual.y == packed.y);  // (stride 1 is Winograd's there)
            CHECK(run_narrow_case(nc, {isa, true, 2, true}, seed).y == actual.y);
            CHECK(run_narrow_case(nc, {isa, true, 3, true}, seed).y == actual.y);
            seed += 10;
        }
    }
}
