// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <ember/post/boxes.hpp>

namespace {

using ember::post::box;

/// IoU in double, straight from the definition.
double iou_ref(const box& a, const box& b) {
    const auto area = [](double x0, double y0, double x1, double y1) { return std::max(0.0, x1 - x0) * std::max(0.0, y1 - y0); };
    const double aa = area(a.x0, a.y0, a.x1, a.y1), ab = area(b.x0, b.y0, b.x1, b.y1);
    const double inter = area(std::max<double>(a.x0, b.x0), std::max<double>(a.y0, b.y0), std::min<double>(a.x1, b.x1),
                              std::min<double>(a.y1, b.y1));
    const double u = aa + ab - inter;
    return aa > 0 && ab > 0 && u > 0 ? inter / u : 0.0;
}

} // namespace

TEST_CASE("area of boxes, empty ones included") {
    CHECK(ember::post::area(box{0, 0, 10, 5}) == 50.0f);
    CHECK(ember::post::area(box{-2.5f, 1, 2.5f, 3}) == 10.0f);
    CHECK(ember::post::area(box{10, 0, 0, 5}) == 0.0f);  // x1 < x0
    CHECK(ember::post::area(box{0, 0, 0, 5}) == 0.0f);
    CHECK(ember::post::area(box{0, 0, std::numeric_limits<float>::quiet_NaN(), 5}) == 0.0f);
}

TEST_CASE("iou: hand values") {
    const box a{0, 0, 10, 10};
    CHECK(ember::post::iou(a, a) == 1.0f);
    CHECK(ember::post::iou(a, box{5, 5, 15, 15}) == doctest::Approx(25.0 / 175.0));
    CHECK(ember::post::iou(a, box{5, 0, 15, 10}) == doctest::Approx(50.0 / 150.0));
    CHECK(ember::post::iou(a, box{2, 2, 4, 4}) == doctest::Approx(4.0 / 100.0));  // contained
    CHECK(ember::post::iou(box{2, 2, 4, 4}, a) == doctest::Approx(4.0 / 100.0));  // symmetric
    CHECK(ember::post::iou(a, box{10, 0, 20, 10}) == 0.0f);                       // touching edges
    CHECK(ember::post::iou(a, box{20, 20, 30, 30}) == 0.0f);                      // apart
}

TEST_CASE("iou: degenerate boxes overlap nothing") {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const box line{0, 5, 10, 5};
    CHECK(ember::post::iou(line, line) == 0.0f);
    CHECK(ember::post::iou(box{0, 0, 10, 10}, line) == 0.0f);
    CHECK(ember::post::iou(box{10, 10, 0, 0}, box{0, 0, 10, 10}) == 0.0f);  // inverted
    CHECK(ember::post::iou(box{0, 0, nan, 10}, box{0, 0, 10, 10}) == 0.0f);
    CHECK(ember::post::iou(box{-inf, -inf, inf, inf}, box{-inf, -inf, inf, inf}) == 0.0f);
    CHECK(ember::post::iou(box{0, 0, inf, inf}, box{0, 0, 1, 1}) == 0.0f);  // 1 / inf
}

TEST_CASE("iou against double precision on random boxes") {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> corner(-20.0f, 120.0f), size(0.0f, 60.0f);
    int overlapping = 0;
    for (int i = 0; i < 2000; ++i) {
        const float ax = corner(rng), ay = corner(rng), bx = corner(rng), by = corner(rng);
        const box a{ax, ay, ax + size(rng), ay + size(rng)}, b{bx, by, bx + size(rng), by + size(rng)};
        const double want = iou_ref(a, b);
        overlapping += want > 0;
        const float got = ember::post::iou(a, b);
        CHECK(got >= 0.0f);
        CHECK(got <= 1.0f);
        CHECK(std::fabs(got - want) < 1e-5);
    }
    CHECK(overlapping > 100);  // the sample does exercise overlaps
}

TEST_CASE("unletterbox undoes resize + pad and clips") {
    // A 200x100 picture letterboxed into 640x640: scale 3.2, 160 rows of padding above.
    const float scale = 3.2f, pad_x = 0.0f, pad_y = 160.0f;
    const box original{20, 10, 120, 90};
    const box model{original.x0 * scale + pad_x, original.y0 * scale + pad_y, original.x1 * scale + pad_x,
                    original.y1 * scale + pad_y};
    const box back = ember::post::unletterbox(model, scale, pad_x, pad_y, 200, 100);
    CHECK(back.x0 == doctest::Approx(20));
    CHECK(back.y0 == doctest::Approx(10));
    CHECK(back.x1 == doctest::Approx(120));
    CHECK(back.y1 == doctest::Approx(90));

    // Padded both ways: x' = x * 0.5 + 8, y' = y * 0.5 + 4.
    const box b = ember::post::unletterbox(box{10, 6, 18, 14}, 0.5f, 8.0f, 4.0f, 100, 100);
    CHECK(b.x0 == 4.0f);
    CHECK(b.y0 == 4.0f);
    CHECK(b.x1 == 20.0f);
    CHECK(b.y1 == 20.0f);

    // A box reaching into the padding or past the picture is clipped to [0, w] x [0, h].
    const box clipped = ember::post::unletterbox(box{-50, 100, 700, 600}, scale, pad_x, pad_y, 200, 100);
    CHECK(clipped.x0 == 0.0f);
    CHECK(clipped.y0 == 0.0f);
    CHECK(clipped.x1 == 200.0f);
    CHECK(clipped.y1 == 100.0f);
}

TEST_CASE("detection holds its parts") {
    const ember::post::detection d{box{1, 2, 3, 4}, 0.75f, 5};
    CHECK(d.bounds.x1 == 3.0f);
    CHECK(d.score == 0.75f);
    CHECK(d.class_id == 5);
}
