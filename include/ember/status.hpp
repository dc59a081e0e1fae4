// SPDX-License-Identifier: Apache-2.0
// status, error_info and result<T>: how every fallible call in ember reports failure.
// No <exception>, no <iostream>: this works with -fno-exceptions -fno-rtti.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "ember/config.hpp"

#if EMBER_HAS_EXCEPTIONS
#include <stdexcept>
#endif

EMBER_NAMESPACE_BEGIN

/// What went wrong, as a code. The full story is in error_info::message.
enum class status : std::uint8_t {
    ok = 0,
    invalid_model,     ///< bytes or graph are not a model we can use (cycle, unknown value, corrupt file)
    unsupported_op,    ///< valid model, but an op, attribute or dtype ember does not implement
    shape_mismatch,    ///< shapes or dtypes inconsistent at compile()
    invalid_argument,  ///< caller passed a wrong binding, size, name or index
    out_of_memory,     ///< the allocator returned null
    io_error,          ///< a file could not be read or written
    device_error,      ///< a GPU call failed (the CUDA extension); the message names the CUDA error
    busy,              ///< refused for now: a batcher's queue is full, waited too long, or is stopping (HTTP 503)
};

[[nodiscard]] constexpr std::string_view to_string(status s) noexcept {
    switch (s) {
        case status::ok: return "ok";
        case status::invalid_model: return "invalid_model";
        case status::unsupported_op: return "unsupported_op";
        case status::shape_mismatch: return "shape_mismatch";
        case status::invalid_argument: return "invalid_argument";
        case status::out_of_memory: return "out_of_memory";
        case status::io_error: return "io_error";
        case status::device_error: return "device_error";
        case status::busy: return "busy";
    }
    return "unknown";
}

/// A failure with its reason. message is a full sentence that names the node, the input and
/// what was expected: "node 3 'fc1' (Gemm): inner dimensions differ: 32 vs 16 ([1, 32] x [16, 8])".
struct error_info {
    status code = status::ok;
    std::int32_t node = -1;  ///< graph node index, -1 when the error is not tied to a node
    std::string message;
};

/// A value or the error that prevented it: a minimal expected<T, error_info> (std::expected is
/// C++23). Check it with operator bool before dereferencing.
template <class T>
class [[nodiscard]] result {
    static_assert(!std::is_reference_v<T>, "result<T&> is not supported");

public:
    result(T value) : has_value_(true) { new (&storage_) T(std::move(value)); }
    result(error_info error) : error_(std::move(error)) {
        if (error_.code == status::ok) error_.code = status::invalid_argument;
    }
    result(status code, std::string message) : result(error_info{code, -1, std::move(message)}) {}

    result(result&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
        : has_value_(other.has_value_), error_(std::move(other.error_)) {
        if (has_value_) new (&storage_) T(std::move(*other));
    }
    result(const result& other) : has_value_(other.has_value_), error_(other.error_) {
        if (has_value_) new (&storage_) T(*other);
    }
    result& operator=(result other) noexcept(std::is_nothrow_move_constructible_v<T>) {
        reset();
        has_value_ = other.has_value_;
        error_ = std::move(other.error_);
        if (has_value_) new (&storage_) T(std::move(*other));
        return *this;
    }
    ~result() { reset(); }

    explicit operator bool() const noexcept { return has_value_; }
    bool has_value() const noexcept { return has_value_; }

    T& operator*() & noexcept { return check(), *ptr(); }
    const T& operator*() const& noexcept { return check(), *ptr(); }
    T&& operator*() && noexcept { return check(), std::move(*ptr()); }
    T* operator->() noexcept { return check(), ptr(); }
    const T* operator->() const noexcept { return check(), ptr(); }
    T& value() & noexcept { return **this; }
    const T& value() const& noexcept { return **this; }

    /// The failure; code is status::ok when the result holds a value.
    const error_info& error() const noexcept { return error_; }
    status code() const noexcept { return has_value_ ? status::ok : error_.code; }

private:
    void check() const noexcept { EMBER_ASSERT(has_value_, "result has no value; check it before use"); }
    T* ptr() noexcept { return std::launder(reinterpret_cast<T*>(&storage_)); }
    const T* ptr() const noexcept { return std::launder(reinterpret_cast<const T*>(&storage_)); }
    void reset() noexcept {
        if (has_value_) ptr()->~T();
        has_value_ = false;
    }

    std::aligned_storage_t<sizeof(T), alignof(T)> storage_;
    bool has_value_ = false;
    error_info error_;
};

/// Success, or the error that prevented it, for calls that have nothing else to return
/// (result<void> is what the image transforms give: `if (auto r = resize(a, b); !r) ...`).
template <>
class [[nodiscard]] result<void> {
public:
    result() noexcept = default;
    result(error_info error) : has_value_(false), error_(std::move(error)) {
        if (error_.code == status::ok) error_.code = status::invalid_argument;
    }
    result(status code, std::string message) : result(error_info{code, -1, std::move(message)}) {}

    explicit operator bool() const noexcept { return has_value_; }
    bool has_value() const noexcept { return has_value_; }
    /// The failure; code is status::ok on success.
    const error_info& error() const noexcept { return error_; }
    status code() const noexcept { return has_value_ ? status::ok : error_.code; }

private:
    bool has_value_ = true;
    error_info error_;
};

#if EMBER_HAS_EXCEPTIONS
/// Thrown only by the opt-in convenience wrappers; carries the error_info.
class exception : public std::runtime_error {
public:
    explicit exception(error_info info) : std::runtime_error(info.message), info_(std::move(info)) {}
    const error_info& info() const noexcept { return info_; }

private:
    error_info info_;
};

/// Unwraps a result or throws ember::exception. For applications that prefer exceptions.
template <class T>
T value_or_throw(result<T>&& r) {
    if (!r) throw exception(r.error());
    return std::move(*r);
}
inline void value_or_throw(result<void>&& r) {
    if (!r) throw exception(r.error());
}
#endif

EMBER_NAMESPACE_END
