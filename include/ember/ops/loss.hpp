// SPDX-License-Identifier: Apache-2.0
// The training losses that inference engines meet in imported training graphs (ONNX opset 12+):
//
//   NegativeLogLikelihoodLoss(input [N, C, d1..dk], target [N, d1..dk], weight [C]?)
//       loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]
//   SoftmaxCrossEntropyLoss(scores [N, C, d1..dk], labels [N, d1..dk], weights [C]?)
//       log_prob = log(softmax(scores, axis 1)), loss = NegativeLogLikelihoodLoss(log_prob, labels)
//       and log_prob is the optional second output.
//
// A target equal to ignore_index contributes loss 0 and weight 0. reduction "none" gives the
// [N, d1..dk] losses, "sum" their sum, "mean" their sum divided by the sum of the weights of the
// targets used (the count of the targets used when there is no weight input; NaN when that is 0,
// as in ONNX's reference). Inputs float32, float64 or float16 (computed in double); targets
// int32 or int64. A target outside [0, C) that is not ignore_index stops run() with
// invalid_argument.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace loss_detail {

enum class reduction : std::uint8_t { none, sum, mean };

struct attributes {
    std::optional<std::int64_t> ignore_index;
    std::string reduction = "mean";
};

/// The input seen as [N, C, D] (D = d1 * ... * dk, 1 for a 2-D input).
struct args {
    operand x, target, weight, loss, log_prob;
    bool has_weight = false, has_log_prob = false, softmax = false, has_ignore = false;
    std::int64_t ignore_index = 0;
    std::int64_t n = 0, c = 0, d = 0;
    loss_detail::reduction mode = reduction::mean;
};

template <class T>
double load(T v) noexcept {
    if constexpr (std::is_same_v<T, float16>) return static_cast<double>(static_cast<float>(v));
    else return static_cast<double>(v);
}
template <class T>
T store(double v) noexcept {
    if constexpr (std::is_same_v<T, float16>) return float16(static_cast<float>(v));
    else return static_cast<T>(v);
}

/// The definition of both losses. T is the float type of input/loss, L the target's integer
/// type. With g.softmax the input is scores and log_softmax over C is taken first (written to
/// log_prob when that output exists). Returns false on a target outside [0, C).
template <class T, class L>
bool reference(const args& g, const T* x, const L* target, const T* weight, T* loss, T* log_prob) noexcept {
    const std::int64_t N = g.n, C = g.c, D = g.d;
    double total = 0.0, weight_total = 0.0;
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t d = 0; d < D; ++d) {
            // element (n, c, d) of the input is x[(n * C + c) * D + d]
            const T* line = x + n * C * D + d;
            double max = 0.0, log_sum = 0.0;
            if (g.softmax) {
                max = C > 0 ? load(line[0]) : 0.0;
                for (std::int64_t c = 1; c < C; ++c) max = load(line[c * D]) > max ? load(line[c * D]) : max;
                double sum = 0.0;
                for (std::int64_t c = 0; c < C; ++c) sum += std::exp(load(line[c * D]) - max);
                log_sum = std::log(sum);
                if (log_prob)
                    for (std::int64_t c = 0; c < C; ++c) log_prob[n * C * D + c * D + d] = store<T>(load(line[c * D]) - max - log_sum);
            }
            const std::int64_t t = static_cast<std::int64_t>(target[n * D + d]);
            double value = 0.0, w = 0.0;
            if (!(g.has_ignore && t == g.ignore_index)) {
                if (t < 0 || t >= C) return false;
                w = weight ? load(weight[t]) : 1.0;
                const double picked = g.softmax ? load(line[t * D]) - max - log_sum : load(line[t * D]);
                value = -picked * w;
            }
            if (g.mode == reduction::none) loss[n * D + d] = store<T>(value);
            total += value;
            weight_total += w;
        }
    if (g.mode == reduction::sum) loss[0] = store<T>(total);
    if (g.mode == reduction::mean) loss[0] = store<T>(total / weight_total);
    return true;
}

template <class T, class L>
void kernel(const void* p, const run_context& ctx) noexcept {
    const auto& g = *static_cast<const args*>(p);
    const bool ok = reference<T, L>(g, ctx.at<const T>(g.x), ctx.at<const L>(g.target), g.has_weight ? ctx.at<const T>(g.weight) : nullptr,
                                    ctx.at<T>(g.loss), g.has_log_prob ? ctx.at<T>(g.log_prob) : nullptr);
    if (!ok) ctx.fail(static_cast<std::uint8_t>(status::invalid_argument));
}

inline status parse_reduction(infer_context& ctx, const std::string& r, reduction& out) {
    if (r == "none") out = reduction::none;
    else if (r == "sum") out = reduction::sum;
    else if (r == "mean") out = reduction::mean;
    else return ctx.fail(status::invalid_model, "reduction is '{}', expected 'none', 'sum' or 'mean'", r);
    return status::ok;
}

