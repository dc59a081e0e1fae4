// SPDX-License-Identifier: Apache-2.0
// A tiny "{}"-placeholder formatter for error messages, built at load and compile time only.
// No <iostream>, no locale. Types outside this file join in with an ADL-found format_append.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

inline void format_append(std::string& out, std::string_view s) { out.append(s.data(), s.size()); }
inline void format_append(std::string& out, const char* s) { out.append(s ? s : "(null)"); }
inline void format_append(std::string& out, const std::string& s) { out.append(s); }
inline void format_append(std::string& out, char c) { out.push_back(c); }
inline void format_append(std::string& out, bool b) { out.append(b ? "true" : "false"); }

template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>, int> = 0>
void format_append(std::string& out, T v) {
    char buf[32];
    if constexpr (std::is_signed_v<T>)
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else
        std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
    out.append(buf);
}

template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
void format_append(std::string& out, T v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
    out.append(buf);
}

template <class T>
void format_append(std::string& out, const std::vector<T>& v) {
    out.push_back('[');
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out.append(", ");
        format_append(out, v[i]);
    }
    out.push_back(']');
}

inline void format_to(std::string& out, std::string_view fmt) { out.append(fmt.data(), fmt.size()); }

/// Replaces each "{}" in fmt with the next argument, in order.
template <class Arg, class... Args>
void format_to(std::string& out, std::string_view fmt, const Arg& arg, const Args&... args) {
    const std::size_t at = fmt.find("{}");
    if (at == std::string_view::npos) {
        out.append(fmt.data(), fmt.size());
        return;
    }
    out.append(fmt.data(), at);
    format_append(out, arg);
    format_to(out, fmt.substr(at + 2), args...);
}

template <class... Args>
std::string format(std::string_view fmt, const Args&... args) {
    std::string out;
    format_to(out, fmt, args...);
    return out;
}

} // namespace detail
EMBER_NAMESPACE_END
