// SPDX-License-Identifier: Apache-2.0
// What the command-line examples (ember-run, classify, ocr, ember-quantize) share: every failure is one line
// on stderr, "<tool>: <what>: <why>", and an exit code (2: bad command line, 1: anything else).
// The examples throw `failure` inside themselves for that; the library never throws.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <exception>
#include <new>
#include <string>
#include <utility>

#include <unistd.h>

#include <ember/ember.hpp>

namespace example {

inline constexpr int exit_usage = 2;
inline constexpr int exit_failure = 1;

struct failure {
    std::string what, why;
    int code = exit_failure;
};

[[noreturn]] inline void fail(std::string what, std::string why, int code = exit_failure) {
    throw failure{std::move(what), std::move(why), code};
}

/// s with line breaks turned into spaces and trailing spaces dropped: one line for stderr.
inline std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

/// The value of r, or fail(what, its message).
template <class T>
T checked(ember::result<T> r, const std::string& what) {
    if (!r) fail(what, r.error().message);
    return std::move(*r);
}
inline void checked(ember::result<void> r, const std::string& what) {
    if (!r) fail(what, r.error().message);
}

/// The executor for a session on n threads: none (run on the caller) for 1, else a started pool
/// whose idle threads spin for `spin` before parking. These tools run back to back on cores they
/// own, so they spin 200 us by default: a model's ops then hand over to spinning workers instead
/// of paying a futex wake-up each (thread_pool's own default, for hosts, is not to spin).
class session_threads {
public:
    static constexpr std::chrono::microseconds default_spin{200};
    explicit session_threads(std::size_t n, std::chrono::microseconds spin = default_spin) {
        if (n <= 1) return;
        pool_ = std::make_unique<ember::thread_pool>(n, spin);
        pool_->start();
        exec_ = pool_->as_executor();
    }
    const ember::executor* executor() const noexcept { return pool_ ? &exec_ : nullptr; }

private:
    std::unique_ptr<ember::thread_pool> pool_;
    ember::executor exec_;
};

/// `[#########...........]  45% 9/20` on stderr: redrawn in place on a terminal, a line per
/// tenth otherwise (a log file).
class progress_bar {
public:
    progress_bar(std::size_t total, bool on) : total_(total), on_(on), tty_(isatty(fileno(stderr)) != 0) {}
    void clear() const {
        if (on_ && tty_) std::fputs("\r\033[K", stderr);
    }
    void show(std::size_t done) {
        if (!on_) return;
        const std::size_t tenth = done * 10 / total_;
        if (!tty_ && tenth == last_tenth_ && done != total_) return;
        if (!tty_ && done == total_ && last_tenth_ == 10) return;
        last_tenth_ = tenth;
        constexpr std::size_t width = 30;
        const std::size_t filled = done * width / total_;
        std::string bar(filled, '#');
        bar.append(width - filled, '.');
        std::fprintf(stderr, "%s[%s] %3zu%% %zu/%zu%s", tty_ ? "\r" : "", bar.c_str(), done * 100 / total_, done, total_,
                     tty_ && done != total_ ? "" : "\n");
        std::fflush(stderr);
    }

private:
    std::size_t total_;
    bool on_, tty_;
    std::size_t last_tenth_ = static_cast<std::size_t>(-1);
};

/// Runs body() and turns what it throws into the tool's one stderr line and exit code.
template <class Body>
int run_main(const char* tool, Body&& body) {
    try {
        return body();
    } catch (const failure& f) {
        std::fprintf(stderr, "%s: %s: %s\n", tool, one_line(f.what).c_str(), one_line(f.why).c_str());
        return f.code;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: memory: out of memory\n", tool);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: internal error: %s\n", tool, one_line(e.what()).c_str());
    }
    return exit_failure;
}

} // namespace example
