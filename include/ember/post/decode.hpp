// SPDX-License-Identifier: Apache-2.0
// From a detector's raw output tensor to a list of post::detection, for the three head layouts
// that cover most exported detectors. Each decoder applies the score threshold as it goes,
// writes into the caller's span, returns how many it wrote and allocates nothing; nms() comes
// next.
//
//   ember::post::detection found[8400];
//   ember::result<std::size_t> n = ember::post::decode_yolov8(output, found);   // [1, 84, 8400]
//   if (!n) return n.error();
//   ember::result<std::size_t> kept = ember::post::nms(ember::span(found, *n));
//
// Layouts (N anchors or anchor points, C classes, all float32, row-major; the leading batch
// dimension of 1 may be left out):
//
//   decode_yolov8         [1, 4 + C, N]: Ultralytics YOLOv8 / YOLOv9 / YOLO11 ONNX export.
//                         Row 0..3 are cx, cy, w, h in model-input pixels, rows 4.. the C class
//                         scores, already sigmoid'ed. With transposed: [1, N, 4 + C], one anchor
//                         per row (what some re-exports and TensorRT samples produce).
//                         score = the best class score; class_id = its class.
//   decode_yolov5         [1, N, 5 + C]: YOLOv5 / YOLOv7 export. Per row: cx, cy, w, h (pixels),
//                         objectness, C class probabilities. score = objectness * class
//                         probability, best class (YOLOv5's non_max_suppression does the same).
//   decode_anchor_deltas  deltas [1, N, 4], anchors [N, 4], scores [1, N, C]: SSD, RetinaNet,
//                         a Faster R-CNN RPN. torchvision's BoxCoder convention: anchors are
//                         corners (x0, y0, x1, y1); deltas are (dx, dy, dw, dh) scaled by
//                         weights (wx, wy, ww, wh), default (10, 10, 5, 5), i.e. the 0.1 / 0.2
//                         "variances" of the original SSD. With anchor width wa, height ha and
//                         centre (xa, ya):
//                             cx = dx / wx * wa + xa        w = exp(min(dw / ww, log(1000/16))) * wa
//                             cy = dy / wy * ha + ya        h = exp(min(dh / wh, log(1000/16))) * ha
//                         (the clamp is torchvision's bbox_xform_clip: no box grows more than
//                         62.5 times its anchor). One detection per (anchor, class) whose score
//                         passes, as torchvision's SSD postprocess does, or with
//                         best_class_only only the anchor's best class. The background column
//                         (default 0) is skipped; class_id is the column index. TensorFlow's
//                         (dy, dx, dh, dw) with (y0, x0, y1, x1) anchors must be reordered first.
//
// A score passes when score >= score_threshold (NaN never does). When more pass than out holds,
// the out.size() best scores are kept: detections come in anchor order while they fit, in no
// particular order after that (nms() sorts). A tensor of the wrong rank or shape gives
// status::shape_mismatch with the shape received and the one expected.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "ember/config.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/span.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/format.hpp"
#include "ember/post/boxes.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace post {

struct yolov8_options {
    float score_threshold = 0.25f;
    bool transposed = false;  ///< [1, N, 4 + C] instead of the export's [1, 4 + C, N]
};

struct yolov5_options {
    float score_threshold = 0.25f;
};

/// What decode_anchor_deltas() applies to a row of scores before thresholding.
enum class score_activation : std::uint8_t {
    none,     ///< the scores are probabilities already
    softmax,  ///< logits over the C columns, background included (SSD)
    sigmoid,  ///< one independent logit per class (RetinaNet)
};

/// torchvision's bbox_xform_clip, log(1000 / 16): the largest dw, dh a box coder applies.
inline constexpr float bbox_xform_clip = 4.135166556742356f;

struct anchor_delta_options {
    float score_threshold = 0.25f;
    std::array<float, 4> weights{10.0f, 10.0f, 5.0f, 5.0f};  ///< wx, wy, ww, wh; all positive
    int background_class = 0;  ///< the score column that is not an object; -1 when none is
    score_activation activation = score_activation::none;
    bool best_class_only = false;  ///< one detection per anchor, not one per passing class
};

namespace detail {

/// Collects decoded detections into the caller's span. While they fit they are appended in
/// arrival order; once full, out becomes a min-heap on score so that a better newcomer
/// replaces the worst kept one (a strictly better one: earlier arrivals win ties).
class detection_sink {
public:
    explicit detection_sink(span<detection> out) noexcept : out_(out) {}

