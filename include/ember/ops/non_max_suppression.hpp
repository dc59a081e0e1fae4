// SPDX-License-Identifier: Apache-2.0
// NonMaxSuppression (ONNX opset 10+), float32 boxes [B, N, 4] and scores [B, C, N]: per batch
// and class, the boxes whose score is above score_threshold, best score first (ties: lower box
// index first), each kept unless its IoU with a box already kept exceeds iou_threshold, at most
// max_output_boxes_per_class of them (absent or 0: none). Output selected_indices [M, 3] int64
// rows (batch, class, box), by batch, then class, then selection order. Boxes are corners
// [y1, x1, y2, x2] in either diagonal order (center_point_box=0) or [x_center, y_center, width,
// height] (center_point_box=1).
//
// How many rows the output has depends on the data, and ember's plans have fixed shapes: every
// input must therefore be known at compile time (require_constant), and the result is computed
// then, as a constant (set_output_constant). A detector whose boxes come from the network itself
// needs the suppression done by the caller after run(); this op covers models that run it on
// constants, and tools that fix the inputs by value (compile_options::input_values).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct non_max_suppression {
    static constexpr std::string_view onnx_name = "NonMaxSuppression";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t center_point_box = 0;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("center_point_box", &attributes::center_point_box));

    struct box {
        float y1, x1, y2, x2;  // normalised: y1 <= y2, x1 <= x2
    };

    static box corners(const float* b, bool center) noexcept {
        if (center) return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
        return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
    }

    static float iou(const box& a, const box& b) noexcept {
        const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
        const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
        if (ih <= 0 || iw <= 0) return 0.0f;
        const float inter = ih * iw;
        const float uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
        return uni > 0 ? inter / uni : 0.0f;
    }

    // The definition: greedy suppression per (batch, class); appends (b, c, box) triples.
    static void reference(const float* boxes, const float* scores, std::int64_t batches, std::int64_t classes, std::int64_t n,
                          std::int64_t max_out, float iou_threshold, bool has_score_threshold, float score_threshold, bool center,
                          std::vector<std::int64_t>& out) {
        std::vector<std::int64_t> order;
        std::vector<box> kept;
        for (std::int64_t b = 0; b < batches; ++b)
            for (std::int64_t c = 0; c < classes; ++c) {
                if (max_out <= 0) continue;
                const float* s = scores + (b * classes + c) * n;
                order.clear();
                for (std::int64_t i = 0; i < n; ++i)  // a NaN score is never selected
                    if (!std::isnan(s[i]) && (!has_score_threshold || s[i] > score_threshold)) order.push_back(i);
                std::sort(order.begin(), order.end(), [&](std::int64_t p, std::int64_t q) { return s[p] != s[q] ? s[p] > s[q] : p < q; });
                kept.clear();
                for (std::int64_t i : order) {
                    if (static_cast<std::int64_t>(kept.size()) >= max_out) break;
                    const box bx = corners(boxes + (b * n + i) * 4, center);
                    bool keep = true;
                    for (const box& k : kept)
                        if (iou(bx, k) > iou_threshold) {
                            keep = false;
                            break;
                        }
                    if (!keep) continue;
                    kept.push_back(bx);
                    out.insert(out.end(), {b, c, i});
                }
            }
    }

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 5); s != status::ok) return s;
        if (a.center_point_box != 0 && a.center_point_box != 1)
            return ctx.fail(status::invalid_model, "center_point_box is {}, expected 0 or 1", a.center_point_box);
        const char* names[] = {"boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"};
        const dtype types[] = {dtype::float32, dtype::float32, dtype::int64, dtype::float32, dtype::float32};
        const tensor* in[5] = {};
        for (std::size_t i = 0; i < ctx.input_count(); ++i) {
            if (!ctx.has_input(i)) continue;
            if (ctx.input_type(i) != types[i])
                return ctx.fail(status::unsupported_op, "input {} ({}) has dtype {}, supported: {}", i, names[i], ctx.input_type(i), types[i]);
            if (i >= 2 && ctx.input_shape(i).elements() != 1)
                return ctx.fail(status::invalid_model, "input {} ({}) must hold one value, got shape {}", i, names[i], ctx.input_shape(i));
        }
        const shape& bs = ctx.input_shape(0);
        const shape& ss = ctx.input_shape(1);
        if (bs.rank() != 3 || bs[2] != 4) return ctx.fail(status::shape_mismatch, "boxes must be [batches, boxes, 4], got {}", bs);
        if (ss.rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
            return ctx.fail(status::shape_mismatch, "scores must be [{}, classes, {}] to match boxes {}, got {}", bs[0], bs[1], bs, ss);
        for (std::size_t i = 0; i < ctx.input_count(); ++i) {
            if (!ctx.has_input(i)) continue;
            in[i] = ctx.require_constant(i, names[i]);
            if (!in[i]) return status::unsupported_op;
        }
        const std::int64_t max_out = in[2] ? in[2]->data<std::int64_t>()[0] : 0;
        const float iou_threshold = in[3] ? in[3]->data<float>()[0] : 0.0f;
        const bool has_score = in[4] != nullptr;
        const float score_threshold = has_score ? in[4]->data<float>()[0] : 0.0f;
        if (iou_threshold < 0.0f || iou_threshold > 1.0f)
            return ctx.fail(status::invalid_model, "iou_threshold is {}, expected a value in [0, 1]", iou_threshold);
        std::vector<std::int64_t> rows;
        reference(in[0]->data<float>(), in[1]->data<float>(), bs[0], ss[1], bs[1], max_out, iou_threshold, has_score, score_threshold,
                  a.center_point_box == 1, rows);
        const auto m = static_cast<std::int64_t>(rows.size() / 3);
        result<tensor> t = tensor::copy_of<std::int64_t>(shape{m, 3}, span<const std::int64_t>(rows.data(), rows.size()));
        if (!t) return ctx.fail(t.error().code, "{}", t.error().message);
        ctx.set_output_constant(0, std::move(*t));
        return status::ok;
    }

    // infer() makes the output a compile-time constant, so compile() never binds this op.
    static status bind(const attributes&, bind_context& ctx) {
        return ctx.fail(status::invalid_model, "NonMaxSuppression has no step: its result is computed at compile time");
    }
};

} // namespace ops
EMBER_NAMESPACE_END
