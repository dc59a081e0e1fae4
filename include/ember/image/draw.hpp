// SPDX-License-Identifier: Apache-2.0
// Drawing on 8-bit HWC pictures (image.hpp's tensor_view<uint8_t> of [height, width, channels]):
// filled rectangles, box outlines, text in stb_easy_font's small bitmap font, and a whole set
// of detections with their labels. For looking at results (debug overlays, the detect example),
// not for typesetting. Everything is clipped to the picture, so any coordinates are safe
// (negative, far outside, NaN box corners); nothing allocates except an error's message.
//
//   ember::image::draw_box(img.view(), det.bounds, {255, 0, 0});            // red, 2 px
//   ember::image::draw_text(img.view(), 4, 4, "fps 60", {255, 255, 255}, 2); // 2x size
//   ember::image::draw_detections(img.view(), ember::span(found, kept), names);
//
// A color is RGBA. One-channel pictures get its luma (299 R + 587 G + 114 B + 500) / 1000,
// two-channel ones luma and alpha, four-channel ones all of r, g, b, a. Pixels are overwritten,
// not blended. Errors: a view that is not a picture gives shape_mismatch (invalid_argument
// without data), like every ember/image call; a thickness or text scale out of range gives
// invalid_argument.
//
// The font is stb_easy_font (Debian's libstb-dev), compiled into each translation unit that
// includes this header (its functions are static). Its glyphs are drawn as integer-sized
// quads: at scale s, a line's ink lies within 9 s rows from y, and lines are 12 s apart.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "ember/config.hpp"
#include "ember/detail/stb_warnings.hpp"
#include "ember/core/span.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/format.hpp"
#include "ember/image/image.hpp"
#include "ember/image/resize.hpp"
#include "ember/post/boxes.hpp"
#include "ember/post/classify.hpp"
#include "ember/status.hpp"

EMBER_STB_WARNINGS_OFF
#if __has_include(<stb/stb_easy_font.h>)
#include <stb/stb_easy_font.h>
#elif __has_include(<stb_easy_font.h>)
#include <stb_easy_font.h>
#else
#error "ember/image/draw.hpp needs stb_easy_font.h (Debian: apt install libstb-dev)"
#endif
EMBER_STB_WARNINGS_ON

