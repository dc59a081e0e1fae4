// SPDX-License-Identifier: Apache-2.0
// Shared machinery of the ops that only move elements (Slice, Split, Expand, Tile, ...): one
// strided-copy kernel that writes the output in order while reading the input through a view
// (per output dimension an input stride, which may be 0 to repeat or negative to walk back),
// and the helpers that read integer lists (axes, starts, repeats) from compile-time inputs.
// The kernels move whole elements by size, so every dtype of 1, 2, 4 or 8 bytes works.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// The output is dims[0] x ... x dims[rank-1] in row-major order; output element (i0, i1, ...)
/// is input element base + sum(ik * strides[k]). Up to twice max_rank dimensions, because Tile
/// views each dimension as (repeat, size).
struct strided_copy_args {
    static constexpr std::size_t capacity = 2 * max_rank;
    operand x, y;
    std::uint32_t rank = 0;
    std::int64_t dims[capacity] = {};
    std::int64_t strides[capacity] = {};
    std::int64_t base = 0;
    std::int64_t count = 0;

    /// Adds an output dimension (outermost first). Size-1 dimensions are dropped and a dimension
    /// that continues the previous one contiguously is merged into it, which keeps rows long.
    void push(std::int64_t size, std::int64_t stride) noexcept {
        if (size == 1) return;
        if (rank > 0 && strides[rank - 1] == size * stride && size != 0 && dims[rank - 1] != 0) {
            dims[rank - 1] *= size;
            strides[rank - 1] = stride;
            return;
        }
        if (rank < capacity) {
            dims[rank] = size;
            strides[rank] = stride;
            ++rank;
        }
    }
};

// The definition: rows of the innermost dimension, each found by an odometer over the outer
// dimensions; rows are split over the executor. A unit stride row is one memcpy.
template <std::size_t Bytes>
void strided_copy(const strided_copy_args& g, const std::byte* x, std::byte* y, const executor* ex) noexcept {
    if (g.count == 0) return;
    if (g.rank == 0) {
        std::memcpy(y, x + static_cast<std::size_t>(g.base) * Bytes, Bytes);
        return;
    }
    const std::size_t last = g.rank - 1;
    const std::int64_t inner = g.dims[last], step = g.strides[last];
    parallel_for(ex, static_cast<std::size_t>(g.count / inner), [&](std::size_t begin, std::size_t end) {
        for (auto row = static_cast<std::int64_t>(begin); row < static_cast<std::int64_t>(end); ++row) {
            std::int64_t offset = g.base, rest = row;
            for (std::size_t d = last; d-- > 0;) {
                offset += (rest % g.dims[d]) * g.strides[d];
                rest /= g.dims[d];
            }
            std::byte* out = y + static_cast<std::size_t>(row * inner) * Bytes;
            if (step == 1) {
                std::memcpy(out, x + static_cast<std::size_t>(offset) * Bytes, static_cast<std::size_t>(inner) * Bytes);
                continue;
            }
            for (std::int64_t j = 0; j < inner; ++j)
                std::memcpy(out + static_cast<std::size_t>(j) * Bytes, x + static_cast<std::size_t>(offset + j * step) * Bytes, Bytes);
        }
    });
}

template <std::size_t Bytes>
void strided_copy_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& g = *static_cast<const strided_copy_args*>(p);
    strided_copy<Bytes>(g, ctx.at<const std::byte>(g.x), ctx.at<std::byte>(g.y), ctx.exec);
}

/// The strided-copy kernel for elements of `bytes` bytes, or null for another size.
inline kernel_fn strided_copy_for(std::size_t bytes) noexcept {
    switch (bytes) {
        case 1: return &strided_copy_kernel<1>;
        case 2: return &strided_copy_kernel<2>;
        case 4: return &strided_copy_kernel<4>;
        case 8: return &strided_copy_kernel<8>;
        default: return nullptr;
    }
}

/// Emits a strided copy of elements of dtype `type`; fails for an element size it cannot move.
inline status emit_strided_copy(bind_context& ctx, dtype type, strided_copy_args g) {
    kernel_fn fn = strided_copy_for(size_of(type));
    if (!fn) return ctx.fail(status::unsupported_op, "dtype {} is not supported", type);
    g.count = 1;
    for (std::size_t d = 0; d < g.rank; ++d) g.count *= g.dims[d];
    ctx.emit(fn, g);
    return status::ok;
}

/// Output filled with one value of elem_bytes bytes (ConstantOfShape, masks).
struct fill_args {
    operand y;
    std::size_t n = 0;
    std::byte value[8] = {};
};

template <std::size_t Bytes>
void fill_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& a = *static_cast<const fill_args*>(p);
    std::byte* y = ctx.at<std::byte>(a.y);
    for (std::size_t i = 0; i < a.n; ++i) std::memcpy(y + i * Bytes, a.value, Bytes);
}

/// Emits a fill of output `out` (dtype `type`, n elements) with the element at `value`.
inline status emit_fill(bind_context& ctx, std::size_t out, dtype type, std::size_t n, const std::byte* value) {
    fill_args a;
    a.y = ctx.output(out);
    a.n = n;
    const std::size_t bytes = size_of(type);
    kernel_fn fn = nullptr;
    switch (bytes) {
        case 1: fn = &fill_kernel<1>; break;
        case 2: fn = &fill_kernel<2>; break;
        case 4: fn = &fill_kernel<4>; break;
        case 8: fn = &fill_kernel<8>; break;
        default: return ctx.fail(status::unsupported_op, "dtype {} is not supported", type);
    }
    std::memcpy(a.value, value, bytes);
    ctx.emit(fn, a);
    return status::ok;
}

/// Reads compile-time input i (an int32 or int64 tensor of rank <= 1) as int64 values; `what`
/// names it in messages ("axes", "repeats"). Fails with the standard "must be known at compile
/// time" error when the value is not known.
inline status constant_ints(infer_context& ctx, std::size_t i, std::string_view what, std::vector<std::int64_t>& out) {
    const tensor* t = ctx.require_constant(i, what);
    if (!t) return status::unsupported_op;
    if (t->rank() > 1) return ctx.fail(status::invalid_model, "input {} ({}) must be 1-D, got shape {}", i, what, t->dims());
    if (!infer_context::ints_of(*t, out))
        return ctx.fail(status::invalid_model, "input {} ({}) must be int64 or int32, got {}", i, what, t->type());
    return status::ok;
}

/// Normalises a list of possibly negative axes against `rank`: each in [-rank, rank), no repeats.
inline status normalize_axes(infer_context& ctx, const std::vector<std::int64_t>& axes, std::size_t rank, std::vector<std::size_t>& out,
                             std::string_view what = "axes") {
    out.clear();
    std::vector<bool> seen(rank, false);
    for (std::int64_t axis : axes) {
        std::size_t k = 0;
        if (!normalize_axis(axis, rank, k))
            return ctx.fail(status::invalid_model, "{} {}: axis {} is out of range for rank {}", what, axes, axis, rank);
        if (seen[k]) return ctx.fail(status::invalid_model, "{} {} names axis {} twice", what, axes, k);
        seen[k] = true;
        out.push_back(k);
    }
    return status::ok;
}

} // namespace ops
EMBER_NAMESPACE_END
