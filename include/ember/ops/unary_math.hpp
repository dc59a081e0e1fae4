// SPDX-License-Identifier: Apache-2.0
// The element-wise math functions of ONNX (opset 6+ unless noted), each y = f(x), same shape:
//   Abs         all numeric types (integers: |INT_MIN| wraps to INT_MIN)
//   Neg         floats and signed integers (wrapping)
//   Floor, Ceil, Sqrt, Exp, Log, Reciprocal   floats
//   Round       (opset 11) floats, half to even
//   Erf         (opset 9) all numeric types (integers: erf in double, saturated back)
//   Sign        (opset 9) all numeric types: -1, 0 or 1; NaN stays NaN
// "floats" is float16, float32, float64, and bfloat16 from opset 13 (Round: no bfloat16).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace math_fn {

inline constexpr dtype_set float_supported = types::floats | types::bf16;
inline dtype_set float_types(std::int64_t opset) noexcept { return types::with_bf16(types::floats, opset); }

struct abs {
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(types::numeric, opset); }
    static constexpr dtype_set supported = types::numeric | types::bf16;
    template <class T>
    T operator()(T x) const noexcept {
        if constexpr (std::is_unsigned_v<T>)
            return x;
        else if constexpr (std::is_integral_v<T>)
            return x < 0 ? wrap_neg(x) : x;
        else
            return std::fabs(x);
    }
};
struct neg {
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(types::floats | types::signed_ints, opset); }
    static constexpr dtype_set supported = types::floats | types::bf16 | types::signed_ints;
    template <class T>
    T operator()(T x) const noexcept {
        if constexpr (std::is_integral_v<T>)
            return wrap_neg(x);
        else
            return -x;
    }
};

#define EMBER_DETAIL_FLOAT_FN(name, expr)                                                              \
    struct name {                                                                                      \
        static dtype_set types(std::int64_t opset) noexcept { return float_types(opset); }             \
        static constexpr dtype_set supported = float_supported;                                        \
        template <class T>                                                                             \
        T operator()(T x) const noexcept {                                                             \
            return expr;                                                                               \
        }                                                                                              \
    };
EMBER_DETAIL_FLOAT_FN(floor, std::floor(x))
EMBER_DETAIL_FLOAT_FN(ceil, std::ceil(x))
EMBER_DETAIL_FLOAT_FN(sqrt, std::sqrt(x))
EMBER_DETAIL_FLOAT_FN(exp, std::exp(x))
EMBER_DETAIL_FLOAT_FN(log, std::log(x))
EMBER_DETAIL_FLOAT_FN(reciprocal, T(1) / x)
#undef EMBER_DETAIL_FLOAT_FN

struct round {
    static dtype_set types(std::int64_t) noexcept { return types::floats; }
    static constexpr dtype_set supported = types::floats;
    template <class T>
    T operator()(T x) const noexcept {
        // half to even, independent of the rounding mode: round, then fix the exact halves
        const T r = std::round(x);
        if (std::fabs(x - std::trunc(x)) == T(0.5)) return T(2) * std::round(x / T(2));
        return r;
    }
};

struct erf {
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(types::numeric, opset); }
    static constexpr dtype_set supported = types::numeric | types::bf16;
    template <class T>
    T operator()(T x) const noexcept {
        if constexpr (std::is_integral_v<T>)
            return convert<T>(std::erf(static_cast<double>(x)));
        else
            return std::erf(x);
    }
};

struct sign {
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(types::numeric, opset); }
    static constexpr dtype_set supported = types::numeric | types::bf16;
    template <class T>
    T operator()(T x) const noexcept {
        if constexpr (std::is_unsigned_v<T>)
            return x > 0 ? T(1) : T(0);
        else if constexpr (std::is_integral_v<T>)
            return x > 0 ? T(1) : (x < 0 ? T(-1) : T(0));
        else
            return x > T(0) ? T(1) : (x < T(0) ? T(-1) : (x == T(0) ? T(0) : x));  // NaN -> NaN
    }
};

} // namespace math_fn

struct abs : unary_op<math_fn::abs> {
    static constexpr std::string_view onnx_name = "Abs";
};
struct neg : unary_op<math_fn::neg> {
    static constexpr std::string_view onnx_name = "Neg";
};
struct floor : unary_op<math_fn::floor> {
    static constexpr std::string_view onnx_name = "Floor";
};
struct ceil : unary_op<math_fn::ceil> {
    static constexpr std::string_view onnx_name = "Ceil";
};
struct round : unary_op<math_fn::round> {
    static constexpr std::string_view onnx_name = "Round";
};
struct sqrt : unary_op<math_fn::sqrt> {
    static constexpr std::string_view onnx_name = "Sqrt";
};
struct exp : unary_op<math_fn::exp> {
    static constexpr std::string_view onnx_name = "Exp";
};
struct log : unary_op<math_fn::log> {
    static constexpr std::string_view onnx_name = "Log";
};
struct reciprocal : unary_op<math_fn::reciprocal> {
    static constexpr std::string_view onnx_name = "Reciprocal";
};
struct erf : unary_op<math_fn::erf> {
    static constexpr std::string_view onnx_name = "Erf";
};
struct sign : unary_op<math_fn::sign> {
    static constexpr std::string_view onnx_name = "Sign";
};

} // namespace ops
EMBER_NAMESPACE_END
