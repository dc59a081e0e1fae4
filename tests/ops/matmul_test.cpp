// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include <ember/ops/matmul.hpp>

#include "support/check.hpp"

namespace {

// numpy.matmul written out the slow way, independent of ops::matmul: 1-D operands promoted, the
// batch dims right-aligned and broadcast, a double accumulator.
std::vector<float> naive_matmul(const ember::tensor& a, const ember::tensor& b, ember::shape& out) {
    std::vector<std::int64_t> da(a.dims().begin(), a.dims().end()), db(b.dims().begin(), b.dims().end());
    const bool a_vec = da.size() == 1, b_vec = db.size() == 1;
    if (a_vec) da.insert(da.begin(), 1);
    if (b_vec) db.push_back(1);
    const std::int64_t M = da[da.size() - 2], K = da.back(), N = db.back();
    REQUIRE(db[db.size() - 2] == K);
    const std::size_t ra = da.size() - 2, rb = db.size() - 2, r = ra > rb ? ra : rb;
    std::vector<std::int64_t> batch(r);
    auto dim_of = [&](const std::vector<std::int64_t>& d, std::size_t rank, std::size_t i) {
        return i + rank >= r ? d[i + rank - r] : std::int64_t{1};
    };
    for (std::size_t i = 0; i < r; ++i) {
        const std::int64_t x = dim_of(da, ra, i), y = dim_of(db, rb, i);
        REQUIRE((x == y || x == 1 || y == 1));
        batch[i] = x == 1 ? y : x;
    }
    out = ember::shape();
    for (std::int64_t d : batch) out.push_back(d);
    if (!a_vec) out.push_back(M);
    if (!b_vec) out.push_back(N);

    std::int64_t batch_count = 1;
    for (std::int64_t d : batch) batch_count *= d;
    std::vector<float> y(static_cast<std::size_t>(batch_count * M * N));
    const float* A = a.data<float>();
    const float* B = b.data<float>();
    std::vector<std::int64_t> idx(r, 0);
    for (std::int64_t t = 0; t < batch_count; ++t) {
        // matrix number inside A and B: row-major over their own batch dims, 0 where broadcast
        std::int64_t ma = 0, mb = 0;
        for (std::size_t i = 0; i < r; ++i) {
            if (i + ra >= r) ma = ma * dim_of(da, ra, i) + (dim_of(da, ra, i) == 1 ? 0 : idx[i]);
            if (i + rb >= r) mb = mb * dim_of(db, rb, i) + (dim_of(db, rb, i) == 1 ? 0 : idx[i]);
        }
        for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) {
                double acc = 0.0;
                for (std::int64_t p = 0; p < K; ++p) acc += double(A[ma * M * K + i * K + p]) * double(B[mb * K * N + p * N + j]);
                y[static_cast<std::size_t>((t * M + i) * N + j)] = static_cast<float>(acc);
            }
        for (std::size_t i = r; i-- > 0;) {
            if (++idx[i] < batch[i]) break;
            idx[i] = 0;
        }
    }
    return y;
}

} // namespace

TEST_CASE("matmul: a 2x3 by 3x2 product, worked by hand") {
    const auto a = ember::test::make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    const auto b = ember::test::make_f32({3, 2}, {7, 8, 9, 10, 11, 12});
    auto r = ember::test::run_node_both_ways("MatMul", {a, b});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2, 2});
    // [1 2 3] . [7 9 11] = 58, [1 2 3] . [8 10 12] = 64, [4 5 6] . [7 9 11] = 139, ... = 154
    ember::test::check_close(r.outputs[0], {58, 64, 139, 154}, 0.0f, 0.0f);
}

