// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <vector>

#include <ember/core/tensor.hpp>
#include <ember/status.hpp>

#include "support/counting_allocator.hpp"

namespace {
using counting = ember::test::counting_allocator;
} // namespace

TEST_CASE("tensor: copy_of keeps the values; copies are deep") {
    auto t = ember::tensor::copy_of<float>({2, 2}, {1.0f, 2.0f, 3.0f, 4.0f});
    REQUIRE(t);
    CHECK(t->type() == ember::dtype::float32);
    CHECK(t->size_bytes() == 16);
    ember::tensor copy = *t;
    copy.data<float>()[0] = 9.0f;
    CHECK(t->data<float>()[0] == 1.0f);
    CHECK(copy.view<float>()[0] == 9.0f);
    CHECK(reinterpret_cast<std::uintptr_t>(t->bytes()) % EMBER_ALIGNMENT == 0);
}

TEST_CASE("tensor: wrong value count, undefined dtype and overflow are errors, not crashes") {
    auto wrong = ember::tensor::copy_of<float>({3}, {1.0f, 2.0f});
    CHECK_FALSE(wrong);
    CHECK(wrong.error().code == ember::status::invalid_argument);
    CHECK(wrong.error().message.find("2 values") != std::string::npos);
    CHECK_FALSE(ember::tensor::create(ember::dtype::undefined, {1}));
    CHECK_FALSE(ember::tensor::create(ember::dtype::float32, {std::int64_t{1} << 62, 8}));
}

TEST_CASE("tensor: memory comes from the given allocator, and its failure is out_of_memory") {
    counting c;
    const ember::allocator alloc = c.get();
    {
        auto t = ember::tensor::create(ember::dtype::int32, {10}, alloc);
        REQUIRE(t);
        CHECK(c.allocs == 1);
    }
    CHECK(c.frees == 1);
    c.fail = true;
    auto t = ember::tensor::create(ember::dtype::int32, {10}, alloc);
    CHECK_FALSE(t);
    CHECK(t.error().code == ember::status::out_of_memory);
}

TEST_CASE("result: holds a value or an error, moves and copies") {
    ember::result<std::vector<int>> ok(std::vector<int>{1, 2, 3});
    REQUIRE(ok);
    CHECK(ok->size() == 3);
    CHECK(ok.code() == ember::status::ok);
    ember::result<std::vector<int>> moved = std::move(ok);
    CHECK((*moved)[2] == 3);
    ember::result<std::vector<int>> bad(ember::error_info{ember::status::io_error, 4, "cannot read"});
    CHECK_FALSE(bad);
    CHECK(bad.code() == ember::status::io_error);
    CHECK(bad.error().node == 4);
    bad = moved;
    CHECK(bad);
    CHECK(ember::to_string(ember::status::shape_mismatch) == "shape_mismatch");
#if EMBER_HAS_EXCEPTIONS
    CHECK_THROWS_AS(ember::value_or_throw(ember::result<int>(ember::status::invalid_model, "x")), ember::exception);
    CHECK(ember::value_or_throw(ember::result<int>(5)) == 5);
#endif
}