EMBER_NAMESPACE_BEGIN
namespace image {

/// An RGBA color; a is written to the alpha channel of 2- and 4-channel pictures.
struct color {
    std::uint8_t r = 0;
    std::uint8_t g = 0;
    std::uint8_t b = 0;
    std::uint8_t a = 255;
};

/// Largest text scale draw_text() takes: a glyph row is then 256 pixels tall.
inline constexpr int max_text_scale = 256;

namespace detail {

/// The bytes one pixel of a c-channel picture gets for a color.
struct pixel {
    std::uint8_t bytes[4] = {};
    int channels = 0;
};

inline pixel pixel_of(color c, int channels) noexcept {
    const auto luma = static_cast<std::uint8_t>((299u * c.r + 587u * c.g + 114u * c.b + 500u) / 1000u);
    pixel p;
    p.channels = channels;
    switch (channels) {
        case 1: p.bytes[0] = luma; break;
        case 2: p.bytes[0] = luma, p.bytes[1] = c.a; break;
        case 3: p.bytes[0] = c.r, p.bytes[1] = c.g, p.bytes[2] = c.b; break;
        default: p.bytes[0] = c.r, p.bytes[1] = c.g, p.bytes[2] = c.b, p.bytes[3] = c.a; break;
    }
    return p;
}

/// Fills x0 <= x < x1, y0 <= y < y1, clipped. 64-bit corners: callers add offsets and scales
/// to user coordinates, and clipping here is what keeps every one of them in the picture.
inline void fill_clipped(std::uint8_t* data, const hwc& im, std::int64_t x0, std::int64_t y0, std::int64_t x1, std::int64_t y1,
                         const pixel& p) noexcept {
    x0 = std::max<std::int64_t>(x0, 0);
    y0 = std::max<std::int64_t>(y0, 0);
    x1 = std::min<std::int64_t>(x1, im.width);
    y1 = std::min<std::int64_t>(y1, im.height);
    if (x0 >= x1 || y0 >= y1) return;
    const std::size_t c = static_cast<std::size_t>(im.channels);
    const std::size_t n = static_cast<std::size_t>(x1 - x0);
    for (std::int64_t y = y0; y < y1; ++y) {
        std::uint8_t* row = data + static_cast<std::size_t>(y) * im.row_bytes() + static_cast<std::size_t>(x0) * c;
        if (c == 1) {
            std::memset(row, p.bytes[0], n);
        } else {
            for (std::size_t i = 0; i < n; ++i, row += c) std::memcpy(row, p.bytes, c);
        }
    }
}

/// A box corner in whole pixels (rounded), false for NaN. Clamped well outside any picture
/// first, so that the float-to-integer conversion is defined for huge and infinite values.
inline bool to_pixel(float v, std::int64_t& out) noexcept {
    if (v != v) return false;
    const double limit = 1e12;
    const double d = std::min(std::max(static_cast<double>(v), -limit), limit);
    out = static_cast<std::int64_t>(std::nearbyint(d));
    return true;
}

/// What stb_easy_font can draw: printable ASCII. Tabs become spaces, anything else '?'.
inline char printable(char c) noexcept {
    if (c == '\t') return ' ';
    return c >= 32 && c <= 126 ? c : '?';
}

/// A glyph's advance in font units (stb_easy_font's default spacing).
inline int advance_of(char c) noexcept {
    return stb_easy_font_charinfo[static_cast<unsigned char>(printable(c)) - 32].advance & 15;
}

inline constexpr int glyph_rows = 9;     // ink height of a line, in font units
inline constexpr int line_advance = 12;  // what stb_easy_font moves down for '\n'

} // namespace detail

/// Fills the pixels x0 <= x < x1, y0 <= y < y1 (half-open, so x1 - x0 columns), clipped to the
/// picture. Nothing is drawn when the rectangle is empty or entirely outside.
inline result<void> fill_rect(tensor_view<std::uint8_t> img, int x0, int y0, int x1, int y1, color c) {
    result<detail::hwc> im = detail::check_hwc(img, "fill_rect: img");
    if (!im) return im.error();
    detail::fill_clipped(img.data(), *im, x0, y0, x1, y1, detail::pixel_of(c, im->channels));
    return {};
}

/// Outlines b, thickness pixels wide, inside the box: its corners are rounded to whole pixels
/// and the outline covers columns round(x0) .. round(x1) - 1 (and rows likewise), so a box
/// drawn on a picture of its own size hugs the border. A box with a NaN corner draws nothing.
inline result<void> draw_box(tensor_view<std::uint8_t> img, const post::box& b, color c, int thickness = 2) {
    result<detail::hwc> im = detail::check_hwc(img, "draw_box: img");
    if (!im) return im.error();
    if (thickness < 1)
        return error_info{status::invalid_argument, -1,
                          ember::detail::format("draw_box: thickness is {}, expected at least 1", thickness)};
    std::int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    if (!detail::to_pixel(b.x0, x0) || !detail::to_pixel(b.y0, y0) || !detail::to_pixel(b.x1, x1) || !detail::to_pixel(b.y1, y1))
        return {};
    const detail::pixel p = detail::pixel_of(c, im->channels);
    const std::int64_t t = thickness;
    detail::fill_clipped(img.data(), *im, x0, y0, x1, std::min(y0 + t, y1), p);  // top
    detail::fill_clipped(img.data(), *im, x0, std::max(y1 - t, y0), x1, y1, p);  // bottom
    detail::fill_clipped(img.data(), *im, x0, y0, std::min(x0 + t, x1), y1, p);  // left
    detail::fill_clipped(img.data(), *im, std::max(x1 - t, x0), y0, x1, y1, p);  // right
    return {};
}

/// The rectangle draw_text() may touch, from (x, y): the widest line's advances times scale,
/// by 9 scale for one line plus 12 scale per '\n'. {0, 0} for empty text or a scale below 1.
inline extent measure_text(std::string_view text, int scale = 1) noexcept {
    if (text.empty() || scale < 1) return {};
    std::int64_t widest = 0, line = 0, lines = 1;
    for (char ch : text) {
        if (ch == '\n') {
            ++lines;
            line = 0;
        } else {
            line += detail::advance_of(ch);
            widest = std::max(widest, line);
        }
    }
    const std::int64_t s = scale, int_max = 0x7fffffff;
    return {static_cast<int>(std::min(widest * s, int_max)),
            static_cast<int>(std::min((detail::glyph_rows + detail::line_advance * (lines - 1)) * s, int_max))};
}

/// Draws text with its top-left corner at (x, y), each font unit scale x scale pixels; '\n'
/// starts a new line at x. Bytes outside printable ASCII draw as '?'. stb_easy_font writes
/// quads into a caller buffer: the text goes through a fixed stack buffer 16 glyphs at a time,
/// so any length works without allocating.
inline result<void> draw_text(tensor_view<std::uint8_t> img, int x, int y, std::string_view text, color c, int scale = 1) {
    result<detail::hwc> im = detail::check_hwc(img, "draw_text: img");
    if (!im) return im.error();
    if (scale < 1 || scale > max_text_scale)
        return error_info{status::invalid_argument, -1,
                          ember::detail::format("draw_text: scale is {}, expected 1 to {}", scale, max_text_scale)};
    const detail::pixel p = detail::pixel_of(c, im->channels);
    // stb_easy_font emits 4 vertices of 16 bytes per quad and at most 11 quads per glyph ('X').
    constexpr std::size_t chunk = 16, quad_bytes = 64, max_quads_per_glyph = 11;
    alignas(float) unsigned char quads[chunk * max_quads_per_glyph * quad_bytes];
    char glyphs[chunk + 1];
    const std::int64_t s = scale;
    std::int64_t pen_x = x, pen_y = y;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '\n') {
            pen_x = x;
            pen_y += detail::line_advance * s;
            ++i;
            continue;
        }
        if (pen_x >= im->width || pen_y >= im->height || pen_y + detail::glyph_rows * s <= 0) {
            i = text.find('\n', i);  // the rest of this line is off the picture
            if (i == std::string_view::npos) break;
            continue;
        }
        std::size_t n = 0;
        for (; n < chunk && i + n < text.size() && text[i + n] != '\n'; ++n) glyphs[n] = detail::printable(text[i + n]);
        glyphs[n] = '\0';
        const int count = stb_easy_font_print(0.0f, 0.0f, glyphs, nullptr, quads, static_cast<int>(sizeof quads));
        for (int q = 0; q < count; ++q) {
            float top_left[2], bottom_right[2];  // vertices 0 and 2 of the quad
            std::memcpy(top_left, quads + static_cast<std::size_t>(q) * quad_bytes, sizeof top_left);
            std::memcpy(bottom_right, quads + static_cast<std::size_t>(q) * quad_bytes + 32, sizeof bottom_right);
            detail::fill_clipped(img.data(), *im, pen_x + static_cast<std::int64_t>(top_left[0]) * s,
                                 pen_y + static_cast<std::int64_t>(top_left[1]) * s,
                                 pen_x + static_cast<std::int64_t>(bottom_right[0]) * s,
                                 pen_y + static_cast<std::int64_t>(bottom_right[1]) * s, p);
        }
        for (std::size_t k = 0; k < n; ++k) pen_x += detail::advance_of(glyphs[k]) * s;
        i += n;
    }
    return {};
}

