// SPDX-License-Identifier: Apache-2.0
// NonZero (ONNX opset 9, 13), any dtype: the int64 coordinates of the non-zero elements, one
// column per element in row-major order, as a [rank, count] tensor (a scalar counts as rank 1,
// as numpy does). The output's shape depends on the values, so the input must be known at
// compile time; the node is then evaluated by compile() and costs nothing at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace indexing {

/// Whether element i of t is non-zero (-0.0 is zero, NaN is not); t's dtype must be known.
inline void nonzero_flags(const tensor& t, std::vector<bool>& out) {
    out.assign(t.size(), false);
    visit_dtype(t.type(), [&](auto tag) {
        using T = decltype(tag);
        for (std::size_t i = 0; i < t.size(); ++i) {
            T v;
            std::memcpy(&v, t.bytes() + i * sizeof(T), sizeof(T));
            if constexpr (is_half_float_v<T>) out[i] = static_cast<float>(v) != 0.0f;
            else if constexpr (std::is_floating_point_v<T>) out[i] = v != T(0);
            else out[i] = v != T{};
        }
    });
}

} // namespace indexing

struct non_zero {
    static constexpr std::string_view onnx_name = "NonZero";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    /// The [rank, count] coordinates of t's non-zero elements.
    static result<tensor> evaluate(const tensor& t) {
        std::vector<bool> on;
        indexing::nonzero_flags(t, on);
        const shape& dims = t.dims();
        const std::size_t rank = dims.rank() == 0 ? 1 : dims.rank();
        std::int64_t count = 0;
        for (bool b : on) count += b ? 1 : 0;
        result<tensor> out = tensor::create(dtype::int64, shape{static_cast<std::int64_t>(rank), count});
        if (!out) return out;
        std::int64_t* y = out->data<std::int64_t>();
        std::int64_t column = 0;
        for (std::size_t i = 0; i < on.size(); ++i) {
            if (!on[i]) continue;
            auto rest = static_cast<std::int64_t>(i);
            for (std::size_t d = dims.rank(); d-- > 0;) {
                y[static_cast<std::int64_t>(d) * count + column] = rest % dims[d];
                rest /= dims[d];
            }
            if (dims.rank() == 0) y[column] = 0;
            ++column;
        }
        return out;
    }

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (size_of(ctx.input_type(0)) == 0) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        const tensor* t = ctx.require_constant(0, "the output's shape depends on its values");
        if (!t) return status::unsupported_op;
        result<tensor> out = evaluate(*t);
        if (!out) return ctx.fail(out.error().code, "{}", out.error().message);
        ctx.set_output_constant(0, std::move(*out));
        return status::ok;
    }

    // infer() makes the output a compile-time constant, so compile() never binds this op.
    static status bind(const attributes&, bind_context& ctx) {
        return ctx.fail(status::invalid_model, "NonZero has no step: its value is known at compile time");
    }
};

} // namespace ops
EMBER_NAMESPACE_END
