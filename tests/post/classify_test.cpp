// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <ember/post/classify.hpp>

namespace {

using ember::post::scored_class;

/// softmax in double, the obvious way (max subtracted, or exp overflows on large logits).
std::vector<double> softmax_ref(const std::vector<float>& x) {
    double m = x[0];
    for (float v : x) m = std::max(m, static_cast<double>(v));
    std::vector<double> e(x.size());
    double sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) sum += e[i] = std::exp(static_cast<double>(x[i]) - m);
    for (double& v : e) v /= sum;
    return e;
}

void check_softmax(const std::vector<float>& logits) {
    std::vector<float> probs(logits.size(), -1.0f);
    REQUIRE(ember::post::softmax(logits, probs) == ember::status::ok);
    const std::vector<double> want = softmax_ref(logits);
    double sum = 0;
    for (std::size_t i = 0; i < probs.size(); ++i) {
        REQUIRE(std::isfinite(probs[i]));
        CHECK(std::fabs(probs[i] - want[i]) <= 1e-6 + 1e-5 * want[i]);
        sum += probs[i];
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
}

/// top_k's contract, by the brute force: every index sorted by (score desc, index asc).
std::vector<scored_class> top_k_ref(const std::vector<float>& s, std::size_t k) {
    std::vector<scored_class> all;
    for (std::size_t i = 0; i < s.size(); ++i) all.push_back({static_cast<int>(i), s[i]});
    std::stable_sort(all.begin(), all.end(), [](const scored_class& a, const scored_class& b) { return a.score > b.score; });
    all.resize(k);
    return all;
}

std::filesystem::path temp_file(const std::string& name, const std::string& contents) {
    const auto dir = std::filesystem::temp_directory_path() / ("ember_post_labels_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir);
    const auto path = dir / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path;
}

std::vector<std::string> names_of(const ember::post::labels& l) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < l.size(); ++i) out.emplace_back(l[i]);
    return out;
}

} // namespace

TEST_CASE("softmax matches a double-precision loop") {
    std::mt19937 rng(7);
    for (std::size_t n : {1u, 2u, 3u, 10u, 1000u}) {
        std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
        std::vector<float> logits(n);
        for (float& v : logits) v = dist(rng);
        CAPTURE(n);
        check_softmax(logits);
    }
    CHECK(softmax_ref({0.0f, 0.0f})[0] == 0.5);
}

TEST_CASE("softmax of large and very negative logits stays finite") {
    check_softmax({1000.0f, 1001.0f, 1002.0f});
    check_softmax({-1000.0f, -1001.0f, -1e30f});
    check_softmax({88.0f, 89.0f, 90.0f});  // exp(89) alone overflows float
    check_softmax({0.0f, 3e38f});
    std::vector<float> probs(3);
    REQUIRE(ember::post::softmax(std::vector<float>{1000.0f, 1000.0f, 1000.0f}, probs) == ember::status::ok);
    for (float p : probs) CHECK(p == doctest::Approx(1.0 / 3));
}

TEST_CASE("softmax in place, and its size errors") {
    std::vector<float> x = {1.0f, 2.0f, 3.0f};
    const std::vector<double> want = softmax_ref(x);
    REQUIRE(ember::post::softmax(x, x) == ember::status::ok);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(x[i] == doctest::Approx(want[i]).epsilon(1e-6));

    std::vector<float> two(2), none;
    CHECK(ember::post::softmax(std::vector<float>{1, 2, 3}, two) == ember::status::invalid_argument);
    CHECK(ember::post::softmax(none, none) == ember::status::invalid_argument);
}

TEST_CASE("top_k: best first, ties to the lower index") {
    const std::vector<float> s = {0.5f, 0.9f, 0.5f, 0.9f, 0.1f};
    scored_class out[3];
    REQUIRE(ember::post::top_k(s, out) == ember::status::ok);
    CHECK(out[0].index == 1);
    CHECK(out[1].index == 3);
    CHECK(out[2].index == 0);
    CHECK(out[0].score == 0.9f);
    CHECK(out[2].score == 0.5f);

    scored_class one[1];
    REQUIRE(ember::post::top_k(std::vector<float>{-3.0f, -1.0f, -2.0f}, one) == ember::status::ok);
    CHECK(one[0].index == 1);
    CHECK(one[0].score == -1.0f);
}

