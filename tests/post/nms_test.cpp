// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <ember/post/nms.hpp>

namespace {

using ember::post::box;
using ember::post::detection;

double iou_ref(const box& a, const box& b) {
    const auto area = [](double x0, double y0, double x1, double y1) { return std::max(0.0, x1 - x0) * std::max(0.0, y1 - y0); };
    const double aa = area(a.x0, a.y0, a.x1, a.y1), ab = area(b.x0, b.y0, b.x1, b.y1);
    const double inter = area(std::max<double>(a.x0, b.x0), std::max<double>(a.y0, b.y0), std::min<double>(a.x1, b.x1),
                              std::min<double>(a.y1, b.y1));
    return aa > 0 && ab > 0 ? inter / (aa + ab - inter) : 0.0;
}

/// The textbook greedy NMS: sort, then each kept box suppresses every later one it overlaps.
std::vector<detection> nms_ref(std::vector<detection> d, const ember::post::nms_options& o) {
    d.erase(std::remove_if(d.begin(), d.end(), [&](const detection& x) { return !(x.score >= o.score_threshold); }), d.end());
    std::stable_sort(d.begin(), d.end(), [](const detection& a, const detection& b) {
        return std::make_tuple(-a.score, a.class_id, a.bounds.y0, a.bounds.x0, a.bounds.y1, a.bounds.x1) <
               std::make_tuple(-b.score, b.class_id, b.bounds.y0, b.bounds.x0, b.bounds.y1, b.bounds.x1);
    });
    std::vector<bool> suppressed(d.size(), false);
    std::vector<detection> kept;
    for (std::size_t i = 0; i < d.size() && kept.size() < o.max_detections; ++i) {
        if (suppressed[i]) continue;
        kept.push_back(d[i]);
        // The double IoU rounded to float: nms() compares a float IoU with the float threshold,
        // and 0.45f is a little below 0.45, so an IoU of exactly 0.45 is above it only in double.
        for (std::size_t j = i + 1; j < d.size(); ++j)
            if ((!o.class_aware || d[j].class_id == d[i].class_id) &&
                static_cast<float>(iou_ref(d[i].bounds, d[j].bounds)) > o.iou_threshold)
                suppressed[j] = true;
    }
    return kept;
}

std::vector<detection> run_nms(std::vector<detection> d, const ember::post::nms_options& o = {}) {
    ember::result<std::size_t> n = ember::post::nms(d, o);
    REQUIRE_MESSAGE(n, n.error().message);
    REQUIRE(*n <= d.size());
    d.resize(*n);
    return d;
}

bool same(const detection& a, const detection& b) {
    return a.score == b.score && a.class_id == b.class_id && a.bounds.x0 == b.bounds.x0 && a.bounds.y0 == b.bounds.y0 &&
           a.bounds.x1 == b.bounds.x1 && a.bounds.y1 == b.bounds.y1;
}

void check_same(const std::vector<detection>& got, const std::vector<detection>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(same(got[i], want[i]));
    }
}

const detection a{{0, 0, 10, 10}, 0.9f, 0};
const detection b{{1, 1, 11, 11}, 0.8f, 0};   // IoU with a: 81 / 119
const detection c{{1, 1, 11, 11}, 0.7f, 1};   // b's box, another class
const detection d{{5, 0, 15, 10}, 0.6f, 0};   // IoU with a: 50 / 150

} // namespace

TEST_CASE("nms: an overlapping box of the same class is suppressed, another class is not") {
    check_same(run_nms({b, a, c}), {a, c});
    ember::post::nms_options o;
    o.class_aware = false;
    check_same(run_nms({b, a, c}, o), {a});
}

TEST_CASE("nms: overlap at or below the IoU threshold keeps both") {
    check_same(run_nms({d, a}), {a, d});  // 1/3 < 0.45
    ember::post::nms_options o;
    o.iou_threshold = 0.3f;
    check_same(run_nms({d, a}, o), {a});
    o.iou_threshold = 81.0f / 119.0f + 1e-4f;  // just above a-b's IoU
    check_same(run_nms({a, b}, o), {a, b});
}

