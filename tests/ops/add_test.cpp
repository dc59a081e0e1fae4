// SPDX-License-Identifier: Apache-2.0
// Add, and through it the numpy broadcasting that Add, Sub, Mul and Div share (ops/binary.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <ember/ops/add.hpp>

#include "support/check.hpp"

using ember::test::values_of;

namespace {


// a + b with numpy broadcasting, by a full multi-index per output element (no strides tricks).
std::vector<float> naive_broadcast_add(const ember::tensor& a, const ember::tensor& b, const ember::shape& out) {
    std::vector<float> y;
    std::vector<std::int64_t> idx(out.rank(), 0);
    auto offset = [&](const ember::shape& s) {
        std::int64_t o = 0;
        const std::size_t lead = out.rank() - s.rank();
        for (std::size_t i = 0; i < s.rank(); ++i) o = o * s[i] + (s[i] == 1 ? 0 : idx[lead + i]);
        return static_cast<std::size_t>(o);
    };
    for (std::int64_t n = 0; n < out.elements(); ++n) {
        y.push_back(a.data<float>()[offset(a.dims())] + b.data<float>()[offset(b.dims())]);
        for (std::size_t k = out.rank(); k-- > 0;) {
            if (++idx[k] < out[k]) break;
            idx[k] = 0;
        }
    }
    return y;
}

} // namespace

TEST_CASE("add: same shapes, element by element") {
    auto r = ember::test::run_node_both_ways("Add", {ember::test::make_f32({2, 2}, {1, 2, 3, 4}), ember::test::make_f32({2, 2}, {10, 20, 30, 40})});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2, 2});
    ember::test::check_close(r.outputs[0], {11, 22, 33, 44}, 0.0f, 0.0f);
}

TEST_CASE("add: a scalar broadcasts on either side") {
    const auto x = ember::test::make_f32({3}, {1, 2, 3});
    const auto s = ember::test::make_f32({}, {0.5f});
    auto left = ember::test::run_node_both_ways("Add", {s, x});
    REQUIRE_MESSAGE(left.compiled, left.error.message);
    CHECK(left.outputs[0].dims() == ember::shape{3});
    ember::test::check_close(left.outputs[0], {1.5f, 2.5f, 3.5f}, 0.0f, 0.0f);
    auto right = ember::test::run_node_both_ways("Add", {x, s});
    REQUIRE_MESSAGE(right.compiled, right.error.message);
    ember::test::check_close(right.outputs[0], {1.5f, 2.5f, 3.5f}, 0.0f, 0.0f);
    auto both = ember::test::run_node_both_ways("Add", {s, s});
    REQUIRE_MESSAGE(both.compiled, both.error.message);
    CHECK(both.outputs[0].dims() == ember::shape{});
    ember::test::check_close(both.outputs[0], {1.0f}, 0.0f, 0.0f);
}

TEST_CASE("add: [3, 1] + [1, 4] is an outer sum of shape [3, 4]") {
    const auto col = ember::test::make_f32({3, 1}, {0, 10, 20});
    const auto row = ember::test::make_f32({1, 4}, {1, 2, 3, 4});
    auto r = ember::test::run_node_both_ways("Add", {col, row});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{3, 4});
    ember::test::check_close(r.outputs[0], {1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24}, 0.0f, 0.0f);
}

TEST_CASE("add: operands of different ranks align on the right") {
    const auto x = ember::test::make_f32({2, 2, 3}, {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3});
    const auto bias = ember::test::make_f32({3}, {10, 20, 30});
    auto r = ember::test::run_node_both_ways("Add", {x, bias});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2, 2, 3});
    ember::test::check_close(r.outputs[0], {10, 20, 30, 11, 21, 31, 12, 22, 32, 13, 23, 33}, 0.0f, 0.0f);

    // [2, 1] against [3, 1, 1]: rank 2 padded to [1, 2, 1], result [3, 2, 1]
    auto p = ember::test::run_node_both_ways("Add", {ember::test::make_f32({2, 1}, {1, 2}), ember::test::make_f32({3, 1, 1}, {0, 10, 20})});
    REQUIRE_MESSAGE(p.compiled, p.error.message);
    CHECK(p.outputs[0].dims() == ember::shape{3, 2, 1});
    ember::test::check_close(p.outputs[0], {1, 2, 11, 12, 21, 22}, 0.0f, 0.0f);
}

