// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/identity.hpp>

#include "support/check.hpp"

TEST_CASE("identity: float32 comes through bit for bit, NaN payloads included") {
    std::vector<float> v = {1.5f, -0.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()};
    const auto x = ember::test::make_f32({2, 2}, v);
    auto r = ember::test::run_node_both_ways("Identity", {x});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{2, 2});
    CHECK(r.outputs[0].type() == ember::dtype::float32);
    CHECK(ember::test::same_bytes(r.outputs[0], x));
}

TEST_CASE("identity: int64, bool and a scalar keep their dtype and values") {
    const std::vector<std::int64_t> v = {std::numeric_limits<std::int64_t>::min(), -1, 0, std::int64_t{1} << 60};
    auto r = ember::test::run_node_both_ways("Identity", {ember::test::make<std::int64_t>({4}, v)});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].type() == ember::dtype::int64);
    const std::int64_t* y = r.outputs[0].data<std::int64_t>();
    CHECK(std::vector<std::int64_t>(y, y + 4) == v);

    ember::result<ember::tensor> flags = ember::tensor::copy_of<bool>({3}, {true, false, true});
    REQUIRE(flags);
    auto b = ember::test::run_node_both_ways("Identity", {*flags});
    REQUIRE_MESSAGE(b.compiled, b.error.message);
    CHECK(b.outputs[0].type() == ember::dtype::boolean);
    CHECK(b.outputs[0].data<bool>()[0]);
    CHECK_FALSE(b.outputs[0].data<bool>()[1]);

    auto s = ember::test::run_node_both_ways("Identity", {ember::test::make<std::int64_t>({}, {42})});
    REQUIRE_MESSAGE(s.compiled, s.error.message);
    CHECK(s.outputs[0].dims() == ember::shape{});
    CHECK(s.outputs[0].data<std::int64_t>()[0] == 42);
}

TEST_CASE("identity: an empty tensor") {
    auto r = ember::test::run_node_both_ways("Identity", {ember::test::make_f32({0, 4}, {})});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    CHECK(r.outputs[0].dims() == ember::shape{0, 4});
}

TEST_CASE("identity: in a chain it shares its input's buffer") {
    // compile() removes Identity nodes (compile_options::passes.identity_removal); kept, the op
    // itself is planned in place
    ember::compile_options keep;
    keep.passes.identity_removal = false;
    const auto c = ember::test::run_in_chain("Identity", ember::test::make_f32({4}, {-1, 2, -3, 4}), {}, {}, keep);
    CHECK(c.shared);
    ember::test::check_close(c.y, {0, 2, 0, 4}, 0.0f, 0.0f);
    const auto removed = ember::test::run_in_chain("Identity", ember::test::make_f32({4}, {-1, 2, -3, 4}));
    CHECK(removed.compiled->steps().size() == 2);  // the two Relus
    ember::test::check_close(removed.y, {0, 2, 0, 4}, 0.0f, 0.0f);
}

TEST_CASE("identity: two inputs are rejected, naming the node") {
    auto r = ember::test::run_node("Identity", {ember::test::make_f32({1}, {1}), ember::test::make_f32({1}, {2})});
    REQUIRE_FALSE(r.compiled);
    CHECK(r.error.code == ember::status::invalid_model);
    CHECK(r.error.message.find("'node' (Identity)") != std::string::npos);
}
