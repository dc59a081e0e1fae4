// SPDX-License-Identifier: Apache-2.0
// The INT8 GEMM of every kernel table this CPU runs against a plain integer loop: sizes around
// the register tile, strided and convolution (im2col) activations, int8 activations (flipped to
// uint8), the full byte ranges (255 * -128 products, which a saturating int16 dot would get
// wrong), each output type; and the same bytes for any number of work slots and threads.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <ember/ember.hpp>

#include "support/kernel_check.hpp"

namespace {

using ember::kernels::gemm_u8s8_problem;
using ember::kernels::qgemm_epilogue;

struct case_spec {
    std::int64_t m, n, k;
    bool transposed_x = false;   // X element (p, j) at x[j * k + p]
    bool transposed_c = false;   // C element (i, j) at c[j * m + i]
    qgemm_epilogue::output out = qgemm_epilogue::output::uint8;
    std::uint8_t flip = 0;
};

struct operands {
    std::vector<std::int8_t> w;
    std::vector<std::uint8_t> x;
    std::vector<std::int32_t> offset;
    std::vector<float> scale;
    std::int32_t zero_point = 0, lo = 0, hi = 255;
};

// Random operands; every fourth case uses the extremes only (255 and -128 / 127).
operands make_operands(const case_spec& c, std::int64_t x_elems, std::uint32_t seed) {
    std::mt19937 rng(seed);
    const bool extremes = seed % 4 == 0;
    operands o;
    std::uniform_int_distribution<int> wd(-128, 127), xd(0, 255), bit(0, 1);
    for (std::int64_t i = 0; i < c.m * c.k; ++i) o.w.push_back(static_cast<std::int8_t>(extremes ? (bit(rng) ? 127 : -128) : wd(rng)));
    for (std::int64_t i = 0; i < x_elems; ++i) o.x.push_back(static_cast<std::uint8_t>(extremes ? 255 : xd(rng)));
    std::uniform_int_distribution<int> od(-20000, 20000);
    std::uniform_real_distribution<float> sd(1e-5f, 4e-4f);
    for (std::int64_t i = 0; i < c.m; ++i) {
        o.offset.push_back(od(rng));
        o.scale.push_back(sd(rng));
    }
    if (c.out == qgemm_epilogue::output::int8) {
        o.zero_point = -3;
        o.lo = -128;
        o.hi = 127;
    } else {
        o.zero_point = 7;
        o.lo = seed % 3 == 0 ? 7 : 0;  // a fused ReLU clamps at the zero point
    }
    return o;
}

// The definition: the exact sum, the offset, and the epilogue's float multiply.
std::int32_t expected_value(const case_spec& c, const operands& o, std::int64_t i, std::int64_t sum) {
    const std::int64_t v = sum + o.offset[static_cast<std::size_t>(i)];
    if (c.out == qgemm_epilogue::output::int32) return static_cast<std::int32_t>(v);
    const float real = static_cast<float>(v) * o.scale[static_cast<std::size_t>(i)];
    const auto q = static_cast<std::int32_t>(std::nearbyint(real)) + o.zero_point;
    return q < o.lo ? o.lo : (q > o.hi ? o.hi : q);
}

std::vector<std::int32_t> expected_gemm(const case_spec& c, const operands& o) {
    std::vector<std::int32_t> out(static_cast<std::size_t>(c.m * c.n));
    for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) {
            std::int64_t s = 0;
            for (std::int64_t p = 0; p < c.k; ++p) {
                const std::uint8_t xv = o.x[static_cast<std::size_t>(c.transposed_x ? j * c.k + p : p * c.n + j)] ^ c.flip;
                s += std::int64_t{o.w[static_cast<std::size_t>(i * c.k + p)]} * xv;
            }
            out[static_cast<std::size_t>(i * c.n + j)] = expected_value(c, o, i, s);
        }
    return out;
}

