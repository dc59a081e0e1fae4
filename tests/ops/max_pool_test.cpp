// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/max_pool.hpp>

#include "support/check.hpp"

using ember::test::iota;

using ember::attribute;
using ember::shape;
using ember::status;
using ints = std::vector<std::int64_t>;

namespace {

// A 3x3 plane whose maxima move around, so a wrong window shows.
ember::tensor mixed3x3() { return ember::test::make_f32({1, 1, 3, 3}, {1, 9, 2, 4, 3, 8, 7, 5, 6}); }

std::vector<attribute> with_kernel(ints kernel, std::vector<attribute> rest = {}) {
    rest.push_back(attribute::of("kernel_shape", std::move(kernel)));
    return rest;
}

ember::tensor pool(const ember::tensor& x, std::vector<attribute> attrs) {
    auto r = ember::test::run_node_both_ways("MaxPool", {x}, std::move(attrs));
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    return std::move(r.outputs[0]);
}

// Y and Indices.
ember::test::node_run pool2(const ember::tensor& x, std::vector<attribute> attrs) {
    auto r = ember::test::run_node_both_ways("MaxPool", {x}, std::move(attrs), 2);
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    REQUIRE(r.outputs.size() == 2);
    REQUIRE(r.outputs[1].type() == ember::dtype::int64);
    REQUIRE(r.outputs[1].dims() == r.outputs[0].dims());
    return r;
}

std::vector<std::int64_t> values_i64(const ember::tensor& t) {
    const std::int64_t* p = t.data<std::int64_t>();
    return std::vector<std::int64_t>(p, p + t.size());
}

ember::test::node_run pool_fails(const ember::tensor& x, std::vector<attribute> attrs) {
    auto r = ember::test::run_node("MaxPool", {x}, std::move(attrs));
    CHECK_FALSE(r.compiled);
    CHECK(r.error.message.find("(MaxPool)") != std::string::npos);
    return r;
}

} // namespace

TEST_CASE("max_pool: 2x2 windows over a 3x3 plane, with the indices of the maxima") {
    auto r = pool2(mixed3x3(), with_kernel({2, 2}));
    CHECK(r.outputs[0].dims() == shape{1, 1, 2, 2});
    ember::test::check_close(r.outputs[0], {9, 9, 7, 8}, 0.0f, 0.0f);
    CHECK(values_i64(r.outputs[1]) == std::vector<std::int64_t>{1, 1, 6, 5});
}

TEST_CASE("max_pool: padding never wins, even over negative values") {
    const ember::tensor x = iota({1, 1, 3, 3}, -9.0f);  // -9 .. -1
    auto r = pool2(x, with_kernel({2, 2}, {attribute::of("pads", ints{1, 1, 1, 1}), attribute::of("strides", ints{2, 2})}));
    CHECK(r.outputs[0].dims() == shape{1, 1, 2, 2});
    // windows start at -1 and 1 in each dimension
    ember::test::check_close(r.outputs[0], {-9, -7, -3, -1}, 0.0f, 0.0f);
    CHECK(values_i64(r.outputs[1]) == std::vector<std::int64_t>{0, 2, 6, 8});
}

TEST_CASE("max_pool: ceil_mode adds the partial last window") {
    const ember::tensor x = iota({1, 1, 4, 4});
    const ember::tensor floor = pool(x, with_kernel({3, 3}, {attribute::of("strides", ints{2, 2})}));
    CHECK(floor.dims() == shape{1, 1, 1, 1});
    ember::test::check_close(floor, {11}, 0.0f, 0.0f);
    const ember::tensor ceil = pool(x, with_kernel({3, 3}, {attribute::of("strides", ints{2, 2}), attribute::of("ceil_mode", 1)}));
    CHECK(ceil.dims() == shape{1, 1, 2, 2});
    ember::test::check_close(ceil, {11, 12, 15, 16}, 0.0f, 0.0f);
}

TEST_CASE("max_pool: with ceil_mode a last window that would start in the end padding is dropped") {
    // in 3, kernel 2, stride 2, pads 1 + 1: ceil((3 + 2 - 2) / 2) + 1 = 3 windows, starting at
    // -1, 1 and 3; the one at 3 starts in the end padding, so there are 2.
    const auto x = ember::test::make_f32({1, 1, 3}, {1, 2, 3});
    const ember::tensor y = pool(x, with_kernel({2}, {attribute::of("pads", ints{1, 1}), attribute::of("strides", ints{2}), attribute::of("ceil_mode", 1)}));
    CHECK(y.dims() == shape{1, 1, 2});
    ember::test::check_close(y, {1, 3}, 0.0f, 0.0f);
}

TEST_CASE("max_pool: dilation") {
    // a dilated 2x2 window takes the corners of a 3x3 block
    const ember::tensor x = ember::test::make_f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
    const std::vector<float> corners_max = {11, 12, 15, 16};
    auto r = pool2(x, with_kernel({2, 2}, {attribute::of("dilations", ints{2, 2})}));
    CHECK(r.outputs[0].dims() == shape{1, 1, 2, 2});
    ember::test::check_close(r.outputs[0], corners_max, 0.0f, 0.0f);
    CHECK(values_i64(r.outputs[1]) == std::vector<std::int64_t>{10, 11, 14, 15});

    // a large value at (1, 1) lies between the dilated taps of window (0, 0) and must not show
    const ember::tensor y = pool(ember::test::make_f32({1, 1, 3, 3}, {1, 0, 2, 0, 99, 0, 3, 0, 4}), with_kernel({2, 2}, {attribute::of("dilations", ints{2, 2})}));
    ember::test::check_close(y, {4}, 0.0f, 0.0f);
}

