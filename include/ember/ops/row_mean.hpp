// SPDX-License-Identifier: Apache-2.0
// The fast step shared by GlobalAveragePool and ReduceMean over trailing axes (LayerNorm's
// mean): the mean of each of `rows` contiguous rows of `size` floats through the kernel table,
// rows split over the executor in `pieces` parts (each row is summed the same way whatever the
// split).
#pragma once

#include <cstdint>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct row_mean_args {
    operand x, y;
    std::int64_t rows = 0, size = 0, pieces = 1;
    decltype(simd::kernel_table::row_mean_f32) mean = nullptr;
};

inline void row_mean_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& f = *static_cast<const row_mean_args*>(p);
    const float* x = ctx.at<const float>(f.x);
    float* y = ctx.at<float>(f.y);
    for_each_piece(ctx.exec, f.rows, f.pieces, [&](std::int64_t begin, std::int64_t end) noexcept {
        f.mean(x + begin * f.size, end - begin, f.size, y + begin);
    });
}

/// Emits the fast row mean of input 0 into output 0 (ctx.kernels() must be set; size > 0).
inline void emit_row_mean(bind_context& ctx, std::int64_t rows, std::int64_t size) {
    row_mean_args f;
    f.x = ctx.input(0);
    f.y = ctx.output(0);
    f.rows = rows;
    f.size = size;
    f.pieces = row_pieces(rows, size, ctx.kernels()->slots);
    f.mean = ctx.kernels()->table->row_mean_f32;
    ctx.emit(&row_mean_kernel, f);
}

} // namespace ops
EMBER_NAMESPACE_END
