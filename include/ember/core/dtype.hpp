// SPDX-License-Identifier: Apache-2.0
// Element types: the dtype enum, the 16-bit float storage types and the traits that tie C++
// types to dtypes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "ember/config.hpp"
#include "ember/detail/format.hpp"

EMBER_NAMESPACE_BEGIN

/// Element type of a tensor. `boolean` is ONNX's bool (one byte, 0 or 1).
enum class dtype : std::uint8_t {
    undefined = 0,
    float32,
    float16,
    bfloat16,
    float64,
    int8,
    uint8,
    int16,
    int32,
    int64,
    boolean,
    uint16,
    uint32,
    uint64,
};

[[nodiscard]] constexpr std::size_t size_of(dtype t) noexcept {
    switch (t) {
        case dtype::float32: return 4;
        case dtype::float16: return 2;
        case dtype::bfloat16: return 2;
        case dtype::float64: return 8;
        case dtype::int8: return 1;
        case dtype::uint8: return 1;
        case dtype::int16: return 2;
        case dtype::int32: return 4;
        case dtype::int64: return 8;
        case dtype::boolean: return 1;
        case dtype::uint16: return 2;
        case dtype::uint32: return 4;
        case dtype::uint64: return 8;
        case dtype::undefined: return 0;
    }
    return 0;
}

[[nodiscard]] constexpr std::string_view to_string(dtype t) noexcept {
    switch (t) {
        case dtype::float32: return "float32";
        case dtype::float16: return "float16";
        case dtype::bfloat16: return "bfloat16";
        case dtype::float64: return "float64";
        case dtype::int8: return "int8";
        case dtype::uint8: return "uint8";
        case dtype::int16: return "int16";
        case dtype::int32: return "int32";
        case dtype::int64: return "int64";
        case dtype::boolean: return "bool";
        case dtype::uint16: return "uint16";
        case dtype::uint32: return "uint32";
        case dtype::uint64: return "uint64";
        case dtype::undefined: return "undefined";
    }
    return "undefined";
}

inline void format_append(std::string& out, dtype t) { detail::format_append(out, to_string(t)); }

[[nodiscard]] constexpr bool is_floating(dtype t) noexcept {
    return t == dtype::float32 || t == dtype::float16 || t == dtype::bfloat16 || t == dtype::float64;
}

/// IEEE 754 binary16, stored as bits. Converts to and from float exactly (round to nearest even).
struct float16 {
    std::uint16_t bits = 0;

    float16() = default;
    explicit float16(float f) noexcept : bits(from_float(f)) {}
    explicit operator float() const noexcept { return to_float(bits); }

    static std::uint16_t from_float(float f) noexcept {
        std::uint32_t x;
        std::memcpy(&x, &f, 4);
        const std::uint32_t sign = (x >> 16) & 0x8000u;
        const std::uint32_t abs = x & 0x7fffffffu;
        if (abs >= 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
        if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow to inf
        if (abs < 0x38800000u) {                                                      // subnormal or zero
            if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);
            // value = mant * 2^(e - 150) = h * 2^-24, so h = mant >> (126 - e)
            const std::uint32_t shift = 126u - (abs >> 23);
            const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
            std::uint32_t h = mant >> shift;
            const std::uint32_t rem = mant & ((1u << shift) - 1u);
            const std::uint32_t half = 1u << (shift - 1u);
            if (rem > half || (rem == half && (h & 1u))) ++h;
            return static_cast<std::uint16_t>(sign | h);
        }
        std::uint32_t h = ((abs - 0x38000000u) >> 13);
        const std::uint32_t rem = abs & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
        return static_cast<std::uint16_t>(sign | h);
    }

    static float to_float(std::uint16_t h) noexcept {
        const std::uint32_t sign = (h & 0x8000u) << 16;
        const std::uint32_t exp = (h >> 10) & 0x1fu;
        std::uint32_t mant = h & 0x3ffu;
        std::uint32_t x;
        if (exp == 0x1fu) {
            x = sign | 0x7f800000u | (mant << 13);
        } else if (exp != 0) {
            x = sign | ((exp + 112u) << 23) | (mant << 13);
        } else if (mant == 0) {
            x = sign;
        } else {  // subnormal: normalise
            std::uint32_t e = 113;
            while (!(mant & 0x400u)) {
                mant <<= 1;
                --e;
            }
            x = sign | (e << 23) | ((mant & 0x3ffu) << 13);
        }
        float f;
        std::memcpy(&f, &x, 4);
        return f;
    }
};

/// bfloat16: the upper half of a float32, rounded to nearest even.
struct bfloat16 {
    std::uint16_t bits = 0;

    bfloat16() = default;
    explicit bfloat16(float f) noexcept {
        std::uint32_t x;
        std::memcpy(&x, &f, 4);
        if ((x & 0x7fffffffu) > 0x7f800000u)
            bits = static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
        else
            bits = static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
    }
    explicit operator float() const noexcept {
        const std::uint32_t x = static_cast<std::uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &x, 4);
        return f;
    }
};

namespace detail {
template <class T>
struct dtype_of_impl {
    static constexpr dtype value = dtype::undefined;
};
#define EMBER_DETAIL_DTYPE_OF(T, D) \
    template <>                     \
    struct dtype_of_impl<T> {       \
        static constexpr dtype value = dtype::D; \
    };
EMBER_DETAIL_DTYPE_OF(float, float32)
EMBER_DETAIL_DTYPE_OF(float16, float16)
EMBER_DETAIL_DTYPE_OF(bfloat16, bfloat16)
EMBER_DETAIL_DTYPE_OF(double, float64)
EMBER_DETAIL_DTYPE_OF(std::int8_t, int8)
EMBER_DETAIL_DTYPE_OF(std::uint8_t, uint8)
EMBER_DETAIL_DTYPE_OF(std::int16_t, int16)
EMBER_DETAIL_DTYPE_OF(std::int32_t, int32)
EMBER_DETAIL_DTYPE_OF(std::int64_t, int64)
EMBER_DETAIL_DTYPE_OF(bool, boolean)
EMBER_DETAIL_DTYPE_OF(std::uint16_t, uint16)
EMBER_DETAIL_DTYPE_OF(std::uint32_t, uint32)
EMBER_DETAIL_DTYPE_OF(std::uint64_t, uint64)
#undef EMBER_DETAIL_DTYPE_OF
} // namespace detail

/// The dtype of a C++ element type, dtype::undefined for types ember does not know.
template <class T>
inline constexpr dtype dtype_of = detail::dtype_of_impl<std::remove_cv_t<T>>::value;

/// Calls fn(T{}) with the C++ type of t (a tag value of that type). Returns false for undefined.
template <class Fn>
bool visit_dtype(dtype t, Fn&& fn) {
    switch (t) {
        case dtype::float32: fn(float{}); return true;
        case dtype::float16: fn(float16{}); return true;
        case dtype::bfloat16: fn(bfloat16{}); return true;
        case dtype::float64: fn(double{}); return true;
        case dtype::int8: fn(std::int8_t{}); return true;
        case dtype::uint8: fn(std::uint8_t{}); return true;
        case dtype::int16: fn(std::int16_t{}); return true;
        case dtype::int32: fn(std::int32_t{}); return true;
        case dtype::int64: fn(std::int64_t{}); return true;
        case dtype::boolean: fn(bool{}); return true;
        case dtype::uint16: fn(std::uint16_t{}); return true;
        case dtype::uint32: fn(std::uint32_t{}); return true;
        case dtype::uint64: fn(std::uint64_t{}); return true;
        case dtype::undefined: return false;
    }
    return false;
}

EMBER_NAMESPACE_END
