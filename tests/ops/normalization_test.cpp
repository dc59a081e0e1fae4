// SPDX-License-Identifier: Apache-2.0
// Normalizations: LayerNormalization, InstanceNormalization, LRN, MeanVarianceNormalization,
// LpNormalization, GlobalMaxPool, GlobalLpPool.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/ops/global_max_pool.hpp>
#include <ember/ops/instance_normalization.hpp>
#include <ember/ops/layer_normalization.hpp>
#include <ember/ops/lp_normalization.hpp>
#include <ember/ops/lrn.hpp>
#include <ember/ops/mean_variance_normalization.hpp>

#include "ops/node_at_opset.hpp"
#include "support/check.hpp"

namespace {

using ember::attribute;
using ember::shape;
using ember::tensor;
using namespace ember::test;

const tensor none;  // an absent optional input

} // namespace

// ---------------------------------------------------------------------------------------------
// LayerNormalization

TEST_CASE("layernorm: rows normalised at the axis, then scaled and shifted; Mean and InvStdDev outputs") {
    const tensor x = make_f32({2, 2}, {1, 3, 2, 2});
    const tensor scale = make_f32({2}, {2, 3});
    const tensor b = make_f32({2}, {1, -1});
    auto r = run_at_both_ways(17, "LayerNormalization", {x, scale, b}, {}, 3);
    const float inv0 = 1.0f / std::sqrt(1.0f + 1e-5f), inv1 = 1.0f / std::sqrt(1e-5f);
    REQUIRE(r.outputs.size() == 3);
    CHECK(r.outputs[0].dims() == shape{2, 2});
    check_close(r.outputs[0], {-2 * inv0 + 1, 3 * inv0 - 1, 1, -1});
    CHECK(r.outputs[1].dims() == shape{2, 1});
    CHECK(r.outputs[1].type() == ember::dtype::float32);
    check_close(r.outputs[1], {2, 2});
    CHECK(r.outputs[2].dims() == shape{2, 1});
    check_close(r.outputs[2], {inv0, inv1}, 1e-5f, 1e-5f);
}

TEST_CASE("layernorm: axis 0 normalises everything; Scale broadcasts; B is optional; epsilon") {
    const tensor x = make_f32({2, 2}, {1, 3, 2, 2});
    auto r = run_at(17, "LayerNormalization", {x, make_f32({1}, {1}), none}, {attribute::of("axis", 0)});
    REQUIRE_MESSAGE(r.compiled, r.error.message);
    const float k = 1.0f / std::sqrt(0.5f + 1e-5f);
    check_close(r.outputs[0], {-k, k, 0, 0});
    auto eps = run_at(17, "LayerNormalization", {x, make_f32({2}, {1, 1})}, {attribute::of("epsilon", 3.0f)});
    check_close(eps.outputs[0], {-0.5f, 0.5f, 0, 0});
    // a float64 model
    auto f64 = run_at(17, "LayerNormalization", {make<double>({1, 2}, {0, 2}), make<double>({2}, {1, 1})}, {attribute::of("epsilon", 0.0f)});
    CHECK(values_of<double>(f64.outputs[0]) == std::vector<double>{-1, 1});
}

TEST_CASE("layernorm: bad Scale, axis, dtype and stash_type are rejected with a message") {
    const tensor x = make_f32({2, 2}, {1, 3, 2, 2});
    auto s = run_at(17, "LayerNormalization", {x, make_f32({3}, {1, 1, 1})});
    REQUIRE_FALSE(s.compiled);
    CHECK(s.error.code == ember::status::shape_mismatch);
    CHECK(mentions(s, "'node' (LayerNormalization)"));
    CHECK(mentions(s, "Scale of shape [3] does not broadcast to X of shape [2, 2]"));
    auto a = run_at(17, "LayerNormalization", {x, make_f32({2}, {1, 1})}, {attribute::of("axis", 2)});
    REQUIRE_FALSE(a.compiled);
    CHECK(mentions(a, "axis 2 is out of range"));
    auto st = run_at(17, "LayerNormalization", {x, make_f32({2}, {1, 1})}, {attribute::of("stash_type", 0)});
    REQUIRE_FALSE(st.compiled);
    CHECK(st.error.code == ember::status::unsupported_op);
    CHECK(mentions(st, "stash_type 0"));
    auto t = run_at(17, "LayerNormalization", {x, make<double>({2}, {1, 1})});
    REQUIRE_FALSE(t.compiled);
    CHECK(mentions(t, "float64"));
}

// ---------------------------------------------------------------------------------------------
// InstanceNormalization

TEST_CASE("instancenorm: each (n, c) plane with its own mean and variance") {
    const tensor x = make_f32({1, 2, 1, 2}, {1, 3, 2, 6});
    auto r = run_at_both_ways(6, "InstanceNormalization", {x, make_f32({2}, {1, 2}), make_f32({2}, {0, 1})}, {attribute::of("epsilon", 0.0f)});
    CHECK(r.outputs[0].dims() == shape{1, 2, 1, 2});
    check_close(r.outputs[0], {-1, 1, -1, 3});
    // the default epsilon 1e-5
    auto d = run_at(6, "InstanceNormalization", {x, make_f32({2}, {1, 1}), make_f32({2}, {0, 0})});
    const float k = 1.0f / std::sqrt(1.0f + 1e-5f);
    check_close(d.outputs[0], {-k, k, -2 / std::sqrt(4.0f + 1e-5f), 2 / std::sqrt(4.0f + 1e-5f)});
    auto bad = run_at(6, "InstanceNormalization", {x, make_f32({3}, {1, 1, 1}), make_f32({2}, {0, 0})});
    REQUIRE_FALSE(bad.compiled);
    CHECK(mentions(bad, "scale must be [2]"));
}

