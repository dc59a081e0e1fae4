// SPDX-License-Identifier: Apache-2.0
// What the element-wise ops share about element types: dtype sets (which dtypes an op accepts at
// which opset, and the message when it does not), how each dtype is stored and computed with
// (float16/bfloat16 compute in float, bool is a byte read as != 0), conversions that never hit
// undefined behaviour (saturating float -> int), and wrapping integer arithmetic.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// A set of dtypes, one bit per dtype enumerator.
using dtype_set = std::uint32_t;

constexpr dtype_set bit_of(dtype t) noexcept { return dtype_set{1} << static_cast<unsigned>(t); }
constexpr bool contains(dtype_set s, dtype t) noexcept { return (s & bit_of(t)) != 0; }
template <class... D>
constexpr dtype_set set_of(D... d) noexcept {
    return (dtype_set{0} | ... | bit_of(d));
}
/// The bit of a C++ element type (float, float16, std::int8_t, bool, ...).
template <class T>
inline constexpr dtype_set bit_of_type = bit_of(dtype_of<T>);

namespace types {
inline constexpr dtype_set floats = set_of(dtype::float16, dtype::float32, dtype::float64);
inline constexpr dtype_set bf16 = set_of(dtype::bfloat16);
inline constexpr dtype_set signed_ints = set_of(dtype::int8, dtype::int16, dtype::int32, dtype::int64);
inline constexpr dtype_set unsigned_ints = set_of(dtype::uint8, dtype::uint16, dtype::uint32, dtype::uint64);
inline constexpr dtype_set ints = signed_ints | unsigned_ints;
inline constexpr dtype_set numeric = floats | ints;  ///< without bfloat16 (added by opset 13 for most ops)
inline constexpr dtype_set boolean = set_of(dtype::boolean);
inline constexpr dtype_set all = numeric | bf16 | boolean;
/// Add/Sub/Mul/Div before opset 14: no 8- and 16-bit integers.
inline constexpr dtype_set arithmetic_7 = floats | set_of(dtype::int32, dtype::int64, dtype::uint32, dtype::uint64);
/// bfloat16 joins the float ops at opset 13 (`since` for other ops).
constexpr dtype_set with_bf16(dtype_set s, std::int64_t opset, std::int64_t since = 13) noexcept { return opset >= since ? s | bf16 : s; }
} // namespace types

/// "float32, float64, ..." for messages.
inline std::string describe(dtype_set s) {
    std::string out;
    for (unsigned i = 0; i < 32; ++i) {
        if (!(s & (dtype_set{1} << i))) continue;
        if (!out.empty()) out += ", ";
        out += std::string(to_string(static_cast<dtype>(i)));
    }
    return out;
}

/// Checks input i's dtype is in `allowed` (what the op accepts at the model's opset).
inline status expect_dtype(infer_context& ctx, std::size_t i, dtype_set allowed, std::string_view what = "input") {
    const dtype t = ctx.input_type(i);
    if (contains(allowed, t)) return status::ok;
    return ctx.fail(status::unsupported_op, "{} {} has dtype {}, supported at opset {}: {}", what, i, t, ctx.opset(), describe(allowed));
}

// ---------------------------------------------------------------------------------------------
// Storage and compute types.

/// How elements of C++ type T (as visit_dtype names them) live in memory and are computed with.
template <class T>
struct element {
    using storage = T;
    using compute = T;
    static compute load(storage v) noexcept { return v; }
    static storage store(compute v) noexcept { return v; }
};
template <>
struct element<float16> {
    using storage = float16;
    using compute = float;
    static float load(float16 v) noexcept { return static_cast<float>(v); }
    static float16 store(float v) noexcept { return float16(v); }
};
template <>
struct element<bfloat16> {
    using storage = bfloat16;
    using compute = float;
    static float load(bfloat16 v) noexcept { return static_cast<float>(v); }
    static bfloat16 store(float v) noexcept { return bfloat16(v); }
};
/// bool is one byte; any non-zero byte reads as true (a byte that is not 0 or 1 is no UB here).
template <>
struct element<bool> {
    using storage = std::uint8_t;
    using compute = bool;
    static bool load(std::uint8_t v) noexcept { return v != 0; }
    static std::uint8_t store(bool v) noexcept { return v ? 1 : 0; }
};

template <class T>
using storage_t = typename element<T>::storage;
template <class T>
using compute_t = typename element<T>::compute;

/// Converts a value to the arithmetic type To without undefined behaviour: floating values out
/// of an integer's range saturate, NaN becomes 0 (as on ARM; x86 gives the "indefinite" value).
template <class To, class From>
To convert(From v) noexcept {
    if constexpr (std::is_same_v<To, bool>) {
        return v != From(0);
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        if (std::isnan(v)) return To(0);
        // the limits as From: lowest is exact (0 or -2^k); max + 1 is a power of two, exact too
        constexpr From lo = static_cast<From>(std::numeric_limits<To>::lowest());
        constexpr From hi_plus_one = static_cast<From>(std::numeric_limits<To>::max() / 2 + 1) * From(2);
        if (v <= lo) return std::numeric_limits<To>::lowest();
        if (v >= hi_plus_one) return std::numeric_limits<To>::max();
        return static_cast<To>(v);
    } else {
        return static_cast<To>(v);
    }
}

// ---------------------------------------------------------------------------------------------
// Wrapping integer arithmetic (two's complement, never signed overflow or promotion to int).

template <class T>
using wide_unsigned_t = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

template <class T>
T wrap_add(T a, T b) noexcept {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T>
T wrap_sub(T a, T b) noexcept {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class T>
T wrap_mul(T a, T b) noexcept {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}
template <class T>
T wrap_neg(T a) noexcept {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
}

} // namespace ops
EMBER_NAMESPACE_END