// Runs pr on table t, reading C back as int32 in row-major (i, j) order.
std::vector<std::int32_t> run(const ember::simd::kernel_table& t, const case_spec& c, const operands& o, gemm_u8s8_problem pr,
                              std::int64_t slots, const ember::executor* ex) {
    std::vector<std::int32_t, xsimd::aligned_allocator<std::int32_t, 64>> packed(
        static_cast<std::size_t>(t.packed_u8s8_weight_bytes(c.m, c.k) / 4 + 1));
    t.pack_u8s8_weights(o.w.data(), c.k, c.m, c.k, packed.data());
    std::vector<std::int32_t, xsimd::aligned_allocator<std::int32_t, 64>> ws(
        static_cast<std::size_t>(slots * t.u8s8_workspace_bytes(c.k) / 4 + 1));
    std::vector<std::int32_t> c32(static_cast<std::size_t>(c.m * c.n), -999);
    std::vector<std::uint8_t> c8(static_cast<std::size_t>(c.m * c.n), 0xee);
    pr.packed_w = packed.data();
    pr.post.offset = o.offset.data();
    pr.post.scale = o.scale.data();
    pr.post.out = c.out;
    pr.post.zero_point = o.zero_point;
    pr.post.lo = o.lo;
    pr.post.hi = o.hi;
    pr.post.c = c.out == qgemm_epilogue::output::int32 ? static_cast<void*>(c32.data()) : static_cast<void*>(c8.data());
    pr.post.rs = c.transposed_c ? 1 : c.n;
    pr.post.cs = c.transposed_c ? c.m : 1;
    t.gemm_u8s8(pr, ws.data(), slots, ex);
    std::vector<std::int32_t> out(static_cast<std::size_t>(c.m * c.n));
    for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) {
            const auto at = static_cast<std::size_t>(i * pr.post.rs + j * pr.post.cs);
            out[static_cast<std::size_t>(i * c.n + j)] = c.out == qgemm_epilogue::output::int32 ? c32[at]
                                                         : c.out == qgemm_epilogue::output::int8 ? std::int32_t{static_cast<std::int8_t>(c8[at])}
                                                                                                 : std::int32_t{c8[at]};
        }
    return out;
}

std::vector<std::int32_t> run_matrix(const ember::simd::kernel_table& t, const case_spec& c, const operands& o, std::int64_t slots = 1,
                                     const ember::executor* ex = nullptr) {
    gemm_u8s8_problem pr;
    pr.m = c.m;
    pr.n = c.n;
    pr.k = c.k;
    pr.x = o.x.data();
    pr.x_rs = c.transposed_x ? 1 : c.n;
    pr.x_cs = c.transposed_x ? c.k : 1;
    pr.x_flip = c.flip;
    return run(t, c, o, pr, slots, ex);
}

std::vector<const ember::simd::kernel_table*> int8_tables() {
    std::vector<const ember::simd::kernel_table*> out;
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables())
        if (t->gemm_u8s8) out.push_back(t);
    return out;
}

} // namespace

TEST_CASE("gemm_u8s8: every table's INT8 GEMM matches the integer definition around the tile sizes") {
    REQUIRE(!int8_tables().empty());  // every arch ember targets has one
    const std::int64_t ms[] = {1, 3, 4, 8, 9, 17, 64};
    const std::int64_t ns[] = {1, 7, 8, 16, 33, 100};
    const std::int64_t ks[] = {1, 2, 3, 4, 5, 31, 64, 577};
    const qgemm_epilogue::output outs[] = {qgemm_epilogue::output::uint8, qgemm_epilogue::output::int8, qgemm_epilogue::output::int32};
    for (const ember::simd::kernel_table* t : int8_tables()) {
        std::uint32_t seed = 1;
        for (std::int64_t m : ms)
            for (std::int64_t n : ns)
                for (std::int64_t k : ks) {
                    case_spec c{m, n, k};
                    c.transposed_x = seed % 5 == 1;
                    c.transposed_c = seed % 7 == 2;
                    c.out = outs[seed % 3];
                    c.flip = seed % 6 == 5 ? 0x80 : 0;
                    const operands o = make_operands(c, c.k * c.n, seed++);
                    CAPTURE(t->int8_name);
                    CAPTURE(m);
                    CAPTURE(n);
                    CAPTURE(k);
                    CAPTURE(seed);
                    CHECK(run_matrix(*t, c, o) == expected_gemm(c, o));
                }
    }
}

