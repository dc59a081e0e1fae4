// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the floating-point normalizations and global pools (LpNormalization, LRN,
// MeanVarianceNormalization, InstanceNormalization, LayerNormalization, GlobalMaxPool/LpPool):
// the [N, C, plane] view of an input, infer() for an output shaped like the input, and the
// emit of Op::kernel<T> for input 0's floating dtype.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {
namespace norm_detail {

/// x seen as [N, C, plane]: batch = x[0], channels = x[1], plane = x[2] * x[3] * ... (1 for
/// rank 2). x has rank >= 2.
inline void split_nc_plane(const shape& x, std::int64_t& batch, std::int64_t& channels, std::int64_t& plane) noexcept {
    batch = x[0];
    channels = x[1];
    plane = 1;
    for (std::size_t i = 2; i < x.rank(); ++i) plane *= x[i];
}

/// infer() of an op whose output 0 has input 0's dtype and shape, once Op::plan accepts the node.
template <class Op>
status infer_like_input(const typename Op::attributes& a, infer_context& ctx) {
    typename Op::args g;
    if (status s = Op::plan(a, ctx, g); s != status::ok) return s;
    ctx.set_output(0, ctx.input_type(0), ctx.input_shape(0));
    return status::ok;
}

/// Emits Op::kernel<T> with args g, T the type of input 0 (float32, float64 or float16).
template <class Op, class Args>
void emit_floating(bind_context& ctx, const Args& g) {
    kernel_fn fn = nullptr;
    reduce_detail::visit_floating(ctx.input_type(0), [&](auto tag) { fn = &Op::template kernel<decltype(tag)>; });
    ctx.emit(fn, g);
}

} // namespace norm_detail
} // namespace ops
EMBER_NAMESPACE_END
