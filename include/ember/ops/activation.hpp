// SPDX-License-Identifier: Apache-2.0
// The element-wise activations with attributes (ONNX defaults), float16/float32/float64 unless
// noted; each y = f(x), same shape, computed in float (double for float64):
//   LeakyRelu (6; bfloat16 from 16)  x >= 0 ? x : alpha * x                          alpha 0.01
//   Elu (6)              x >= 0 ? x : alpha * (e^x - 1)                               alpha 1
//   Selu (6)             gamma * (x > 0 ? x : alpha * (e^x - 1))          alpha 1.6733, gamma 1.0507
//   Celu (12, float32)   max(0, x) + min(0, alpha * (e^(x/alpha) - 1))         alpha 1 (not 0)
//   HardSigmoid (6)      max(0, min(1, alpha * x + beta))                     alpha 0.2, beta 0.5
//   HardSwish (14)       x * max(0, min(1, x / 6 + 1/2))
//   ThresholdedRelu (10) x > alpha ? x : 0                                          alpha 1
//   Softplus (1)         log(1 + e^x), without overflow for large x
//   Softsign (1)         x / (1 + |x|)
//   Shrink (9, every numeric type)  x < -lambd ? x + bias : x > lambd ? x - bias : 0
//                                   bias 0, lambd 0.5; integers compute in double, saturate back
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ember/ops/unary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace activation_fn {
inline constexpr dtype_set float_supported = types::floats | types::bf16;

struct leaky_relu {
    float alpha = 0.01f;
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(types::floats, opset, 16); }
    static constexpr dtype_set supported = float_supported;
    kernels::activation_spec fast_float() const noexcept { return {kernels::activation::leaky_relu, alpha}; }
    template <class T>
    T operator()(T x) const noexcept {
        return x >= T(0) ? x : T(alpha) * x;
    }
};
struct elu {
    float alpha = 1.0f;
    static dtype_set types(std::int64_t) noexcept { return types::floats; }
    static constexpr dtype_set supported = types::floats;
    template <class T>
    T operator()(T x) const noexcept {
        return x >= T(0) ? x : T(alpha) * std::expm1(x);
    }
};
struct selu {
    float alpha = 1.67326319217681884765625f;
    float gamma = 1.05070102214813232421875f;
    static dtype_set types(std::int64_t) noexcept { return types::floats; }
    static constexpr dtype_set supported = types::floats;
    template <class T>
    T operator()(T x) const noexcept {
        return x > T(0) ? T(gamma) * x : T(gamma) * (T(alpha) * std::exp(x) - T(alpha));
    }
};
struct celu {
    float alpha = 1.0f;
    static dtype_set types(std::int64_t) noexcept { return set_of(dtype::float32); }
    static constexpr dtype_set supported = set_of(dtype::float32);
    status check(infer_context& ctx) const {
        if (alpha == 0.0f) return ctx.fail(status::invalid_model, "attribute 'alpha' must not be 0");
        return status::ok;
    }
    template <class T>
    T operator()(T x) const noexcept {
        const T a = T(alpha);
        return x > T(0) ? x : a * std::expm1(x / a);
    }
};
struct hard_sigmoid {
    float alpha = 0.2f;
    float beta = 0.5f;
    static dtype_set types(std::int64_t) noexcept { return types::floats; }
    static constexpr dtype_set supported = types::floats;
    kernels::activation_spec fast_float() const noexcept { return {kernels::activation::hard_sigmoid, alpha, beta}; }
    template <class T>
    T operator()(T x) const noexcept {
        const T v = T(alpha) * x + T(beta);
        return v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
    }
};
struct hard_swish {
    static dtype_set types(std::int64_t) noexcept { return types::floats; }
    static constexpr dtype_set supported = types::floats;
    kernels::activation_spec fast_float() const noexcept { return {kernels::activation::hard_swish}; }
    template <class T>
    T operator()(T x) const noexcept {
        const T v = x / T(6) + T(0.5);
        return x * (v < T(0) ? T(0) : (v > T(1) ? T(1) : v));
    }
};
struct thresholded_relu {
    float alpha = 1.0f;
    static dtype_set types(std::int64_t) noexcept { return types::floats; }
    static constexpr dtype_set supported = types::floats;
    template <class T>
    T operator()(T x) const noexcept {
        return x > T(alpha) ? x : T(0);
    }
};
struct softplus {
    static dtype_set types(std::int64_t) noexcept { return types::floats; }
    static constexpr dtype_set supported = types::floats;
    template <class T>
    T operator()(T x) const noexcept {
        return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
};
struct softsign {
    static dtype_set types(std::int64_t) noexcept { return types::floats; }
    static constexpr dtype_set supported = types::floats;
    template <class T>
    T operator()(T x) const noexcept {
        return x / (T(1) + std::fabs(x));
    }
};
struct shrink {
    float bias = 0.0f;
    float lambd = 0.5f;
    static dtype_set types(std::int64_t) noexcept { return types::numeric; }
    static constexpr dtype_set supported = types::numeric;
    template <class T>
    T operator()(T x) const noexcept {
        using C = std::conditional_t<std::is_floating_point_v<T>, T, double>;
        const C v = static_cast<C>(x);
        const C r = v < -C(lambd) ? v + C(bias) : (v > C(lambd) ? v - C(bias) : C(0));
        if constexpr (std::is_integral_v<T>)
            return convert<T>(r);
        else
            return r;
    }
};
} // namespace activation_fn

