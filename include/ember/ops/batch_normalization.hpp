// SPDX-License-Identifier: Apache-2.0
// BatchNormalization (ONNX opset 7+), float32, inference only: Y = (X - mean) / sqrt(var +
// epsilon) * scale + B per channel of X [N, C, D1, ...], with the stored statistics. Training
// mode (training_mode = 1) and the running or saved statistics outputs are not supported.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct batch_normalization {
    static constexpr std::string_view onnx_name = "BatchNormalization";
    static constexpr op_flags flags = op_flags::in_place;

    struct attributes {
        float epsilon = 1e-5f;
        float momentum = 0.9f;       // training only; accepted and ignored
        std::int64_t spatial = 1;    // opset < 9; only 1 (statistics per channel) is supported
        bool training_mode = false;  // opset 14; only 0 is supported
        bool is_test = true;         // opset < 7 (PyTorch's old exports): only 1 (inference) is supported
        std::vector<std::int64_t> consumed_inputs;  // opset < 6: an in-place hint, ignored
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("epsilon", &attributes::epsilon), attr("momentum", &attributes::momentum), attr("spatial", &attributes::spatial),
                        attr("training_mode", &attributes::training_mode), attr("is_test", &attributes::is_test),
                        attr("consumed_inputs", &attributes::consumed_inputs));

    struct args {
        operand x, scale, b, mean, var, y;
        std::int64_t batch = 0, channels = 0, plane_size = 0;
        float epsilon = 1e-5f;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(5, 5); s != status::ok) return s;
        for (std::size_t i = 0; i < 5; ++i)
            if (status s = ctx.expect_type(i, {dtype::float32}); s != status::ok) return s;
        if (a.training_mode) return ctx.fail(status::unsupported_op, "training_mode = 1 is not supported (inference only)");
        if (!a.is_test) return ctx.fail(status::unsupported_op, "is_test = 0 (training) is not supported (inference only)");
        if (a.spatial != 1)
            return ctx.fail(status::unsupported_op, "spatial = {} is not supported (only 1: statistics per channel)", a.spatial);
        for (std::size_t k = 1; k < ctx.output_count(); ++k)
            if (ctx.has_output(k))
                return ctx.fail(status::unsupported_op, "output {} (running or saved statistics) is not supported; only Y is computed at inference", k);
        const shape& x = ctx.input_shape(0);
        if (x.rank() < 2) return ctx.fail(status::shape_mismatch, "X must be [N, C, ...] of rank >= 2, got {}", x);
        static constexpr const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
        for (std::size_t i = 1; i < 5; ++i) {
            const shape& p = ctx.input_shape(i);
            if (p.rank() != 1 || p[0] != x[1])
                return ctx.fail(status::shape_mismatch, "{} must be [{}] (one value per channel of X {}), got {}", names[i], x[1], x, p);
        }
        ctx.set_output(0, dtype::float32, x);
        return status::ok;
    }

    // The definition, per element: (x - mean) * (scale / sqrt(var + epsilon)) + B, the factor
    // computed once per channel. x and y may alias. Channel planes (n, c) are split over the
    // executor.
    static void reference(const args& g, const float* x, const float* scale, const float* b, const float* mean, const float* var, float* y,
                          const executor* ex) noexcept {
        parallel_for(ex, static_cast<std::size_t>(g.batch * g.channels), [&](std::size_t begin, std::size_t end) {
            for (auto p = static_cast<std::int64_t>(begin); p < static_cast<std::int64_t>(end); ++p) {
                const std::int64_t c = p % g.channels;
                const float factor = scale[c] / std::sqrt(var[c] + g.epsilon);
                const float* xp = x + p * g.plane_size;
                float* yp = y + p * g.plane_size;
                for (std::int64_t i = 0; i < g.plane_size; ++i) yp[i] = (xp[i] - mean[c]) * factor + b[c];
            }
        });
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.x), ctx.at<const float>(g.scale), ctx.at<const float>(g.b), ctx.at<const float>(g.mean),
                  ctx.at<const float>(g.var), ctx.at<float>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        const shape& x = ctx.input_shape(0);
        args g;
        g.x = ctx.input(0);
        g.scale = ctx.input(1);
        g.b = ctx.input(2);
        g.mean = ctx.input(3);
        g.var = ctx.input(4);
        g.y = ctx.output(0);
        g.batch = x[0];
        g.channels = x[1];
        g.plane_size = 1;
        for (std::size_t i = 2; i < x.rank(); ++i) g.plane_size *= x[i];
        g.epsilon = a.epsilon;
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