TEST_CASE("matmul: 1-D operands are promoted and the added dimension removed") {
    const auto v3 = ember::test::make_f32({3}, {1, 2, 3});
    const auto m32 = ember::test::make_f32({3, 2}, {1, 0, 0, 1, 1, 1});
    const auto m23 = ember::test::make_f32({2, 3}, {1, 0, 2, 0, 1, 0});
    SUBCASE("vector x matrix -> vector") {
        auto r = ember::test::run_node_both_ways("MatMul", {v3, m32});
        REQUIRE_MESSAGE(r.compiled, r.error.message);
        CHECK(r.outputs[0].dims() == ember::shape{2});
        ember::test::check_close(r.outputs[0], {1 + 3, 2 + 3}, 0.0f, 0.0f);
    }
    SUBCASE("matrix x vector -> vector") {
        auto r = ember::test::run_node_both_ways("MatMul", {m23, v3});
        REQUIRE_MESSAGE(r.compiled, r.error.message);
        CHECK(r.outputs[0].dims() == ember::shape{2});
        ember::test::check_close(r.outputs[0], {1 + 6, 2}, 0.0f, 0.0f);
    }
    SUBCASE("vector x vector -> scalar (dot product)") {
        auto r = ember::test::run_node_both_ways("MatMul", {v3, ember::test::make_f32({3}, {4, 5, 6})});
        REQUIRE_MESSAGE(r.compiled, r.error.message);
        CHECK(r.outputs[0].dims() == ember::shape{});
        ember::test::check_close(r.outputs[0], {32}, 0.0f, 0.0f);
    }
    SUBCASE("batched matrix x vector -> [batch, M]") {
        const auto stack = ember::test::make_f32({2, 1, 3}, {1, 1, 1, 0, 0, 2});
        auto r = ember::test::run_node_both_ways("MatMul", {stack, v3});
        REQUIRE_MESSAGE(r.compiled, r.error.message);
        CHECK(r.outputs[0].dims() == ember::shape{2, 1});
        ember::test::check_close(r.outputs[0], {6, 6}, 0.0f, 0.0f);
    }
}

TEST_CASE("matmul: a shared right-hand matrix broadcasts over the batch") {
    // [2, 2, 2] x [2, 2]: the second batch entry is the first times 2
    const auto a = ember::test::make_f32({2, 2, 2}, {1, 2, 3, 4, 2, 4, 6, 8});
    const auto b = ember::test::make_f32({2, 2}, {0, 1, 1, 0});  // swaps the columns
    auto r = ember::test::run_node_both_ways("MatMul", {a, b});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2, 2, 2});
    ember::test::check_close(r.outputs[0], {2, 1, 4, 3, 4, 2, 8, 6}, 0.0f, 0.0f);
}

TEST_CASE("matmul: random batch-broadcast shapes match a naive numpy-style loop") {
    std::mt19937 rng(1234);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int trial = 0; trial < 60; ++trial) {
        const std::int64_t M = pick(1, 5), N = pick(1, 6), K = pick(1, 7);
        const int batch_rank = pick(0, 3);
        std::vector<std::int64_t> batch;
        for (int i = 0; i < batch_rank; ++i) batch.push_back(pick(1, 3));
        // each operand keeps a random suffix of the batch dims, with random dims set to 1
        auto operand_shape = [&](bool is_a) {
            ember::shape s;
            const int keep = pick(0, batch_rank);
            for (int i = batch_rank - keep; i < batch_rank; ++i) s.push_back(pick(0, 2) == 0 ? 1 : batch[static_cast<std::size_t>(i)]);
            if (is_a) {
                if (!(keep == 0 && pick(0, 3) == 0)) s.push_back(M);
                s.push_back(K);
            } else {
                s.push_back(K);
                if (!(keep == 0 && pick(0, 3) == 0)) s.push_back(N);
            }
            return s;
        };
        const ember::shape sa = operand_shape(true), sb = operand_shape(false);
        CAPTURE(trial);
        CAPTURE(ember::detail::format("{} x {}", sa, sb));
        const auto a = ember::test::random_f32(sa, static_cast<std::uint32_t>(2 * trial + 1));
        const auto b = ember::test::random_f32(sb, static_cast<std::uint32_t>(2 * trial + 2));
        ember::shape expected_dims;
        const std::vector<float> expected = naive_matmul(a, b, expected_dims);
        auto r = ember::test::run_node_both_ways("MatMul", {a, b});
        REQUIRE_MESSAGE(r.compiled, r.error.message);
        CHECK(r.outputs[0].dims() == expected_dims);
        ember::test::check_close(r.outputs[0], expected, 1e-5f, 1e-5f);
    }
}

