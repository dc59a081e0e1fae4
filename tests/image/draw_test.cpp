// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/image/draw.hpp>

namespace {

using ember::image::color;

/// A picture with every byte set to `fill`, and a view of it.
struct picture {
    int width, height, channels;
    std::vector<std::uint8_t> bytes;
    picture(int w, int h, int c, std::uint8_t fill = 0)
        : width(w), height(h), channels(c), bytes(static_cast<std::size_t>(w) * h * c, fill) {}
    ember::tensor_view<std::uint8_t> view() { return {bytes.data(), ember::shape{height, width, channels}}; }
    const std::uint8_t* at(int x, int y) const { return &bytes[(static_cast<std::size_t>(y) * width + x) * channels]; }
    bool touched(int x, int y, std::uint8_t fill = 0) const {
        for (int k = 0; k < channels; ++k)
            if (at(x, y)[k] != fill) return true;
        return false;
    }
    int count_touched() const {
        int n = 0;
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) n += touched(x, y);
        return n;
    }
};

/// What a c-channel pixel holds for a color (the header's rules, written out).
std::vector<std::uint8_t> expected_pixel(color c, int channels) {
    const auto luma = static_cast<std::uint8_t>((299 * c.r + 587 * c.g + 114 * c.b + 500) / 1000);
    switch (channels) {
        case 1: return {luma};
        case 2: return {luma, c.a};
        case 3: return {c.r, c.g, c.b};
        default: return {c.r, c.g, c.b, c.a};
    }
}

/// fill_rect's oracle: every pixel in [x0, x1) x [y0, y1) (64-bit, no clipping logic) holds
/// the color, every other one is untouched.
void check_rect(const picture& p, long long x0, long long y0, long long x1, long long y1, color c) {
    const std::vector<std::uint8_t> want = expected_pixel(c, p.channels);
    for (int y = 0; y < p.height; ++y)
        for (int x = 0; x < p.width; ++x) {
            const bool inside = x >= x0 && x < x1 && y >= y0 && y < y1;
            for (int k = 0; k < p.channels; ++k) {
                if (inside && p.at(x, y)[k] != want[static_cast<std::size_t>(k)]) FAIL("pixel (", x, ", ", y, ") not filled");
                if (!inside && p.at(x, y)[k] != 7) FAIL("pixel (", x, ", ", y, ") outside the rectangle was written");
            }
        }
}

/// The region of a big canvas drawn at an offset, cropped: what a clipped draw must equal.
picture crop(const picture& big, int x, int y, int w, int h) {
    picture out(w, h, big.channels);
    for (int row = 0; row < h; ++row)
        for (int col = 0; col < w; ++col)
            for (int k = 0; k < big.channels; ++k)
                out.bytes[(static_cast<std::size_t>(row) * w + col) * big.channels + k] = big.at(x + col, y + row)[k];
    return out;
}

} // namespace

TEST_CASE("fill_rect: inside filled, outside untouched, for 1 to 4 channels") {
    const color c{200, 100, 50, 128};
    for (int channels = 1; channels <= 4; ++channels) {
        picture p(12, 9, channels, 7);
        REQUIRE(ember::image::fill_rect(p.view(), 2, 3, 7, 5, c));
        CAPTURE(channels);
        check_rect(p, 2, 3, 7, 5, c);
    }
    CHECK(expected_pixel(c, 1)[0] == 124);  // (59800 + 58700 + 5700 + 500) / 1000
}

TEST_CASE("fill_rect: clipped at and beyond every border, any coordinates") {
    const color c{10, 250, 30, 99};
    const long long coords[][4] = {
        {-5, -5, 4, 3},           {8, 6, 100, 100},        {-1000, 2, 1000, 4},     {0, 0, 12, 9},
        {12, 0, 20, 9},           {0, 9, 12, 20},          {5, 5, 5, 8},            {6, 6, 3, 3},
        {INT_MIN, INT_MIN, INT_MAX, INT_MAX}, {INT_MIN, 0, INT_MIN + 1, 9}, {INT_MAX - 1, 0, INT_MAX, 9},
        {-3, -3, 0, 0},           {11, 8, 12, 9},
    };
    for (int channels : {1, 3, 4}) {
        for (const auto& r : coords) {
            picture p(12, 9, channels, 7);
            CAPTURE(channels);
            CAPTURE(r[0]);
            CAPTURE(r[1]);
            CAPTURE(r[2]);
            CAPTURE(r[3]);
            REQUIRE(ember::image::fill_rect(p.view(), int(r[0]), int(r[1]), int(r[2]), int(r[3]), c));
            check_rect(p, r[0], r[1], r[2], r[3], c);
        }
    }
}