struct leaky_relu : unary_op<activation_fn::leaky_relu, op_flags::elementwise | op_flags::in_place | op_flags::epilogue> {
    static constexpr std::string_view onnx_name = "LeakyRelu";
    static constexpr auto onnx_attributes = std::make_tuple(attr("alpha", &activation_fn::leaky_relu::alpha));
};
struct elu : unary_op<activation_fn::elu> {
    static constexpr std::string_view onnx_name = "Elu";
    static constexpr auto onnx_attributes = std::make_tuple(attr("alpha", &activation_fn::elu::alpha));
};
struct selu : unary_op<activation_fn::selu> {
    static constexpr std::string_view onnx_name = "Selu";
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("alpha", &activation_fn::selu::alpha), attr("gamma", &activation_fn::selu::gamma));
};
struct celu : unary_op<activation_fn::celu> {
    static constexpr std::string_view onnx_name = "Celu";
    static constexpr auto onnx_attributes = std::make_tuple(attr("alpha", &activation_fn::celu::alpha));
};
struct hard_sigmoid : unary_op<activation_fn::hard_sigmoid> {
    static constexpr std::string_view onnx_name = "HardSigmoid";
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("alpha", &activation_fn::hard_sigmoid::alpha), attr("beta", &activation_fn::hard_sigmoid::beta));
};
struct hard_swish : unary_op<activation_fn::hard_swish> {
    static constexpr std::string_view onnx_name = "HardSwish";
};
struct thresholded_relu : unary_op<activation_fn::thresholded_relu> {
    static constexpr std::string_view onnx_name = "ThresholdedRelu";
    static constexpr auto onnx_attributes = std::make_tuple(attr("alpha", &activation_fn::thresholded_relu::alpha));
};
struct softplus : unary_op<activation_fn::softplus> {
    static constexpr std::string_view onnx_name = "Softplus";
};
struct softsign : unary_op<activation_fn::softsign> {
    static constexpr std::string_view onnx_name = "Softsign";
};
struct shrink : unary_op<activation_fn::shrink> {
    static constexpr std::string_view onnx_name = "Shrink";
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("bias", &activation_fn::shrink::bias), attr("lambd", &activation_fn::shrink::lambd));
};

} // namespace ops
EMBER_NAMESPACE_END
