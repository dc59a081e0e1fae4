// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <ember/ops/gemm.hpp>

#include "support/check.hpp"

namespace {

// alpha * op(A) op(B) + beta * C written out with explicit index maps; C is read through its own
// shape with broadcasting ([], [1], [N], [1, N], [M, 1], [M, N]).
std::vector<float> naive_gemm(const ember::tensor& a, const ember::tensor& b, const ember::tensor* c, bool ta, bool tb, float alpha, float beta) {
    const std::int64_t M = ta ? a.dims()[1] : a.dims()[0], K = ta ? a.dims()[0] : a.dims()[1];
    const std::int64_t N = tb ? b.dims()[0] : b.dims()[1];
    auto A = [&](std::int64_t i, std::int64_t p) { return double(a.data<float>()[ta ? p * M + i : i * K + p]); };
    auto B = [&](std::int64_t p, std::int64_t j) { return double(b.data<float>()[tb ? j * K + p : p * N + j]); };
    auto C = [&](std::int64_t i, std::int64_t j) {
        const ember::shape& s = c->dims();
        if (s.rank() == 0) return double(c->data<float>()[0]);
        if (s.rank() == 1) return double(c->data<float>()[s[0] == 1 ? 0 : j]);
        const std::int64_t r = s[0] == 1 ? 0 : i, q = s[1] == 1 ? 0 : j;
        return double(c->data<float>()[r * s[1] + q]);
    };
    std::vector<float> y;
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            double acc = 0.0;
            for (std::int64_t p = 0; p < K; ++p) acc += A(i, p) * B(p, j);
            y.push_back(static_cast<float>(alpha * acc + (c ? beta * C(i, j) : 0.0)));
        }
    return y;
}

std::vector<ember::attribute> gemm_attrs(bool ta, bool tb, float alpha, float beta) {
    return {ember::attribute::of("transA", ta ? 1 : 0), ember::attribute::of("transB", tb ? 1 : 0), ember::attribute::of("alpha", alpha),
            ember::attribute::of("beta", beta)};
}

} // namespace

TEST_CASE("gemm: defaults (alpha = beta = 1, no transposes) with a full C, worked by hand") {
    const auto a = ember::test::make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    const auto b = ember::test::make_f32({3, 2}, {1, 0, 0, 1, 1, 1});
    const auto c = ember::test::make_f32({2, 2}, {100, 200, 300, 400});
    auto r = ember::test::run_node_both_ways("Gemm", {a, b, c});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2, 2});
    // A B = [[1+3, 2+3], [4+6, 5+6]]
    ember::test::check_close(r.outputs[0], {104, 205, 310, 411}, 0.0f, 0.0f);
}

TEST_CASE("gemm: without C, alpha scales the product") {
    const auto a = ember::test::make_f32({1, 2}, {1, 2});
    const auto b = ember::test::make_f32({2, 1}, {3, 4});
    auto r = ember::test::run_node_both_ways("Gemm", {a, b}, {ember::attribute::of("alpha", 0.5f)});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{1, 1});
    ember::test::check_close(r.outputs[0], {5.5f}, 0.0f, 0.0f);
    // an absent optional C (empty input slot) is the same as no C
    auto absent = ember::test::run_node_both_ways("Gemm", {a, b, ember::tensor()}, {ember::attribute::of("alpha", 0.5f)});
    REQUIRE_MESSAGE(absent.compiled, absent.error.message);
    ember::test::check_close(absent.outputs[0], {5.5f}, 0.0f, 0.0f);
}

TEST_CASE("gemm: transA and transB read the operands transposed") {
    const auto at = ember::test::make_f32({3, 2}, {1, 4, 2, 5, 3, 6});  // A = [[1, 2, 3], [4, 5, 6]] transposed
    const auto bt = ember::test::make_f32({2, 3}, {1, 0, 1, 0, 1, 1});  // B = [[1, 0], [0, 1], [1, 1]] transposed
    const auto a = ember::test::make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    const auto b = ember::test::make_f32({3, 2}, {1, 0, 0, 1, 1, 1});
    const std::vector<float> expected = {4, 5, 10, 11};
    for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
            CAPTURE(ta);
            CAPTURE(tb);
            auto r = ember::test::run_node_both_ways("Gemm", {ta ? at : a, tb ? bt : b}, gemm_attrs(ta, tb, 1.0f, 1.0f));
            REQUIRE_MESSAGE(r.compiled, r.error.message);
            CHECK(r.outputs[0].dims() == ember::shape{2, 2});
            ember::test::check_close(r.outputs[0], expected, 0.0f, 0.0f);
        }
}

