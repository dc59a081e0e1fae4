// SPDX-License-Identifier: Apache-2.0
// Resizing 8-bit pictures, and letterboxing them into a model's input. The bilinear filter is
// Pillow's: on a downscale its triangle widens with the scale factor (antialiasing), the weights
// are Pillow's 22-bit fixed point and the horizontal pass runs first, so the result is Pillow's
// Image.resize(size, BILINEAR) byte for byte, which is what torchvision's Resize gives the
// models it trains. The area filter averages each output pixel's exact footprint (OpenCV's
// INTER_AREA on a downscale; on an upscale it is bilinear). Channels are resampled each on its
// own (alpha is not premultiplied).
//
//   ember::image::resizer rs;                          // keeps its weights and scratch
//   ember::image::image small;
//   if (auto r = small.reshape(224, 224, 3); !r) ...
//   if (auto r = rs.resize(img.view(), small.view()); !r) ...   // to dst's size
//   ember::result<ember::image::letterbox_info> box = rs.letterbox(img.view(), input.view());
//
// A resizer allocates its scratch on first use and again only for a bigger picture; the free
// functions make a resizer per call.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

#include "ember/config.hpp"
#include "ember/core/allocator.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/format.hpp"
#include "ember/image/image.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace image {

enum class filter : std::uint8_t {
    bilinear,  ///< Pillow's BILINEAR (antialiased on a downscale)
    area,      ///< the mean over each output pixel's footprint; bilinear on an upscale
};

/// Where letterbox() put the picture: model-input x = original x * scale + pad_x.
struct letterbox_info {
    float scale = 1.0f;
    float pad_x = 0.0f;
    float pad_y = 0.0f;
    int width = 0;   ///< the resized picture inside the padding
    int height = 0;
};

/// The size that makes the shorter side `size` and keeps the aspect (torchvision's Resize(int)).
struct extent {
    int width = 0;
    int height = 0;
};
inline extent fit_shorter_side(int width, int height, int size) noexcept {
    if (width <= 0 || height <= 0 || size <= 0) return {};
    if (width <= height) return {size, static_cast<int>(static_cast<std::int64_t>(size) * height / width)};
    return {static_cast<int>(static_cast<std::int64_t>(size) * width / height), size};
}

namespace detail {

inline constexpr int precision_bits = 32 - 8 - 2;  // Pillow's PRECISION_BITS

/// The weights of one axis: output i reads `count` inputs from first[i], weights at i * taps.
struct axis_weights {
    std::int32_t* first = nullptr;
    std::int32_t* count = nullptr;
    std::int32_t* weights = nullptr;
    int taps = 0;
};

/// Most inputs one output reads on an axis of in -> out (both filters reach one scaled pixel).
inline int taps_for(int in, int out) noexcept {
    const double scale = static_cast<double>(in) / out;
    const double support = scale > 1.0 ? scale : 1.0;
    return static_cast<int>(std::ceil(support)) * 2 + 1;
}

/// Pillow's precompute_coeffs + normalize_coeffs_8bpc (triangle), or exact box coverage (area).
inline void compute_weights(int in, int out, filter f, axis_weights& w, double* scratch) noexcept {
    const double scale = static_cast<double>(in) / out;
    const bool box = f == filter::area && scale > 1.0;
    const double filter_scale = scale > 1.0 ? scale : 1.0;
    const double support = filter_scale;  // triangle support 1, scaled
    for (int i = 0; i < out; ++i) {
        int lo, hi;
        if (box) {
            lo = static_cast<int>(std::floor(i * scale));
            hi = std::min(static_cast<int>(std::ceil((i + 1) * scale)), in);
        } else {
            const double center = (i + 0.5) * scale;
            lo = std::max(static_cast<int>(center - support + 0.5), 0);
            hi = std::min(static_cast<int>(center + support + 0.5), in);
        }
        hi = std::min(hi, lo + w.taps);
        double total = 0.0;
        for (int x = lo; x < hi; ++x) {
            double k;
            if (box) {
                k = std::min(x + 1.0, (i + 1) * scale) - std::max(static_cast<double>(x), i * scale);
            } else {
                const double t = std::fabs((x - (i + 0.5) * scale + 0.5) / filter_scale);
                k = t < 1.0 ? 1.0 - t : 0.0;
            }
            scratch[x - lo] = k > 0.0 ? k : 0.0;
            total += scratch[x - lo];
        }
        std::int32_t* kk = w.weights + static_cast<std::size_t>(i) * w.taps;
        for (int x = 0; x < w.taps; ++x) {
            const double k = (x < hi - lo && total != 0.0) ? scratch[x] / total : 0.0;
            kk[x] = static_cast<std::int32_t>(k < 0 ? -0.5 + k * (1 << precision_bits) : 0.5 + k * (1 << precision_bits));
        }
        w.first[i] = lo;
        w.count[i] = hi - lo;
    }
}

/// Checks src and dst as pictures with the same channel count; `what` names the call.
inline result<std::pair<hwc, hwc>> check_pair(tensor_view<const std::uint8_t> src, tensor_view<std::uint8_t> dst,
                                              std::string_view what) {
    result<hwc> s = check_hwc(src, what, "src");
    if (!s) return s.error();
    result<hwc> d = check_hwc(dst, what, "dst");
    if (!d) return d.error();
    if (s->channels != d->channels)
        return error_info{status::shape_mismatch, -1,
                          ember::detail::format("{}: src has {} channels and dst {}", what, s->channels, d->channels)};
    return std::pair<hwc, hwc>{*s, *d};
}

inline std::uint8_t clip8(std::int64_t v) noexcept {
    v >>= precision_bits;
    return static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

} // namespace detail

/// Resizes pictures; keeps the weights of the last sizes and its scratch between calls.
class resizer {
public:
    explicit resizer(const allocator& alloc = default_allocator()) noexcept : alloc_(alloc) {}