// ---------------------------------------------------------------------------------------------
// LRN

TEST_CASE("lrn: the channel window is [c - floor((size-1)/2), c + ceil((size-1)/2)]") {
    const tensor x = make_f32({1, 3, 1, 1}, {1, 2, 3});
    // alpha / size = 1, beta = 1, bias = 1: y = x / (1 + sum of squares in the window)
    auto odd = run_at_both_ways(13, "LRN", {x},
                                {attribute::of("size", 3), attribute::of("alpha", 3.0f), attribute::of("beta", 1.0f), attribute::of("bias", 1.0f)});
    check_close(odd.outputs[0], {1.0f / 6, 2.0f / 15, 3.0f / 14});
    auto even = run_at(13, "LRN", {x}, {attribute::of("size", 2), attribute::of("alpha", 2.0f), attribute::of("beta", 1.0f)});
    check_close(even.outputs[0], {1.0f / 6, 2.0f / 14, 3.0f / 10});
    // defaults: alpha 1e-4, beta 0.75, bias 1
    auto def = run_at(13, "LRN", {x}, {attribute::of("size", 1)});
    check_close(def.outputs[0], {1 / std::pow(1 + 1e-4f, 0.75f), 2 / std::pow(1 + 4e-4f, 0.75f), 3 / std::pow(1 + 9e-4f, 0.75f)});
    auto missing = run_at(13, "LRN", {x}, {});
    REQUIRE_FALSE(missing.compiled);
    CHECK(mentions(missing, "required attribute 'size' is missing"));
    auto zero = run_at(13, "LRN", {x}, {attribute::of("size", 0)});
    REQUIRE_FALSE(zero.compiled);
    CHECK(mentions(zero, "size is 0"));
}

// ---------------------------------------------------------------------------------------------
// MeanVarianceNormalization

TEST_CASE("mvn: per channel across batch and space by default, or over the given axes") {
    const tensor x = make_f32({2, 2, 1, 1}, {1, 2, 3, 6});
    auto r = run_at_both_ways(13, "MeanVarianceNormalization", {x});
    check_close(r.outputs[0], {-1, -1, 1, 1}, 1e-6f);
    auto c = run_at(13, "MeanVarianceNormalization", {x}, {attribute::of("axes", std::vector<std::int64_t>{1})});
    check_close(c.outputs[0], {-1, 1, -1, 1}, 1e-6f);
    auto old = run_at(8, "MeanVarianceNormalization", {x});
    REQUIRE_FALSE(old.compiled);
    CHECK(mentions(old, "opset 9"));
    auto rank = run_at(13, "MeanVarianceNormalization", {make_f32({2, 2}, {1, 2, 3, 4})});
    REQUIRE_FALSE(rank.compiled);
    CHECK(mentions(rank, "axis 2 is out of range"));
}

// ---------------------------------------------------------------------------------------------
// LpNormalization

TEST_CASE("lpnorm: divide by the L1 or L2 norm of the line; a zero line stays zero") {
    const tensor x = make_f32({2, 2}, {3, 4, 0, 0});
    auto l2 = run_at_both_ways(13, "LpNormalization", {x});
    check_close(l2.outputs[0], {0.6f, 0.8f, 0, 0});
    auto l1 = run_at(13, "LpNormalization", {x}, {attribute::of("p", 1)});
    check_close(l1.outputs[0], {3.0f / 7, 4.0f / 7, 0, 0});
    auto axis0 = run_at(13, "LpNormalization", {x}, {attribute::of("axis", 0)});
    check_close(axis0.outputs[0], {1, 1, 0, 0});
    auto bad = run_at(13, "LpNormalization", {x}, {attribute::of("p", 3)});
    REQUIRE_FALSE(bad.compiled);
    CHECK(mentions(bad, "p is 3, expected 1 or 2"));
}

// ---------------------------------------------------------------------------------------------
// GlobalMaxPool, GlobalLpPool

TEST_CASE("global pools: max and Lp norm of each plane") {
    const tensor x = make_f32({1, 2, 2, 2}, {1, 5, -2, 3, -1, -2, -3, -4});
    auto mx = run_at_both_ways(13, "GlobalMaxPool", {x});
    CHECK(mx.outputs[0].dims() == shape{1, 2, 1, 1});
    check_close(mx.outputs[0], {5, -1}, 0.0f, 0.0f);
    auto l2 = run_at(13, "GlobalLpPool", {x});
    check_close(l2.outputs[0], {std::sqrt(39.0f), std::sqrt(30.0f)});
    auto l1 = run_at(13, "GlobalLpPool", {x}, {attribute::of("p", 1)});
    check_close(l1.outputs[0], {11, 10});
    auto with_nan = run_at(13, "GlobalMaxPool", {make_f32({1, 1, 2}, {std::numeric_limits<float>::quiet_NaN(), 1})});
    CHECK(std::isnan(values_of<float>(with_nan.outputs[0])[0]));

    auto p = run_at(13, "GlobalMaxPool", {x}, {attribute::of("p", 2)});
    REQUIRE_FALSE(p.compiled);
    CHECK(mentions(p, "'p' is not supported"));
    auto rank = run_at(13, "GlobalMaxPool", {make_f32({2, 2}, {1, 2, 3, 4})});
    REQUIRE_FALSE(rank.compiled);
    CHECK(mentions(rank, "at least one spatial dimension"));
}

TEST_CASE("instancenorm: in a chain it runs in place on its input's buffer") {
    const auto c = ember::test::run_in_chain("InstanceNormalization", make_f32({1, 1, 1, 2}, {-1, 3}),
                                             {make_f32({1}, {1}), make_f32({1}, {0})}, {attribute::of("epsilon", 0.0f)});
    CHECK(c.shared);
    check_close(c.y, {0, 1});
}
