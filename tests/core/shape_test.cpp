// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <limits>

#include <ember/core/shape.hpp>

TEST_CASE("shape: rank, elements, equality and formatting") {
    const ember::shape s{2, 3, 4};
    CHECK(s.rank() == 3);
    CHECK(s.elements() == 24);
    CHECK(ember::shape{}.elements() == 1);
    CHECK(ember::shape{5, 0}.elements() == 0);
    CHECK(s == ember::shape{2, 3, 4});
    CHECK(s != ember::shape{2, 3});
    CHECK(ember::detail::format("{}", s) == "[2, 3, 4]");
    CHECK(ember::detail::format("{}", ember::partial_shape{"batch", 3, -1}) == "[batch, 3, ?]");
}

TEST_CASE("shape: checked_elements reports overflow and negative dimensions") {
    const std::int64_t big = std::numeric_limits<std::int64_t>::max() / 2;
    CHECK(ember::shape{big, 3}.checked_elements() == -1);
    CHECK(ember::shape{4, -1}.checked_elements() == -1);
    CHECK(ember::shape{1 << 20, 1 << 20}.checked_elements() == (std::int64_t{1} << 40));
}

TEST_CASE("shape: push_back and resize up to max_rank") {
    ember::shape s;
    for (std::size_t i = 0; i < ember::max_rank; ++i) s.push_back(static_cast<std::int64_t>(i + 1));
    CHECK(s.rank() == ember::max_rank);
    s.resize(2);
    CHECK(s == ember::shape{1, 2});
    s.resize(4, 7);
    CHECK(s == ember::shape{1, 2, 7, 7});
    CHECK_FALSE(ember::shape::valid_rank(ember::max_rank + 1));
}
