// SPDX-License-Identifier: Apache-2.0
// render_text: draws lines of text, black on white, into a PNG for the ocr test
// (tests/tools/ocr_test.sh), with stb_truetype and a TrueType font file.
//
//     render_text OUT.png FONT.ttf PIXELS LINE...
//
// PIXELS is the font's height (ascent to descent); lines are 1.5 PIXELS apart with a margin of
// PIXELS all round. ASCII only (each byte is a code point). Exits 1 with a message on failure.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#endif
#define STB_TRUETYPE_IMPLEMENTATION
#include <stb/stb_truetype.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <ember/image.hpp>

namespace {

int fail(const std::string& why) {
    std::fprintf(stderr, "render_text: %s\n", why.c_str());
    return 1;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 5) return fail("usage: render_text OUT.png FONT.ttf PIXELS LINE...");
    const std::string out = argv[1], font_path = argv[2];
    const int pixels = std::atoi(argv[3]);
    if (pixels < 4 || pixels > 512) return fail("PIXELS must be 4 to 512");
    const std::vector<std::string> lines(argv + 4, argv + argc);

    std::FILE* f = std::fopen(font_path.c_str(), "rb");
    if (!f) return fail("cannot open '" + font_path + "'");
    std::vector<unsigned char> ttf;
    unsigned char chunk[65536];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) ttf.insert(ttf.end(), chunk, chunk + n);
    std::fclose(f);
    stbtt_fontinfo font;
    if (ttf.empty() || !stbtt_InitFont(&font, ttf.data(), stbtt_GetFontOffsetForIndex(ttf.data(), 0)))
        return fail("'" + font_path + "' is not a TrueType font");
    const float scale = stbtt_ScaleForPixelHeight(&font, static_cast<float>(pixels));
    int ascent = 0, descent = 0, gap = 0;
    stbtt_GetFontVMetrics(&font, &ascent, &descent, &gap);

    // Widths first, in font units scaled, with kerning: the picture fits the widest line.
    auto line_width = [&](const std::string& s) {
        float w = 0;
        for (std::size_t i = 0; i < s.size(); ++i) {
            int advance = 0, bearing = 0;
            stbtt_GetCodepointHMetrics(&font, static_cast<unsigned char>(s[i]), &advance, &bearing);
            w += static_cast<float>(advance) * scale;
            if (i + 1 < s.size())
                w += static_cast<float>(stbtt_GetCodepointKernAdvance(&font, static_cast<unsigned char>(s[i]), static_cast<unsigned char>(s[i + 1]))) *
                     scale;
        }
        return w;
    };
    float widest = 0;
    for (const std::string& s : lines) widest = std::max(widest, line_width(s));
    const int margin = pixels, line_step = pixels * 3 / 2;
    const int width = static_cast<int>(std::ceil(widest)) + 2 * margin;
    const int height = 2 * margin + line_step * static_cast<int>(lines.size() - 1) + pixels;

    ember::image::image img;
    if (ember::result<void> r = img.reshape(width, height, 3); !r) return fail(r.error().message);
    std::fill(img.data(), img.data() + img.size_bytes(), std::uint8_t{255});
    std::vector<unsigned char> glyph;
    for (std::size_t l = 0; l < lines.size(); ++l) {
        const std::string& s = lines[l];
        const float baseline = static_cast<float>(margin + static_cast<int>(l) * line_step) + static_cast<float>(ascent) * scale;
        float x = static_cast<float>(margin);
        for (std::size_t i = 0; i < s.size(); ++i) {
            const int cp = static_cast<unsigned char>(s[i]);
            int advance = 0, bearing = 0, x0 = 0, y0 = 0, x1 = 0, y1 = 0;
            stbtt_GetCodepointHMetrics(&font, cp, &advance, &bearing);
            stbtt_GetCodepointBitmapBox(&font, cp, scale, scale, &x0, &y0, &x1, &y1);
            const int gw = x1 - x0, gh = y1 - y0;
            if (gw > 0 && gh > 0) {
                glyph.assign(static_cast<std::size_t>(gw) * gh, 0);
                stbtt_MakeCodepointBitmap(&font, glyph.data(), gw, gh, gw, scale, scale, cp);
                const int ox = static_cast<int>(std::lround(x)) + x0, oy = static_cast<int>(std::lround(baseline)) + y0;
                for (int gy = 0; gy < gh; ++gy)
                    for (int gx = 0; gx < gw; ++gx) {
                        const int px = ox + gx, py = oy + gy;
                        if (px < 0 || py < 0 || px >= width || py >= height) continue;
                        // Coverage darkens the white: black text, antialiased edges.
                        std::uint8_t* p = img.data() + (static_cast<std::size_t>(py) * width + px) * 3;
                        const int v = std::min<int>(p[0], 255 - glyph[static_cast<std::size_t>(gy) * gw + gx]);
                        p[0] = p[1] = p[2] = static_cast<std::uint8_t>(v);
                    }
            }
            x += static_cast<float>(advance) * scale;
            if (i + 1 < s.size()) x += static_cast<float>(stbtt_GetCodepointKernAdvance(&font, cp, static_cast<unsigned char>(s[i + 1]))) * scale;
        }
    }
    if (ember::result<void> r = ember::image::write_png(out, img.view()); !r) return fail(r.error().message);
    return 0;
}