TEST_CASE("max_pool: auto_pad SAME_UPPER pads at the end, SAME_LOWER at the beginning, VALID not at all") {
    const ember::tensor upper = pool(mixed3x3(), with_kernel({2, 2}, {attribute::of("auto_pad", "SAME_UPPER")}));
    CHECK(upper.dims() == shape{1, 1, 3, 3});
    ember::test::check_close(upper, {9, 9, 8, 7, 8, 8, 7, 6, 6}, 0.0f, 0.0f);
    const ember::tensor lower = pool(mixed3x3(), with_kernel({2, 2}, {attribute::of("auto_pad", "SAME_LOWER")}));
    CHECK(lower.dims() == shape{1, 1, 3, 3});
    ember::test::check_close(lower, {1, 9, 9, 4, 9, 9, 7, 7, 8}, 0.0f, 0.0f);
    const ember::tensor valid = pool(mixed3x3(), with_kernel({2, 2}, {attribute::of("auto_pad", "VALID")}));
    CHECK(valid.dims() == shape{1, 1, 2, 2});
    ember::test::check_close(valid, {9, 9, 7, 8}, 0.0f, 0.0f);
}

TEST_CASE("max_pool: indices count the batch and channel planes; storage_order 1 is column-major") {
    // two images of two channels, each a 2x2 plane pooled whole
    const auto x = ember::test::make_f32({2, 2, 2, 2}, {1, 4, 3, 2, 5, 6, 8, 7, 0, 0, 0, 1, 9, 1, 1, 1});
    auto row = pool2(x, with_kernel({2, 2}));
    CHECK(row.outputs[0].dims() == shape{2, 2, 1, 1});
    ember::test::check_close(row.outputs[0], {4, 8, 1, 9}, 0.0f, 0.0f);
    CHECK(values_i64(row.outputs[1]) == std::vector<std::int64_t>{1, 4 + 2, 8 + 3, 12 + 0});

    auto col = pool2(x, with_kernel({2, 2}, {attribute::of("storage_order", 1)}));
    ember::test::check_close(col.outputs[0], {4, 8, 1, 9}, 0.0f, 0.0f);
    // (h, w) -> h + 2 * w
    CHECK(values_i64(col.outputs[1]) == std::vector<std::int64_t>{2, 4 + 1, 8 + 3, 12 + 0});
}

TEST_CASE("max_pool: ties go to the first position") {
    auto r = pool2(ember::test::make_f32({1, 1, 2, 3}, {5, 5, 5, 5, 5, 5}), with_kernel({2, 2}));
    CHECK(values_i64(r.outputs[1]) == std::vector<std::int64_t>{0, 1});
}

TEST_CASE("max_pool: 1-D and 3-D") {
    const auto x1 = ember::test::make_f32({1, 2, 5}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3});
    const ember::tensor y1 = pool(x1, with_kernel({3}, {attribute::of("strides", ints{2})}));
    CHECK(y1.dims() == shape{1, 2, 2});
    ember::test::check_close(y1, {4, 5, 9, 6}, 0.0f, 0.0f);

    const ember::tensor x3 = iota({1, 1, 2, 3, 4});
    auto r = pool2(x3, with_kernel({2, 2, 2}, {attribute::of("strides", ints{1, 1, 2})}));
    CHECK(r.outputs[0].dims() == shape{1, 1, 1, 2, 2});
    // x = 1 + 12 * depth + 4 * row + column; maxima at depth 1, rows 1..2, columns 1 and 3
    ember::test::check_close(r.outputs[0], {18, 20, 22, 24}, 0.0f, 0.0f);
    CHECK(values_i64(r.outputs[1]) == std::vector<std::int64_t>{17, 19, 21, 23});

    // column-major over (depth 2, rows 3, columns 4): depth + 2 * row + 6 * column
    auto col = pool2(x3, with_kernel({2, 2, 2}, {attribute::of("strides", ints{1, 1, 2}), attribute::of("storage_order", 1)}));
    CHECK(values_i64(col.outputs[1]) == std::vector<std::int64_t>{9, 21, 11, 23});
}

TEST_CASE("max_pool: kernel_shape is required and must match the spatial rank") {
    auto missing = pool_fails(mixed3x3(), {});
    CHECK(missing.error.code == status::invalid_model);
    CHECK(missing.error.message.find("kernel_shape") != std::string::npos);

    auto rank = pool_fails(mixed3x3(), with_kernel({2}));
    CHECK(rank.error.code == status::invalid_model);
    CHECK(rank.error.message.find("expected 2") != std::string::npos);
    CHECK(rank.error.message.find("[1, 1, 3, 3]") != std::string::npos);
}

TEST_CASE("max_pool: bad inputs and attributes are rejected") {
    auto flat = pool_fails(ember::test::make_f32({1, 3}, {1, 2, 3}), with_kernel({2}));
    CHECK(flat.error.code == status::shape_mismatch);

    auto order = pool_fails(mixed3x3(), with_kernel({2, 2}, {attribute::of("storage_order", 2)}));
    CHECK(order.error.code == status::invalid_model);

    auto big = pool_fails(mixed3x3(), with_kernel({4, 4}));
    CHECK(big.error.code == status::shape_mismatch);

    auto strides = pool_fails(mixed3x3(), with_kernel({2, 2}, {attribute::of("strides", ints{1, 1, 1})}));
    CHECK(strides.error.code == status::invalid_model);
    CHECK(strides.error.message.find("strides [1, 1, 1]") != std::string::npos);

    auto type = pool_fails(ember::test::make<std::int64_t>({1, 1, 2, 2}, {1, 2, 3, 4}), with_kernel({2, 2}));
    CHECK(type.error.code == status::unsupported_op);
}
