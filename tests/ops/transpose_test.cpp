// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <ember/ops/transpose.hpp>

#include "support/check.hpp"

using ember::test::values_of;

namespace {

ember::attribute perm(std::vector<std::int64_t> p) { return ember::attribute::of("perm", std::move(p)); }


// y[i0, ..., ir-1] = x[j] where j's dimension p[k] index is i_k: the definition, walked over
// every output element with a full multi-index.
template <class T>
std::vector<T> naive_transpose(const std::vector<T>& x, const ember::shape& in, const std::vector<std::size_t>& p) {
    const std::size_t r = in.rank();
    std::vector<std::int64_t> in_strides(r, 1), out_dims(r), idx(r, 0);
    for (std::size_t i = r; i-- > 1;) in_strides[i - 1] = in_strides[i] * in[i];
    for (std::size_t k = 0; k < r; ++k) out_dims[k] = in[p[k]];
    std::vector<T> y;
    for (std::int64_t n = 0; n < in.elements(); ++n) {
        std::int64_t src = 0;
        for (std::size_t k = 0; k < r; ++k) src += idx[k] * in_strides[p[k]];
        y.push_back(x[static_cast<std::size_t>(src)]);
        for (std::size_t k = r; k-- > 0;) {
            if (++idx[k] < out_dims[k]) break;
            idx[k] = 0;
        }
    }
    return y;
}

template <class T>
void check_random_transposes(std::uint32_t seed) {
    std::mt19937 rng(seed);
    for (int trial = 0; trial < 25; ++trial) {
        const std::size_t rank = std::uniform_int_distribution<std::size_t>(1, 5)(rng);
        ember::shape dims;
        for (std::size_t i = 0; i < rank; ++i) dims.push_back(std::uniform_int_distribution<std::int64_t>(1, 4)(rng));
        std::vector<std::size_t> p(rank);
        std::iota(p.begin(), p.end(), std::size_t{0});
        std::shuffle(p.begin(), p.end(), rng);
        std::vector<T> x(static_cast<std::size_t>(dims.elements()));
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i * 7 + 3);
        CAPTURE(trial);
        CAPTURE(ember::detail::format("{} perm {}", dims, p));
        auto r = ember::test::run_node_both_ways("Transpose", {ember::test::make<T>(dims, x)},
                                                 {perm(std::vector<std::int64_t>(p.begin(), p.end()))});
        REQUIRE_MESSAGE(r.compiled, r.error.message);
        ember::shape out;
        for (std::size_t k : p) out.push_back(dims[k]);
        CHECK(r.outputs[0].dims() == out);
        CHECK(values_of<T>(r.outputs[0]) == naive_transpose(x, dims, p));
    }
}

} // namespace

TEST_CASE("transpose: the default reverses the dimensions") {
    const auto x = ember::test::make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
    auto r = ember::test::run_node_both_ways("Transpose", {x});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{3, 2});
    ember::test::check_close(r.outputs[0], {1, 4, 2, 5, 3, 6}, 0.0f, 0.0f);

    const auto cube = ember::test::make_f32({2, 1, 3}, {0, 1, 2, 3, 4, 5});
    auto c = ember::test::run_node_both_ways("Transpose", {cube});
    REQUIRE_MESSAGE(c.compiled, c.error.message);
    CHECK(c.outputs[0].dims() == ember::shape{3, 1, 2});
    ember::test::check_close(c.outputs[0], {0, 3, 1, 4, 2, 5}, 0.0f, 0.0f);
}

TEST_CASE("transpose: an explicit perm, worked by hand") {
    // x[i][j][k] = 100 i + 10 j + k, shape [2, 2, 3]; perm [1, 2, 0] gives y[j][k][i]
    std::vector<float> v;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            for (int k = 0; k < 3; ++k) v.push_back(float(100 * i + 10 * j + k));
    auto r = ember::test::run_node_both_ways("Transpose", {ember::test::make_f32({2, 2, 3}, v)}, {perm({1, 2, 0})});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2, 3, 2});
    ember::test::check_close(r.outputs[0], {0, 100, 1, 101, 2, 102, 10, 110, 11, 111, 12, 112}, 0.0f, 0.0f);
}

