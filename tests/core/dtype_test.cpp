// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include <ember/core/dtype.hpp>

using ember::dtype;

TEST_CASE("dtype: sizes and names of every dtype") {
    CHECK(ember::size_of(dtype::float32) == 4);
    CHECK(ember::size_of(dtype::float16) == 2);
    CHECK(ember::size_of(dtype::bfloat16) == 2);
    CHECK(ember::size_of(dtype::float64) == 8);
    CHECK(ember::size_of(dtype::int8) == 1);
    CHECK(ember::size_of(dtype::uint8) == 1);
    CHECK(ember::size_of(dtype::int16) == 2);
    CHECK(ember::size_of(dtype::int32) == 4);
    CHECK(ember::size_of(dtype::int64) == 8);
    CHECK(ember::size_of(dtype::boolean) == 1);
    CHECK(ember::size_of(dtype::undefined) == 0);
    CHECK(ember::to_string(dtype::boolean) == "bool");
    CHECK(ember::to_string(dtype::bfloat16) == "bfloat16");
    CHECK(ember::dtype_of<float> == dtype::float32);
    CHECK(ember::dtype_of<const std::int64_t> == dtype::int64);
    CHECK(ember::dtype_of<bool> == dtype::boolean);
    CHECK(ember::dtype_of<char*> == dtype::undefined);
}

TEST_CASE("dtype: visit_dtype hands over a value of the matching C++ type") {
    std::size_t seen = 0;
    CHECK(ember::visit_dtype(dtype::int16, [&](auto tag) { seen = sizeof(tag); }));
    CHECK(seen == 2);
    CHECK_FALSE(ember::visit_dtype(dtype::undefined, [&](auto) {}));
}

TEST_CASE("float16: every half value survives half -> float -> half") {
    for (std::uint32_t bits = 0; bits <= 0xffffu; ++bits) {
        const auto h = static_cast<std::uint16_t>(bits);
        const float f = ember::float16::to_float(h);
        if (std::isnan(f)) {
            CHECK(std::isnan(ember::float16::to_float(ember::float16::from_float(f))));
            continue;
        }
        REQUIRE(ember::float16::from_float(f) == h);
    }
}

TEST_CASE("float16: rounding to nearest even, overflow to infinity, subnormals") {
    CHECK(static_cast<float>(ember::float16(1.0f)) == 1.0f);
    CHECK(static_cast<float>(ember::float16(65504.0f)) == 65504.0f);
    CHECK(std::isinf(static_cast<float>(ember::float16(70000.0f))));
    // one half ulp at 1.0 is 2/4096
    CHECK(static_cast<float>(ember::float16(1.0f + 1.0f / 4096.0f)) == 1.0f);                 // below half: down
    CHECK(static_cast<float>(ember::float16(1.0f + 3.0f / 4096.0f)) == 1.0f + 4.0f / 4096.0f);  // above half: up
    CHECK(static_cast<float>(ember::float16(1.0f + 2.0f / 4096.0f)) == 1.0f);                 // tie: to even (down)
    CHECK(static_cast<float>(ember::float16(1.0f + 6.0f / 4096.0f)) == 1.0f + 8.0f / 4096.0f);  // tie: to even (up)
    const float smallest = std::ldexp(1.0f, -24);
    CHECK(static_cast<float>(ember::float16(smallest)) == smallest);
    CHECK(static_cast<float>(ember::float16(smallest * 0.25f)) == 0.0f);
    CHECK(ember::float16(-0.0f).bits == 0x8000u);
}

TEST_CASE("bfloat16: keeps the upper half, rounds to nearest even, keeps NaN") {
    CHECK(static_cast<float>(ember::bfloat16(1.0f)) == 1.0f);
    CHECK(static_cast<float>(ember::bfloat16(3.140625f)) == 3.140625f);
    CHECK(static_cast<float>(ember::bfloat16(1.00390625f)) == 1.0f);  // halfway: to even
    CHECK(std::isnan(static_cast<float>(ember::bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}