TEST_CASE("nms: a suppressed box suppresses nothing") {
    // a-e and e-f overlap by 1/3, a-f not at all: e goes, so f stays.
    const detection e{{5, 0, 15, 10}, 0.8f, 0}, f{{10, 0, 20, 10}, 0.7f, 0};
    ember::post::nms_options o;
    o.iou_threshold = 0.3f;
    check_same(run_nms({f, e, a}, o), {a, f});
}

TEST_CASE("nms: score threshold and max_detections") {
    const detection low{{100, 100, 110, 110}, 0.2f, 0}, edge{{200, 200, 210, 210}, 0.25f, 0};
    check_same(run_nms({low, edge, a}), {a, edge});  // 0.25 >= 0.25 passes, 0.2 does not

    std::vector<detection> apart;
    for (int i = 0; i < 6; ++i) apart.push_back({{i * 20.0f, 0, i * 20.0f + 10, 10}, 0.3f + 0.1f * i, 0});
    ember::post::nms_options o;
    o.max_detections = 3;
    check_same(run_nms(apart, o), {apart[5], apart[4], apart[3]});
    o.max_detections = 0;
    CHECK(run_nms(apart, o).empty());
}

TEST_CASE("nms: the order is deterministic whatever the input order") {
    // Equal scores: lower class first, then top-left first.
    const detection p{{50, 0, 60, 10}, 0.5f, 1}, q{{0, 0, 10, 10}, 0.5f, 1}, r{{30, 30, 40, 40}, 0.5f, 0},
        s{{0, 20, 10, 30}, 0.5f, 1};
    std::vector<detection> in = {p, q, r, s, a};
    const std::vector<detection> want = {a, r, q, p, s};
    const auto by_position = [](const detection& x, const detection& y) {
        return std::make_tuple(x.bounds.x0, x.bounds.y0, x.class_id) < std::make_tuple(y.bounds.x0, y.bounds.y0, y.class_id);
    };
    std::sort(in.begin(), in.end(), by_position);
    int permutations = 0;
    do {
        check_same(run_nms(in), want);
        ++permutations;
    } while (std::next_permutation(in.begin(), in.end(), by_position));
    CHECK(permutations == 120);
}

TEST_CASE("nms: NaN detections are dropped, NaN thresholds refused") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const detection bad_score{{0, 0, 5, 5}, nan, 0}, bad_box{{nan, 0, 5, 5}, 0.99f, 0};
    check_same(run_nms({bad_score, a, bad_box}), {a});

    std::vector<detection> v = {a};
    ember::post::nms_options o;
    o.iou_threshold = nan;
    ember::result<std::size_t> n = ember::post::nms(v, o);
    REQUIRE_FALSE(n);
    CHECK(n.error().code == ember::status::invalid_argument);
    CHECK(n.error().message.find("iou_threshold") != std::string::npos);

    std::vector<detection> empty;
    ember::result<std::size_t> e = ember::post::nms(empty);
    REQUIRE(e);
    CHECK(*e == 0);
}

TEST_CASE("nms against the textbook greedy loop on random boxes") {
    std::mt19937 rng(21);
    std::uniform_int_distribution<int> pos(0, 60), len(1, 30), cls(0, 2), score(0, 40);
    for (int round = 0; round < 40; ++round) {
        std::vector<detection> in;
        for (int i = 0; i < 60; ++i) {
            const float x = float(pos(rng)), y = float(pos(rng));
            in.push_back({{x, y, x + float(len(rng)), y + float(len(rng))}, float(score(rng)) / 40.0f, cls(rng)});
        }
        for (bool aware : {true, false}) {
            ember::post::nms_options o;
            o.class_aware = aware;
            o.iou_threshold = round % 2 ? 0.45f : 0.7f;
            o.max_detections = round % 3 ? 300 : 5;
            CAPTURE(round);
            CAPTURE(aware);
            const std::vector<detection> want = nms_ref(in, o);
            CHECK(want.size() > 1);
            check_same(run_nms(in, o), want);
        }
    }
}
