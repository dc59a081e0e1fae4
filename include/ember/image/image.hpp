// SPDX-License-Identifier: Apache-2.0
// The image vocabulary of ember/image: an 8-bit interleaved picture is a tensor_view<uint8_t> of
// shape [height, width, channels] (HWC, channels 1 to 4: gray, gray+alpha, RGB, RGBA), so a
// game's own frame buffer or a camera frame goes straight in without a copy. `image` owns one:
// its buffer grows and never shrinks, so a loop that decodes into the same image allocates only
// when a bigger picture arrives.
//
//   ember::image::image img;                         // empty
//   if (auto r = img.reshape(640, 480, 3); !r) ...   // out_of_memory when the allocator fails
//   ember::tensor_view<std::uint8_t> hwc = img.view();   // [480, 640, 3]
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

#include "ember/config.hpp"
#include "ember/core/allocator.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/format.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace image {

/// Pictures above this many pixels are refused by the decoder and the transforms (PIL's
/// decompression-bomb limit is 89 M); raise it in decode_options for scans and panoramas.
inline constexpr std::int64_t default_max_pixels = std::int64_t{1} << 27;

/// An owned 8-bit HWC picture. Move-only; view() gives the tensor_view the functions take.
class image {
public:
    explicit image(const allocator& alloc = default_allocator()) noexcept : alloc_(alloc) {}
    image(image&&) noexcept = default;
    image& operator=(image&&) noexcept = default;

    /// Sets the size, keeping the buffer when it is big enough. The pixels are unspecified after.
    result<void> reshape(int width, int height, int channels) {
        if (width <= 0 || height <= 0 || channels < 1 || channels > 4 ||
            static_cast<std::int64_t>(width) * height > default_max_pixels * 4)
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("image::reshape: {}x{} with {} channels is not a picture size", width,
                                                    height, channels)};
        const std::size_t bytes = static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * static_cast<std::size_t>(channels);
        if (bytes > buffer_.size_bytes() && !buffer_.allocate(bytes, alloc_, false))
            return error_info{status::out_of_memory, -1,
                              ember::detail::format("image::reshape: the allocator refused {} bytes", bytes)};
        width_ = width;
        height_ = height;
        channels_ = channels;
        return {};
    }

    int width() const noexcept { return width_; }
    int height() const noexcept { return height_; }
    int channels() const noexcept { return channels_; }
    bool empty() const noexcept { return width_ == 0; }
    std::size_t size_bytes() const noexcept {
        return static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_) * static_cast<std::size_t>(channels_);
    }
    /// Bytes held, which can exceed size_bytes() after a smaller picture replaced a bigger one.
    std::size_t capacity_bytes() const noexcept { return buffer_.size_bytes(); }
    std::uint8_t* data() noexcept { return reinterpret_cast<std::uint8_t*>(buffer_.data()); }
    const std::uint8_t* data() const noexcept { return reinterpret_cast<const std::uint8_t*>(buffer_.data()); }

    tensor_view<std::uint8_t> view() noexcept { return {data(), shape{height_, width_, channels_}}; }
    tensor_view<const std::uint8_t> view() const noexcept { return {data(), shape{height_, width_, channels_}}; }

private:
    allocator alloc_;
    aligned_buffer buffer_;
    int width_ = 0;
    int height_ = 0;
    int channels_ = 0;
};

namespace detail {

/// Height, width and channels of a checked HWC view.
struct hwc {
    int height = 0;
    int width = 0;
    int channels = 0;
    std::size_t row_bytes() const noexcept { return static_cast<std::size_t>(width) * static_cast<std::size_t>(channels); }
};

/// Checks that view is an 8-bit picture ([H, W, C], C in 1..4, data present, at most
/// default_max_pixels * 4 pixels); `what` (and `which`, when given) name the argument in the
/// message ("resize: dst"), built only on failure.
template <class T>
result<hwc> check_hwc(const tensor_view<T>& view, std::string_view what, std::string_view which = {}) {
    const shape& d = view.dims();
    const char* colon = which.empty() ? "" : ": ";
    if (d.rank() != 3 || d[0] <= 0 || d[1] <= 0 || d[2] < 1 || d[2] > 4 || d[0] * d[1] > default_max_pixels * 4)
        return error_info{status::shape_mismatch, -1,
                          ember::detail::format("{}{}{}: expected a picture [height, width, channels] with 1 to 4 channels, got {}",
                                                what, colon, which, d)};
    if (view.data() == nullptr)
        return error_info{status::invalid_argument, -1, ember::detail::format("{}{}{}: no pixel data", what, colon, which)};
    return hwc{static_cast<int>(d[0]), static_cast<int>(d[1]), static_cast<int>(d[2])};
}

} // namespace detail
} // namespace image
EMBER_NAMESPACE_END
