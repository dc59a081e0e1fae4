// SPDX-License-Identifier: Apache-2.0
// Decoding JPEG, PNG and BMP into an ember::image::image, through stb_image (Debian's
// libstb-dev). A decoder keeps its scratch memory between calls: stb_image's own allocations
// go to a bump arena that grows to the biggest picture seen, the file buffer is reused, and the
// image keeps its buffer, so a loop over same-sized pictures allocates nothing after the first.
//
//   ember::image::decoder dec;
//   ember::image::image img;
//   for (const std::string& path : paths) {
//       ember::result<void> r = dec.decode_file(path, img, {3});   // RGB, whatever the file has
//       if (!r) { /* r.error().message: "ember::image: 'cat.jpg': corrupt image (...)" */ }
//   }
//
// Errors: a file that cannot be read is status::io_error; bytes that are not a JPEG, PNG or BMP,
// a corrupt or truncated file, or a picture above decode_options::max_pixels is
// status::invalid_model (as for a corrupt .npy); the message names the file. Other formats
// (GIF, TGA, HDR, PSD) are left out of stb_image on purpose: less code that hostile files reach.
//
// ember compiles a private copy of stb_image into each translation unit that includes this
// header (STB_IMAGE_STATIC: internal linkage, so it never clashes with the application's own
// stb_image). Include this header before any stb_image.h of your own in the same file.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ember/config.hpp"
#include "ember/detail/stb_warnings.hpp"
#include "ember/core/allocator.hpp"
#include "ember/detail/format.hpp"
#include "ember/detail/read_file.hpp"
#include "ember/image/image.hpp"
#include "ember/status.hpp"

#if defined(STBI_INCLUDE_STB_IMAGE_H)
#error "ember/image/decode.hpp: include it before stb_image.h (ember compiles its own private stb_image)"
#endif

EMBER_NAMESPACE_BEGIN
namespace image {
namespace detail {

/// Where stb_image's allocations go during one decoder call: a bump block that the decoder
/// keeps between calls, with the decoder's allocator behind it for what does not fit. Each
/// allocation carries a 16-byte header (its size, and whether it came from the allocator).
class stb_arena {
public:
    explicit stb_arena(const allocator& alloc) noexcept : alloc_(alloc) {}

    /// Starts a call whose allocations may each be at most limit bytes (see refused()).
    void begin(std::size_t limit = SIZE_MAX / 2) noexcept {
        used_ = 0;
        peak_ = 0;
        overflow_ = 0;
        limit_ = limit;
        refused_ = 0;
    }
    /// The biggest allocation refused for being above the call's limit (0: none).
    std::size_t refused() const noexcept { return refused_; }

    /// Grows the block so that the call just made would have fitted in it (false: no memory).
    bool end() noexcept {
        const std::size_t want = peak_ + overflow_;
        if (want <= block_.size_bytes()) return true;
        return block_.allocate(want + want / 4, alloc_, false);
    }

    /// Zeroed, as calloc: Debian's stb_image (git 2022-09) mallocs its JPEG state and reads
    /// Huffman tables that the file never defined (upstream 2.28 zeroes the state). Uninitialised,
    /// or the previous picture's bytes in this block, they index past their arrays: found by
    /// fuzz/image_fuzz.cpp, which reuses one decoder as a pipeline does.
    void* allocate(std::size_t bytes) noexcept {
        if (bytes > limit_) return refuse(bytes);
        const std::size_t total = header_bytes + round_up(bytes);
        void* p = nullptr;
        if (used_ + total <= block_.size_bytes()) {
            std::byte* at = block_.data() + used_;
            used_ += total;
            if (used_ > peak_) peak_ = used_;
            p = stamp(at, bytes, false);
        } else {
            overflow_ += total;
            void* at = alloc_.allocate(total, header_bytes);
            if (!at) return nullptr;
            p = stamp(static_cast<std::byte*>(at), bytes, true);
        }
        std::memset(p, 0, bytes);
        return p;
    }