TEST_CASE("matmul: the reference gives the same result with a thread pool as inline") {
    const auto a = ember::test::random_f32({3, 1, 7, 5}, 11);
    const auto b = ember::test::random_f32({2, 5, 4}, 12);
    ember::shape dims;
    const std::vector<float> expected = naive_matmul(a, b, dims);
    ember::ops::matmul::args g;
    REQUIRE(ember::ops::matmul::plan_shapes(a.dims(), b.dims(), dims, &g));
    CHECK(dims == ember::shape{3, 2, 7, 4});
    ember::thread_pool pool(4);
    const ember::executor ex = pool.as_executor();
    std::vector<float> y(expected.size());
    ember::ops::matmul::reference(g, a.data<float>(), b.data<float>(), y.data(), &ex);
    ember::test::check_close(y, expected, 1e-5f, 1e-5f);
}

TEST_CASE("matmul: an empty inner dimension gives zeros, an empty outer one an empty result") {
    auto r = ember::test::run_node_both_ways("MatMul", {ember::test::make_f32({2, 0}, {}), ember::test::make_f32({0, 3}, {})});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2, 3});
    ember::test::check_close(r.outputs[0], {0, 0, 0, 0, 0, 0}, 0.0f, 0.0f);

    auto e = ember::test::run_node_both_ways("MatMul", {ember::test::make_f32({0, 2}, {}), ember::test::make_f32({2, 3}, {1, 2, 3, 4, 5, 6})});
    REQUIRE_MESSAGE(e.compiled, e.error.message);
    CHECK(e.outputs[0].dims() == ember::shape{0, 3});
}

TEST_CASE("matmul: mismatched shapes and dtypes are rejected with a message naming the node and shapes") {
    SUBCASE("inner dimensions differ") {
        auto r = ember::test::run_node("MatMul", {ember::test::random_f32({2, 3}, 1), ember::test::random_f32({4, 2}, 2)});
        CHECK_FALSE(r.compiled);
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("'node' (MatMul)") != std::string::npos);
        CHECK(r.error.message.find("[2, 3] x [4, 2]") != std::string::npos);
    }
    SUBCASE("vector operands of different lengths") {
        auto r = ember::test::run_node("MatMul", {ember::test::random_f32({3}, 1), ember::test::random_f32({4}, 2)});
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("[3] x [4]") != std::string::npos);
    }
    SUBCASE("batch dimensions do not broadcast") {
        auto r = ember::test::run_node("MatMul", {ember::test::random_f32({2, 2, 3}, 1), ember::test::random_f32({3, 3, 4}, 2)});
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("'node' (MatMul)") != std::string::npos);
        CHECK(r.error.message.find("[2, 2, 3] and [3, 3, 4]") != std::string::npos);
    }
    SUBCASE("a scalar operand") {
        auto r = ember::test::run_node("MatMul", {ember::test::make_f32({}, {2}), ember::test::random_f32({3}, 2)});
        CHECK(r.error.code == ember::status::shape_mismatch);
        CHECK(r.error.message.find("rank >= 1") != std::string::npos);
    }
    SUBCASE("int64 operands") {
        auto r = ember::test::run_node("MatMul", {ember::test::make<std::int64_t>({1, 1}, {1}), ember::test::make<std::int64_t>({1, 1}, {2})});
        CHECK(r.error.code == ember::status::unsupported_op);
        CHECK(r.error.message.find("int64") != std::string::npos);
    }
}