    void add(const detection& d) noexcept {
        if (count_ < out_.size()) {
            out_[count_++] = d;
            return;
        }
        if (out_.empty()) return;
        if (!heap_) {
            std::make_heap(out_.begin(), out_.end(), worse_first);
            heap_ = true;
        }
        if (!(d.score > out_[0].score)) return;
        std::pop_heap(out_.begin(), out_.end(), worse_first);
        out_[out_.size() - 1] = d;
        std::push_heap(out_.begin(), out_.end(), worse_first);
    }
    std::size_t count() const noexcept { return count_; }

private:
    static bool worse_first(const detection& a, const detection& b) noexcept { return a.score > b.score; }

    span<detection> out_;
    std::size_t count_ = 0;
    bool heap_ = false;
};

/// Reads [rows, cols] or [1, rows, cols]; false for anything else.
inline bool matrix_dims(const shape& d, std::int64_t& rows, std::int64_t& cols) noexcept {
    if (d.rank() == 3 && d[0] == 1) {
        rows = d[1];
        cols = d[2];
        return true;
    }
    if (d.rank() == 2) {
        rows = d[0];
        cols = d[1];
        return true;
    }
    return false;
}

inline box box_of_center(float cx, float cy, float w, float h) noexcept {
    return box{cx - 0.5f * w, cy - 0.5f * h, cx + 0.5f * w, cy + 0.5f * h};
}

inline error_info no_data(const char* what) {
    return error_info{status::invalid_argument, -1, ember::detail::format("{}: the tensor has no data", what)};
}

} // namespace detail

/// Decodes an Ultralytics anchor-free head ([1, 4 + C, N], or [1, N, 4 + C] with transposed;
/// the header comment has the layout): one detection per anchor point whose best class score
/// passes, class ties going to the lower class.
inline result<std::size_t> decode_yolov8(tensor_view<const float> output, span<detection> out, const yolov8_options& options = {}) {
    std::int64_t rows = 0, cols = 0;
    const bool ok = detail::matrix_dims(output.dims(), rows, cols);
    const std::int64_t k = options.transposed ? cols : rows, n = options.transposed ? rows : cols;
    if (!ok || k < 5)
        return error_info{status::shape_mismatch, -1,
                          ember::detail::format("decode_yolov8: output has shape {}, expected {}", output.dims(),
                                                options.transposed ? "[1, anchors, 4 + classes] (transposed)"
                                                                   : "[1, 4 + classes, anchors]")};
    if (output.size() != 0 && !output.data()) return detail::no_data("decode_yolov8");
    const float* p = output.data();
    const std::size_t anchors = static_cast<std::size_t>(n), classes = static_cast<std::size_t>(k - 4);
    // Element (field f, anchor a): channels-first strides by the anchor count between fields.
    const std::size_t field_stride = options.transposed ? 1 : anchors, anchor_stride = options.transposed ? classes + 4 : 1;
    detail::detection_sink sink(out);
    for (std::size_t a = 0; a < anchors; ++a) {
        const float* v = p + a * anchor_stride;
        int best = 0;
        float best_score = v[4 * field_stride];
        for (std::size_t c = 1; c < classes; ++c) {
            const float s = v[(4 + c) * field_stride];
            if (s > best_score || (best_score != best_score && s == s)) {
                best_score = s;
                best = static_cast<int>(c);
            }
        }
        if (!(best_score >= options.score_threshold)) continue;
        sink.add(detection{detail::box_of_center(v[0], v[field_stride], v[2 * field_stride], v[3 * field_stride]), best_score, best});
    }
    return sink.count();
}

/// Decodes a YOLOv5-style head ([1, N, 5 + C]): score = objectness * class probability for
/// the best class, class ties going to the lower class.
inline result<std::size_t> decode_yolov5(tensor_view<const float> output, span<detection> out, const yolov5_options& options = {}) {
    std::int64_t rows = 0, cols = 0;
    if (!detail::matrix_dims(output.dims(), rows, cols) || cols < 6)
        return error_info{status::shape_mismatch, -1,
                          ember::detail::format("decode_yolov5: output has shape {}, expected [1, anchors, 5 + classes]",
                                                output.dims())};
    if (output.size() != 0 && !output.data()) return detail::no_data("decode_yolov5");
    const std::size_t anchors = static_cast<std::size_t>(rows), stride = static_cast<std::size_t>(cols);
    detail::detection_sink sink(out);
    for (std::size_t a = 0; a < anchors; ++a) {
        const float* v = output.data() + a * stride;
        const float objectness = v[4];
        int best = -1;
        float best_score = 0.0f;
        for (std::size_t c = 5; c < stride; ++c) {
            const float s = objectness * v[c];
            if (s == s && (best < 0 || s > best_score)) {
                best_score = s;
                best = static_cast<int>(c - 5);
            }
        }
        if (best < 0 || !(best_score >= options.score_threshold)) continue;
        sink.add(detection{detail::box_of_center(v[0], v[1], v[2], v[3]), best_score, best});
    }
    return sink.count();
}