    void release(void* p) noexcept {
        if (!p) return;
        header h = header_of(p);
        std::byte* at = static_cast<std::byte*>(p) - header_bytes;
        if (h.from_allocator) {
            alloc_.deallocate(at, header_bytes + round_up(h.bytes), header_bytes);
        } else if (at + header_bytes + round_up(h.bytes) == block_.data() + used_) {
            used_ = static_cast<std::size_t>(at - block_.data());  // the last block: pop it
        }
    }

    void* reallocate(void* p, std::size_t bytes) noexcept {
        if (!p) return allocate(bytes);
        if (bytes > limit_) return refuse(bytes);
        header h = header_of(p);
        std::byte* at = static_cast<std::byte*>(p) - header_bytes;
        const std::size_t end_of_p = static_cast<std::size_t>(at - block_.data()) + header_bytes + round_up(h.bytes);
        if (!h.from_allocator && end_of_p == used_ &&
            used_ - round_up(h.bytes) + round_up(bytes) <= block_.size_bytes()) {
            used_ = used_ - round_up(h.bytes) + round_up(bytes);  // the last block grows in place
            if (used_ > peak_) peak_ = used_;
            if (bytes > h.bytes) std::memset(static_cast<std::byte*>(p) + h.bytes, 0, bytes - h.bytes);
            return stamp(at, bytes, false);
        }
        void* q = allocate(bytes);
        if (!q) return nullptr;
        std::memcpy(q, p, h.bytes < bytes ? h.bytes : bytes);
        release(p);
        return q;
    }

private:
    static constexpr std::size_t header_bytes = 16;
    struct header {
        std::size_t bytes;
        std::size_t from_allocator;
    };
    void* refuse(std::size_t bytes) noexcept {
        if (bytes > refused_) refused_ = bytes;
        return nullptr;
    }
    static std::size_t round_up(std::size_t n) noexcept { return (n + header_bytes - 1) / header_bytes * header_bytes; }
    static void* stamp(std::byte* at, std::size_t bytes, bool from_allocator) noexcept {
        const header h{bytes, from_allocator ? std::size_t{1} : std::size_t{0}};
        std::memcpy(at, &h, sizeof h);
        return at + header_bytes;
    }
    static header header_of(void* p) noexcept {
        header h;
        std::memcpy(&h, static_cast<std::byte*>(p) - header_bytes, sizeof h);
        return h;
    }

