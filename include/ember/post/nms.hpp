// SPDX-License-Identifier: Apache-2.0
// Greedy non-maximum suppression over the caller's detections, in place: the survivors end up
// at the front, best first. No allocation, so it can run every frame after a decoder.
//
//   ember::result<std::size_t> n = ember::post::decode_yolov8(output, found);
//   ember::post::nms_options o;
//   o.iou_threshold = 0.7f;                                      // Ultralytics' predict default
//   ember::result<std::size_t> kept = ember::post::nms(ember::span(found, *n), o);
//   for (std::size_t i = 0; i < *kept; ++i) draw(found[i]);
//
// The rule is torchvision.ops.nms's (batched_nms when class_aware): walk the detections from
// the highest score down and keep one unless it overlaps an already kept one with
// IoU > iou_threshold. The order is a total one on the detections' values (score descending,
// then class ascending, then the box's y0, x0, y1, x1 ascending), so the result does not depend
// on the order the decoder wrote them in.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>

#include "ember/config.hpp"
#include "ember/core/span.hpp"
#include "ember/detail/format.hpp"
#include "ember/post/boxes.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace post {

struct nms_options {
    float iou_threshold = 0.45f;     ///< suppress when IoU with a kept detection is above this
    float score_threshold = 0.25f;   ///< drop detections scoring below this before suppression
    std::size_t max_detections = 300;  ///< keep at most this many (the best ones)
    bool class_aware = true;         ///< only detections of the same class suppress each other
};

namespace detail {

/// score descending, class ascending, then top-left first. A strict weak order as long as no
/// field is NaN; nms() drops those first.
inline bool nms_before(const detection& a, const detection& b) noexcept {
    if (a.score != b.score) return a.score > b.score;
    if (a.class_id != b.class_id) return a.class_id < b.class_id;
    if (a.bounds.y0 != b.bounds.y0) return a.bounds.y0 < b.bounds.y0;
    if (a.bounds.x0 != b.bounds.x0) return a.bounds.x0 < b.bounds.x0;
    if (a.bounds.y1 != b.bounds.y1) return a.bounds.y1 < b.bounds.y1;
    return a.bounds.x1 < b.bounds.x1;
}

inline bool has_nan(const detection& d) noexcept {
    return d.score != d.score || d.bounds.x0 != d.bounds.x0 || d.bounds.y0 != d.bounds.y0 || d.bounds.x1 != d.bounds.x1 ||
           d.bounds.y1 != d.bounds.y1;
}

} // namespace detail

/// Suppresses overlapping detections in place and returns how many are kept; those are
/// dets[0, count) in the order above, and the rest of dets is left in an unspecified order.
/// Detections scoring below score_threshold, or with a NaN score or coordinate, are dropped
/// first. Empty boxes overlap nothing (iou() is 0), so they are never suppressed. O(n log n)
/// for the sort plus O(n * kept) IoUs. Fails with invalid_argument when a threshold is NaN.
inline result<std::size_t> nms(span<detection> dets, const nms_options& options = {}) {
    if (options.iou_threshold != options.iou_threshold || options.score_threshold != options.score_threshold)
        return error_info{status::invalid_argument, -1,
                          ember::detail::format("nms: the thresholds must be numbers (iou_threshold {}, score_threshold {})",
                                                options.iou_threshold, options.score_threshold)};
    // Keep what passes, in place; the sort below makes the order irrelevant.
    std::size_t n = 0;
    for (std::size_t i = 0; i < dets.size(); ++i)
        if (!detail::has_nan(dets[i]) && dets[i].score >= options.score_threshold) {
            if (n != i) std::swap(dets[n], dets[i]);
            ++n;
        }
    std::sort(dets.begin(), dets.begin() + n, detail::nms_before);

    // Greedy pass: dets[0, kept) are the survivors; each candidate is compared with them only,
    // which is the same as suppressing forward from every kept box.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n && kept < options.max_detections; ++i) {
        const detection d = dets[i];
        bool suppressed = false;
        for (std::size_t j = 0; j < kept && !suppressed; ++j)
            suppressed = (!options.class_aware || dets[j].class_id == d.class_id) &&
                         iou(dets[j].bounds, d.bounds) > options.iou_threshold;
        if (!suppressed) {
            if (kept != i) std::swap(dets[kept], dets[i]);
            ++kept;
        }
    }
    return kept;
}

} // namespace post
EMBER_NAMESPACE_END