TEST_CASE("add: random broadcast shapes match a naive multi-index loop") {
    std::mt19937 rng(77);
    for (int trial = 0; trial < 40; ++trial) {
        const std::size_t rank = std::uniform_int_distribution<std::size_t>(0, 4)(rng);
        ember::shape out;
        for (std::size_t i = 0; i < rank; ++i) out.push_back(std::uniform_int_distribution<std::int64_t>(1, 4)(rng));
        auto operand = [&]() {
            ember::shape s;
            const std::size_t keep = std::uniform_int_distribution<std::size_t>(0, rank)(rng);
            for (std::size_t i = rank - keep; i < rank; ++i) s.push_back(std::uniform_int_distribution<int>(0, 2)(rng) == 0 ? 1 : out[i]);
            return s;
        };
        const ember::shape sa = operand(), sb = operand();
        ember::shape expected_dims;
        REQUIRE(ember::broadcast_shapes(sa, sb, expected_dims));
        CAPTURE(ember::detail::format("{} + {}", sa, sb));
        const auto a = ember::test::random_f32(sa, static_cast<std::uint32_t>(trial * 2 + 1));
        const auto b = ember::test::random_f32(sb, static_cast<std::uint32_t>(trial * 2 + 2));
        auto r = ember::test::run_node_both_ways("Add", {a, b});
        REQUIRE_MESSAGE(r.compiled, r.error.message);
        CHECK(r.outputs[0].dims() == expected_dims);
        ember::test::check_close(r.outputs[0], naive_broadcast_add(a, b, expected_dims), 0.0f, 0.0f);
    }
}

TEST_CASE("add: int32 and int64 add exactly and wrap on overflow") {
    auto i32 = ember::test::run_node_both_ways(
        "Add", {ember::test::make<std::int32_t>({3}, {1, -5, std::numeric_limits<std::int32_t>::max()}), ember::test::make<std::int32_t>({}, {1})});
    REQUIRE_MESSAGE(i32.compiled, i32.error.message);
    CHECK(i32.outputs[0].type() == ember::dtype::int32);
    CHECK(values_of<std::int32_t>(i32.outputs[0]) == std::vector<std::int32_t>{2, -4, std::numeric_limits<std::int32_t>::min()});

    const std::int64_t big = std::int64_t{1} << 40;
    auto i64 = ember::test::run_node_both_ways(
        "Add", {ember::test::make<std::int64_t>({2, 1}, {big, -big}), ember::test::make<std::int64_t>({1, 2}, {1, big})});
    REQUIRE_MESSAGE(i64.compiled, i64.error.message);
    CHECK(values_of<std::int64_t>(i64.outputs[0]) == std::vector<std::int64_t>{big + 1, 2 * big, 1 - big, 0});
}

TEST_CASE("add: float64 is supported") {
    auto r = ember::test::run_node_both_ways("Add", {ember::test::make<double>({2}, {0.1, 1e300}), ember::test::make<double>({2}, {0.2, 1e300})});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(values_of<double>(r.outputs[0]) == std::vector<double>{0.1 + 0.2, 2e300});
}

TEST_CASE("add: shapes that do not broadcast are rejected with a message naming the node and both shapes") {
    auto r = ember::test::run_node("Add", {ember::test::random_f32({2, 3}, 1), ember::test::random_f32({4, 3}, 2)});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::shape_mismatch);
    CHECK(r.error.message.find("'node' (Add)") != std::string::npos);
    CHECK(r.error.message.find("[2, 3]") != std::string::npos);
    CHECK(r.error.message.find("[4, 3]") != std::string::npos);

    auto trailing = ember::test::run_node("Add", {ember::test::random_f32({3}, 1), ember::test::random_f32({2, 4}, 2)});
    CHECK(trailing.error.code == ember::status::shape_mismatch);
}

TEST_CASE("add: operands of different dtypes are rejected, naming both") {
    auto r = ember::test::run_node("Add", {ember::test::random_f32({2}, 1), ember::test::make<std::int32_t>({2}, {1, 2})});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::shape_mismatch);
    CHECK(r.error.message.find("'node' (Add)") != std::string::npos);
    CHECK(r.error.message.find("float32") != std::string::npos);
    CHECK(r.error.message.find("int32") != std::string::npos);
}

TEST_CASE("add: an unsupported dtype is rejected") {
    ember::result<ember::tensor> flags = ember::tensor::create(ember::dtype::boolean, {2});
    REQUIRE(flags);
    auto r = ember::test::run_node("Add", {*flags, *flags});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::unsupported_op);
    CHECK(r.error.message.find("bool") != std::string::npos);
}

TEST_CASE("add: in a chain it runs in place over an input that is not broadcast") {
    const auto c = ember::test::run_in_chain("Add", ember::test::make_f32({2, 3}, {-1, 1, -1, 2, -2, -5}), {ember::test::make_f32({3}, {1, 2, 3})});
    CHECK(c.shared);
    ember::test::check_close(c.y, {1, 3, 3, 3, 2, 3}, 0.0f, 0.0f);
}