    allocator alloc_;
    aligned_buffer block_;
    std::size_t used_ = 0;
    std::size_t peak_ = 0;
    std::size_t overflow_ = 0;
    std::size_t limit_ = SIZE_MAX / 2;
    std::size_t refused_ = 0;
};

/// The number of codes of the first JPEG Huffman table that stb_image would read with more than
/// 256 codes, or 0 when there is none (or the bytes are not a JPEG). Debian's stb_image (git
/// 2022-09) copies a DHT table's codes into a 256-byte array without checking their count (fixed
/// upstream in 2.28): a crafted file writes up to 3.8 KiB past it, on the heap. This walks the
/// markers as stb_image does (fill bytes, junk between segments skipped, each segment by its
/// length, entropy-coded data up to the next marker other than RSTn, zeros past the end) and
/// checks every DHT segment it would parse, before stb_image sees the bytes. Found by
/// fuzz/image_fuzz.cpp; tests/image/decode_test.cpp keeps the file.
inline unsigned jpeg_oversized_huffman_table(const unsigned char* p, std::size_t n) noexcept {
    if (n < 2 || p[0] != 0xFF) return 0;
    std::size_t i = 1;
    while (i < n && p[i] == 0xFF) ++i;  // stb_image takes FF FF ... FF D8 as the start too
    if (i >= n || p[i] != 0xD8) return 0;
    ++i;
    const auto byte = [&](std::size_t k) -> unsigned { return k < n ? p[k] : 0u; };  // stb reads 0 past the end
    while (i < n) {
        if (p[i] != 0xFF) {  // junk between segments: stb_image skips it a byte at a time
            ++i;
            continue;
        }
        while (i < n && p[i] == 0xFF) ++i;
        if (i >= n) break;
        const unsigned marker = p[i++];
        if (marker == 0xD9) break;                                                   // EOI
        if (marker == 0x00 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) continue;  // no length
        const std::size_t length = byte(i) << 8 | byte(i + 1);
        if (marker == 0xC4) {  // DHT: tables while the length lasts, the first one always
            long left = static_cast<long>(length) - 2;
            std::size_t at = i + 2;
            while (left > 0) {
                unsigned codes = 0;
                for (std::size_t c = 1; c <= 16; ++c) codes += byte(at + c);
                if (codes > 256) return codes;
                left -= 17 + static_cast<long>(codes);
                at += 17 + codes;
            }
        }
        i += length;
        if (marker == 0xDA)  // SOS: the entropy-coded data runs to the next marker other than RSTn
            while (i + 1 < n && !(p[i] == 0xFF && p[i + 1] != 0x00 && p[i + 1] != 0xFF && (p[i + 1] < 0xD0 || p[i + 1] > 0xD7))) ++i;
    }
    return 0;
}

/// The arena of the decoder call running on this thread; outside one (stb_image used directly
/// in the same file), stb_image gets plain malloc.
inline thread_local stb_arena* current_stb_arena = nullptr;

inline void* stb_malloc(std::size_t bytes) noexcept {
    return current_stb_arena ? current_stb_arena->allocate(bytes) : std::malloc(bytes);
}
inline void* stb_realloc(void* p, std::size_t bytes) noexcept {
    return current_stb_arena ? current_stb_arena->reallocate(p, bytes) : std::realloc(p, bytes);
}
inline void stb_free(void* p) noexcept {
    if (current_stb_arena)
        current_stb_arena->release(p);
    else
        std::free(p);
}

} // namespace detail
} // namespace image
EMBER_NAMESPACE_END

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MALLOC(bytes) ::ember::image::detail::stb_malloc(bytes)
#define STBI_REALLOC(p, bytes) ::ember::image::detail::stb_realloc(p, bytes)
#define STBI_FREE(p) ::ember::image::detail::stb_free(p)
EMBER_STB_WARNINGS_OFF
#if __has_include(<stb/stb_image.h>)
#include <stb/stb_image.h>
#else
#include <stb_image.h>
#endif
EMBER_STB_WARNINGS_ON
#undef STB_IMAGE_IMPLEMENTATION

EMBER_NAMESPACE_BEGIN
namespace image {

/// What decode_*() produces and what it refuses.
struct decode_options {
    int channels = 0;  ///< 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA; 0 = what the file holds
    std::int64_t max_pixels = default_max_pixels;
    std::size_t max_file_bytes = std::size_t{1} << 30;
};

/// Width, height and channels of an encoded picture, read from its header.
struct image_info {
    int width = 0;
    int height = 0;
    int channels = 0;
};

/// Decodes pictures, keeping its scratch memory between calls. One decoder per thread.
class decoder {
public:
    explicit decoder(const allocator& alloc = default_allocator()) noexcept : arena_(alloc) {}

    /// Reads the header only.
    result<image_info> probe_memory(const void* data, std::size_t size, std::string_view name = "memory") const {
        if (data == nullptr || size == 0) return failure(status::invalid_model, name, "empty");
        if (size > static_cast<std::size_t>(INT_MAX)) return failure(status::invalid_model, name, "more than 2 GiB");
        if (const unsigned codes = detail::jpeg_oversized_huffman_table(static_cast<const unsigned char*>(data), size))
            return failure(status::invalid_model, name,
                           ember::detail::format("corrupt JPEG (a Huffman table of {} codes, at most 256 allowed)", codes));
        image_info info;
        if (!stbi_info_from_memory(static_cast<const stbi_uc*>(data), static_cast<int>(size), &info.width, &info.height,
                                   &info.channels))
            return failure(status::invalid_model, name, reason("not a JPEG, PNG or BMP picture"));
        return info;
    }

