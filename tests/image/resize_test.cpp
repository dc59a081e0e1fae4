// SPDX-License-Identifier: Apache-2.0
// ember/image resize, letterbox, crops, grayscale and the tensor conversions: Pillow's own
// output (tests/image/fixtures, made by tools/make_image_fixtures.py) for bilinear and
// grayscale, double-precision loops for the area filter and the normalisation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <ember/image/decode.hpp>
#include <ember/image/resize.hpp>
#include <ember/image/transform.hpp>

#include "support/counting_allocator.hpp"

namespace {

namespace img = ember::image;

const std::string fixtures = std::string(EMBER_SOURCE_DIR) + "/tests/image/fixtures/";

img::image load(const std::string& name) {
    ember::result<img::image> r = img::decode_file(fixtures + name);
    REQUIRE_MESSAGE(r, r.error().message);
    return std::move(*r);
}

/// Largest per-byte difference of two same-sized pictures.
int worst_difference(const img::image& a, const img::image& b) {
    REQUIRE(a.size_bytes() == b.size_bytes());
    int worst = 0;
    for (std::size_t i = 0; i < a.size_bytes(); ++i) worst = std::max(worst, std::abs(a.data()[i] - b.data()[i]));
    return worst;
}

} // namespace

TEST_CASE("resize: bilinear is Pillow's Image.resize(BILINEAR) byte for byte, down and up") {
    const img::image src = load("source_53x37.png");
    img::resizer rs;
    for (const std::pair<int, int>& size : {std::pair{28, 28}, {13, 9}, {100, 80}, {53, 20}, {211, 17}}) {
        const int w = size.first, h = size.second;  // not a structured binding: CAPTURE's lambda takes them
        CAPTURE(w);
        CAPTURE(h);
        const img::image want = load("bilinear_" + std::to_string(w) + "x" + std::to_string(h) + ".png");
        img::image got;
        REQUIRE(got.reshape(w, h, 3));
        REQUIRE(rs.resize(src.view(), got.view()));
        CHECK(worst_difference(got, want) == 0);
    }
}

TEST_CASE("resize: the area filter is the mean over each output pixel's footprint") {
    const img::image src = load("source_53x37.png");
    img::resizer rs;
    for (const std::pair<int, int>& size : {std::pair{13, 9}, {26, 18}, {7, 30}, {52, 36}}) {
        const int w = size.first, h = size.second;
        CAPTURE(w);
        CAPTURE(h);
        img::image got;
        REQUIRE(got.reshape(w, h, 3));
        REQUIRE(rs.resize(src.view(), got.view(), img::filter::area));
        // The oracle: the exact integral over the footprint in doubles, rounded once.
        const double sx = 53.0 / w, sy = 37.0 / h;
        int worst = 0;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                for (int c = 0; c < 3; ++c) {
                    double sum = 0, area = 0;
                    for (int j = 0; j < 37; ++j) {
                        const double wy = std::max(0.0, std::min(j + 1.0, (y + 1) * sy) - std::max<double>(j, y * sy));
                        if (wy <= 0) continue;
                        for (int i = 0; i < 53; ++i) {
                            const double wx = std::max(0.0, std::min(i + 1.0, (x + 1) * sx) - std::max<double>(i, x * sx));
                            sum += wx * wy * src.data()[(j * 53 + i) * 3 + c];
                            area += wx * wy;
                        }
                    }
                    worst = std::max(worst, std::abs(static_cast<int>(std::lround(sum / area)) - got.data()[(y * w + x) * 3 + c]));
                }
        CHECK(worst <= 1);  // two passes, each rounded to 8 bits, against one rounding
    }
}

TEST_CASE("resize: the same size copies, channels must agree, and a reused resizer allocates nothing") {
    const img::image src = load("source_53x37.png");
    ember::test::counting_allocator count;
    img::resizer rs(count.get());
    img::image same;
    REQUIRE(same.reshape(53, 37, 3));
    REQUIRE(rs.resize(src.view(), same.view()));
    CHECK(worst_difference(same, src) == 0);
    img::image gray;
    REQUIRE(gray.reshape(10, 10, 1));
    ember::result<void> r = rs.resize(src.view(), gray.view());
    CHECK(r.code() == ember::status::shape_mismatch);
    CHECK(r.error().message.find("channels") != std::string::npos);

    img::image small;
    REQUIRE(small.reshape(20, 15, 3));
    REQUIRE(rs.resize(src.view(), small.view()));
    const int first = count.allocs;
    CHECK(first > 0);
    for (int i = 0; i < 3; ++i) REQUIRE(rs.resize(src.view(), small.view()));
    CHECK(count.allocs == first);
}

TEST_CASE("letterbox: scales to fit, centres, fills the rest, and says where") {
    const img::image src = load("source_53x37.png");
    img::image box;
    REQUIRE(box.reshape(64, 64, 3));
    ember::result<img::letterbox_info> info = img::letterbox(src.view(), box.view(), 114);
    REQUIRE(info);
    CHECK(info->width == 64);
    CHECK(info->height == 45);  // 37 * 64 / 53 = 44.68
    CHECK(info->pad_x == 0.0f);
    CHECK(info->pad_y == 9.0f);
    CHECK(info->scale == doctest::Approx(64.0 / 53));
    for (int x = 0; x < 64 * 3; ++x) {
        CHECK(box.data()[x] == 114);                   // top padding
        CHECK(box.data()[63 * 64 * 3 + x] == 114);     // bottom padding
    }
    img::image inner, want;
    REQUIRE(inner.reshape(64, 45, 3));
    REQUIRE(img::crop(box.view(), 0, 9, inner.view()));
    REQUIRE(want.reshape(64, 45, 3));
    REQUIRE(img::resize(src.view(), want.view()));
    CHECK(worst_difference(inner, want) == 0);
}

