// SPDX-License-Identifier: Apache-2.0
// Where (ONNX opset 9+): y = condition ? x : y, the three inputs broadcast together (numpy
// rules). condition is bool; x and y share any one dtype (bfloat16 from opset 16; strings and
// complex numbers are not supported by ember).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ember/ops/binary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct where {
    static constexpr std::string_view onnx_name = "Where";
    static constexpr op_flags flags = op_flags::elementwise;
    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    struct args {
        operand c, x, y, out;
        std::uint32_t rank = 0;
        std::int64_t dims[max_rank] = {};
        std::int64_t strides[3][max_rank] = {};
        std::int64_t count = 0;
    };

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(3, 3); s != status::ok) return s;
        if (ctx.input_type(0) != dtype::boolean)
            return ctx.fail(status::invalid_model, "input 0 (condition) has dtype {}, expected bool", ctx.input_type(0));
        if (status s = expect_dtype(ctx, 1, types::with_bf16(types::numeric | types::boolean, ctx.opset(), 16)); s != status::ok) return s;
        if (ctx.input_type(2) != ctx.input_type(1))
            return ctx.fail(status::shape_mismatch, "inputs 1 and 2 have different dtypes: {} and {}", ctx.input_type(1), ctx.input_type(2));
        shape cx, out;
        if (!broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1), cx) || !broadcast_shapes(cx, ctx.input_shape(2), out))
            return ctx.fail(status::shape_mismatch, "shapes {}, {} and {} do not broadcast", ctx.input_shape(0), ctx.input_shape(1),
                            ctx.input_shape(2));
        ctx.set_output(0, ctx.input_type(1), out);
        return status::ok;
    }

    /// Copies whole elements of `width` bytes: any dtype with one kernel per element size.
    template <std::size_t Width>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& a = *static_cast<const args*>(p);
        if (a.count == 0) return;
        const std::uint8_t* c = ctx.at<const std::uint8_t>(a.c);
        const std::byte* x = ctx.at<const std::byte>(a.x);
        const std::byte* y = ctx.at<const std::byte>(a.y);
        std::byte* out = ctx.at<std::byte>(a.out);
        std::int64_t index[max_rank] = {};
        std::int64_t off[3] = {0, 0, 0};
        const std::size_t rank = a.rank;
        for (std::int64_t i = 0; i < a.count; ++i) {
            const std::byte* from = c[off[0]] != 0 ? x + off[1] * static_cast<std::int64_t>(Width) : y + off[2] * static_cast<std::int64_t>(Width);
            std::memcpy(out + i * static_cast<std::int64_t>(Width), from, Width);
            for (std::size_t d = rank; d-- > 0;) {  // odometer over the output index
                for (int k = 0; k < 3; ++k) off[k] += a.strides[k][d];
                if (++index[d] < a.dims[d]) break;
                for (int k = 0; k < 3; ++k) off[k] -= a.strides[k][d] * a.dims[d];
                index[d] = 0;
            }
        }
    }

    static status bind(const attributes&, bind_context& ctx) {
        args a;
        a.c = ctx.input(0);
        a.x = ctx.input(1);
        a.y = ctx.input(2);
        a.out = ctx.output(0);
        const shape& out = ctx.output_shape(0);
        a.rank = static_cast<std::uint32_t>(out.rank());
        for (std::size_t i = 0; i < out.rank(); ++i) a.dims[i] = out[i];
        for (std::size_t k = 0; k < 3; ++k) broadcast_strides(ctx.input_shape(k), out, a.strides[k]);
        a.count = out.elements();
        kernel_fn k = nullptr;
        switch (size_of(ctx.input_type(1))) {
            case 1: k = &kernel<1>; break;
            case 2: k = &kernel<2>; break;
            case 4: k = &kernel<4>; break;
            case 8: k = &kernel<8>; break;
            default: return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(1));
        }
        ctx.emit(k, a);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