TEST_CASE("draw calls refuse views that are not pictures") {
    std::vector<std::uint8_t> bytes(64);
    const ember::tensor_view<std::uint8_t> flat(bytes.data(), {8, 8});
    const ember::tensor_view<std::uint8_t> five(bytes.data(), {2, 2, 5});
    const ember::tensor_view<std::uint8_t> null(nullptr, {4, 4, 3});
    for (const auto& v : {flat, five}) {
        ember::result<void> r = ember::image::fill_rect(v, 0, 0, 2, 2, {});
        REQUIRE_FALSE(r);
        CHECK(r.error().code == ember::status::shape_mismatch);
        CHECK(r.error().message.find("fill_rect") != std::string::npos);
        CHECK_FALSE(ember::image::draw_box(v, {0, 0, 2, 2}, {}));
        CHECK_FALSE(ember::image::draw_text(v, 0, 0, "a", {}));
        CHECK_FALSE(ember::image::draw_detections(v, {}, {}));
    }
    ember::result<void> r = ember::image::draw_text(null, 0, 0, "a", {});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ember::status::invalid_argument);
    CHECK(std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; }));
}

TEST_CASE("draw_box: an outline inside the box, thickness pixels wide") {
    picture p(20, 16, 3, 7);
    const color c{255, 0, 0};
    REQUIRE(ember::image::draw_box(p.view(), {3, 2, 13, 12}, c, 2));
    for (int y = 0; y < p.height; ++y)
        for (int x = 0; x < p.width; ++x) {
            const bool in_box = x >= 3 && x < 13 && y >= 2 && y < 12;
            const bool in_hole = x >= 5 && x < 11 && y >= 4 && y < 10;
            CAPTURE(x);
            CAPTURE(y);
            CHECK(p.touched(x, y, 7) == (in_box && !in_hole));
        }
    CHECK(p.at(3, 2)[0] == 255);
    CHECK(p.at(3, 2)[1] == 0);

    // Corners round to whole pixels: 2.6 -> 3, 12.4 -> 12.
    picture q(20, 16, 1, 7);
    REQUIRE(ember::image::draw_box(q.view(), {2.6f, 1.6f, 12.6f, 11.6f}, c, 1));
    CHECK(q.touched(3, 5, 7));
    CHECK_FALSE(q.touched(2, 5, 7));
    CHECK(q.touched(12, 5, 7));
    CHECK_FALSE(q.touched(13, 5, 7));

    ember::result<void> bad = ember::image::draw_box(q.view(), {0, 0, 5, 5}, c, 0);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ember::status::invalid_argument);
}

TEST_CASE("draw_box: clipped against a big canvas, for huge, infinite and NaN corners") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const color c{0, 255, 0, 10};
    // Each box drawn on a 10x8 picture equals the same box drawn on a canvas 40 pixels bigger
    // on every side, cropped, as long as the canvas holds the whole box.
    const ember::post::box boxes[] = {{-5, -5, 4, 3}, {6, 5, 30, 30}, {-20, 2, 25, 6}, {0, 0, 10, 8}, {-1, -1, 11, 9}, {3, 3, 3, 3}};
    for (int channels : {1, 3, 4}) {
        for (const ember::post::box& b : boxes) {
            picture small(10, 8, channels), big(90, 88, channels);
            REQUIRE(ember::image::draw_box(small.view(), b, c, 3));
            REQUIRE(ember::image::draw_box(big.view(), {b.x0 + 40, b.y0 + 40, b.x1 + 40, b.y1 + 40}, c, 3));
            CAPTURE(channels);
            CAPTURE(b.x0);
            CHECK(small.bytes == crop(big, 40, 40, 10, 8).bytes);
        }
        // Too big for any canvas: the edges are outside, the picture stays untouched inside.
        picture p(10, 8, channels);
        REQUIRE(ember::image::draw_box(p.view(), {-1e30f, -inf, 1e30f, inf}, c, 2));
        CHECK(p.count_touched() == 0);
        REQUIRE(ember::image::draw_box(p.view(), {-inf, 2, inf, 5}, c, 1));  // two rows across
        CHECK(p.count_touched() == 2 * 10);
        picture n(10, 8, channels);
        REQUIRE(ember::image::draw_box(n.view(), {nan, 0, 5, 5}, c, 1));
        CHECK(n.count_touched() == 0);
    }
}