/// Decodes box deltas against anchors with torchvision's BoxCoder (the header comment has the
/// formulas): deltas [1, N, 4], anchors [N, 4] (corners), scores [1, N, C]. Fails with
/// invalid_argument for a weight that is not positive or a background_class outside [-1, C).
inline result<std::size_t> decode_anchor_deltas(tensor_view<const float> deltas, tensor_view<const float> anchors,
                                                tensor_view<const float> scores, span<detection> out,
                                                const anchor_delta_options& options = {}) {
    std::int64_t n = 0, four = 0, an = 0, afour = 0, sn = 0, classes = 0;
    if (!detail::matrix_dims(deltas.dims(), n, four) || four != 4)
        return error_info{status::shape_mismatch, -1,
                          ember::detail::format("decode_anchor_deltas: deltas have shape {}, expected [1, anchors, 4]", deltas.dims())};
    if (!detail::matrix_dims(anchors.dims(), an, afour) || afour != 4 || an != n)
        return error_info{status::shape_mismatch, -1,
                          ember::detail::format("decode_anchor_deltas: anchors have shape {}, expected [{}, 4] to match the deltas",
                                                anchors.dims(), n)};
    if (!detail::matrix_dims(scores.dims(), sn, classes) || sn != n || classes < 1)
        return error_info{status::shape_mismatch, -1,
                          ember::detail::format("decode_anchor_deltas: scores have shape {}, expected [1, {}, classes]", scores.dims(), n)};
    for (float w : options.weights)
        if (!(w > 0.0f))
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("decode_anchor_deltas: weight {} is not positive", w)};
    if (options.background_class < -1 || options.background_class >= classes)
        return error_info{status::invalid_argument, -1,
                          ember::detail::format("decode_anchor_deltas: background_class {} is outside [-1, {})",
                                                options.background_class, classes)};
    if (n != 0 && (!deltas.data() || !anchors.data() || !scores.data())) return detail::no_data("decode_anchor_deltas");

    const float wx = options.weights[0], wy = options.weights[1], ww = options.weights[2], wh = options.weights[3];
    const std::size_t c_count = static_cast<std::size_t>(classes);
    detail::detection_sink sink(out);
    for (std::size_t a = 0; a < static_cast<std::size_t>(n); ++a) {
        const float* s = scores.data() + a * c_count;
        // Softmax over the row without scratch: max and sum first, each probability on demand.
        float max = s[0];
        double sum = 0.0;
        if (options.activation == score_activation::softmax) {
            for (std::size_t c = 1; c < c_count; ++c) max = s[c] > max ? s[c] : max;
            for (std::size_t c = 0; c < c_count; ++c) sum += static_cast<double>(std::exp(s[c] - max));
        }
        const float inv_sum = static_cast<float>(1.0 / sum);
        const auto score_of = [&](std::size_t c) noexcept {
            switch (options.activation) {
                case score_activation::softmax: return std::exp(s[c] - max) * inv_sum;
                case score_activation::sigmoid: return 1.0f / (1.0f + std::exp(-s[c]));
                case score_activation::none: break;
            }
            return s[c];
        };

        bool decoded = false;
        box b;
        const auto emit = [&](std::size_t c, float score) noexcept {
            if (!decoded) {
                // torchvision BoxCoder.decode_single, in its order of operations.
                const float* d = deltas.data() + a * 4;
                const float* r = anchors.data() + a * 4;
                const float aw = r[2] - r[0], ah = r[3] - r[1];
                const float ax = r[0] + 0.5f * aw, ay = r[1] + 0.5f * ah;
                const float dw = std::min(d[2] / ww, bbox_xform_clip), dh = std::min(d[3] / wh, bbox_xform_clip);
                b = detail::box_of_center(d[0] / wx * aw + ax, d[1] / wy * ah + ay, std::exp(dw) * aw, std::exp(dh) * ah);
                decoded = true;
            }
            sink.add(detection{b, score, static_cast<int>(c)});
        };

        int best = -1;
        float best_score = 0.0f;
        for (std::size_t c = 0; c < c_count; ++c) {
            if (static_cast<int>(c) == options.background_class) continue;
            const float p = score_of(c);
            if (!(p >= options.score_threshold)) continue;
            if (!options.best_class_only)
                emit(c, p);
            else if (best < 0 || p > best_score) {
                best = static_cast<int>(c);
                best_score = p;
            }
        }
        if (best >= 0) emit(static_cast<std::size_t>(best), best_score);
    }
    return sink.count();
}

} // namespace post
EMBER_NAMESPACE_END
