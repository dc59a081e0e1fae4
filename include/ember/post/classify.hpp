// SPDX-License-Identifier: Apache-2.0
// After a classifier: turn its scores into probabilities, pick the best few, and name them.
// softmax() and top_k() write into the caller's memory and allocate nothing, so they can run
// every frame; labels is load-time data (one std::string per class).
//
//   float probs[1000];
//   ember::post::scored_class best[5];
//   if (ember::post::softmax(logits, probs) != ember::status::ok) ...   // sizes must match
//   if (ember::post::top_k(probs, best) != ember::status::ok) ...      // k = 5, best first
//   ember::result<ember::post::labels> names = ember::post::labels::load_file("imagenet.txt");
//   std::string first = names->name(static_cast<std::size_t>(best[0].index));   // "#17" when unnamed
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/span.hpp"
#include "ember/detail/format.hpp"
#include "ember/detail/read_file.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace post {

/// probs = exp(logits - max) / sum, the max subtracted first so that large logits (1000 and
/// more) do not overflow. probs may be logits itself (in place). The sum is accumulated in
/// double. Non-finite logits give what IEEE arithmetic gives (NaN in, NaN out), as
/// torch.softmax does. Fails with invalid_argument when the spans are empty or differ in size.
[[nodiscard]] inline status softmax(span<const float> logits, span<float> probs) noexcept {
    if (logits.empty() || logits.size() != probs.size()) return status::invalid_argument;
    float max = logits[0];
    for (std::size_t i = 1; i < logits.size(); ++i)
        if (logits[i] > max) max = logits[i];
    double sum = 0.0;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        const float e = std::exp(logits[i] - max);
        probs[i] = e;
        sum += static_cast<double>(e);
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (float& p : probs) p *= inv;
    return status::ok;
}

/// One class and its score, as top_k() reports it.
struct scored_class {
    int index = -1;
    float score = 0.0f;
};

namespace detail {

/// The ranking top_k() uses: the higher score first, the lower index among equal scores. NaN
/// ranks below every number, so a NaN never pushes a real score out of the top k.
inline bool ranks_before(float a, std::size_t ia, float b, std::size_t ib) noexcept {
    const bool a_nan = a != a, b_nan = b != b;
    if (a_nan != b_nan) return b_nan;
    if (!a_nan && a != b) return a > b;
    return ia < ib;
}

} // namespace detail

/// Writes the out.size() best of scores into out, best first; equal scores keep the lower
/// index first. k == 0 writes nothing. O(n * k) worst case (each new entry is placed by
/// insertion), about O(n) for random scores; no allocation. Fails with invalid_argument when
/// out is larger than scores.
[[nodiscard]] inline status top_k(span<const float> scores, span<scored_class> out) noexcept {
    const std::size_t k = out.size();
    if (k > scores.size()) return status::invalid_argument;
    if (k == 0) return status::ok;
    std::size_t filled = 0;
    for (std::size_t i = 0; i < scores.size(); ++i) {
        const float s = scores[i];
        if (filled == k) {
            const scored_class& last = out[k - 1];
            if (!detail::ranks_before(s, i, last.score, static_cast<std::size_t>(last.index))) continue;
        } else {
            ++filled;
        }
        // Insertion into the sorted prefix: i is larger than every index already there, so
        // among equal scores the newcomer goes last.
        std::size_t at = filled - 1;
        while (at > 0 && detail::ranks_before(s, i, out[at - 1].score, static_cast<std::size_t>(out[at - 1].index))) {
            out[at] = out[at - 1];
            --at;
        }
        out[at] = scored_class{static_cast<int>(i), s};
    }
    return status::ok;
}

/// Class names, one per class index. Load-time data: it owns its strings.
class labels {
public:
    labels() = default;

    /// The names as given, one per class, in order.
    static labels from_lines(std::vector<std::string> lines) {
        labels l;
        l.names_ = std::move(lines);
        return l;
    }

    /// Reads a text file with one name per line (ImageNet's synset_words style, or
    /// torchvision's categories written out one per line). A leading UTF-8 byte-order mark
    /// and each line's trailing '\r' (Windows line ends) are dropped; the newline after the
    /// last line is optional, so a file ending in "\n" has no extra empty name. Empty lines
    /// in the middle stay, as empty names, to keep later indices right. Fails with io_error
    /// when the file cannot be read and invalid_argument when it is empty; the message names
    /// the path.
    static result<labels> load_file(const std::string& path) {
        std::vector<unsigned char> bytes;
        if (ember::detail::read_whole_file(path, bytes) != ember::detail::read_file_status::ok)
            return error_info{status::io_error, -1, ember::detail::format("labels: cannot read '{}'", path)};
        std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
        if (text.empty())
            return error_info{status::invalid_argument, -1, ember::detail::format("labels: '{}' is empty", path)};
        labels l;
        while (!text.empty()) {
            const std::size_t end = text.find('\n');
            std::string_view line = text.substr(0, end);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            l.names_.emplace_back(line);
            if (end == std::string_view::npos) break;
            text.remove_prefix(end + 1);
        }
        return l;
    }

    std::size_t size() const noexcept { return names_.size(); }
    bool empty() const noexcept { return names_.empty(); }

    /// The name of class i, or an empty view when there is none (i >= size()). The view lives
    /// as long as this labels object.
    std::string_view operator[](std::size_t i) const noexcept {
        return i < names_.size() ? std::string_view(names_[i]) : std::string_view();
    }

    /// The name of class i for display: the label, or "#i" when i >= size() (a model with
    /// more classes than the file, or no file at all). Allocates.
    std::string name(std::size_t i) const {
        if (i < names_.size()) return names_[i];
        return ember::detail::format("#{}", i);
    }

private:
    std::vector<std::string> names_;
};

} // namespace post
EMBER_NAMESPACE_END