TEST_CASE("draw_text: ink lies within the measured rectangle") {
    for (int scale : {1, 2, 3}) {
        picture p(120, 60, 3);
        const std::string text = "Hello, ember!";
        const ember::image::extent e = ember::image::measure_text(text, scale);
        CHECK(e.width == scale * ember::image::measure_text(text).width);
        CHECK(e.height == 9 * scale);
        REQUIRE(ember::image::draw_text(p.view(), 4, 6, text, {255, 255, 255}, scale));
        int inside = 0;
        for (int y = 0; y < p.height; ++y)
            for (int x = 0; x < p.width; ++x) {
                if (!p.touched(x, y)) continue;
                const bool in = x >= 4 && x < 4 + e.width && y >= 6 && y < 6 + e.height;
                if (!in) FAIL("scale ", scale, ": pixel (", x, ", ", y, ") outside the text rectangle");
                ++inside;
            }
        CHECK(inside > 30 * scale * scale);
        // Ink reaches the rectangle's first row and column, so it is not merely somewhere inside.
        bool top = false, left = false;
        for (int x = 4; x < 4 + e.width; ++x) top = top || p.touched(x, 6);
        for (int y = 6; y < 6 + e.height; ++y) left = left || p.touched(4, y);
        CHECK(top);
        CHECK(left);
    }
    CHECK(ember::image::measure_text("").width == 0);
    CHECK(ember::image::measure_text("ab\nabcd").width == ember::image::measure_text("abcd").width);
    CHECK(ember::image::measure_text("ab\nabcd").height == 21);
}

TEST_CASE("draw_text: a long text draws as its glyphs drawn one by one") {
    // 40 'X's (the glyph with the most quads) and mixed text: more than one 16-glyph chunk.
    for (const std::string& text : {std::string(40, 'X'), std::string("The quick brown fox jumps over the lazy dog 0123456789")}) {
        picture whole(400, 20, 1), pieces(400, 20, 1);
        REQUIRE(ember::image::draw_text(whole.view(), 2, 3, text, {255, 255, 255}));
        int x = 2;
        for (char ch : text) {
            REQUIRE(ember::image::draw_text(pieces.view(), x, 3, std::string(1, ch), {255, 255, 255}));
            x += ember::image::measure_text(std::string(1, ch)).width;
        }
        CHECK(x == 2 + ember::image::measure_text(text).width);
        CHECK(whole.count_touched() > 10 * static_cast<int>(text.size()) / 2);
        CHECK(whole.bytes == pieces.bytes);
    }
}

TEST_CASE("draw_text: clipping at every edge, newlines, unprintable bytes") {
    const std::string text = "clip me\nline 2\t\x01\xff";
    for (int channels : {1, 3, 4}) {
        // Anywhere on (or off) a small picture equals the big canvas drawn 100 pixels further.
        const int places[][2] = {{-20, -4}, {30, 10}, {-200, 0}, {0, -30}, {35, 15}, {0, 0}};
        for (const auto& at : places) {
            picture small(40, 20, channels), big(240, 220, channels);
            REQUIRE(ember::image::draw_text(small.view(), at[0], at[1], text, {255, 200, 100, 50}, 2));
            REQUIRE(ember::image::draw_text(big.view(), at[0] + 100, at[1] + 100, text, {255, 200, 100, 50}, 2));
            CAPTURE(channels);
            CAPTURE(at[0]);
            CAPTURE(at[1]);
            CHECK(small.bytes == crop(big, 100, 100, 40, 20).bytes);
        }
        picture p(40, 20, channels);
        const int far[][2] = {{INT_MIN, INT_MIN}, {INT_MAX, INT_MAX}, {INT_MIN, 5}, {5, INT_MAX}, {INT_MAX, 5}};
        for (const auto& at : far)
            REQUIRE(ember::image::draw_text(p.view(), at[0], at[1], std::string(100, 'W') + "\nW", {255, 255, 255}, 256));
        CHECK(p.count_touched() == 0);
    }
    // A second line starts 12 rows down at the same x; unprintable bytes draw as '?'.
    picture two(60, 40, 1), ref(60, 40, 1);
    REQUIRE(ember::image::draw_text(two.view(), 3, 2, "ab\n?\t?", {255, 255, 255}));
    REQUIRE(ember::image::draw_text(ref.view(), 3, 2, "ab", {255, 255, 255}));
    REQUIRE(ember::image::draw_text(ref.view(), 3, 14, "? ?", {255, 255, 255}));
    CHECK(two.bytes == ref.bytes);
    picture odd(60, 40, 1);
    REQUIRE(ember::image::draw_text(odd.view(), 3, 2, "ab\n\x01\t\x80", {255, 255, 255}));
    CHECK(odd.bytes == ref.bytes);

    ember::result<void> r = ember::image::draw_text(two.view(), 0, 0, "a", {}, 0);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ember::status::invalid_argument);
    CHECK_FALSE(ember::image::draw_text(two.view(), 0, 0, "a", {}, ember::image::max_text_scale + 1));
}

