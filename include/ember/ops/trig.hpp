// SPDX-License-Identifier: Apache-2.0
// The trigonometric and hyperbolic functions of ONNX, y = f(x), float16/float32/float64:
// Sin, Cos, Tan, Asin, Acos, Atan (opset 7), Sinh, Cosh, Asinh, Acosh, Atanh (opset 9). Outside
// a function's domain (asin(2), acosh(0.5), atanh(2)) the result is NaN, as in C and numpy.
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace trig_fn {
#define EMBER_DETAIL_TRIG_FN(name)                                                               \
    struct name {                                                                                \
        static dtype_set types(std::int64_t) noexcept { return types::floats; }                  \
        static constexpr dtype_set supported = types::floats;                                    \
        template <class T>                                                                       \
        T operator()(T x) const noexcept {                                                       \
            return std::name(x);                                                                 \
        }                                                                                        \
    };
EMBER_DETAIL_TRIG_FN(sin)
EMBER_DETAIL_TRIG_FN(cos)
EMBER_DETAIL_TRIG_FN(tan)
EMBER_DETAIL_TRIG_FN(asin)
EMBER_DETAIL_TRIG_FN(acos)
EMBER_DETAIL_TRIG_FN(atan)
EMBER_DETAIL_TRIG_FN(sinh)
EMBER_DETAIL_TRIG_FN(cosh)
EMBER_DETAIL_TRIG_FN(asinh)
EMBER_DETAIL_TRIG_FN(acosh)
EMBER_DETAIL_TRIG_FN(atanh)
#undef EMBER_DETAIL_TRIG_FN
} // namespace trig_fn

#define EMBER_DETAIL_TRIG_OP(name, onnx)                        \
    struct name : unary_op<trig_fn::name> {                     \
        static constexpr std::string_view onnx_name = onnx;     \
    };
EMBER_DETAIL_TRIG_OP(sin, "Sin")
EMBER_DETAIL_TRIG_OP(cos, "Cos")
EMBER_DETAIL_TRIG_OP(tan, "Tan")
EMBER_DETAIL_TRIG_OP(asin, "Asin")
EMBER_DETAIL_TRIG_OP(acos, "Acos")
EMBER_DETAIL_TRIG_OP(atan, "Atan")
EMBER_DETAIL_TRIG_OP(sinh, "Sinh")
EMBER_DETAIL_TRIG_OP(cosh, "Cosh")
EMBER_DETAIL_TRIG_OP(asinh, "Asinh")
EMBER_DETAIL_TRIG_OP(acosh, "Acosh")
EMBER_DETAIL_TRIG_OP(atanh, "Atanh")
#undef EMBER_DETAIL_TRIG_OP

} // namespace ops
EMBER_NAMESPACE_END
