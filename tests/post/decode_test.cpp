// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <ember/post/classify.hpp>
#include <ember/post/decode.hpp>

namespace {

using ember::post::box;
using ember::post::detection;
using view = ember::tensor_view<const float>;

void check_detection(const detection& d, box want, float score, int class_id) {
    CHECK(d.bounds.x0 == doctest::Approx(want.x0));
    CHECK(d.bounds.y0 == doctest::Approx(want.y0));
    CHECK(d.bounds.x1 == doctest::Approx(want.x1));
    CHECK(d.bounds.y1 == doctest::Approx(want.y1));
    CHECK(d.score == doctest::Approx(score));
    CHECK(d.class_id == class_id);
}

bool by_score(const detection& a, const detection& b) { return a.score > b.score; }

// Four anchor points, three classes; fields are cx, cy, w, h, then the class scores.
//   0: (10, 20) 4x6,   scores 0.1 0.8 0.3 -> class 1, 0.8
//   1: (50, 50) 10x10, scores 0.2 0.1 0.3 -> below 0.5
//   2: (100, 40) 20x8, scores 0.9 0.9 0.2 -> a tie: class 0, 0.9
//   3: (5, 5) 2x2,     scores 0.5 0.0 0.0 -> exactly the threshold: kept
const std::vector<std::vector<float>> yolov8_anchors = {
    {10, 20, 4, 6, 0.1f, 0.8f, 0.3f},
    {50, 50, 10, 10, 0.2f, 0.1f, 0.3f},
    {100, 40, 20, 8, 0.9f, 0.9f, 0.2f},
    {5, 5, 2, 2, 0.5f, 0.0f, 0.0f},
};

std::vector<float> channels_first(const std::vector<std::vector<float>>& anchors) {
    std::vector<float> out;
    for (std::size_t f = 0; f < anchors[0].size(); ++f)
        for (const auto& a : anchors) out.push_back(a[f]);
    return out;
}

std::vector<float> channels_last(const std::vector<std::vector<float>>& anchors) {
    std::vector<float> out;
    for (const auto& a : anchors) out.insert(out.end(), a.begin(), a.end());
    return out;
}

void check_yolov8_hand(const std::vector<detection>& found, std::size_t n) {
    REQUIRE(n == 3);
    check_detection(found[0], {8, 17, 12, 23}, 0.8f, 1);
    check_detection(found[1], {90, 36, 110, 44}, 0.9f, 0);
    check_detection(found[2], {4, 4, 6, 6}, 0.5f, 0);
}

/// torchvision's BoxCoder.decode_single in double, for one anchor.
box box_coder_ref(const float* d, const float* a, const std::array<float, 4>& w) {
    const double aw = double(a[2]) - a[0], ah = double(a[3]) - a[1];
    const double ax = a[0] + 0.5 * aw, ay = a[1] + 0.5 * ah;
    const double clip = std::log(1000.0 / 16.0);
    const double cx = d[0] / double(w[0]) * aw + ax, cy = d[1] / double(w[1]) * ah + ay;
    const double pw = std::exp(std::min(d[2] / double(w[2]), clip)) * aw, ph = std::exp(std::min(d[3] / double(w[3]), clip)) * ah;
    return {float(cx - 0.5 * pw), float(cy - 0.5 * ph), float(cx + 0.5 * pw), float(cy + 0.5 * ph)};
}

} // namespace

TEST_CASE("decode_yolov8: channels first, as Ultralytics exports") {
    const std::vector<float> data = channels_first(yolov8_anchors);
    std::vector<detection> found(10);
    ember::post::yolov8_options o;
    o.score_threshold = 0.5f;
    ember::result<std::size_t> n = ember::post::decode_yolov8(view(data.data(), {1, 7, 4}), found, o);
    REQUIRE_MESSAGE(n, n.error().message);
    check_yolov8_hand(found, *n);

    // Without the batch dimension, the same.
    ember::result<std::size_t> m = ember::post::decode_yolov8(view(data.data(), {7, 4}), found, o);
    REQUIRE(m);
    check_yolov8_hand(found, *m);

    o.score_threshold = 0.0f;  // everything passes, anchor 1 with its class 2
    ember::result<std::size_t> all = ember::post::decode_yolov8(view(data.data(), {1, 7, 4}), found, o);
    REQUIRE(all);
    REQUIRE(*all == 4);
    check_detection(found[1], {45, 45, 55, 55}, 0.3f, 2);
}

