// SPDX-License-Identifier: Apache-2.0
// trace_recorder: records the steps sessions run, through their profile hook
// (session::set_profile_hook), into a buffer sized once at construction, and afterwards writes
// them as a Chrome trace (JSON that Perfetto, ui.perfetto.dev, and chrome://tracing open) and a
// per-op-type summary.
//
//   ember::trace_recorder recorder(plan.steps().size() * runs);  // the one allocation
//   session.set_profile_hook(recorder.hook());
//   ... session.run() ...                                        // records, allocates nothing
//   session.set_profile_hook({});
//   recorder.save_chrome_trace("trace.json");                    // one "X" event per step run
//
// Recording takes no lock and allocates nothing: one atomic increment claims a slot, and an
// event past the capacity is counted as dropped instead of stored. Several sessions on several
// threads may share one recorder. Read it (events(), chrome_trace(), summary()) only once the
// runs that feed it have returned; its events view the plans' step names, so the plans must
// outlive that reading.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/allocator.hpp"
#include "ember/core/span.hpp"
#include "ember/detail/format.hpp"
#include "ember/runtime/session.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN

/// The steps of one op type in a recording: how many ran and how long they took in all.
struct op_time {
    std::string_view op;              ///< op type (plan::step_op), e.g. "FusedConv"
    std::size_t count = 0;            ///< steps of this type recorded
    std::chrono::nanoseconds total{0};  ///< their summed time
    double share = 0.0;               ///< total over the whole recording's time, 0..1

    std::chrono::nanoseconds mean() const noexcept { return count ? total / static_cast<std::int64_t>(count) : total; }
};

namespace detail {

/// Bytes of a well-formed UTF-8 sequence starting at s[i] (1 to 4), or 0 when it is not one
/// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
inline std::size_t utf8_sequence(std::string_view s, std::size_t i) noexcept {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else return 0;
    if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
    return n;
}

/// Appends s as a JSON string literal: quotes and backslashes escaped, control characters as
/// \n, \t, ... or \u00XX, and bytes that are not UTF-8 as U+FFFD, so any parser accepts it.
inline void append_json_string(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            switch (c) {
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                case '\b': out += "\\b"; break;
                case '\f': out += "\\f"; break;
                default: out += "\\u00", out += hex[c >> 4], out += hex[c & 15];
            }
        } else if (const std::size_t n = utf8_sequence(s, i); n == 0) {
            out += "\\ufffd";
        } else {
            out.append(s.data() + i, n);
            i += n;
            continue;
        }
        ++i;
    }
    out += '"';
}

/// ns as microseconds with three decimals ("12.345"): Chrome trace's unit, to the nanosecond.
inline void append_us(std::string& out, std::int64_t ns) {
    char buf[32];
    const bool negative = ns < 0;
    const std::uint64_t v = negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
    std::snprintf(buf, sizeof buf, "%s%llu.%03llu", negative ? "-" : "", static_cast<unsigned long long>(v / 1000),
                  static_cast<unsigned long long>(v % 1000));
    out += buf;
}

} // namespace detail

class trace_recorder {
public:
    /// Room for `capacity` events (one per step run), allocated here through `alloc`; nothing is
    /// allocated while recording. capacity() is 0 when the allocation failed: every event is
    /// then dropped.
    explicit trace_recorder(std::size_t capacity, const allocator& alloc = default_allocator()) noexcept {
        if (capacity == 0 || capacity > SIZE_MAX / sizeof(step_event) ||
            !buffer_.allocate(capacity * sizeof(step_event), alloc, false))
            return;
        events_ = reinterpret_cast<step_event*>(buffer_.data());
        for (std::size_t i = 0; i < capacity; ++i) new (events_ + i) step_event{};
        capacity_ = capacity;
    }
    // Sessions hold its address in their hook.
    trace_recorder(const trace_recorder&) = delete;
    trace_recorder& operator=(const trace_recorder&) = delete;

    /// The hook to give session::set_profile_hook().
    profile_hook hook() noexcept { return {&record, this}; }

    std::size_t capacity() const noexcept { return capacity_; }
    /// Events stored (at most capacity()).
    std::size_t size() const noexcept { return std::min(claimed(), capacity_); }
    /// Events that came when the buffer was full and were not stored.
    std::size_t dropped() const noexcept { return claimed() - size(); }
    /// The stored events, in the order their steps ended (per thread).
    span<const step_event> events() const noexcept { return {events_, size()}; }
    /// Forgets every event (not while a run records into it).
    void clear() noexcept { next_.store(0, std::memory_order_relaxed); }

