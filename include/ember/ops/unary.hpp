// SPDX-License-Identifier: Apache-2.0
// Shared machinery of the element-wise unary ops: shape inference (same shape, float32) and one
// kernel template that applies Op::reference over the whole tensor, in place when planned so.
#pragma once

#include <cstddef>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

template <class Op>
struct unary_args {
    operand x, y;
    std::size_t n = 0;
    typename Op::attributes attrs;
};

template <class Op>
void unary_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& a = *static_cast<const unary_args<Op>*>(p);
    Op::reference(a.attrs, ctx.at<const float>(a.x), ctx.at<float>(a.y), a.n);
}

/// infer() of a float32 element-wise op: one input, output of the same shape.
inline status infer_unary_f32(infer_context& ctx) {
    if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
    if (status s = ctx.expect_type(0, {dtype::float32}); s != status::ok) return s;
    ctx.set_output(0, dtype::float32, ctx.input_shape(0));
    return status::ok;
}

template <class Op>
status bind_unary_f32(const typename Op::attributes& attrs, bind_context& ctx) {
    ctx.emit(&unary_kernel<Op>, unary_args<Op>{ctx.input(0), ctx.output(0), static_cast<std::size_t>(ctx.input_shape(0).elements()), attrs});
    return status::ok;
}

} // namespace ops
EMBER_NAMESPACE_END