TEST_CASE("decode_yolov8: transposed [1, N, 4 + C] gives the same detections") {
    const std::vector<float> data = channels_last(yolov8_anchors);
    std::vector<detection> found(10);
    ember::post::yolov8_options o;
    o.score_threshold = 0.5f;
    o.transposed = true;
    ember::result<std::size_t> n = ember::post::decode_yolov8(view(data.data(), {1, 4, 7}), found, o);
    REQUIRE_MESSAGE(n, n.error().message);
    check_yolov8_hand(found, *n);
}

TEST_CASE("decode_yolov8: more passing than out holds keeps the best") {
    const std::vector<float> data = channels_first(yolov8_anchors);
    std::vector<detection> two(2);
    ember::post::yolov8_options o;
    o.score_threshold = 0.5f;
    ember::result<std::size_t> n = ember::post::decode_yolov8(view(data.data(), {1, 7, 4}), two, o);
    REQUIRE(n);
    REQUIRE(*n == 2);
    std::sort(two.begin(), two.end(), by_score);
    check_detection(two[0], {90, 36, 110, 44}, 0.9f, 0);
    check_detection(two[1], {8, 17, 12, 23}, 0.8f, 1);

    // Random heads: the kept scores are the best scores of an unlimited decode.
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    const std::size_t anchors = 300, classes = 5;
    std::vector<float> head((4 + classes) * anchors);
    for (float& v : head) v = u(rng);
    std::vector<detection> all(anchors), some(17);
    o.score_threshold = 0.3f;
    ember::result<std::size_t> na = ember::post::decode_yolov8(view(head.data(), {1, 9, 300}), all, o);
    ember::result<std::size_t> ns = ember::post::decode_yolov8(view(head.data(), {1, 9, 300}), some, o);
    REQUIRE(na);
    REQUIRE(ns);
    REQUIRE(*na > 17);
    REQUIRE(*ns == 17);
    all.resize(*na);
    std::sort(all.begin(), all.end(), by_score);
    std::sort(some.begin(), some.end(), by_score);
    for (std::size_t i = 0; i < 17; ++i) {
        CHECK(some[i].score == all[i].score);
        CHECK(some[i].class_id == all[i].class_id);
        CHECK(some[i].bounds.x0 == all[i].bounds.x0);
    }
    std::vector<detection> none;
    ember::result<std::size_t> nn = ember::post::decode_yolov8(view(head.data(), {1, 9, 300}), none, o);
    REQUIRE(nn);
    CHECK(*nn == 0);
}

TEST_CASE("decode_yolov8: wrong shapes say what they got and expected") {
    std::vector<float> data(2 * 84 * 10);
    std::vector<detection> found(10);
    const auto error_of = [&](const ember::shape& s, bool transposed = false) {
        ember::post::yolov8_options o;
        o.transposed = transposed;
        ember::result<std::size_t> n = ember::post::decode_yolov8(view(data.data(), s), found, o);
        REQUIRE_FALSE(n);
        CHECK(n.error().code == ember::status::shape_mismatch);
        return n.error().message;
    };
    const std::string batch = error_of({2, 84, 10});
    CHECK(batch.find("[2, 84, 10]") != std::string::npos);
    CHECK(batch.find("[1, 4 + classes, anchors]") != std::string::npos);
    CHECK(error_of({84}).find("[84]") != std::string::npos);
    CHECK(error_of({1, 4, 10}).find("[1, 4, 10]") != std::string::npos);  // no class rows
    CHECK(error_of({1, 10, 4}, true).find("[1, anchors, 4 + classes]") != std::string::npos);
    CHECK(error_of({1, 1, 84, 10}).find("[1, 1, 84, 10]") != std::string::npos);
}