    /// Resamples src into dst (any sizes, same channel count).
    result<void> resize(tensor_view<const std::uint8_t> src, tensor_view<std::uint8_t> dst, filter f = filter::bilinear) {
        result<std::pair<detail::hwc, detail::hwc>> sd = detail::check_pair(src, dst, "resize");
        if (!sd) return sd.error();
        const auto& [s, d] = *sd;
        return resample(src.data(), s, dst.data(), d.row_bytes(), d.width, d.height, f);
    }

    /// Scales src to fit dst keeping its aspect, centres it and fills the rest with `fill`
    /// (YOLO's letterbox, 114 gray by default). Boxes found in dst map back through the result.
    result<letterbox_info> letterbox(tensor_view<const std::uint8_t> src, tensor_view<std::uint8_t> dst,
                                     std::uint8_t fill = 114, filter f = filter::bilinear) {
        result<std::pair<detail::hwc, detail::hwc>> sd = detail::check_pair(src, dst, "letterbox");
        if (!sd) return sd.error();
        const detail::hwc* s = &sd->first;
        const detail::hwc* d = &sd->second;
        const double scale = std::min(static_cast<double>(d->width) / s->width, static_cast<double>(d->height) / s->height);
        letterbox_info info;
        info.width = std::clamp(static_cast<int>(std::lround(s->width * scale)), 1, d->width);
        info.height = std::clamp(static_cast<int>(std::lround(s->height * scale)), 1, d->height);
        const int pad_x = (d->width - info.width) / 2;
        const int pad_y = (d->height - info.height) / 2;
        info.scale = static_cast<float>(scale);
        info.pad_x = static_cast<float>(pad_x);
        info.pad_y = static_cast<float>(pad_y);
        std::memset(dst.data(), fill, dst.size());
        std::uint8_t* at = dst.data() + static_cast<std::size_t>(pad_y) * d->row_bytes() + static_cast<std::size_t>(pad_x) * d->channels;
        if (result<void> r = resample(src.data(), *s, at, d->row_bytes(), info.width, info.height, f); !r) return r.error();
        return info;
    }

private:
    /// src (s) -> out_w x out_h pixels at dst, rows dst_stride bytes apart.
    result<void> resample(const std::uint8_t* src, const detail::hwc& s, std::uint8_t* dst, std::size_t dst_stride, int out_w,
                          int out_h, filter f) {
        const int c = s.channels;
        if (out_w == s.width && out_h == s.height) {
            for (int y = 0; y < out_h; ++y)
                std::memcpy(dst + y * dst_stride, src + static_cast<std::size_t>(y) * s.row_bytes(), s.row_bytes());
            return {};
        }
        if (!prepare(s.width, s.height, out_w, out_h, c, f))
            return error_info{status::out_of_memory, -1, "resize: the allocator refused the resizer's scratch"};
        // Horizontal pass into temp ([s.height, out_w, c]); Pillow's order, so its rounding too.
        std::uint8_t* temp = reinterpret_cast<std::uint8_t*>(temp_.data());
        const std::size_t temp_stride = static_cast<std::size_t>(out_w) * c;
        for (int y = 0; y < s.height; ++y) {
            const std::uint8_t* row = src + static_cast<std::size_t>(y) * s.row_bytes();
            std::uint8_t* out = temp + y * temp_stride;
            for (int x = 0; x < out_w; ++x) {
                const std::int32_t* k = x_.weights + static_cast<std::size_t>(x) * x_.taps;
                const std::uint8_t* in = row + static_cast<std::size_t>(x_.first[x]) * c;
                for (int ch = 0; ch < c; ++ch) {
                    std::int64_t acc = std::int64_t{1} << (detail::precision_bits - 1);
                    for (int t = 0; t < x_.count[x]; ++t) acc += static_cast<std::int64_t>(in[t * c + ch]) * k[t];
                    out[x * c + ch] = detail::clip8(acc);
                }
            }
        }
        // Vertical pass into dst.
        for (int y = 0; y < out_h; ++y) {
            const std::int32_t* k = y_.weights + static_cast<std::size_t>(y) * y_.taps;
            const std::uint8_t* in = temp + static_cast<std::size_t>(y_.first[y]) * temp_stride;
            std::uint8_t* out = dst + y * dst_stride;
            for (std::size_t i = 0; i < temp_stride; ++i) {
                std::int64_t acc = std::int64_t{1} << (detail::precision_bits - 1);
                for (int t = 0; t < y_.count[y]; ++t) acc += static_cast<std::int64_t>(in[t * temp_stride + i]) * k[t];
                out[i] = detail::clip8(acc);
            }
        }
        return {};
    }

