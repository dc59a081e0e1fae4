// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the indexing ops (Gather*, Scatter*, OneHot, Trilu, CumSum, Compress,
// ReverseSequence, DepthToSpace, Unique, ...): reading int32/int64 index inputs, wrapping
// negative indices, the element-size kernel switch, and the Scatter reductions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {
namespace indexing {

/// Index element `i` of an int32 (is64 false) or int64 index buffer.
inline std::int64_t load_index(const std::byte* base, bool is64, std::size_t i) noexcept {
    if (is64) {
        std::int64_t v;
        std::memcpy(&v, base + i * 8, 8);
        return v;
    }
    std::int32_t v;
    std::memcpy(&v, base + i * 4, 4);
    return v;
}

/// Maps a possibly negative index into [0, dim); false when it is outside [-dim, dim).
inline bool wrap_index(std::int64_t& index, std::int64_t dim) noexcept {
    if (index < 0) index += dim;
    return index >= 0 && index < dim;
}

/// Reports an index out of range found at run time: run() then returns invalid_argument.
inline void fail_out_of_range(const run_context& ctx) noexcept { ctx.fail(static_cast<std::uint8_t>(status::invalid_argument)); }

/// Checks input i is an int32 or int64 index tensor.
inline status expect_indices(infer_context& ctx, std::size_t i, std::string_view what) {
    const dtype t = ctx.input_type(i);
    if (t == dtype::int32 || t == dtype::int64) return status::ok;
    return ctx.fail(status::invalid_model, "input {} ({}) must be int32 or int64, got {}", i, what, t);
}

/// Checks data (input 0) has rank >= 1 and `axis` (negative counts from the end) is one of its
/// dimensions, giving it normalized; what Gather, GatherElements and ScatterElements check first.
inline status expect_data_axis(infer_context& ctx, std::int64_t axis_attr, std::size_t& axis) {
    const shape& data = ctx.input_shape(0);
    if (data.rank() == 0) return ctx.fail(status::shape_mismatch, "data must have rank >= 1, got a scalar");
    if (!normalize_axis(axis_attr, data.rank(), axis))
        return ctx.fail(status::invalid_model, "axis {} is out of range for data of shape {} (rank {})", axis_attr, data, data.rank());
    return status::ok;
}

/// GatherElements / ScatterElements: indices is at most data's length in every dimension but
/// the axis, and data's axis is not empty when there are indices.
inline status expect_indices_fit(infer_context& ctx, const shape& data, const shape& ind, std::size_t axis) {
    for (std::size_t d = 0; d < data.rank(); ++d)
        if (d != axis && ind[d] > data[d])
            return ctx.fail(status::shape_mismatch, "indices {} is longer than data {} in dimension {} (axis is {})", ind, data, d, axis);
    if (data[axis] == 0 && ind.elements() != 0)
        return ctx.fail(status::shape_mismatch, "data {} has length 0 on axis {}, so no index is valid", data, axis);
    return status::ok;
}

/// The element count of dims [begin, end) of s.
inline std::int64_t product(const shape& s, std::size_t begin, std::size_t end) noexcept {
    std::int64_t n = 1;
    for (std::size_t i = begin; i < end && i < s.rank(); ++i) n *= s[i];
    return n;
}

/// The kernel instantiated for an element size of 1, 2, 4 or 8 bytes, or null.
template <template <std::size_t> class K>
kernel_fn kernel_for_size(std::size_t bytes) noexcept {
    switch (bytes) {
        case 1: return &K<1>::run;
        case 2: return &K<2>::run;
        case 4: return &K<4>::run;
        case 8: return &K<8>::run;
        default: return nullptr;
    }
}

/// float16 and bfloat16, which compute through float.
template <class T>
inline constexpr bool is_half_float_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

/// A compile-time scalar (or one-element) tensor of any numeric dtype, as int64 (floats are
/// truncated toward zero). False for an empty tensor, a non-finite or out-of-range value.
inline bool scalar_as_int(const tensor& t, std::int64_t& out) {
    if (t.size() != 1) return false;
    bool ok = true;
    const bool known = visit_dtype(t.type(), [&](auto tag) {
        using T = decltype(tag);
        T v;
        std::memcpy(&v, t.bytes(), sizeof(T));
        if constexpr (std::is_integral_v<T>) {
            out = static_cast<std::int64_t>(v);
        } else {
            double dd = 0;
            if constexpr (is_half_float_v<T>) dd = static_cast<double>(static_cast<float>(v));
            else dd = static_cast<double>(v);
            if (!(dd > -9.2e18 && dd < 9.2e18)) ok = false;
            else out = static_cast<std::int64_t>(dd);
        }
    });
    return known && ok;
}

/// ScatterElements / ScatterND `reduction` (opset 16; min and max opset 18).
enum class reduction { none, add, mul, min, max };

/// Parses the attribute for the node's opset; fails naming the value and what is allowed.
inline status parse_reduction(infer_context& ctx, std::string_view text, reduction& out) {
    if (text == "none") out = reduction::none;
    else if (text == "add") out = reduction::add;
    else if (text == "mul") out = reduction::mul;
    else if (text == "min") out = reduction::min;
    else if (text == "max") out = reduction::max;
    else return ctx.fail(status::invalid_model, "reduction '{}' is not one of none, add, mul, min, max", text);
    if (out != reduction::none && ctx.opset() < 16)
        return ctx.fail(status::invalid_model, "reduction '{}' needs opset 16 or later, the model has opset {}", text, ctx.opset());
    if ((out == reduction::min || out == reduction::max) && ctx.opset() < 18)
        return ctx.fail(status::invalid_model, "reduction '{}' needs opset 18 or later, the model has opset {}", text, ctx.opset());
    return status::ok;
}

/// ScatterElements / ScatterND: three inputs, int32/int64 indices, a valid `reduction` for the
/// opset, and updates of data's dtype.
inline status expect_scatter_inputs(infer_context& ctx, std::string_view reduction_text) {
    if (status s = ctx.expect_inputs(3, 3); s != status::ok) return s;
    if (status s = expect_indices(ctx, 1, "indices"); s != status::ok) return s;
    reduction r = reduction::none;
    if (status s = parse_reduction(ctx, reduction_text, r); s != status::ok) return s;
    if (ctx.input_type(2) != ctx.input_type(0))
        return ctx.fail(status::invalid_model, "updates has dtype {}, data has {}", ctx.input_type(2), ctx.input_type(0));
    return status::ok;
}

/// a + b in T: half floats through float, bool as logical or, integers with wrap-around (no
/// signed overflow).
template <class T>
T add(T a, T b) noexcept {
    if constexpr (is_half_float_v<T>) return T(static_cast<float>(a) + static_cast<float>(b));
    else if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (std::is_integral_v<T>)
        return static_cast<T>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
    else return a + b;
}

/// a * b in T, as add() does it (bool: logical and).
template <class T>
T mul(T a, T b) noexcept {
    if constexpr (is_half_float_v<T>) return T(static_cast<float>(a) * static_cast<float>(b));
    else if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (std::is_integral_v<T>)
        return static_cast<T>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
    else return a * b;
}

/// a < b in T (half floats compared as float).
template <class T>
bool less(T a, T b) noexcept {
    if constexpr (is_half_float_v<T>) return static_cast<float>(a) < static_cast<float>(b);
    else return a < b;
}

/// dst = reduce(dst, src).
template <class T>
void combine(T& dst, T src, reduction r) noexcept {
    switch (r) {
        case reduction::none: dst = src; break;
        case reduction::add: dst = add(dst, src); break;
        case reduction::mul: dst = mul(dst, src); break;
        case reduction::min: dst = less(src, dst) ? src : dst; break;
        case reduction::max: dst = less(dst, src) ? src : dst; break;
    }
}

} // namespace indexing
} // namespace ops
EMBER_NAMESPACE_END
