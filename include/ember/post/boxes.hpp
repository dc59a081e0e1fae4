// SPDX-License-Identifier: Apache-2.0
// The vocabulary of detection post-processing: an axis-aligned box in pixel corners, its area
// and overlap, one detection (box, score, class), and the map from a letterboxed model input
// back to the original picture. Plain values, no allocation.
//
//   ember::post::box a{10, 10, 50, 50}, b{30, 30, 70, 70};
//   float overlap = ember::post::iou(a, b);                // 400 / 2800
//   // the model saw the picture at x' = x * scale + pad_x (ember::image::letterbox_info):
//   ember::post::box original = ember::post::unletterbox(a, info.scale, info.pad_x, info.pad_y,
//                                                        float(picture_width), float(picture_height));
#pragma once

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN
namespace post {

/// A box by its corners, in pixels: x grows rightwards, y downwards; (x0, y0) is the top-left
/// corner and (x1, y1) the bottom-right one. A box with x1 <= x0 or y1 <= y0 is empty.
struct box {
    float x0 = 0.0f;
    float y0 = 0.0f;
    float x1 = 0.0f;
    float y1 = 0.0f;
};

/// The box's area, 0 for an empty (or NaN) box.
inline float area(const box& b) noexcept {
    const float w = b.x1 - b.x0, h = b.y1 - b.y0;
    return w > 0.0f && h > 0.0f ? w * h : 0.0f;
}

/// Intersection over union, in [0, 1]. 0 when either box is empty or degenerate (zero width
/// or height, NaN), so such a box never suppresses another in nms().
inline float iou(const box& a, const box& b) noexcept {
    const float area_a = area(a), area_b = area(b);
    if (!(area_a > 0.0f) || !(area_b > 0.0f)) return 0.0f;
    const float ix0 = a.x0 > b.x0 ? a.x0 : b.x0;
    const float iy0 = a.y0 > b.y0 ? a.y0 : b.y0;
    const float ix1 = a.x1 < b.x1 ? a.x1 : b.x1;
    const float iy1 = a.y1 < b.y1 ? a.y1 : b.y1;
    const float inter = area(box{ix0, iy0, ix1, iy1});
    const float u = area_a + area_b - inter;
    if (!(u > 0.0f)) return 0.0f;  // inf + inf - inf is NaN: two infinite boxes
    const float r = inter / u;
    return r > 1.0f ? 1.0f : r;  // rounding can put a box's IoU with itself a hair above 1
}

/// One detected object. score is the model's confidence in [0, 1] (for YOLOv5, objectness
/// times class probability); class_id indexes the model's classes (post::labels).
struct detection {
    box bounds;
    float score = 0.0f;
    int class_id = 0;
};

/// Undoes a resize-and-pad: the model saw the picture at x' = x * scale + pad_x, y' = y * scale
/// + pad_y (ember::image::letterbox_info holds these), so x = (x' - pad_x) / scale. The result
/// is clipped to the original picture, [0, width] x [0, height]. scale must be positive.
inline box unletterbox(const box& b, float scale, float pad_x, float pad_y, float width, float height) noexcept {
    EMBER_ASSERT(scale > 0.0f, "unletterbox: scale must be positive");
    const auto clip = [](float v, float hi) noexcept { return v < 0.0f ? 0.0f : v > hi ? hi : v; };
    return box{clip((b.x0 - pad_x) / scale, width), clip((b.y0 - pad_y) / scale, height), clip((b.x1 - pad_x) / scale, width),
               clip((b.y1 - pad_y) / scale, height)};
}

} // namespace post
EMBER_NAMESPACE_END
