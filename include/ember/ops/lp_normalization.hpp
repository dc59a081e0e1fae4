// SPDX-License-Identifier: Apache-2.0
// LpNormalization (ONNX opset 1+), float32, float64 and float16: x divided by the L1 (p=1) or
// L2 (p=2, default) norm of its line along `axis` (default -1). A line whose norm is 0 stays 0
// (as in ONNX Runtime) rather than becoming NaN.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "ember/ops/norm_support.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct lp_normalization {
    static constexpr std::string_view onnx_name = "LpNormalization";
    static constexpr op_flags flags = op_flags::in_place;

    struct attributes {
        std::int64_t axis = -1;
        std::int64_t p = 2;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis), attr("p", &attributes::p));

    struct args {
        operand x, y;
        std::int64_t outer = 0, axis_len = 0, inner = 0;
        bool l1 = false;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16}); s != status::ok) return s;
        if (a.p != 1 && a.p != 2) return ctx.fail(status::invalid_model, "p is {}, expected 1 or 2", a.p);
        const shape& x = ctx.input_shape(0);
        std::size_t k = 0;
        if (!normalize_axis(a.axis, x.rank(), k))
            return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {} (rank {})", a.axis, x, x.rank());
        g.outer = 1;
        g.inner = 1;
        for (std::size_t i = 0; i < k; ++i) g.outer *= x[i];
        for (std::size_t i = k + 1; i < x.rank(); ++i) g.inner *= x[i];
        g.axis_len = x[k];
        g.l1 = a.p == 1;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) { return norm_detail::infer_like_input<lp_normalization>(a, ctx); }

    // The definition; x and y may alias (a line's norm is computed before it is written).
    template <class T>
    static void reference(const args& g, const T* x, T* y, const executor* ex) noexcept {
        using reduce_detail::to_double;
        const std::int64_t L = g.axis_len, S = g.inner;
        parallel_for(ex, static_cast<std::size_t>(g.outer * S), [&](std::size_t begin, std::size_t end) {
            for (auto line = static_cast<std::int64_t>(begin); line < static_cast<std::int64_t>(end); ++line) {
                const std::int64_t base = (line / S) * L * S + line % S;
                double norm = 0.0;
                for (std::int64_t j = 0; j < L; ++j) {
                    const double v = to_double(x[base + j * S]);
                    norm += g.l1 ? std::fabs(v) : v * v;
                }
                if (!g.l1) norm = std::sqrt(norm);
                for (std::int64_t j = 0; j < L; ++j)
                    y[base + j * S] = reduce_detail::narrow<T>(norm == 0.0 ? 0.0 : to_double(x[base + j * S]) / norm);
            }
        });
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<T>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        norm_detail::emit_floating<lp_normalization>(ctx, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
