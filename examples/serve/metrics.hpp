// SPDX-License-Identifier: Apache-2.0
// What /metrics is made of: a latency histogram that request threads add to without a lock, and
// a writer for Prometheus' text exposition format 0.0.4 (HELP/TYPE lines, labelled samples,
// cumulative histogram buckets).
#pragma once

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace serve {

/// Seconds, in buckets from 0.5 ms to 10 s; observed from any thread.
class latency_histogram {
public:
    static inline const std::vector<double> bounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

    void observe(std::chrono::nanoseconds t) noexcept {
        const double s = std::chrono::duration<double>(t).count();
        const std::size_t i = static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), s) - bounds.begin());  // first bound >= s
        counts_[i].fetch_add(1, std::memory_order_relaxed);
        sum_ns_.fetch_add(static_cast<std::uint64_t>(t.count()), std::memory_order_relaxed);
    }
    /// Per bucket (not cumulative), the last one above every bound.
    std::vector<std::uint64_t> counts() const {
        std::vector<std::uint64_t> c(counts_.size());
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = counts_[i].load(std::memory_order_relaxed);
        return c;
    }
    double sum_seconds() const noexcept { return static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) * 1e-9; }

private:
    std::vector<std::atomic<std::uint64_t>> counts_ = std::vector<std::atomic<std::uint64_t>>(bounds.size() + 1);
    std::atomic<std::uint64_t> sum_ns_{0};
};

/// Builds the text of one scrape.
class prometheus_text {
public:
    /// The HELP and TYPE lines of a metric family; its samples follow.
    void family(std::string_view name, std::string_view type, std::string_view help) {
        out_.append("# HELP ").append(name).append(" ").append(help).append("\n");
        out_.append("# TYPE ").append(name).append(" ").append(type).append("\n");
    }
    /// name{labels} value; labels is `key="value",...` as label() builds it (may be empty).
    void sample(std::string_view name, std::string_view labels, double value) {
        out_.append(name);
        if (!labels.empty()) out_.append("{").append(labels).append("}");
        out_.append(" ");
        append_number(value);
        out_.append("\n");
    }
    /// The _bucket, _sum and _count samples of a histogram: counts per bucket (not cumulative),
    /// one more than bounds (the +Inf bucket).
    void histogram(std::string_view name, const std::string& labels, const std::vector<double>& bounds, const std::vector<std::uint64_t>& counts,
                   double sum) {
        std::uint64_t cumulative = 0;
        const std::string bucket = std::string(name) + "_bucket";
        const std::string sep = labels.empty() ? "" : ",";
        for (std::size_t i = 0; i < counts.size(); ++i) {
            cumulative += counts[i];
            std::string le;
            if (i < bounds.size()) {
                char buf[32];
                le.assign(buf, std::to_chars(buf, buf + sizeof buf, bounds[i], std::chars_format::fixed).ptr);  // 0.0005, not 5e-04
            } else {
                le = "+Inf";
            }
            sample(bucket, labels + sep + label("le", le), static_cast<double>(cumulative));
        }
        sample(std::string(name) + "_sum", labels, sum);
        sample(std::string(name) + "_count", labels, static_cast<double>(cumulative));
    }

    /// key="value", the value escaped as the format asks (backslash, quote, newline).
    static std::string label(std::string_view key, std::string_view value) {
        std::string s(key);
        s += "=\"";
        for (char c : value) {
            if (c == '\\' || c == '"') s += '\\';
            if (c == '\n') {
                s += "\\n";
                continue;
            }
            s += c;
        }
        return s + "\"";
    }

    std::string take() { return std::move(out_); }

private:
    void append_number(double v) {
        char buf[32];
        out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);  // integers print without a fraction
    }
    std::string out_;
};

} // namespace serve