TEST_CASE("decode_yolov5: score = objectness * class probability") {
    // cx, cy, w, h, objectness, two class probabilities.
    const std::vector<float> data = {
        10, 10, 4, 4, 0.9f, 0.5f, 0.8f,  // 0.72, class 1
        20, 20, 2, 2, 0.3f, 0.9f, 0.1f,  // 0.27: a confident class alone does not pass
        0,  0,  2, 4, 1.0f, 0.6f, 0.6f,  // a tie: class 0
    };
    std::vector<detection> found(5);
    ember::post::yolov5_options o;
    o.score_threshold = 0.5f;
    ember::result<std::size_t> n = ember::post::decode_yolov5(view(data.data(), {1, 3, 7}), found, o);
    REQUIRE_MESSAGE(n, n.error().message);
    REQUIRE(*n == 2);
    check_detection(found[0], {8, 8, 12, 12}, 0.72f, 1);
    check_detection(found[1], {-1, -2, 1, 2}, 0.6f, 0);

    o.score_threshold = 0.25f;
    ember::result<std::size_t> m = ember::post::decode_yolov5(view(data.data(), {3, 7}), found, o);
    REQUIRE(m);
    REQUIRE(*m == 3);
    check_detection(found[1], {19, 19, 21, 21}, 0.27f, 0);

    ember::result<std::size_t> bad = ember::post::decode_yolov5(view(data.data(), {1, 7, 3}), found, o);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ember::status::shape_mismatch);
    CHECK(bad.error().message.find("[1, 7, 3]") != std::string::npos);
    CHECK(bad.error().message.find("[1, anchors, 5 + classes]") != std::string::npos);
}

TEST_CASE("decode_anchor_deltas: torchvision's box coder by hand") {
    // Anchor 0..3 all (0, 0)-(20, 10): width 20, height 10, centre (10, 5).
    const std::vector<float> anchors = {0, 0, 20, 10, 0, 0, 20, 10, 0, 0, 20, 10, 0, 0, 20, 10};
    const float ln2 = std::log(2.0f);
    const std::vector<float> deltas = {
        0,  0,  0,        0,         // the anchor itself
        10, -5, 0,        0,         // dx / 10 = 1 width right, dy / 10 = half a height up
        0,  0,  5 * ln2,  5 * ln2,   // twice as wide and tall
        0,  0,  1000,     -5 * ln2,  // dw clamped to log(1000/16): 62.5 times as wide
    };
    const std::vector<float> scores = {0.1f, 0.9f, 0.1f, 0.9f, 0.1f, 0.9f, 0.1f, 0.9f};  // [4, 2], column 0 background
    std::vector<detection> found(8);
    ember::result<std::size_t> n = ember::post::decode_anchor_deltas(view(deltas.data(), {1, 4, 4}), view(anchors.data(), {4, 4}),
                                                                     view(scores.data(), {1, 4, 2}), found);
    REQUIRE_MESSAGE(n, n.error().message);
    REQUIRE(*n == 4);
    check_detection(found[0], {0, 0, 20, 10}, 0.9f, 1);
    check_detection(found[1], {20, -5, 40, 5}, 0.9f, 1);
    check_detection(found[2], {-10, -5, 30, 15}, 0.9f, 1);
    check_detection(found[3], {10 - 625, 2.5f, 10 + 625, 7.5f}, 0.9f, 1);
}

TEST_CASE("decode_anchor_deltas against a double-precision box coder") {
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> pos(0.0f, 300.0f), len(4.0f, 80.0f), delta(-3.0f, 3.0f), u(0.0f, 1.0f);
    const std::size_t n = 64, classes = 4;
    std::vector<float> anchors, deltas, scores;
    for (std::size_t i = 0; i < n; ++i) {
        const float x = pos(rng), y = pos(rng);
        anchors.insert(anchors.end(), {x, y, x + len(rng), y + len(rng)});
        for (int k = 0; k < 4; ++k) deltas.push_back(delta(rng) * (k < 2 ? 10.0f : 5.0f));
        for (std::size_t c = 0; c < classes; ++c) scores.push_back(u(rng));
    }
    ember::post::anchor_delta_options o;
    o.weights = {10.0f, 10.0f, 5.0f, 5.0f};
    o.background_class = -1;
    o.score_threshold = 0.0f;  // every (anchor, class)
    std::vector<detection> found(n * classes);
    ember::result<std::size_t> got = ember::post::decode_anchor_deltas(view(deltas.data(), {64, 4}), view(anchors.data(), {64, 4}),
                                                                       view(scores.data(), {64, 4}), found, o);
    REQUIRE_MESSAGE(got, got.error().message);
    REQUIRE(*got == n * classes);
    for (std::size_t i = 0; i < n; ++i) {
        const box want = box_coder_ref(&deltas[i * 4], &anchors[i * 4], o.weights);
        for (std::size_t c = 0; c < classes; ++c) {
            const detection& d = found[i * classes + c];
            CAPTURE(i);
            CHECK(d.class_id == static_cast<int>(c));
            CHECK(d.score == scores[i * classes + c]);
            CHECK(std::fabs(d.bounds.x0 - want.x0) < 1e-3f);
            CHECK(std::fabs(d.bounds.y0 - want.y0) < 1e-3f);
            CHECK(std::fabs(d.bounds.x1 - want.x1) < 1e-3f);
            CHECK(std::fabs(d.bounds.y1 - want.y1) < 1e-3f);
        }
    }
}