TEST_CASE("transpose: random shapes and perms match a naive loop for 1, 2, 4 and 8 byte elements") {
    check_random_transposes<std::uint8_t>(1);
    check_random_transposes<std::int16_t>(2);
    check_random_transposes<float>(3);
    check_random_transposes<std::int32_t>(4);
    check_random_transposes<std::int64_t>(5);
    check_random_transposes<double>(6);
}

TEST_CASE("transpose: a scalar, an identity perm and an empty tensor") {
    auto s = ember::test::run_node_both_ways("Transpose", {ember::test::make_f32({}, {4.5f})});
    REQUIRE_MESSAGE(s.compiled, s.error.message);
    CHECK(s.outputs[0].dims() == ember::shape{});
    ember::test::check_close(s.outputs[0], {4.5f}, 0.0f, 0.0f);

    auto id = ember::test::run_node_both_ways("Transpose", {ember::test::make_f32({2, 2}, {1, 2, 3, 4})}, {perm({0, 1})});
    REQUIRE_MESSAGE(id.compiled, id.error.message);
    ember::test::check_close(id.outputs[0], {1, 2, 3, 4}, 0.0f, 0.0f);

    auto e = ember::test::run_node_both_ways("Transpose", {ember::test::make_f32({2, 0, 3}, {})});
    REQUIRE_MESSAGE(e.compiled, e.error.message);
    CHECK(e.outputs[0].dims() == ember::shape{3, 0, 2});
}

TEST_CASE("transpose: the reference with a thread pool matches the inline one") {
    const auto x = ember::test::random_f32({3, 4, 5, 6}, 9);
    ember::ops::transpose::args g;
    const std::vector<std::size_t> p = {2, 0, 3, 1};
    std::int64_t strides[4] = {120, 30, 6, 1};
    g.rank = 4;
    for (std::size_t i = 0; i < 4; ++i) {
        g.dims[i] = x.dims()[p[i]];
        g.in_strides[i] = strides[p[i]];
    }
    g.count = 360;
    ember::thread_pool pool(3);
    const ember::executor ex = pool.as_executor();
    std::vector<float> y(360);
    ember::ops::transpose::reference<4>(g, x.bytes(), reinterpret_cast<std::byte*>(y.data()), &ex);
    CHECK(y == naive_transpose(ember::test::values_f32(x), x.dims(), p));
}

TEST_CASE("transpose: a perm that is not a permutation is rejected with a message naming the node, perm and shape") {
    const auto x = ember::test::random_f32({2, 3, 4}, 1);
    SUBCASE("wrong length") {
        auto r = ember::test::run_node("Transpose", {x}, {perm({1, 0})});
        REQUIRE_FALSE(r.compiled);
        CHECK(r.error.code == ember::status::invalid_model);
        CHECK(r.error.message.find("'node' (Transpose)") != std::string::npos);
        CHECK(r.error.message.find("[1, 0]") != std::string::npos);
        CHECK(r.error.message.find("[2, 3, 4]") != std::string::npos);
    }
    SUBCASE("repeated entry") {
        auto r = ember::test::run_node("Transpose", {x}, {perm({0, 1, 1})});
        CHECK(r.error.code == ember::status::invalid_model);
        CHECK(r.error.message.find("[0, 1, 1]") != std::string::npos);
    }
    SUBCASE("entry out of range") {
        for (std::int64_t bad : {3, -1}) {
            auto r = ember::test::run_node("Transpose", {x}, {perm({bad, 0, 1})});
            CHECK(r.error.code == ember::status::invalid_model);
            CHECK(r.error.message.find("entry " + std::to_string(bad)) != std::string::npos);
        }
    }
}