TEST_CASE("gemm_u8s8: convolution activations (im2col from NCHW, padding reads the zero point)") {
    struct conv_case {
        std::int64_t c, h, w, m, kh, kw, stride, pad, dil;
    };
    const conv_case cases[] = {{3, 9, 11, 8, 3, 3, 1, 1, 1}, {16, 7, 7, 20, 3, 3, 2, 1, 1}, {5, 12, 10, 9, 1, 1, 1, 0, 1},
                               {4, 13, 13, 5, 5, 5, 2, 2, 1}, {6, 10, 10, 7, 3, 3, 1, 2, 2}, {2, 6, 20, 3, 1, 7, 1, 3, 1},
                               // rows wide enough for the packing's 16-byte copies (stride 1 and 2), up to the
                               // input's last byte, where they fall back to single bytes
                               {3, 20, 40, 8, 3, 3, 1, 1, 1}, {2, 9, 37, 4, 3, 3, 1, 0, 1}, {8, 5, 48, 9, 1, 1, 1, 0, 1},
                               {4, 18, 70, 6, 3, 3, 2, 1, 1}, {3, 16, 64, 5, 7, 7, 2, 3, 1}, {5, 7, 66, 3, 1, 1, 2, 0, 1}};
    for (const ember::simd::kernel_table* t : int8_tables()) {
        std::uint32_t seed = 50;
        for (const conv_case& cc : cases) {
            const std::int64_t oh = (cc.h + 2 * cc.pad - cc.dil * (cc.kh - 1) - 1) / cc.stride + 1;
            const std::int64_t ow = (cc.w + 2 * cc.pad - cc.dil * (cc.kw - 1) - 1) / cc.stride + 1;
            case_spec c{cc.m, oh * ow, cc.c * cc.kh * cc.kw};
            c.out = seed % 2 ? qgemm_epilogue::output::uint8 : qgemm_epilogue::output::int32;
            c.flip = seed % 3 == 0 ? 0x80 : 0;
            const operands o = make_operands(c, cc.c * cc.h * cc.w, seed++);
            const std::uint8_t pad_value = 131;
            ember::kernels::qconv_source src;
            src.x = o.x.data();
            src.in_h = cc.h;
            src.in_w = cc.w;
            src.out_w = ow;
            src.kh = cc.kh;
            src.kw = cc.kw;
            src.stride_h = src.stride_w = cc.stride;
            src.pad_h = src.pad_w = cc.pad;
            src.dil_h = src.dil_w = cc.dil;
            src.pad_value = pad_value;
            // the expected im2col matrix, then the plain GEMM definition over it
            operands im = o;
            im.x.assign(static_cast<std::size_t>(c.k * c.n), 0);
            for (std::int64_t p = 0; p < c.k; ++p)
                for (std::int64_t j = 0; j < c.n; ++j) {
                    const std::int64_t ch = p / (cc.kh * cc.kw), r = p / cc.kw % cc.kh, q = p % cc.kw;
                    const std::int64_t ih = j / ow * cc.stride - cc.pad + r * cc.dil, iw = j % ow * cc.stride - cc.pad + q * cc.dil;
                    const bool inside = ih >= 0 && ih < cc.h && iw >= 0 && iw < cc.w;
                    // the flip applies to input bytes only; padding is already in the flipped domain
                    im.x[static_cast<std::size_t>(p * c.n + j)] =
                        inside ? o.x[static_cast<std::size_t>((ch * cc.h + ih) * cc.w + iw)] : static_cast<std::uint8_t>(pad_value ^ c.flip);
                }
            gemm_u8s8_problem pr;
            pr.m = c.m;
            pr.n = c.n;
            pr.k = c.k;
            pr.conv = &src;
            pr.x_flip = c.flip;
            CAPTURE(t->int8_name);
            CAPTURE(seed);
            CHECK(run(*t, c, o, pr, 1, nullptr) == expected_gemm(c, im));
        }
    }
}

TEST_CASE("gemm_u8s8: the same bytes for any number of work slots and threads") {
    ember::thread_pool pool2(2), pool3(3);
    const ember::executor ex2 = pool2.as_executor(), ex3 = pool3.as_executor();
    for (const ember::simd::kernel_table* t : int8_tables()) {
        case_spec c{70, 300, 200};
        const operands o = make_operands(c, c.k * c.n, 9);
        const std::vector<std::int32_t> one = run_matrix(*t, c, o);
        CAPTURE(t->int8_name);
        CHECK(one == expected_gemm(c, o));
        CHECK(run_matrix(*t, c, o, 2, &ex2) == one);
        CHECK(run_matrix(*t, c, o, 3, &ex3) == one);
        CHECK(run_matrix(*t, c, o, 50, &ex2) == one);
    }
}

