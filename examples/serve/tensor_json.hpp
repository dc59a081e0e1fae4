// SPDX-License-Identifier: Apache-2.0
// The KServe v2 (Open Inference Protocol) JSON tensor: the protocol's datatype names, and a
// tensor's "data" read into bytes (flat in row-major order, or nested as its shape) and written
// from bytes (flat). Every problem with a request is an http_error naming what is wrong.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <ember/ember.hpp>

namespace serve {

using json = nlohmann::json;

/// An answer other than 200: its HTTP status and the message of its {"error": "..."} body.
struct http_error {
    int status;
    std::string message;
};

[[noreturn]] inline void bad_request(std::string message) { throw http_error{400, std::move(message)}; }

/// The protocol's name of an element type: FP32, INT64, BOOL, ...
inline std::string_view datatype_name(ember::dtype t) noexcept {
    switch (t) {
        case ember::dtype::float32: return "FP32";
        case ember::dtype::float16: return "FP16";
        case ember::dtype::bfloat16: return "BF16";
        case ember::dtype::float64: return "FP64";
        case ember::dtype::int8: return "INT8";
        case ember::dtype::uint8: return "UINT8";
        case ember::dtype::int16: return "INT16";
        case ember::dtype::int32: return "INT32";
        case ember::dtype::int64: return "INT64";
        case ember::dtype::boolean: return "BOOL";
        case ember::dtype::uint16: return "UINT16";
        case ember::dtype::uint32: return "UINT32";
        case ember::dtype::uint64: return "UINT64";
        case ember::dtype::undefined: break;
    }
    return "UNDEFINED";
}

/// "[1, 28, 28]" for messages (-1 stays -1: the batch axis).
inline std::string shape_text(const std::vector<std::int64_t>& dims) {
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

/// j as JSON text, valid UTF-8 whatever bytes its strings hold (a model folder's name, say).
inline std::string json_text(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
/// s as a JSON string.
inline std::string quoted(const std::string& s) { return json_text(json(s)); }

/// A JSON value for a message: a scalar as text (at most about 40 characters), else its kind
/// (dumping a deeply nested value would recurse as deep as it goes).
inline std::string json_excerpt(const json& v) {
    if (v.is_object()) return "an object";
    if (v.is_array()) return "an array";
    std::string s = json_text(v);
    if (s.size() > 40) {
        std::size_t cut = 37;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0u) == 0x80u) --cut;  // not inside a UTF-8 sequence
        s = s.substr(0, cut) + "...";
    }
    return s;
}

namespace detail {

/// Appends the scalars of `j`, nested exactly as shape[depth...], to leaves.
inline void gather_nested(const json& j, const std::vector<std::int64_t>& shape, std::size_t depth, std::vector<const json*>& leaves,
                          const std::string& what) {
    if (depth == shape.size()) {
        if (j.is_array()) bad_request(what + ": 'data' is nested deeper than its shape " + shape_text(shape));
        leaves.push_back(&j);
        return;
    }
    if (!j.is_array() || j.size() != static_cast<std::size_t>(shape[depth]))
        bad_request(what + ": 'data' is nested, but not as its shape " + shape_text(shape) + ": axis " + std::to_string(depth) +
                    " should hold " + std::to_string(shape[depth]) + " elements, it holds " + (j.is_array() ? std::to_string(j.size()) : json_excerpt(j)));
    for (const json& e : j) gather_nested(e, shape, depth + 1, leaves, what);
}

/// v as a T, or false when v is not a value of that type (a string for a number, 300 for UINT8).
template <class T>
bool from_json(const json& v, T& out) {
    if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) return false;
        out = v.get<bool>();
    } else if constexpr (std::is_same_v<T, ember::float16> || std::is_same_v<T, ember::bfloat16>) {
        if (!v.is_number()) return false;
        out = T(static_cast<float>(v.get<double>()));
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number()) return false;
        out = static_cast<T>(v.get<double>());
    } else {
        static_assert(std::is_integral_v<T>);
        if (v.is_number_unsigned()) {  // nlohmann keeps non-negative integers as unsigned
            const std::uint64_t u = v.get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return false;
            out = static_cast<T>(u);
        } else if (v.is_number_integer()) {
            const std::int64_t s = v.get<std::int64_t>();
            if (std::is_unsigned_v<T> || s < static_cast<std::int64_t>(std::numeric_limits<T>::min())) return false;
            out = static_cast<T>(s);
        } else {
            return false;
        }
    }
    return true;
}

template <class T>
void append_number(std::string& out, T v) {
    char buf[64];
    if constexpr (std::is_same_v<T, bool>) {
        out += v ? "true" : "false";
        return;
    } else if constexpr (std::is_same_v<T, ember::float16> || std::is_same_v<T, ember::bfloat16>) {
        append_number(out, static_cast<float>(v));
        return;
    } else {
        if constexpr (std::is_floating_point_v<T>) {
            if (!std::isfinite(v)) {  // JSON has no NaN or infinity
                out += "null";
                return;
            }
        }
        const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v);  // shortest form that reads back exactly
        out.append(buf, r.ptr);
    }
}

} // namespace detail

/// Reads a tensor's "data" (count elements of type t, the tensor's `shape`) into out: flat, or
/// nested exactly as shape. `what` names the tensor in messages ("input 'x'").
inline void read_data(const json& data, const std::vector<std::int64_t>& shape, ember::dtype t, std::byte* out, std::size_t count,
                      const std::string& what) {
    if (!data.is_array()) bad_request(what + ": 'data' must be an array, not " + json_excerpt(data));
    std::vector<const json*> leaves;
    leaves.reserve(count);
    if (!data.empty() && data.front().is_array()) {
        detail::gather_nested(data, shape, 0, leaves, what);
    } else {
        for (const json& v : data) {
            if (v.is_array()) bad_request(what + ": 'data' mixes numbers and arrays: give it flat or nested as its shape " + shape_text(shape));
            leaves.push_back(&v);
        }
    }
    if (leaves.size() != count)
        bad_request(what + ": 'data' holds " + std::to_string(leaves.size()) + " values, its shape " + shape_text(shape) + " needs " +
                    std::to_string(count));
    ember::visit_dtype(t, [&](auto tag) {
        using T = decltype(tag);
        for (std::size_t i = 0; i < count; ++i) {
            T v{};
            if (!detail::from_json(*leaves[i], v))
                bad_request(what + ": value " + std::to_string(i) + " of 'data' is " + json_excerpt(*leaves[i]) + ", not " +
                            std::string(datatype_name(t)));
            std::memcpy(out + i * sizeof(T), &v, sizeof(T));
        }
    });
}

/// Appends count elements of type t at `bytes` as a flat JSON array.
inline void append_data(std::string& out, ember::dtype t, const std::byte* bytes, std::size_t count) {
    out += '[';
    ember::visit_dtype(t, [&](auto tag) {
        using T = decltype(tag);
        for (std::size_t i = 0; i < count; ++i) {
            T v;
            std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));
            if (i) out += ',';
            detail::append_number(out, v);
        }
    });
    out += ']';
}

} // namespace serve
