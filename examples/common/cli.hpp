// SPDX-License-Identifier: Apache-2.0
// What the command-line examples (ember-run, classify, ocr) share: every failure is one line
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
