// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <ember/ops/global_average_pool.hpp>

#include "support/check.hpp"

using ember::shape;
using ember::status;

TEST_CASE("global_average_pool: each channel plane becomes its mean") {
    const auto x = ember::test::make_f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -1, 5, 9});
    auto r = ember::test::run_node_both_ways("GlobalAveragePool", {x});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == shape{1, 2, 1, 1});
    ember::test::check_close(r.outputs[0], {2.5f, 3.0f});
}

TEST_CASE("global_average_pool: 1-D and 3-D inputs over several images, against a double sum") {
    for (const shape& dims : {shape{3, 4, 7}, shape{2, 3, 4, 5, 6}, shape{2, 5, 9, 11}}) {
        CAPTURE(dims.rank());
        const ember::tensor x = ember::test::random_f32(dims, 9);
        auto r = ember::test::run_node_both_ways("GlobalAveragePool", {x});
        REQUIRE_MESSAGE(r.compiled, r.error.message);
        shape want{dims[0], dims[1]};
        std::int64_t plane = 1;
        for (std::size_t i = 2; i < dims.rank(); ++i) {
            want.push_back(1);
            plane *= dims[i];
        }
        CHECK(r.outputs[0].dims() == want);
        std::vector<float> expected;
        const float* xv = x.data<float>();
        for (std::int64_t p = 0; p < dims[0] * dims[1]; ++p) {
            double sum = 0.0;
            for (std::int64_t i = 0; i < plane; ++i) sum += xv[p * plane + i];
            expected.push_back(static_cast<float>(sum / double(plane)));
        }
        ember::test::check_close(r.outputs[0], expected, 1e-5f, 1e-5f);
    }
}

TEST_CASE("global_average_pool: an input without spatial dimensions, or of another dtype, is rejected") {
    auto flat = ember::test::run_node("GlobalAveragePool", {ember::test::make_f32({2, 3}, {1, 2, 3, 4, 5, 6})});
    CHECK_FALSE(flat.compiled);
    CHECK(flat.error.code == status::shape_mismatch);
    CHECK(flat.error.message.find("(GlobalAveragePool)") != std::string::npos);
    CHECK(flat.error.message.find("[2, 3]") != std::string::npos);

    auto type = ember::test::run_node("GlobalAveragePool", {ember::test::make<std::int64_t>({1, 1, 2}, {1, 2})});
    CHECK_FALSE(type.compiled);
    CHECK(type.error.code == status::unsupported_op);
}
