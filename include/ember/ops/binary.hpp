// SPDX-License-Identifier: Apache-2.0
// Shared machinery of the element-wise binary ops with numpy broadcasting (Add, Sub, Mul, Div):
// shape inference, broadcast strides computed once at compile time, and one reference kernel per
// (dtype, function) pair, chosen at bind time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// Broadcast iteration plan: output dims and, per input, the element stride of each output dim
/// (0 where that input is broadcast). The innermost dimension runs as a plain loop.
struct broadcast_args {
    operand a, b, y;
    std::uint32_t rank = 0;
    std::int64_t dims[max_rank] = {};
    std::int64_t a_strides[max_rank] = {};
    std::int64_t b_strides[max_rank] = {};
    std::int64_t count = 0;
};

/// Strides of `in` (right-aligned against out), with 0 on broadcast dimensions.
inline void broadcast_strides(const shape& in, const shape& out, std::int64_t* strides) noexcept {
    std::int64_t own[max_rank] = {};
    contiguous_strides(in, own);
    const std::size_t lead = out.rank() - in.rank();
    for (std::size_t i = 0; i < out.rank(); ++i)
        strides[i] = i < lead || in[i - lead] == 1 ? 0 : own[i - lead];
}

inline broadcast_args make_broadcast_args(const bind_context& ctx) {
    broadcast_args args;
    args.a = ctx.input(0);
    args.b = ctx.input(1);
    args.y = ctx.output(0);
    const shape& out = ctx.output_shape(0);
    args.rank = static_cast<std::uint32_t>(out.rank());
    for (std::size_t i = 0; i < out.rank(); ++i) args.dims[i] = out[i];
    broadcast_strides(ctx.input_shape(0), out, args.a_strides);
    broadcast_strides(ctx.input_shape(1), out, args.b_strides);
    args.count = out.elements();
    return args;
}

/// The definition of every broadcasting binary op: y[i] = fn(a[ia], b[ib]) with a multi-index
/// counter over the output. y may alias a when a is not broadcast.
template <class T, class Fn>
void broadcast_reference(const broadcast_args& args, const T* a, const T* b, T* y, Fn fn) noexcept {
    if (args.count == 0) return;
    if (args.rank == 0) {
        y[0] = fn(a[0], b[0]);
        return;
    }
    const std::size_t last = args.rank - 1;
    const std::int64_t inner = args.dims[last];
    const std::int64_t sa = args.a_strides[last], sb = args.b_strides[last];
    std::int64_t index[max_rank] = {};
    std::int64_t offset_a = 0, offset_b = 0;
    for (std::int64_t out = 0; out < args.count; out += inner) {
        for (std::int64_t j = 0; j < inner; ++j) y[out + j] = fn(a[offset_a + j * sa], b[offset_b + j * sb]);
        // advance the outer index (dims 0..last-1) like an odometer
        for (std::size_t d = last; d-- > 0;) {
            offset_a += args.a_strides[d];
            offset_b += args.b_strides[d];
            if (++index[d] < args.dims[d]) break;
            offset_a -= args.a_strides[d] * args.dims[d];
            offset_b -= args.b_strides[d] * args.dims[d];
            index[d] = 0;
        }
    }
}

template <class T, class Fn>
void broadcast_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& args = *static_cast<const broadcast_args*>(p);
    broadcast_reference(args, ctx.at<const T>(args.a), ctx.at<const T>(args.b), ctx.at<T>(args.y), Fn{});
}

/// infer() of a broadcasting binary op over the numeric types float32/float64/int32/int64.
inline status infer_broadcast_binary(infer_context& ctx) {
    if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
    if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::int32, dtype::int64}); s != status::ok) return s;
    if (ctx.input_type(1) != ctx.input_type(0))
        return ctx.fail(status::shape_mismatch, "inputs have different dtypes: {} and {}", ctx.input_type(0), ctx.input_type(1));
    shape out;
    if (!broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1), out))
        return ctx.fail(status::shape_mismatch, "shapes {} and {} do not broadcast", ctx.input_shape(0), ctx.input_shape(1));
    ctx.set_output(0, ctx.input_type(0), out);
    return status::ok;
}

/// bind() of a broadcasting binary op whose function object is Fn (templated call operator).
template <class Fn>
status bind_broadcast_binary(bind_context& ctx) {
    kernel_fn fn = nullptr;
    switch (ctx.input_type(0)) {
        case dtype::float32: fn = &broadcast_kernel<float, Fn>; break;
        case dtype::float64: fn = &broadcast_kernel<double, Fn>; break;
        case dtype::int32: fn = &broadcast_kernel<std::int32_t, Fn>; break;
        case dtype::int64: fn = &broadcast_kernel<std::int64_t, Fn>; break;
        default: return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
    }
    ctx.emit(fn, make_broadcast_args(ctx));
    return status::ok;
}

/// Declares a broadcasting binary op struct `name` for ONNX op `onnx` with function object fn.
#define EMBER_DETAIL_BINARY_OP(name, onnx, fn_type)                                                   \
    struct name {                                                                                       \
        static constexpr std::string_view onnx_name = onnx;                                             \
        static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;                   \
        struct attributes {};                                                                           \
        static constexpr auto onnx_attributes = std::make_tuple();                                      \
        using function = fn_type;                                                                       \
        static status infer(const attributes&, infer_context& ctx) { return infer_broadcast_binary(ctx); } \
        static status bind(const attributes&, bind_context& ctx) { return bind_broadcast_binary<fn_type>(ctx); } \
    }

} // namespace ops
EMBER_NAMESPACE_END
