// SPDX-License-Identifier: Apache-2.0
// GlobalAveragePool (ONNX opset 1+), float32: the mean of each (n, c) plane of X [N, C, D1, ...],
// giving Y [N, C, 1, ...] with every spatial dimension 1.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/ops/op_support.hpp"
#include "ember/ops/row_mean.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct global_average_pool {
    static constexpr std::string_view onnx_name = "GlobalAveragePool";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    struct args {
        operand x, y;
        std::int64_t planes = 0;      // N * C
        std::int64_t plane_size = 0;  // D1 * D2 * ...
    };

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        if (x.rank() < 3)
            return ctx.fail(status::shape_mismatch, "X must be [N, C, spatial...] with at least one spatial dimension, got {}", x);
        shape out = x;
        for (std::size_t i = 2; i < out.rank(); ++i) out[i] = 1;
        ctx.set_output(0, dtype::float32, out);
        return status::ok;
    }

    // The definition: a float sum over the plane divided by its size. An empty plane gives NaN
    // (0 / 0), as the mean of nothing. Planes are split over the executor.
    static void reference(const args& g, const float* x, float* y, const executor* ex) noexcept {
        parallel_for(ex, static_cast<std::size_t>(g.planes), [&](std::size_t begin, std::size_t end) {
            for (auto p = static_cast<std::int64_t>(begin); p < static_cast<std::int64_t>(end); ++p) {
                const float* xp = x + p * g.plane_size;
                float sum = 0.0f;
                for (std::int64_t i = 0; i < g.plane_size; ++i) sum += xp[i];
                y[p] = sum / static_cast<float>(g.plane_size);
            }
        });
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.x), ctx.at<float>(g.y), ctx.exec);
    }

    static status bind(const attributes&, bind_context& ctx) {
        const shape& x = ctx.input_shape(0);
        args g;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        g.planes = x[0] * x[1];
        g.plane_size = 1;
        for (std::size_t i = 2; i < x.rank(); ++i) g.plane_size *= x[i];
        if (ctx.kernels() && g.plane_size > 0) {  // the kernel table's vector mean (ops/row_mean.hpp)
            emit_row_mean(ctx, g.planes, g.plane_size);
            return status::ok;
        }
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