/// The outline color for a class: Ultralytics' 20-color palette, repeating (negative ids too).
inline color class_color(int class_id) noexcept {
    static constexpr std::uint32_t palette[20] = {0xFF3838, 0xFF9D97, 0xFF701F, 0xFFB21D, 0xCFD231, 0x48F90A, 0x92CC17,
                                                  0x3DDB86, 0x1A9334, 0x00D4BB, 0x2C99A8, 0x00C2FF, 0x344593, 0x6473FF,
                                                  0x0018EC, 0x8438FF, 0x520085, 0xCB38FF, 0xFF95C8, 0xFF37C7};
    const std::uint32_t v = palette[((class_id % 20) + 20) % 20];
    return {static_cast<std::uint8_t>(v >> 16), static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
}

struct draw_options {
    int thickness = 2;         ///< box outline width in pixels
    int text_scale = 1;        ///< label font scale (1: 9-pixel-tall glyphs)
    bool show_labels = true;   ///< a label over each box
    bool show_scores = true;   ///< "person 0.87" rather than "person"
};

/// Draws each detection's box in class_color(class_id) and, with show_labels, its label
/// ("name 0.87", the name from names or "#id", at most 64 bytes of it) in black or white on a
/// filled background of the same color: just above the box, or inside its top edge when there
/// is no room above, moved left when it would run off the right edge.
inline result<void> draw_detections(tensor_view<std::uint8_t> img, span<const post::detection> dets, const post::labels& names = {},
                                    const draw_options& options = {}) {
    result<detail::hwc> im = detail::check_hwc(img, "draw_detections: img");
    if (!im) return im.error();
    if (options.thickness < 1)
        return error_info{status::invalid_argument, -1,
                          ember::detail::format("draw_detections: thickness is {}, expected at least 1", options.thickness)};
    if (options.text_scale < 1 || options.text_scale > max_text_scale)
        return error_info{status::invalid_argument, -1,
                          ember::detail::format("draw_detections: text_scale is {}, expected 1 to {}", options.text_scale,
                                                max_text_scale)};
    for (const post::detection& d : dets) {
        const color c = class_color(d.class_id);
        if (result<void> r = draw_box(img, d.bounds, c, options.thickness); !r) return r;
        std::int64_t left = 0, bottom = 0;
        if (!options.show_labels || !detail::to_pixel(d.bounds.x0, left) || !detail::to_pixel(d.bounds.y0, bottom)) continue;

        std::string_view name = d.class_id >= 0 ? names[static_cast<std::size_t>(d.class_id)] : std::string_view();
        char id[16];
        if (name.empty()) {
            std::snprintf(id, sizeof id, "#%d", d.class_id);
            name = id;
        }
        char label[96];
        const int name_bytes = static_cast<int>(std::min<std::size_t>(name.size(), 64));
        if (options.show_scores)
            std::snprintf(label, sizeof label, "%.*s %.2f", name_bytes, name.data(), static_cast<double>(d.score));
        else
            std::snprintf(label, sizeof label, "%.*s", name_bytes, name.data());

        const int pad = options.text_scale;
        const extent text = measure_text(label, options.text_scale);
        const std::int64_t w = text.width + 2 * pad, h = text.height + 2 * pad;
        std::int64_t top = bottom - h;
        if (top < 0) top = std::max<std::int64_t>(bottom, 0);
        if (top >= im->height) continue;  // the box starts below the picture: so does its label
        if (left + w > im->width) left = im->width - w;
        left = std::max<std::int64_t>(left, 0);
        detail::fill_clipped(img.data(), *im, left, top, left + w, top + h, detail::pixel_of(c, im->channels));
        const bool light = 299 * c.r + 587 * c.g + 114 * c.b > 150 * 1000;  // dark ink on a light background
        const color ink = light ? color{0, 0, 0} : color{255, 255, 255};
        if (result<void> r = draw_text(img, static_cast<int>(left + pad), static_cast<int>(top + pad), label, ink, options.text_scale); !r)
            return r;
    }
    return {};
}

} // namespace image
EMBER_NAMESPACE_END
