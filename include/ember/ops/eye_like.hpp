// SPDX-License-Identifier: Apache-2.0
// EyeLike (ONNX opset 9+): a 2-D tensor of input 0's shape with ones on the diagonal shifted by
// k (positive: above the main diagonal) and zeros elsewhere, of dtype `dtype` (an ONNX
// TensorProto.DataType) or input 0's. Only the input's shape is used, never its values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "ember/ops/cast.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct eye_like {
    static constexpr std::string_view onnx_name = "EyeLike";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::optional<std::int64_t> dtype;
        std::int64_t k = 0;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("dtype", &attributes::dtype), attr("k", &attributes::k));

    struct args {
        operand y;
        std::int64_t rows = 0, cols = 0, k = 0;
        std::size_t elem_bytes = 0;
        std::byte one[8] = {};
    };

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        if (in.rank() != 2) return ctx.fail(status::shape_mismatch, "the input must be 2-D, got shape {}", in);
        ember::dtype type = ctx.input_type(0);
        if (a.dtype)
            if (status s = dtype_attribute(ctx, "dtype", *a.dtype, type); s != status::ok) return s;
        ctx.set_output(0, type, in);
        return status::ok;
    }

    // The definition: zeros, then the ones at (i, i + k) that fall inside the matrix.
    static void reference(const args& g, std::byte* y) noexcept {
        std::memset(y, 0, static_cast<std::size_t>(g.rows * g.cols) * g.elem_bytes);
        for (std::int64_t i = 0; i < g.rows; ++i) {
            const std::int64_t j = i + g.k;
            if (j >= 0 && j < g.cols) std::memcpy(y + static_cast<std::size_t>(i * g.cols + j) * g.elem_bytes, g.one, g.elem_bytes);
        }
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<std::byte>(g.y));
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        g.y = ctx.output(0);
        g.rows = ctx.output_shape(0)[0];
        g.cols = ctx.output_shape(0)[1];
        // |k| beyond the matrix puts every one outside it; clamping keeps i + k from overflowing
        g.k = a.k > g.cols ? g.cols : (a.k < -g.rows ? -g.rows : a.k);
        g.elem_bytes = size_of(ctx.output_type(0));
        if (g.elem_bytes > sizeof g.one) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.output_type(0));
        visit_dtype(ctx.output_type(0), [&](auto t) {
            const auto one = convert_element<decltype(t)>(std::int32_t{1});
            std::memcpy(g.one, &one, sizeof one);
        });
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