TEST_CASE("gemm_u8s8: float output (dequantized) with a residual and a clamp, against the definition") {
    struct float_case {
        std::int64_t m, n, k;
        bool transposed_c, residual;
        float lo, hi;
    };
    constexpr float inf = std::numeric_limits<float>::infinity();
    const float_case cases[] = {{1, 1, 1, false, false, -inf, inf},   {4, 16, 9, false, true, 0.0f, inf},  {9, 33, 64, false, true, 0.0f, 6.0f},
                                {17, 100, 31, true, true, -inf, inf}, {64, 7, 577, true, false, 0.0f, inf}, {8, 48, 144, false, false, -1.0f, 1.0f},
                                {3, 5, 5, true, true, 0.0f, 6.0f}};
    for (const ember::simd::kernel_table* t : int8_tables()) {
        std::uint32_t seed = 300;
        for (const float_case& fc : cases) {
            case_spec c{fc.m, fc.n, fc.k};
            c.out = qgemm_epilogue::output::float32;
            const operands o = make_operands(c, c.k * c.n, seed++);
            std::mt19937 rng(seed);
            std::uniform_real_distribution<float> zd(-3.0f, 3.0f);
            const std::int64_t rs = fc.transposed_c ? 1 : c.n, cs = fc.transposed_c ? c.m : 1;
            std::vector<float> z(static_cast<std::size_t>(c.m * c.n));
            for (float& v : z) v = zd(rng);
            std::vector<std::int32_t, xsimd::aligned_allocator<std::int32_t, 64>> packed(
                static_cast<std::size_t>(t->packed_u8s8_weight_bytes(c.m, c.k) / 4 + 1));
            t->pack_u8s8_weights(o.w.data(), c.k, c.m, c.k, packed.data());
            std::vector<std::int32_t, xsimd::aligned_allocator<std::int32_t, 64>> ws(static_cast<std::size_t>(t->u8s8_workspace_bytes(c.k) / 4 + 1));
            std::vector<float> y(static_cast<std::size_t>(c.m * c.n), -999.0f);
            gemm_u8s8_problem pr;
            pr.m = c.m;
            pr.n = c.n;
            pr.k = c.k;
            pr.x = o.x.data();
            pr.x_rs = c.n;
            pr.packed_w = packed.data();
            pr.post.offset = o.offset.data();
            pr.post.scale = o.scale.data();
            pr.post.out = c.out;
            pr.post.residual = fc.residual ? z.data() : nullptr;
            pr.post.flo = fc.lo;
            pr.post.fhi = fc.hi;
            pr.post.c = y.data();
            pr.post.rs = rs;
            pr.post.cs = cs;
            t->gemm_u8s8(pr, ws.data(), 1, nullptr);
            CAPTURE(t->int8_name);
            CAPTURE(seed);
            std::size_t wrong = 0;
            for (std::int64_t i = 0; i < c.m; ++i)
                for (std::int64_t j = 0; j < c.n; ++j) {
                    std::int64_t s = o.offset[static_cast<std::size_t>(i)];
                    for (std::int64_t p = 0; p < c.k; ++p) s += std::int64_t{o.w[static_cast<std::size_t>(i * c.k + p)]} * o.x[static_cast<std::size_t>(p * c.n + j)];
                    const auto at = static_cast<std::size_t>(i * rs + j * cs);
                    float want = static_cast<float>(static_cast<std::int32_t>(s)) * o.scale[static_cast<std::size_t>(i)];
                    if (fc.residual) want += z[at];
                    want = want < fc.lo ? fc.lo : (want > fc.hi ? fc.hi : want);
                    // one rounding apart at most: the kernel may fuse the multiply and the add
                    if (!(std::fabs(y[at] - want) <= 1e-6f * std::fabs(want) + 1e-6f)) ++wrong;
                }
            CHECK(wrong == 0);
        }
    }
}