TEST_CASE("decode_anchor_deltas: background, best class only, activations") {
    const std::vector<float> anchors = {0, 0, 10, 10, 50, 50, 60, 60};
    const std::vector<float> deltas(8, 0.0f);
    // Background 0.9 is never an object; classes 1 and 2 both pass 0.25 on anchor 0.
    const std::vector<float> probs = {0.9f, 0.6f, 0.3f, 0.5f, 0.2f, 0.1f};
    std::vector<detection> found(6);
    const auto decode = [&](const std::vector<float>& s, const ember::post::anchor_delta_options& o) {
        ember::result<std::size_t> r = ember::post::decode_anchor_deltas(view(deltas.data(), {2, 4}), view(anchors.data(), {2, 4}),
                                                                         view(s.data(), {2, 3}), found, o);
        REQUIRE_MESSAGE(r, r.error().message);
        return *r;
    };
    ember::post::anchor_delta_options o;
    REQUIRE(decode(probs, o) == 2);  // one per passing (anchor, class), as torchvision's SSD
    check_detection(found[0], {0, 0, 10, 10}, 0.6f, 1);
    check_detection(found[1], {0, 0, 10, 10}, 0.3f, 2);

    o.best_class_only = true;
    REQUIRE(decode(probs, o) == 1);
    check_detection(found[0], {0, 0, 10, 10}, 0.6f, 1);

    o.best_class_only = false;
    o.background_class = -1;  // column 0 is a class like the others
    REQUIRE(decode(probs, o) == 4);
    check_detection(found[0], {0, 0, 10, 10}, 0.9f, 0);
    check_detection(found[3], {50, 50, 60, 60}, 0.5f, 0);

    // Logits: softmax over the row (background included), or a sigmoid per class.
    const std::vector<float> logits = {0.5f, 2.0f, 1.0f, -1.0f, 3.0f, 0.0f};
    o.background_class = 0;
    o.score_threshold = 0.0f;
    o.activation = ember::post::score_activation::softmax;
    REQUIRE(decode(logits, o) == 4);
    for (std::size_t a = 0; a < 2; ++a) {
        float row[3];
        REQUIRE(ember::post::softmax(ember::span<const float>(&logits[a * 3], 3), row) == ember::status::ok);
        CHECK(found[a * 2].score == doctest::Approx(row[1]));
        CHECK(found[a * 2 + 1].score == doctest::Approx(row[2]));
    }
    o.activation = ember::post::score_activation::sigmoid;
    REQUIRE(decode(logits, o) == 4);
    CHECK(found[0].score == doctest::Approx(1.0 / (1.0 + std::exp(-2.0))));
    CHECK(found[3].score == doctest::Approx(0.5));
}

TEST_CASE("decode_anchor_deltas: shape and option errors") {
    const std::vector<float> data(64, 0.0f);
    std::vector<detection> found(8);
    const auto run = [&](const ember::shape& d, const ember::shape& a, const ember::shape& s,
                         const ember::post::anchor_delta_options& o = {}) {
        return ember::post::decode_anchor_deltas(view(data.data(), d), view(data.data(), a), view(data.data(), s), found, o);
    };
    REQUIRE(run({4, 4}, {4, 4}, {4, 3}));

    ember::result<std::size_t> r = run({4, 5}, {4, 4}, {4, 3});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ember::status::shape_mismatch);
    CHECK(r.error().message.find("deltas have shape [4, 5]") != std::string::npos);
    r = run({4, 4}, {3, 4}, {4, 3});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ember::status::shape_mismatch);
    CHECK(r.error().message.find("anchors have shape [3, 4], expected [4, 4]") != std::string::npos);
    r = run({4, 4}, {4, 4}, {1, 5, 3});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ember::status::shape_mismatch);
    CHECK(r.error().message.find("scores have shape [1, 5, 3]") != std::string::npos);

    ember::post::anchor_delta_options o;
    o.background_class = 3;
    r = run({4, 4}, {4, 4}, {4, 3}, o);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ember::status::invalid_argument);
    o.background_class = 0;
    o.weights[2] = 0.0f;
    r = run({4, 4}, {4, 4}, {4, 3}, o);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ember::status::invalid_argument);
}