TEST_CASE("draw_detections: boxes in class colors, labels above or inside") {
    picture p(200, 120, 3);
    const ember::post::labels names = ember::post::labels::from_lines({"cat", "dog"});
    const ember::post::detection dets[] = {
        {{20, 40, 100, 110}, 0.87f, 1},  // room above: label over the box
        {{120, 0, 190, 60}, 0.5f, 0},    // at the top edge: label inside
    };
    REQUIRE(ember::image::draw_detections(p.view(), dets, names));

    const color dog = ember::image::class_color(1), cat = ember::image::class_color(0);
    CHECK(p.at(20, 60)[0] == dog.r);  // left edge of box 0
    CHECK(p.at(20, 60)[1] == dog.g);
    CHECK(p.at(99, 109)[2] == dog.b);  // bottom-right corner
    CHECK_FALSE(p.touched(60, 75));    // inside box 0

    // Label 0: "dog 0.87" on dog's color, ending at the box's top edge.
    const ember::image::extent e = ember::image::measure_text("dog 0.87");
    const int label_top = 40 - (e.height + 2);
    CHECK(p.at(20, label_top)[0] == dog.r);
    CHECK(p.at(20 + e.width + 1, label_top)[1] == dog.g);
    CHECK_FALSE(p.touched(20, label_top - 1));
    CHECK_FALSE(p.touched(20 + e.width + 2, label_top + 1));
    bool ink = false;  // some pixel of the label is the text's ink, not the background
    for (int y = label_top; y < 40; ++y)
        for (int x = 20; x < 20 + e.width + 2; ++x) {
            const std::uint8_t* px = p.at(x, y);
            ink = ink || px[0] != dog.r || px[1] != dog.g || px[2] != dog.b;
        }
    CHECK(ink);

    // Label 1 sits inside box 1, from its top edge down.
    CHECK(p.at(125, 10)[0] == cat.r);  // the label's bottom padding row, inside the box
    CHECK(p.at(125, 10)[1] == cat.g);
    CHECK_FALSE(p.touched(125, 12));  // below the label: the box's inside
    CHECK(cat.r == 0xFF);  // Ultralytics' first two colors, FF3838 and FF9D97
    CHECK(cat.g == 0x38);
    CHECK(dog.g == 0x9D);
    CHECK(dog.b == 0x97);
    CHECK(ember::image::class_color(21).r == ember::image::class_color(1).r);
    CHECK(ember::image::class_color(-1).g == ember::image::class_color(19).g);
}

TEST_CASE("draw_detections: unnamed classes, a label at the right edge, no labels") {
    const ember::post::detection det[] = {{{170, 50, 199, 90}, 0.25f, 7}};
    picture drawn(200, 100, 1);
    REQUIRE(ember::image::draw_detections(drawn.view(), det));  // no names: "#7 0.25"

    // The same by hand: the box, then the label moved left to end at the right edge, 11 rows
    // (9 of text and a pixel of padding on each side) above the box, dark ink on a light color.
    const color c = ember::image::class_color(7);
    const ember::image::extent e = ember::image::measure_text("#7 0.25");
    const int w = e.width + 2, left = 200 - w;
    picture by_hand(200, 100, 1);
    REQUIRE(ember::image::draw_box(by_hand.view(), det[0].bounds, c));
    REQUIRE(ember::image::fill_rect(by_hand.view(), left, 39, 200, 50, c));
    REQUIRE(ember::image::draw_text(by_hand.view(), left + 1, 40, "#7 0.25", {0, 0, 0}));
    CHECK(left < 170);
    CHECK(drawn.bytes == by_hand.bytes);

    ember::image::draw_options o;
    o.show_labels = false;
    picture bare(200, 100, 1);
    REQUIRE(ember::image::draw_detections(bare.view(), det, {}, o));
    picture box_only(200, 100, 1);
    REQUIRE(ember::image::draw_box(box_only.view(), det[0].bounds, c));
    CHECK(bare.bytes == box_only.bytes);
    o.thickness = 0;
    CHECK_FALSE(ember::image::draw_detections(bare.view(), det, {}, o));
}
