// SPDX-License-Identifier: Apache-2.0
// GlobalMaxPool (ONNX opset 1+) and GlobalLpPool (opset 2+, attribute p, default 2), float32,
// float64 and float16: the max (the Lp norm, (sum |x|^p)^(1/p)) of each (n, c) plane of
// X [N, C, D1, ...], giving Y [N, C, 1, ...]. A NaN in a plane makes its max NaN; an empty plane
// gives -inf (max) or 0 (Lp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "ember/ops/norm_support.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct global_pool_args {
    operand x, y;
    std::int64_t planes = 0, plane_size = 0;
    double p = 2.0;
};

/// infer()/plan of the global pools: X [N, C, spatial...] -> [N, C, 1, ...].
inline status plan_global_pool(infer_context& ctx, global_pool_args& g, shape& out) {
    if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
    if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16}); s != status::ok) return s;
    const shape& x = ctx.input_shape(0);
    if (x.rank() < 3) return ctx.fail(status::shape_mismatch, "X must be [N, C, spatial...] with at least one spatial dimension, got {}", x);
    out = x;
    g.planes = x[0] * x[1];
    g.plane_size = 1;
    for (std::size_t i = 2; i < out.rank(); ++i) {
        g.plane_size *= x[i];
        out[i] = 1;
    }
    return status::ok;
}

template <bool Max>
struct global_pool_op {
    static constexpr std::string_view onnx_name = Max ? "GlobalMaxPool" : "GlobalLpPool";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t p = 2;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("p", &attributes::p));

    static status plan(const attributes& a, infer_context& ctx, global_pool_args& g, shape& out) {
        if (Max && ctx.node().find_attribute("p"))
            return ctx.fail(status::unsupported_op, "attribute 'p' is not supported (GlobalMaxPool has none)");
        if (!Max && a.p < 1) return ctx.fail(status::invalid_model, "p is {}, expected >= 1", a.p);
        g.p = static_cast<double>(a.p);
        return plan_global_pool(ctx, g, out);
    }

    static status infer(const attributes& a, infer_context& ctx) {
        global_pool_args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    // The definition, plane by plane.
    template <class T>
    static void reference(const global_pool_args& g, const T* x, T* y, const executor* ex) noexcept {
        using reduce_detail::to_double;
        parallel_for(ex, static_cast<std::size_t>(g.planes), [&](std::size_t begin, std::size_t end) {
            for (auto p = static_cast<std::int64_t>(begin); p < static_cast<std::int64_t>(end); ++p) {
                const T* xp = x + p * g.plane_size;
                double acc = Max ? -std::numeric_limits<double>::infinity() : 0.0;
                for (std::int64_t i = 0; i < g.plane_size; ++i) {
                    const double v = to_double(xp[i]);
                    if constexpr (Max) acc = std::isnan(v) || std::isnan(acc) ? std::numeric_limits<double>::quiet_NaN() : (v > acc ? v : acc);
                    else acc += std::pow(std::fabs(v), g.p);
                }
                if constexpr (!Max) acc = std::pow(acc, 1.0 / g.p);
                y[p] = reduce_detail::narrow<T>(acc);
            }
        });
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const global_pool_args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<T>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        global_pool_args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        norm_detail::emit_floating<global_pool_op>(ctx, g);
        return status::ok;
    }
};

using global_max_pool = global_pool_op<true>;
using global_lp_pool = global_pool_op<false>;

} // namespace ops
EMBER_NAMESPACE_END
