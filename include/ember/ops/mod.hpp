// SPDX-License-Identifier: Apache-2.0
// Mod (ONNX opset 10+, every numeric type; bfloat16 from 13) with numpy broadcasting:
//   fmod = 0 (default, integers only): the remainder has the divisor's sign, as Python's %.
//   fmod = 1: the remainder has the dividend's sign, as C's fmod (floats must use fmod = 1).
// An integer remainder by 0 is 0 here (instead of undefined behaviour).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ember/ops/binary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct mod_fn {
    std::int64_t fmod = 0;
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(types::numeric, opset); }
    static constexpr dtype_set supported = types::numeric | types::bf16;

    status check(infer_context& ctx) const {
        if (fmod != 0 && fmod != 1) return ctx.fail(status::invalid_model, "attribute 'fmod' must be 0 or 1, got {}", fmod);
        if (fmod == 0 && is_floating(ctx.input_type(0)))
            return ctx.fail(status::invalid_model, "fmod=0 is not defined for floating-point inputs ({}); set fmod=1", ctx.input_type(0));
        return status::ok;
    }

    template <class T>
    T operator()(T a, T b) const noexcept {
        if constexpr (std::is_floating_point_v<T>) {
            return std::fmod(a, b);
        } else {
            if (b == 0) return T(0);
            if constexpr (std::is_signed_v<T>) {
                if (b == T(-1)) return T(0);  // INT_MIN % -1 would trap
                const T r = static_cast<T>(a % b);
                if (fmod == 0 && r != 0 && ((r < 0) != (b < 0))) return static_cast<T>(r + b);
                return r;
            } else {
                return static_cast<T>(a % b);
            }
        }
    }
};

struct mod : binary_op<mod_fn> {
    static constexpr std::string_view onnx_name = "Mod";
    static constexpr auto onnx_attributes = std::make_tuple(attr("fmod", &mod_fn::fmod));
};

} // namespace ops
EMBER_NAMESPACE_END
