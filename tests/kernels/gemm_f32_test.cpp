// SPDX-License-Identifier: Apache-2.0
// The packed SGEMM of every kernel table this CPU runs against a plain double-precision loop:
// sizes around the register tile and the cache blocks, pre-packed and run-time-packed operands,
// transposed strides, each epilogue; and the same bits for any number of work slots and threads.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <ember/ember.hpp>

#include "support/kernel_check.hpp"

namespace {

using ember::kernels::activation;
using ember::kernels::activation_spec;
using ember::test::aligned_floats;
using ember::test::random_floats;

struct case_spec {
    std::int64_t m, n, k;
    bool prepack_a, prepack_b, trans_a, trans_b;
    bool bias, bias_per_row, residual;
    activation_spec act;
};

// C = act(A * B + bias + residual) in double, A[i, p] = a[i * a_rs + p * a_cs] (likewise B).
std::vector<float> reference(const case_spec& c, const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& bias,
                             const std::vector<float>& res) {
    std::vector<float> out(static_cast<std::size_t>(c.m * c.n));
    const std::int64_t a_rs = c.trans_a ? 1 : c.k, a_cs = c.trans_a ? c.m : 1;
    const std::int64_t b_rs = c.trans_b ? 1 : c.n, b_cs = c.trans_b ? c.k : 1;
    for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) {
            double s = 0.0;
            for (std::int64_t p = 0; p < c.k; ++p) s += double(a[i * a_rs + p * a_cs]) * double(b[p * b_rs + j * b_cs]);
            if (c.bias) s += bias[static_cast<std::size_t>(c.bias_per_row ? i : j)];
            if (c.residual) s += res[static_cast<std::size_t>(i * c.n + j)];
            out[static_cast<std::size_t>(i * c.n + j)] = static_cast<float>(ember::test::apply_activation(c.act, s));
        }
    return out;
}

// Runs the case on table t with `slots` work slots on executor ex.
std::vector<float> run_case(const ember::simd::kernel_table& t, const case_spec& c, const std::vector<float>& a, const std::vector<float>& b,
                            const std::vector<float>& bias, const std::vector<float>& res, std::int64_t slots, const ember::executor* ex) {
    ember::kernels::gemm_f32_problem pr;
    pr.m = c.m;
    pr.n = c.n;
    pr.k = c.k;
    const ember::kernels::strided_matrix am{a.data(), c.trans_a ? 1 : c.k, c.trans_a ? c.m : 1};
    const ember::kernels::strided_matrix bm{b.data(), c.trans_b ? 1 : c.n, c.trans_b ? c.k : 1};
    aligned_floats packed_a(static_cast<std::size_t>(ember::kernels::packed_a_floats(c.m, c.k)));
    aligned_floats packed_b(static_cast<std::size_t>(t.packed_b_floats(c.k, c.n)));
    if (c.prepack_a) {
        t.pack_gemm_a(am, c.m, c.k, packed_a.data());
        pr.packed_a = packed_a.data();
    } else {
        pr.a = am;
    }
    if (c.prepack_b) {
        t.pack_gemm_b(bm, c.k, c.n, packed_b.data());
        pr.packed_b = packed_b.data();
    } else {
        pr.b = bm;
    }
    std::vector<float> out(static_cast<std::size_t>(c.m * c.n), -7.0f);
    pr.c = out.data();
    pr.ldc = c.n;
    pr.post.act = c.act;
    if (c.bias) {
        pr.post.bias = bias.data();
        pr.post.bias_per_row = c.bias_per_row;
    }
    if (c.residual) {
        pr.post.residual = res.data();
        pr.post.ld_residual = c.n;
    }
    aligned_floats ws(static_cast<std::size_t>(t.gemm_workspace_floats(!c.prepack_a, !c.prepack_b) * slots));
    t.gemm_f32(pr, ws.data(), slots, ex);
    return out;
}