    /// The events as Chrome trace JSON: {"traceEvents": [...]} with one complete ("ph":"X") event
    /// per step: name = node name, cat = op type, ts and dur in microseconds (ts from the earliest
    /// event), pid 1, tid = step_event::thread, args = {"op", "step"}; dropped events are counted
    /// in "otherData".
    std::string chrome_trace() const {
        const span<const step_event> ev = events();
        std::int64_t origin = 0;
        for (std::size_t i = 0; i < ev.size(); ++i) origin = i == 0 ? ev[i].begin_ns : std::min(origin, ev[i].begin_ns);
        std::string out = "{\"traceEvents\":[";
        out.reserve(out.size() + ev.size() * 160);
        for (std::size_t i = 0; i < ev.size(); ++i) {
            const step_event& e = ev[i];
            out += i ? ",\n{\"name\":" : "\n{\"name\":";
            detail::append_json_string(out, e.name);
            out += ",\"cat\":";
            detail::append_json_string(out, e.op);
            out += ",\"ph\":\"X\",\"ts\":";
            detail::append_us(out, e.begin_ns - origin);
            out += ",\"dur\":";
            detail::append_us(out, e.end_ns - e.begin_ns);
            out += ",\"pid\":1,\"tid\":" + std::to_string(e.thread) + ",\"args\":{\"op\":";
            detail::append_json_string(out, e.op);
            out += ",\"step\":" + std::to_string(e.step) + "}}";
        }
        out += "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"dropped_events\":" + std::to_string(dropped()) + "}}\n";
        return out;
    }

    /// chrome_trace() written to a file; io_error naming the path when it cannot be written.
    result<void> save_chrome_trace(const std::string& path) const {
        const std::string json = chrome_trace();
        std::FILE* f = std::fopen(path.c_str(), "wb");
        if (!f) return error_info{status::io_error, -1, ember::detail::format("ember::trace_recorder: '{}': cannot create the file", path)};
        const bool wrote = std::fwrite(json.data(), 1, json.size(), f) == json.size();
        if (std::fclose(f) != 0 || !wrote)
            return error_info{status::io_error, -1, ember::detail::format("ember::trace_recorder: '{}': cannot write the file", path)};
        return {};
    }

    /// Time per op type, the most expensive first (ties by name).
    std::vector<op_time> summary() const {
        std::vector<op_time> ops;
        std::chrono::nanoseconds all{0};
        for (const step_event& e : events()) {
            auto it = std::find_if(ops.begin(), ops.end(), [&](const op_time& t) { return t.op == e.op; });
            if (it == ops.end()) it = ops.insert(ops.end(), op_time{e.op});
            const std::chrono::nanoseconds t{e.end_ns - e.begin_ns};
            ++it->count;
            it->total += t;
            all += t;
        }
        for (op_time& t : ops) t.share = all.count() > 0 ? static_cast<double>(t.total.count()) / static_cast<double>(all.count()) : 0.0;
        std::sort(ops.begin(), ops.end(), [](const op_time& a, const op_time& b) { return a.total != b.total ? a.total > b.total : a.op < b.op; });
        return ops;
    }

    /// summary() as a text table, one line per op type and a last line for all of them:
    ///   op type      count  total ms   mean us  % of total
    ///   FusedConv       52    10.123   194.673        78.1
    std::string summary_table() const {
        const std::vector<op_time> ops = summary();
        std::size_t width = 7;  // "op type"
        std::size_t count = 0;
        std::chrono::nanoseconds total{0};
        for (const op_time& t : ops) {
            width = std::max(width, std::min<std::size_t>(t.op.size(), 48));
            count += t.count;
            total += t.total;
        }
        std::string out;
        char buf[160];
        const int w = static_cast<int>(width);
        std::snprintf(buf, sizeof buf, "%-*s %8s %11s %11s %11s\n", w, "op type", "count", "total ms", "mean us", "% of total");
        out += buf;
        const auto line = [&](std::string_view op, std::size_t n, std::chrono::nanoseconds sum, double share) {
            const double mean_us = n ? static_cast<double>(sum.count()) / 1e3 / static_cast<double>(n) : 0.0;
            std::snprintf(buf, sizeof buf, "%-*.*s %8zu %11.3f %11.1f %11.1f\n", w, static_cast<int>(op.size()), op.data(), n,
                          static_cast<double>(sum.count()) / 1e6, mean_us, 100.0 * share);
            out += buf;
        };
        for (const op_time& t : ops) line(t.op, t.count, t.total, t.share);
        line("all", count, total, total.count() > 0 ? 1.0 : 0.0);
        return out;
    }

private:
    static void record(void* self, const step_event& e) noexcept {
        trace_recorder& r = *static_cast<trace_recorder*>(self);
        const std::size_t at = r.next_.fetch_add(1, std::memory_order_relaxed);
        if (at < r.capacity_) r.events_[at] = e;
    }
    std::size_t claimed() const noexcept { return next_.load(std::memory_order_relaxed); }

    aligned_buffer buffer_;
    step_event* events_ = nullptr;
    std::size_t capacity_ = 0;
    std::atomic<std::size_t> next_{0};
};

EMBER_NAMESPACE_END
