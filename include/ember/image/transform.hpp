// SPDX-License-Identifier: Apache-2.0
// From pixels to a model's input tensor and back: crop, center crop, grayscale, and the one pass
// that turns uint8 HWC into normalised float NCHW (or NHWC), writing one item of a batch. All of
// them write into the caller's tensors and allocate nothing.
//
//   // torchvision's Resize(256) + CenterCrop(224) + ToTensor() + Normalize(mean, std):
//   ember::image::extent e = ember::image::fit_shorter_side(img.width(), img.height(), 256);
//   resized.reshape(e.width, e.height, 3);
//   rs.resize(img.view(), resized.view());
//   crop.reshape(224, 224, 3);
//   ember::image::center_crop(resized.view(), crop.view());
//   ember::image::normalize_options n;
//   n.mean = {0.485f, 0.456f, 0.406f};
//   n.std = {0.229f, 0.224f, 0.225f};
//   ember::image::to_tensor(crop.view(), batch, n, /*batch_index=*/i);   // batch: [N, 3, 224, 224]
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "ember/config.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/format.hpp"
#include "ember/image/image.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace image {

/// Copies the dst-sized window of src whose top-left corner is (x, y).
inline result<void> crop(tensor_view<const std::uint8_t> src, int x, int y, tensor_view<std::uint8_t> dst) {
    result<detail::hwc> s = detail::check_hwc(src, "crop: src");
    if (!s) return s.error();
    result<detail::hwc> d = detail::check_hwc(dst, "crop: dst");
    if (!d) return d.error();
    if (s->channels != d->channels || x < 0 || y < 0 || x > s->width - d->width || y > s->height - d->height)
        return error_info{status::shape_mismatch, -1,
                          ember::detail::format("crop: a {}x{} window at ({}, {}) with {} channels is not inside {}x{} with {}",
                                                d->width, d->height, x, y, d->channels, s->width, s->height, s->channels)};
    for (int row = 0; row < d->height; ++row)
        std::memcpy(dst.data() + static_cast<std::size_t>(row) * d->row_bytes(),
                    src.data() + static_cast<std::size_t>(y + row) * s->row_bytes() + static_cast<std::size_t>(x) * s->channels,
                    d->row_bytes());
    return {};
}

/// The dst-sized window in the middle of src (torchvision's CenterCrop: offsets rounded half
/// to even, as Python's round()).
inline result<void> center_crop(tensor_view<const std::uint8_t> src, tensor_view<std::uint8_t> dst) {
    result<detail::hwc> s = detail::check_hwc(src, "center_crop: src");
    if (!s) return s.error();
    result<detail::hwc> d = detail::check_hwc(dst, "center_crop: dst");
    if (!d) return d.error();
    const int x = static_cast<int>(std::nearbyint((s->width - d->width) / 2.0));
    const int y = static_cast<int>(std::nearbyint((s->height - d->height) / 2.0));
    return crop(src, x, y, dst);
}

/// RGB(A) or gray+alpha to one gray channel, with Pillow's convert("L") weights and rounding
/// (L = (19595 R + 38470 G + 7471 B + 2^15) >> 16, i.e. ITU-R 601-2 luma). Alpha is dropped.
inline result<void> to_grayscale(tensor_view<const std::uint8_t> src, tensor_view<std::uint8_t> dst) {
    result<detail::hwc> s = detail::check_hwc(src, "to_grayscale: src");
    if (!s) return s.error();
    result<detail::hwc> d = detail::check_hwc(dst, "to_grayscale: dst");
    if (!d) return d.error();
    if (d->channels != 1 || d->width != s->width || d->height != s->height)
        return error_info{status::shape_mismatch, -1,
                          ember::detail::format("to_grayscale: dst must be [{}, {}, 1], got {}", s->height, s->width, dst.dims())};
    const std::size_t pixels = static_cast<std::size_t>(s->width) * s->height;
    const std::uint8_t* in = src.data();
    std::uint8_t* out = dst.data();
    const int c = s->channels;
    if (c <= 2) {
        for (std::size_t i = 0; i < pixels; ++i) out[i] = in[i * c];
    } else {
        for (std::size_t i = 0; i < pixels; ++i, in += c)
            out[i] = static_cast<std::uint8_t>((19595u * in[0] + 38470u * in[1] + 7471u * in[2] + 0x8000u) >> 16);
    }
    return {};
}

/// Memory order of a float image tensor.
enum class tensor_layout : std::uint8_t {
    nchw,  ///< [C, H, W] or [N, C, H, W] (PyTorch, ONNX)
    nhwc,  ///< [H, W, C] or [N, H, W, C] (TensorFlow)
};

/// value = (pixel * scale - mean[c]) / std[c], channel c after the optional RGB -> BGR swap.
struct normalize_options {
    float scale = 1.0f / 255.0f;
    std::array<float, 4> mean{0.0f, 0.0f, 0.0f, 0.0f};
    std::array<float, 4> std{1.0f, 1.0f, 1.0f, 1.0f};
    tensor_layout layout = tensor_layout::nchw;
    bool bgr = false;  ///< reverse the first three channels (models trained on OpenCV's BGR)
};

