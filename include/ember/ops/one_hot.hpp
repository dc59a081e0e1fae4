// SPDX-License-Identifier: Apache-2.0
// OneHot (ONNX opset 9, 11), indices of any numeric dtype (floats are truncated), depth a
// numeric scalar that must be known at compile time, values = [off_value, on_value] of any
// dtype (the output's). The output has indices' dims with a new dimension of length depth
// inserted at `axis` (default -1, the last; in [-r-1, r] for indices of rank r):
// y[.., d, ..] = on_value where indices[..] == d, off_value elsewhere. From opset 11 a negative
// index counts from the end (index + depth); an index still outside [0, depth) gives a row of
// off_value (it is not an error).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct one_hot {
    static constexpr std::string_view onnx_name = "OneHot";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t axis = -1;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));

    /// indices seen as [outer, inner] around the axis; output as [outer, depth, inner].
    struct args {
        operand indices, values, y;
        std::int64_t outer = 0, inner = 0, depth = 0;
        std::size_t elem_bytes = 0;
        bool wrap_negative = true;
    };

    static status resolve(const attributes& a, infer_context& ctx, std::int64_t& depth, std::size_t& axis) {
        const tensor* t = ctx.require_constant(1, "depth");
        if (!t) return status::unsupported_op;
        if (t->size() != 1 || t->type() == dtype::boolean || !indexing::scalar_as_int(*t, depth))
            return ctx.fail(status::invalid_model, "input 1 (depth) must be a numeric scalar, got {} of shape {}", t->type(), t->dims());
        if (depth < 1) return ctx.fail(status::invalid_model, "depth must be >= 1, got {}", depth);
        const std::size_t rank = ctx.input_shape(0).rank();
        if (!normalize_axis(a.axis, rank + 1, axis))
            return ctx.fail(status::invalid_model, "axis {} is out of range [{}, {}] for indices of shape {}", a.axis,
                            -static_cast<std::int64_t>(rank) - 1, rank, ctx.input_shape(0));
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(3, 3); s != status::ok) return s;
        const dtype it = ctx.input_type(0);
        if (it == dtype::boolean || size_of(it) == 0) return ctx.fail(status::unsupported_op, "input 0 (indices) has dtype {}, expected a numeric type", it);
        if (ctx.input_shape(2).rank() != 1 || ctx.input_shape(2)[0] != 2)
            return ctx.fail(status::shape_mismatch, "input 2 (values) must be [off_value, on_value] of shape [2], got {}", ctx.input_shape(2));
        if (size_of(ctx.input_type(2)) == 0) return ctx.fail(status::unsupported_op, "values dtype {} is not supported", ctx.input_type(2));
        std::int64_t depth = 0;
        std::size_t axis = 0;
        if (status s = resolve(a, ctx, depth, axis); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        if (!shape::valid_rank(in.rank() + 1)) return ctx.fail(status::unsupported_op, "output rank {} is more than EMBER_MAX_RANK ({})", in.rank() + 1, max_rank);
        shape out;
        for (std::size_t d = 0; d < axis; ++d) out.push_back(in[d]);
        out.push_back(depth);
        for (std::size_t d = axis; d < in.rank(); ++d) out.push_back(in[d]);
        if (out.checked_elements() < 0) return ctx.fail(status::shape_mismatch, "output {} has too many elements", out);
        ctx.set_output(0, ctx.input_type(2), out);
        return status::ok;
    }

    /// An index value as int64; false for NaN or a value no int64 holds.
    template <class I>
    static bool index_value(I v, std::int64_t& out) noexcept {
        if constexpr (std::is_integral_v<I>) {
            if constexpr (std::is_unsigned_v<I> && sizeof(I) == 8) {
                if (v > static_cast<I>(std::numeric_limits<std::int64_t>::max())) return false;
            }
            out = static_cast<std::int64_t>(v);
            return true;
        } else {
            double d = 0;
            if constexpr (indexing::is_half_float_v<I>) d = static_cast<double>(static_cast<float>(v));
            else d = static_cast<double>(v);
            if (!(d > -9.2e18 && d < 9.2e18)) return false;
            out = static_cast<std::int64_t>(d);
            return true;
        }
    }

    // The definition: fill with off_value, then put on_value where each index says.
    template <class I>
    static void reference(const args& g, const I* ind, const std::byte* values, std::byte* y) noexcept {
        const std::size_t e = g.elem_bytes;
        const std::int64_t total = g.outer * g.depth * g.inner;
        for (std::int64_t n = 0; n < total; ++n) std::memcpy(y + static_cast<std::size_t>(n) * e, values, e);
        for (std::int64_t o = 0; o < g.outer; ++o)
            for (std::int64_t i = 0; i < g.inner; ++i) {
                std::int64_t d = 0;
                if (!index_value(ind[o * g.inner + i], d)) continue;
                if (d < 0 && g.wrap_negative) d += g.depth;
                if (d < 0 || d >= g.depth) continue;
                std::memcpy(y + static_cast<std::size_t>((o * g.depth + d) * g.inner + i) * e, values + e, e);
            }
    }

    template <class I>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<I>(g, ctx.at<const I>(g.indices), ctx.at<const std::byte>(g.values), ctx.at<std::byte>(g.y));
    }

    static status bind(const attributes& a, bind_context& ctx) {
        std::int64_t depth = 0;
        std::size_t axis = 0;
        if (status s = resolve(a, ctx, depth, axis); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        args g;
        g.indices = ctx.input(0);
        g.values = ctx.input(2);
        g.y = ctx.output(0);
        g.outer = indexing::product(in, 0, axis);
        g.inner = indexing::product(in, axis, in.rank());
        g.depth = depth;
        g.elem_bytes = size_of(ctx.input_type(2));
        g.wrap_negative = ctx.opset() >= 11;
        kernel_fn fn = nullptr;
        visit_dtype(ctx.input_type(0), [&](auto tag) {
            using I = decltype(tag);
            if constexpr (!std::is_same_v<I, bool>) fn = &kernel<I>;
        });
        if (!fn) return ctx.fail(status::unsupported_op, "indices dtype {} is not supported", ctx.input_type(0));
        ctx.emit(fn, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