    /// Decodes size bytes at data into out; name labels the bytes in error messages.
    result<void> decode_memory(const void* data, std::size_t size, image& out, const decode_options& options = {},
                               std::string_view name = "memory") {
        if (options.channels < 0 || options.channels > 4)
            return failure(status::invalid_argument, name,
                           ember::detail::format("decode_options::channels is {}, expected 0 to 4", options.channels));
        result<image_info> info = probe_memory(data, size, name);
        if (!info) return info.error();
        if (info->width <= 0 || info->height <= 0 ||
            static_cast<std::int64_t>(info->width) * info->height > options.max_pixels)
            return failure(status::invalid_model, name,
                           ember::detail::format("{}x{} pixels, more than decode_options::max_pixels ({})", info->width,
                                                 info->height, options.max_pixels));
        const int channels = options.channels != 0 ? options.channels : info->channels;
        // Each of stb_image's allocations is held to what a picture of this size and file can
        // need (16 bytes a pixel covers 4 channels of 16 bits and JPEG's coefficients; the
        // compressed data is at most the file): a PNG chunk can claim 2 GiB in a few bytes, and
        // Debian's stb_image allocates that before it finds the data missing.
        const std::size_t scratch_limit = static_cast<std::size_t>(info->width) * static_cast<std::size_t>(info->height) * 16 +
                                          2 * size + (std::size_t{1} << 20);
        detail::current_stb_arena = &arena_;
        arena_.begin(scratch_limit);
        int width = 0, height = 0, file_channels = 0;
        stbi_uc* pixels = stbi_load_from_memory(static_cast<const stbi_uc*>(data), static_cast<int>(size), &width, &height,
                                                &file_channels, channels);
        result<void> done;
        if (!pixels && arena_.refused() != 0) {
            done = failure(status::invalid_model, name,
                           ember::detail::format("corrupt image (it needs {} bytes of scratch, more than a {}x{} picture in {} bytes can)",
                                                 arena_.refused(), info->width, info->height, size));
        } else if (!pixels) {
            done = failure(status::invalid_model, name, reason("corrupt image"));
        } else if (width != info->width || height != info->height) {
            done = failure(status::invalid_model, name, "the header and the pixel data disagree on the size");
        } else if (result<void> r = out.reshape(width, height, channels); !r) {
            done = r;
        } else {
            std::memcpy(out.data(), pixels, out.size_bytes());
        }
        stbi_image_free(pixels);
        const bool grown = arena_.end();
        detail::current_stb_arena = nullptr;
        if (done && !grown) return failure(status::out_of_memory, name, "the allocator refused the decoder's scratch block");
        return done;
    }

    /// Reads the file at path and decodes it into out.
    result<void> decode_file(const std::string& path, image& out, const decode_options& options = {}) {
        const auto read = ember::detail::read_whole_file(path, file_, options.max_file_bytes);
        if (read != ember::detail::read_file_status::ok)
            return failure(status::io_error, path,
                           read == ember::detail::read_file_status::cannot_open ? "cannot open the file" : "cannot read the file");
        if (file_.size() > options.max_file_bytes)
            return failure(status::invalid_model, path,
                           ember::detail::format("more than decode_options::max_file_bytes ({})", options.max_file_bytes));
        return decode_memory(file_.data(), file_.size(), out, options, path);
    }

private:
    static error_info failure(status code, std::string_view name, std::string_view what) {
        return error_info{code, -1, ember::detail::format("ember::image: '{}': {}", name, what)};
    }
    /// what, with stb_image's reason when it gave one ("corrupt image (bad huffman code)").
    static std::string reason(std::string_view what) {
        const char* why = stbi_failure_reason();
        if (!why || std::strcmp(why, "unknown image type") == 0) return std::string(what);
        return ember::detail::format("{} (stb_image: {})", what, why);
    }

    detail::stb_arena arena_;
    std::vector<unsigned char> file_;
};

/// One picture from a file, with a decoder of its own (allocates; loops use a decoder).
inline result<image> decode_file(const std::string& path, const decode_options& options = {}) {
    decoder dec;
    image out;
    if (result<void> r = dec.decode_file(path, out, options); !r) return r.error();
    return out;
}

/// One picture from memory, with a decoder of its own.
inline result<image> decode_memory(const void* data, std::size_t size, const decode_options& options = {}) {
    decoder dec;
    image out;
    if (result<void> r = dec.decode_memory(data, size, out, options); !r) return r.error();
    return out;
}

} // namespace image
EMBER_NAMESPACE_END