    /// Weights for in_w -> out_w and in_h -> out_h, and room for the horizontal pass's output.
    bool prepare(int in_w, int in_h, int out_w, int out_h, int channels, filter f) {
        const std::size_t temp_bytes = static_cast<std::size_t>(in_h) * out_w * channels;
        if (temp_bytes > temp_.size_bytes() && !temp_.allocate(temp_bytes, alloc_, false)) return false;
        if (in_w == key_[0] && out_w == key_[1] && in_h == key_[2] && out_h == key_[3] && static_cast<int>(f) == key_[4]) return true;
        const int tx = detail::taps_for(in_w, out_w), ty = detail::taps_for(in_h, out_h);
        const std::size_t ints = 2 * static_cast<std::size_t>(out_w + out_h) + static_cast<std::size_t>(out_w) * tx +
                                 static_cast<std::size_t>(out_h) * ty;
        const std::size_t doubles = static_cast<std::size_t>(std::max(tx, ty));
        const std::size_t bytes = ints * sizeof(std::int32_t) + doubles * sizeof(double) + alignof(double);
        key_[0] = -1;
        if (bytes > weights_.size_bytes() && !weights_.allocate(bytes, alloc_, false)) return false;
        double* scratch = reinterpret_cast<double*>(weights_.data());
        std::int32_t* at = reinterpret_cast<std::int32_t*>(scratch + doubles);
        x_ = {at, at + out_w, at + 2 * out_w, tx};
        at += 2 * static_cast<std::size_t>(out_w) + static_cast<std::size_t>(out_w) * tx;
        y_ = {at, at + out_h, at + 2 * out_h, ty};
        detail::compute_weights(in_w, out_w, f, x_, scratch);
        detail::compute_weights(in_h, out_h, f, y_, scratch);
        key_[0] = in_w, key_[1] = out_w, key_[2] = in_h, key_[3] = out_h, key_[4] = static_cast<int>(f);
        return true;
    }

    allocator alloc_;
    aligned_buffer weights_;
    aligned_buffer temp_;
    detail::axis_weights x_, y_;
    int key_[5] = {-1, -1, -1, -1, -1};
};

/// resizer::resize with a resizer of its own (allocates its scratch each call).
inline result<void> resize(tensor_view<const std::uint8_t> src, tensor_view<std::uint8_t> dst, filter f = filter::bilinear) {
    resizer r;
    return r.resize(src, dst, f);
}

/// resizer::letterbox with a resizer of its own.
inline result<letterbox_info> letterbox(tensor_view<const std::uint8_t> src, tensor_view<std::uint8_t> dst,
                                        std::uint8_t fill = 114, filter f = filter::bilinear) {
    resizer r;
    return r.letterbox(src, dst, fill, f);
}

} // namespace image
EMBER_NAMESPACE_END