TEST_CASE("gemm: C broadcasts from [], [1], [N], [1, N], [M, 1] and [M, N], scaled by beta") {
    const std::int64_t M = 3, N = 4, K = 5;
    const ember::shape c_shapes[] = {{}, {1}, {N}, {1, N}, {M, 1}, {M, N}, {1, 1}};
    std::uint32_t seed = 1;
    for (const ember::shape& cs : c_shapes)
        for (int ta = 0; ta < 2; ++ta)
            for (int tb = 0; tb < 2; ++tb) {
                CAPTURE(ember::detail::format("C {} transA {} transB {}", cs, ta, tb));
                const auto a = ember::test::random_f32(ta ? ember::shape{K, M} : ember::shape{M, K}, seed++);
                const auto b = ember::test::random_f32(tb ? ember::shape{N, K} : ember::shape{K, N}, seed++);
                const auto c = ember::test::random_f32(cs, seed++);
                auto r = ember::test::run_node_both_ways("Gemm", {a, b, c}, gemm_attrs(ta, tb, 0.75f, -2.0f));
                REQUIRE_MESSAGE(r.compiled, r.error.message);
                CHECK(r.outputs[0].dims() == ember::shape{M, N});
                ember::test::check_close(r.outputs[0], naive_gemm(a, b, &c, ta, tb, 0.75f, -2.0f), 1e-5f, 1e-5f);
            }
}

TEST_CASE("gemm: beta = 0 still adds nothing from C, and alpha = 0 leaves beta * C") {
    const auto a = ember::test::random_f32({2, 3}, 1);
    const auto b = ember::test::random_f32({3, 2}, 2);
    const auto c = ember::test::make_f32({2}, {10, 20});
    auto no_c = ember::test::run_node_both_ways("Gemm", {a, b, c}, {ember::attribute::of("beta", 0.0f)});
    REQUIRE_MESSAGE(no_c.compiled, no_c.error.message);
    ember::test::check_close(no_c.outputs[0], naive_gemm(a, b, nullptr, false, false, 1.0f, 0.0f), 1e-6f, 1e-6f);
    auto only_c = ember::test::run_node_both_ways("Gemm", {a, b, c}, {ember::attribute::of("alpha", 0.0f), ember::attribute::of("beta", 3.0f)});
    REQUIRE_MESSAGE(only_c.compiled, only_c.error.message);
    ember::test::check_close(only_c.outputs[0], {30, 60, 30, 60}, 0.0f, 0.0f);
}

TEST_CASE("gemm: the reference with a thread pool matches the naive loop") {
    const auto a = ember::test::random_f32({37, 9}, 5);
    const auto b = ember::test::random_f32({9, 11}, 6);
    ember::ops::gemm::args g;
    g.m = 37;
    g.n = 11;
    g.k = 9;
    ember::thread_pool pool(3);
    const ember::executor ex = pool.as_executor();
    std::vector<float> y(37 * 11);
    ember::ops::gemm::reference(g, a.data<float>(), b.data<float>(), nullptr, y.data(), &ex);
    ember::test::check_close(y, naive_gemm(a, b, nullptr, false, false, 1.0f, 1.0f), 1e-5f, 1e-5f);
}

TEST_CASE("gemm: mismatched shapes are rejected with a message naming the node and shapes") {
    SUBCASE("inner dimensions differ") {
        auto r = ember::test::run_node("Gemm", {ember::test::random_f32({2, 3}, 1), ember::test::random_f32({4, 2}, 2)});
        REQUIRE_FALSE(r.compiled);
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("'node' (Gemm)") != std::string::npos);
        CHECK(r.error.message.find("[2, 3] x [4, 2]") != std::string::npos);
    }
    SUBCASE("inner dimensions differ once transB is applied") {
        auto r = ember::test::run_node("Gemm", {ember::test::random_f32({2, 3}, 1), ember::test::random_f32({3, 2}, 2)},
                                       {ember::attribute::of("transB", 1)});
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("3 vs 2") != std::string::npos);
    }
    SUBCASE("C does not broadcast to [M, N]") {
        auto r = ember::test::run_node("Gemm", {ember::test::random_f32({2, 3}, 1), ember::test::random_f32({3, 4}, 2), ember::test::random_f32({2}, 3)});
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("[2]") != std::string::npos);
        CHECK(r.error.message.find("[2, 4]") != std::string::npos);
        auto big = ember::test::run_node("Gemm", {ember::test::random_f32({2, 3}, 1), ember::test::random_f32({3, 4}, 2),
                                                  ember::test::random_f32({1, 2, 4}, 3)});
        CHECK(big.error.code == ember::status::shape_mismatch);
    }
    SUBCASE("operands that are not matrices") {
        auto r = ember::test::run_node("Gemm", {ember::test::random_f32({3}, 1), ember::test::random_f32({3, 4}, 2)});
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("[3] and [3, 4]") != std::string::npos);
    }
    SUBCASE("int32 operands") {
        auto r = ember::test::run_node("Gemm", {ember::test::make<std::int32_t>({1, 1}, {1}), ember::test::make<std::int32_t>({1, 1}, {1})});
        CHECK(r.error.code == ember::status::unsupported_op);
        CHECK(r.error.message.find("int32") != std::string::npos);
    }
}