/// Checks the inputs of either loss (names as the ONNX schema gives them) and fills g's shape
/// fields; sets the outputs.
inline status infer(const attributes& a, infer_context& ctx, bool softmax, args& g) {
    const char* x_name = softmax ? "scores" : "input";
    const char* t_name = softmax ? "labels" : "target";
    if (ctx.opset() < 12) return ctx.fail(status::unsupported_op, "the op exists from opset 12 on; the model's opset is {}", ctx.opset());
    if (status s = ctx.expect_inputs(2, 3); s != status::ok) return s;
    if (softmax ? ctx.output_count() < 1 || ctx.output_count() > 2 : ctx.output_count() != 1)
        return ctx.fail(status::invalid_model, "expected {} outputs, got {}", softmax ? "1 or 2" : "1", ctx.output_count());
    if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16}); s != status::ok) return s;
    if (status s = ctx.expect_type(1, {dtype::int32, dtype::int64}); s != status::ok) return s;
    if (status s = parse_reduction(ctx, a.reduction, g.mode); s != status::ok) return s;
    const shape& x = ctx.input_shape(0);
    const shape& t = ctx.input_shape(1);
    if (x.rank() < 2) return ctx.fail(status::shape_mismatch, "{} must be [N, C, d1..dk] (rank >= 2), got {}", x_name, x);
    bool match = t.rank() + 1 == x.rank();
    for (std::size_t i = 0; match && i < t.rank(); ++i) match = t[i] == x[i == 0 ? 0 : i + 1];
    if (!match) return ctx.fail(status::shape_mismatch, "{} {} must have {}'s shape without dimension 1 (C), {} being {}", t_name, t, x_name, x_name, x);
    if (ctx.has_input(2)) {
        if (ctx.input_type(2) != ctx.input_type(0))
            return ctx.fail(status::invalid_model, "weight has dtype {}, expected {} like {}", ctx.input_type(2), ctx.input_type(0), x_name);
        const shape& w = ctx.input_shape(2);
        if (w.rank() != 1 || w[0] != x[1])
            return ctx.fail(status::shape_mismatch, "weight must be [C] = [{}] for {} {}, got {}", x[1], x_name, x, w);
    }
    g.n = x[0];
    g.c = x[1];
    g.d = 1;
    for (std::size_t i = 2; i < x.rank(); ++i) g.d *= x[i];
    g.softmax = softmax;
    g.has_ignore = a.ignore_index.has_value();
    g.ignore_index = a.ignore_index.value_or(0);
    ctx.set_output(0, ctx.input_type(0), g.mode == reduction::none ? t : shape());
    if (softmax) ctx.set_output(1, ctx.input_type(0), x);
    return status::ok;
}

inline status bind(const attributes& a, bind_context& ctx, bool softmax) {
    args g;
    if (status s = infer(a, ctx, softmax, g); s != status::ok) return s;
    g.x = ctx.input(0);
    g.target = ctx.input(1);
    g.has_weight = ctx.has_input(2);
    if (g.has_weight) g.weight = ctx.input(2);
    g.loss = ctx.output(0);
    g.has_log_prob = softmax && ctx.has_output(1);
    if (g.has_log_prob) g.log_prob = ctx.output(1);
    const bool wide = ctx.input_type(1) == dtype::int64;
    kernel_fn fn = nullptr;
    switch (ctx.input_type(0)) {
        case dtype::float64: fn = wide ? &kernel<double, std::int64_t> : &kernel<double, std::int32_t>; break;
        case dtype::float16: fn = wide ? &kernel<float16, std::int64_t> : &kernel<float16, std::int32_t>; break;
        default: fn = wide ? &kernel<float, std::int64_t> : &kernel<float, std::int32_t>; break;
    }
    ctx.emit(fn, g);
    return status::ok;
}

} // namespace loss_detail

struct negative_log_likelihood_loss {
    static constexpr std::string_view onnx_name = "NegativeLogLikelihoodLoss";
    static constexpr op_flags flags = op_flags::none;

    using attributes = loss_detail::attributes;
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("ignore_index", &attributes::ignore_index), attr("reduction", &attributes::reduction));

    static status infer(const attributes& a, infer_context& ctx) {
        loss_detail::args g;
        return loss_detail::infer(a, ctx, false, g);
    }
    static status bind(const attributes& a, bind_context& ctx) { return loss_detail::bind(a, ctx, false); }
};

struct softmax_cross_entropy_loss {
    static constexpr std::string_view onnx_name = "SoftmaxCrossEntropyLoss";
    static constexpr op_flags flags = op_flags::none;

    using attributes = loss_detail::attributes;
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("ignore_index", &attributes::ignore_index), attr("reduction", &attributes::reduction));

    static status infer(const attributes& a, infer_context& ctx) {
        loss_detail::args g;
        return loss_detail::infer(a, ctx, true, g);
    }
    static status bind(const attributes& a, bind_context& ctx) { return loss_detail::bind(a, ctx, true); }
};

} // namespace ops
EMBER_NAMESPACE_END