void check_case(const ember::simd::kernel_table& t, const case_spec& c, std::uint32_t seed) {
    const std::vector<float> a = random_floats(static_cast<std::size_t>(c.m * c.k), seed);
    const std::vector<float> b = random_floats(static_cast<std::size_t>(c.k * c.n), seed + 1);
    const std::vector<float> bias = random_floats(static_cast<std::size_t>(c.bias_per_row ? c.m : c.n), seed + 2);
    const std::vector<float> res = random_floats(static_cast<std::size_t>(c.m * c.n), seed + 3);
    const std::vector<float> expected = reference(c, a, b, bias, res);
    const std::vector<float> actual = run_case(t, c, a, b, bias, res, 1, nullptr);
    // float sums of k products of values in [-1, 1]: error grows like sqrt(k) * eps * |terms|
    const float tol = 1e-5f * (1.0f + std::sqrt(static_cast<float>(c.k)));
    ember::test::check_close(actual, expected, tol, tol);
}

} // namespace

TEST_CASE("gemm_f32: every table matches the reference around the tile and block sizes") {
    const std::int64_t ms[] = {1, 2, 5, 6, 7, 13, 14, 15, 29, 130};
    const std::int64_t ns[] = {1, 7, 8, 16, 17, 31, 33, 65, 520};
    const std::int64_t ks[] = {0, 1, 3, 17, 256, 300};
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
        std::uint32_t seed = 1;
        for (std::int64_t m : ms)
            for (std::int64_t n : ns)
                for (std::int64_t k : ks) {
                    if (m * n * k > 4'000'000) continue;
                    const bool pa = (seed & 1) != 0, pb = (seed & 2) != 0;
                    case_spec c{m, n, k, pa, pb, (seed % 5) == 0, (seed % 7) == 0, false, false, false, {}};
                    CAPTURE(t->name);
                    CAPTURE(m);
                    CAPTURE(n);
                    CAPTURE(k);
                    CAPTURE(pa);
                    CAPTURE(pb);
                    check_case(*t, c, seed++);
                }
    }
}

TEST_CASE("gemm_f32: bias, residual and every activation in the epilogue") {
    const activation_spec acts[] = {{activation::none},          {activation::relu},
                                    {activation::clip, 0.0f, 6.0f}, {activation::leaky_relu, 0.1f},
                                    {activation::hard_sigmoid, 0.2f, 0.5f}, {activation::hard_swish},
                                    {activation::sigmoid},       {activation::silu},
                                    {activation::gelu}};
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
        std::uint32_t seed = 100;
        for (const activation_spec& act : acts)
            for (int variant = 0; variant < 4; ++variant) {
                case_spec c{19, 37, 300, variant == 1, variant != 2, false, variant == 3, variant != 0, variant == 2, variant >= 2, act};
                CAPTURE(t->name);
                CAPTURE(static_cast<int>(act.kind));
                CAPTURE(variant);
                check_case(*t, c, seed++);
            }
    }
}

TEST_CASE("gemm_f32: the same bits for any number of work slots and threads") {
    ember::thread_pool pool2(2), pool3(3);
    const ember::executor ex2 = pool2.as_executor(), ex3 = pool3.as_executor();
    for (const ember::simd::kernel_table* t : ember::simd::available_kernel_tables()) {
        case_spec c{300, 700, 600, false, true, false, false, true, true, true, {activation::relu}};
        const std::vector<float> a = random_floats(static_cast<std::size_t>(c.m * c.k), 5);
        const std::vector<float> b = random_floats(static_cast<std::size_t>(c.k * c.n), 6);
        const std::vector<float> bias = random_floats(static_cast<std::size_t>(c.m), 7);
        const std::vector<float> res = random_floats(static_cast<std::size_t>(c.m * c.n), 8);
        const std::vector<float> one = run_case(*t, c, a, b, bias, res, 1, nullptr);
        CAPTURE(t->name);
        CHECK(run_case(*t, c, a, b, bias, res, 2, &ex2) == one);
        CHECK(run_case(*t, c, a, b, bias, res, 3, &ex3) == one);
        CHECK(run_case(*t, c, a, b, bias, res, 7, &ex2) == one);
    }
}

TEST_CASE("kernel tables: the baseline ISA is always there, and the best one comes first") {
    const auto tables = ember::simd::available_kernel_tables();
    REQUIRE(tables.size() >= 1);
    CHECK(ember::simd::find_kernel_table("") == tables[0]);
#if defined(__x86_64__)
    CHECK(tables[tables.size() - 1]->name == "sse2");
#endif
    CHECK(ember::simd::find_kernel_table("no-such-isa") == nullptr);
    MESSAGE("kernel tables on this CPU: " << ember::test::table_names());
}