TEST_CASE("crop and center_crop: torchvision's offsets, and a window outside is an error") {
    img::image src;
    REQUIRE(src.reshape(7, 6, 1));
    for (int i = 0; i < 42; ++i) src.data()[i] = static_cast<std::uint8_t>(i);
    img::image out;
    REQUIRE(out.reshape(4, 4, 1));
    REQUIRE(img::center_crop(src.view(), out.view()));
    // (7 - 4) / 2 = 1.5 rounds to 2 (half to even); (6 - 4) / 2 = 1.
    CHECK(out.data()[0] == 1 * 7 + 2);
    CHECK(out.data()[15] == 4 * 7 + 5);
    REQUIRE(out.reshape(3, 3, 1));
    REQUIRE(img::crop(src.view(), 4, 3, out.view()));
    CHECK(out.data()[8] == 5 * 7 + 6);
    ember::result<void> r = img::crop(src.view(), 5, 0, out.view());
    CHECK(r.code() == ember::status::shape_mismatch);
    CHECK(r.error().message.find("3x3 window at (5, 0)") != std::string::npos);
    CHECK(img::crop(src.view(), -1, 0, out.view()).code() == ember::status::shape_mismatch);
}

TEST_CASE("to_grayscale: Pillow's convert('L')") {
    const img::image src = load("source_53x37.png");
    const img::image want = load("gray_53x37.png");
    img::image got;
    REQUIRE(got.reshape(53, 37, 1));
    REQUIRE(img::to_grayscale(src.view(), got.view()));
    CHECK(worst_difference(got, want) == 0);
    REQUIRE(got.reshape(52, 37, 1));
    CHECK(img::to_grayscale(src.view(), got.view()).code() == ember::status::shape_mismatch);
}

TEST_CASE("to_tensor / from_tensor: normalised NCHW and NHWC items of a batch, BGR, and back") {
    const img::image src = load("source_53x37.png");
    const int h = 37, w = 53;
    img::normalize_options n;
    n.mean = {0.485f, 0.456f, 0.406f, 0};
    n.std = {0.229f, 0.224f, 0.225f, 1};
    for (bool nhwc : {false, true})
        for (bool bgr : {false, true}) {
            CAPTURE(nhwc);
            CAPTURE(bgr);
            n.layout = nhwc ? img::tensor_layout::nhwc : img::tensor_layout::nchw;
            n.bgr = bgr;
            std::vector<float> batch(2 * 3 * h * w, -7.0f);
            const ember::shape dims = nhwc ? ember::shape{2, h, w, 3} : ember::shape{2, 3, h, w};
            REQUIRE(img::to_tensor(src.view(), ember::tensor_view<float>(batch.data(), dims), n, 1));
            int wrong = 0;
            for (int i = 0; i < 3 * h * w; ++i) wrong += batch[static_cast<std::size_t>(i)] == -7.0f ? 0 : 1;
            CHECK(wrong == 0);  // item 0 untouched
            for (int c = 0; c < 3; ++c)
                for (int y = 0; y < h; ++y)
                    for (int x = 0; x < w; ++x) {
                        const int from = bgr ? 2 - c : c;
                        const float v = (src.data()[(y * w + x) * 3 + from] * (1.0f / 255.0f) - n.mean[c]) / n.std[c];
                        const std::size_t at = 3 * h * w + (nhwc ? (y * w + x) * 3 + c : (c * h + y) * w + x);
                        if (batch[at] != v) ++wrong;
                    }
            CHECK(wrong == 0);
            img::image back;
            REQUIRE(back.reshape(w, h, 3));
            REQUIRE(img::from_tensor(ember::tensor_view<const float>(batch.data(), dims), back.view(), n, 1));
            CHECK(worst_difference(back, src) == 0);
        }
    std::vector<float> wrong(3 * 28 * 28);
    ember::result<void> r = img::to_tensor(src.view(), ember::tensor_view<float>(wrong.data(), ember::shape{1, 3, 28, 28}));
    CHECK(r.code() == ember::status::shape_mismatch);
    CHECK(r.error().message.find("[N, 3, 37, 53]") != std::string::npos);
    r = img::to_tensor(src.view(), ember::tensor_view<float>(wrong.data(), ember::shape{1, 3, 37, 53}), {}, 1);
    CHECK(r.code() == ember::status::shape_mismatch);  // batch index past N
}

TEST_CASE("fit_shorter_side: torchvision's Resize(int) sizes") {
    CHECK(img::fit_shorter_side(500, 375, 256).width == 341);
    CHECK(img::fit_shorter_side(500, 375, 256).height == 256);
    CHECK(img::fit_shorter_side(100, 300, 28).width == 28);
    CHECK(img::fit_shorter_side(100, 300, 28).height == 84);
    CHECK(img::fit_shorter_side(0, 300, 28).width == 0);
}