namespace detail {

/// Where item batch_index of a [.., C, H, W] / [.., H, W, C] float tensor starts, for a picture
/// of h x w x c; checks the shape against it.
inline result<std::size_t> image_item_offset(const shape& dims, int h, int w, int c, tensor_layout layout,
                                             std::size_t batch_index, const char* what) {
    const bool chw = layout == tensor_layout::nchw;
    const std::size_t r = dims.rank();
    const bool fits = (r == 3 || r == 4) && dims[r - 3] == (chw ? c : h) && dims[r - 2] == (chw ? h : w) &&
                      dims[r - 1] == (chw ? w : c) && (r == 3 ? batch_index == 0 : static_cast<std::int64_t>(batch_index) < dims[0]);
    if (!fits) {
        const std::string want = chw ? ember::detail::format("[N, {}, {}, {}] or [{}, {}, {}]", c, h, w, c, h, w)
                                     : ember::detail::format("[N, {}, {}, {}] or [{}, {}, {}]", h, w, c, h, w, c);
        return error_info{status::shape_mismatch, -1,
                          ember::detail::format("{} is {}, expected {} for a {}x{} picture with {} channels (batch index {})",
                                                what, dims, want, w, h, c, batch_index)};
    }
    return batch_index * static_cast<std::size_t>(h) * w * c;
}

/// The channel that channel ch of a c-channel picture trades places with: its mirror among
/// the first three when bgr, else itself.
inline int swapped_channel(int ch, int c, bool bgr) noexcept { return bgr && c >= 3 && ch < 3 ? 2 - ch : ch; }

} // namespace detail

/// Writes the uint8 HWC picture src, normalised, as item batch_index of dst (float,
/// [N, C, H, W] or [C, H, W] for nchw; [N, H, W, C] or [H, W, C] for nhwc).
inline result<void> to_tensor(tensor_view<const std::uint8_t> src, tensor_view<float> dst, const normalize_options& options = {},
                              std::size_t batch_index = 0) {
    result<detail::hwc> s = detail::check_hwc(src, "to_tensor: src");
    if (!s) return s.error();
    const int h = s->height, w = s->width, c = s->channels;
    result<std::size_t> at = detail::image_item_offset(dst.dims(), h, w, c, options.layout, batch_index, "to_tensor: dst");
    if (!at) return at.error();
    if (dst.data() == nullptr) return error_info{status::invalid_argument, -1, "to_tensor: dst has no data"};
    // One table per channel: 256 exact values instead of a multiply-subtract-divide per pixel.
    float table[4][256];
    for (int ch = 0; ch < c; ++ch) {
        for (int v = 0; v < 256; ++v)
            table[ch][v] = (static_cast<float>(v) * options.scale - options.mean[static_cast<std::size_t>(ch)]) /
                             options.std[static_cast<std::size_t>(ch)];
    }
    const std::uint8_t* in = src.data();
    float* out = dst.data() + *at;
    const std::size_t plane = static_cast<std::size_t>(h) * w;
    for (int ch = 0; ch < c; ++ch) {
        const int from = detail::swapped_channel(ch, c, options.bgr);  // output ch reads input `from`
        const float* t = table[ch];
        if (options.layout == tensor_layout::nchw) {
            float* o = out + static_cast<std::size_t>(ch) * plane;
            for (std::size_t i = 0; i < plane; ++i) o[i] = t[in[i * c + from]];
        } else {
            for (std::size_t i = 0; i < plane; ++i) out[i * c + ch] = t[in[i * c + from]];
        }
    }
    return {};
}

/// The inverse of to_tensor: item batch_index of src (float) back to uint8 HWC pixels, rounded
/// and clamped to [0, 255] (a segmentation mask or a generated picture, to look at).
inline result<void> from_tensor(tensor_view<const float> src, tensor_view<std::uint8_t> dst, const normalize_options& options = {},
                                std::size_t batch_index = 0) {
    result<detail::hwc> d = detail::check_hwc(dst, "from_tensor: dst");
    if (!d) return d.error();
    const int h = d->height, w = d->width, c = d->channels;
    result<std::size_t> at = detail::image_item_offset(src.dims(), h, w, c, options.layout, batch_index, "from_tensor: src");
    if (!at) return at.error();
    if (src.data() == nullptr) return error_info{status::invalid_argument, -1, "from_tensor: src has no data"};
    const float* in = src.data() + *at;
    std::uint8_t* out = dst.data();
    const std::size_t plane = static_cast<std::size_t>(h) * w;
    for (int ch = 0; ch < c; ++ch) {
        const int to = detail::swapped_channel(ch, c, options.bgr);
        const float mean = options.mean[static_cast<std::size_t>(ch)], stdev = options.std[static_cast<std::size_t>(ch)];
        for (std::size_t i = 0; i < plane; ++i) {
            const float x = options.layout == tensor_layout::nchw ? in[static_cast<std::size_t>(ch) * plane + i] : in[i * c + ch];
            const float v = std::nearbyint((x * stdev + mean) / options.scale);
            out[i * c + to] = static_cast<std::uint8_t>(!(v >= 0.0f) ? 0.0f : v > 255.0f ? 255.0f : v);  // NaN -> 0
        }
    }
    return {};
}

} // namespace image
EMBER_NAMESPACE_END
