// SPDX-License-Identifier: Apache-2.0
// Writing pictures as PNG or JPEG, through stb_image_write (Debian's libstb-dev), for examples
// and tools (boxes drawn on a detection, a mask to look at). Not for the run path: the bytes
// go into a std::vector.
//
//   if (auto r = ember::image::write_png("boxes.png", img.view()); !r) { /* r.error().message */ }
//
// Like decode.hpp, a private (static) copy of stb_image_write is compiled into each file that
// includes this header; include it before any stb_image_write.h of your own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ember/config.hpp"
#include "ember/detail/stb_warnings.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/format.hpp"
#include "ember/image/image.hpp"
#include "ember/status.hpp"

#if defined(INCLUDE_STB_IMAGE_WRITE_H)
#error "ember/image/encode.hpp: include it before stb_image_write.h (ember compiles its own private stb_image_write)"
#endif

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
EMBER_STB_WARNINGS_OFF
#if __has_include(<stb/stb_image_write.h>)
#include <stb/stb_image_write.h>
#else
#include <stb_image_write.h>
#endif
EMBER_STB_WARNINGS_ON
#undef STB_IMAGE_WRITE_IMPLEMENTATION

EMBER_NAMESPACE_BEGIN
namespace image {
namespace detail {

inline void append_bytes(void* context, void* data, int size) {
    auto* out = static_cast<std::vector<std::uint8_t>*>(context);
    const auto* bytes = static_cast<const std::uint8_t*>(data);
    out->insert(out->end(), bytes, bytes + size);
}

inline result<void> write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return error_info{status::io_error, -1, ember::detail::format("ember::image: '{}': cannot create the file", path)};
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (std::fclose(f) != 0 || !ok)
        return error_info{status::io_error, -1, ember::detail::format("ember::image: '{}': cannot write the file", path)};
    return {};
}

} // namespace detail

/// The picture as PNG bytes, appended to out.
inline result<void> encode_png(tensor_view<const std::uint8_t> img, std::vector<std::uint8_t>& out) {
    result<detail::hwc> s = detail::check_hwc(img, "encode_png");
    if (!s) return s.error();
    if (!stbi_write_png_to_func(&detail::append_bytes, &out, s->width, s->height, s->channels, img.data(),
                                static_cast<int>(s->row_bytes())))
        return error_info{status::out_of_memory, -1, "encode_png: stb_image_write failed"};
    return {};
}

/// The picture as JPEG bytes (quality 1 to 100), appended to out. Alpha is dropped.
inline result<void> encode_jpeg(tensor_view<const std::uint8_t> img, std::vector<std::uint8_t>& out, int quality = 90) {
    result<detail::hwc> s = detail::check_hwc(img, "encode_jpeg");
    if (!s) return s.error();
    if (quality < 1 || quality > 100)
        return error_info{status::invalid_argument, -1, ember::detail::format("encode_jpeg: quality {} is not in 1..100", quality)};
    if (!stbi_write_jpg_to_func(&detail::append_bytes, &out, s->width, s->height, s->channels, img.data(), quality))
        return error_info{status::out_of_memory, -1, "encode_jpeg: stb_image_write failed"};
    return {};
}

/// Writes the picture to path as PNG.
inline result<void> write_png(const std::string& path, tensor_view<const std::uint8_t> img) {
    std::vector<std::uint8_t> bytes;
    if (result<void> r = encode_png(img, bytes); !r) return r;
    return detail::write_bytes(path, bytes);
}

/// Writes the picture to path as JPEG.
inline result<void> write_jpeg(const std::string& path, tensor_view<const std::uint8_t> img, int quality = 90) {
    std::vector<std::uint8_t> bytes;
    if (result<void> r = encode_jpeg(img, bytes, quality); !r) return r;
    return detail::write_bytes(path, bytes);
}

} // namespace image
EMBER_NAMESPACE_END