TEST_CASE("top_k against a stable sort, k from 1 to n, with many ties") {
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> level(0, 5);  // few distinct values: ties everywhere
    for (std::size_t n : {1u, 7u, 40u}) {
        std::vector<float> s(n);
        for (float& v : s) v = static_cast<float>(level(rng)) * 0.25f;
        for (std::size_t k = 1; k <= n; ++k) {
            std::vector<scored_class> out(k, scored_class{-7, -7.0f});
            REQUIRE(ember::post::top_k(s, out) == ember::status::ok);
            const std::vector<scored_class> want = top_k_ref(s, k);
            for (std::size_t i = 0; i < k; ++i) {
                CAPTURE(n);
                CAPTURE(k);
                CAPTURE(i);
                CHECK(out[i].index == want[i].index);
                CHECK(out[i].score == want[i].score);
            }
        }
    }
}

TEST_CASE("top_k: NaN ranks last, k == 0 and k > n") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    scored_class out[3];
    REQUIRE(ember::post::top_k(std::vector<float>{nan, 0.2f, nan, 0.1f}, out) == ember::status::ok);
    CHECK(out[0].index == 1);
    CHECK(out[1].index == 3);
    CHECK(out[2].index == 0);  // the first NaN, after every number

    std::vector<scored_class> none;
    CHECK(ember::post::top_k(std::vector<float>{1.0f}, none) == ember::status::ok);
    scored_class many[4];
    CHECK(ember::post::top_k(std::vector<float>{1.0f, 2.0f, 3.0f}, many) == ember::status::invalid_argument);
}

TEST_CASE("labels from a file: CRLF, BOM, trailing newline, empty middle line") {
    const auto check_file = [](const std::string& contents, const std::vector<std::string>& want) {
        const auto path = temp_file("labels.txt", contents);
        ember::result<ember::post::labels> l = ember::post::labels::load_file(path.string());
        REQUIRE_MESSAGE(l, l.error().message);
        CHECK(names_of(*l) == want);
        std::filesystem::remove_all(path.parent_path());
    };
    check_file("cat\ndog\n", {"cat", "dog"});
    check_file("cat\ndog", {"cat", "dog"});
    check_file("cat\r\ndog\r\n", {"cat", "dog"});
    check_file("\xEF\xBB\xBF" "cat\ndog\n", {"cat", "dog"});
    check_file("cat\n\nbird\n", {"cat", "", "bird"});
    check_file("n01440764 tench, Tinca tinca\n", {"n01440764 tench, Tinca tinca"});
    check_file("a\n\n", {"a", ""});
}

TEST_CASE("labels: empty and missing files name the path") {
    const auto path = temp_file("empty.txt", "");
    ember::result<ember::post::labels> l = ember::post::labels::load_file(path.string());
    REQUIRE_FALSE(l);
    CHECK(l.error().code == ember::status::invalid_argument);
    CHECK(l.error().message.find(path.string()) != std::string::npos);

    const std::string missing = (path.parent_path() / "no_such_file.txt").string();
    ember::result<ember::post::labels> m = ember::post::labels::load_file(missing);
    REQUIRE_FALSE(m);
    CHECK(m.error().code == ember::status::io_error);
    CHECK(m.error().message.find(missing) != std::string::npos);

    const std::string folder = path.parent_path().string();  // opens on Linux, but reads fail
    ember::result<ember::post::labels> f = ember::post::labels::load_file(folder);
    REQUIRE_FALSE(f);
    CHECK(f.error().code == ember::status::io_error);
    std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("labels: lookups, the #i fallback, empty labels") {
    const ember::post::labels l = ember::post::labels::from_lines({"zero", "one"});
    CHECK(l.size() == 2);
    CHECK_FALSE(l.empty());
    CHECK(l[0] == "zero");
    CHECK(l[1] == "one");
    // Out-of-range indices from size(): a constant index past a vector of known size trips
    // GCC 12's -Warray-bounds at -O3 on the branch that the bounds check makes dead.
    CHECK(l[l.size()].empty());
    CHECK(l.name(1) == "one");
    CHECK(l.name(l.size() + 15) == "#17");

    const ember::post::labels none;
    CHECK(none.empty());
    CHECK(none.size() == 0);
    CHECK(none.name(0) == "#0");
}
