// SPDX-License-Identifier: Apache-2.0
// Pow: y = x ^ exponent with numpy broadcasting; the output has x's dtype. Opset 7: x and the
// exponent share one float dtype (before it, the legacy broadcast/axis attributes). Opset 12+:
// x is float16/float32/float64/int32/int64 (bfloat16 from 13) and the exponent any numeric type
// (bfloat16 from 15). Floats compute in double when the dtypes differ; integer ^ integer is
// exact with wrapping (a negative exponent gives 1 for 1, +-1 for -1 and 0 otherwise); integer ^
// float computes in double and saturates back.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ember/ops/binary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct pow_fn {
    static dtype_set types(std::int64_t opset) noexcept {
        if (opset < 12) return types::floats;
        return types::with_bf16(types::floats | set_of(dtype::int32, dtype::int64), opset);
    }
    static constexpr dtype_set supported = types::floats | types::bf16 | set_of(dtype::int32, dtype::int64);
    static dtype_set second_types(std::int64_t opset) noexcept {
        if (opset < 12) return types::floats;
        return types::with_bf16(types::numeric, opset, 15);
    }
    static constexpr dtype_set second_supported = types::numeric | types::bf16;
    static constexpr bool fast_square = true;  // x ^ 2 (LayerNorm's variance) runs as x * x

    status check(infer_context& ctx) const {
        if (ctx.opset() < 12 && ctx.input_type(1) != ctx.input_type(0))
            return ctx.fail(status::unsupported_op, "exponent has dtype {}, x has {}: mixed dtypes need opset 12 or later, the model has opset {}",
                            ctx.input_type(1), ctx.input_type(0), ctx.opset());
        return status::ok;
    }

    template <class A, class B>
    A operator()(A x, B e) const noexcept {
        if constexpr (std::is_floating_point_v<A>) {
            if constexpr (std::is_same_v<A, B>)
                return std::pow(x, e);
            else
                return static_cast<A>(std::pow(static_cast<double>(x), static_cast<double>(e)));
        } else if constexpr (std::is_floating_point_v<B>) {
            return convert<A>(std::pow(static_cast<double>(x), static_cast<double>(e)));
        } else {
            if constexpr (std::is_signed_v<B>) {
                if (e < 0) {
                    if (x == 1) return A(1);
                    if (x == -1) return (e % 2 == 0) ? A(1) : A(-1);
                    return A(0);
                }
            }
            A result = 1, base = x;
            for (auto n = static_cast<std::make_unsigned_t<B>>(e); n != 0; n >>= 1) {
                if (n & 1u) result = wrap_mul(result, base);
                base = wrap_mul(base, base);
            }
            return result;
        }
    }
};

struct pow : binary_op<pow_fn, true> {
    static constexpr std::string_view onnx_name = "Pow";
    static constexpr auto onnx_attributes = legacy_broadcast_attributes();
};

} // namespace ops
EMBER_NAMESPACE_END
