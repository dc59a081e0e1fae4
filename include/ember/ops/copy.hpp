// SPDX-License-Identifier: Apache-2.0
// The copy kernel shared by the ops that only move bytes (Identity, Reshape, Flatten, ...) and by
// compile() for graph outputs that are inputs or constants. When the planner made the op in
// place, source and destination are the same bytes and the kernel does nothing.
#pragma once

#include <cstddef>
#include <cstring>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct copy_args {
    operand src, dst;
    std::size_t bytes = 0;
};

inline void copy_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& a = *static_cast<const copy_args*>(p);
    const std::byte* src = ctx.at<const std::byte>(a.src);
    std::byte* dst = ctx.at<std::byte>(a.dst);
    if (src != dst && a.bytes != 0) std::memmove(dst, src, a.bytes);
}

/// Emits a copy of input 0 into output 0 (whose byte sizes infer() made equal).
inline status bind_copy(bind_context& ctx) {
    ctx.emit(&copy_kernel, copy_args{ctx.input(0), ctx.output(0), ctx.input_shape(0).elements() * size_of(ctx.input_type(0))});
    return status::ok;
}

} // namespace ops
EMBER_NAMESPACE_END
