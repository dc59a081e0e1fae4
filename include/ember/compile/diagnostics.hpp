// SPDX-License-Identifier: Apache-2.0
// diagnostics: collects the error of a load or compile, prefixed with the node it concerns, and
// forwards log lines to the host's log_sink. Used at load and compile time only, never in run().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "ember/config.hpp"
#include "ember/detail/format.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN

enum class log_level : std::uint8_t { debug, info, warning };

/// The host's logger: called only from load_* and compile(), from the calling thread.
struct log_sink {
    void (*fn)(void* ctx, log_level level, std::string_view message) = nullptr;
    void* ctx = nullptr;
};

class diagnostics {
public:
    explicit diagnostics(log_sink sink = {}) : sink_(sink) {}

    /// Errors from now on are about this node ("node 3 'fc1' (Gemm)"); -1 and "" for none.
    void set_node(std::int32_t node, std::string description) {
        node_ = node;
        prefix_ = std::move(description);
    }

    /// Records the first failure and returns its code, so `return diag.fail(...)` reads well.
    template <class... Args>
    status fail(status code, std::string_view fmt, const Args&... args) {
        if (error_.code == status::ok) {
            std::string message = prefix_.empty() ? std::string() : prefix_ + ": ";
            detail::format_to(message, fmt, args...);
            error_ = error_info{code, node_, std::move(message)};
        }
        return code;
    }

    /// Takes an error that another layer produced (keeps the first one).
    status fail(const error_info& e) {
        if (error_.code == status::ok) {
            error_ = e;
            if (error_.node < 0) error_.node = node_;
        }
        return e.code;
    }

    bool failed() const noexcept { return error_.code != status::ok; }
    const error_info& error() const noexcept { return error_; }
    error_info take_error() { return std::exchange(error_, error_info{}); }
    /// The recorded error, or a generic one with code when none was recorded.
    error_info take_error(status code) {
        if (error_.code == status::ok) return error_info{code, node_, prefix_ + ": failed (" + std::string(to_string(code)) + ")"};
        return take_error();
    }

    template <class... Args>
    void log(log_level level, std::string_view fmt, const Args&... args) const {
        if (sink_.fn) sink_.fn(sink_.ctx, level, detail::format(fmt, args...));
    }

private:
    log_sink sink_;
    error_info error_;
    std::int32_t node_ = -1;
    std::string prefix_;
};

EMBER_NAMESPACE_END
