// SPDX-License-Identifier: Apache-2.0
// ScatterElements (ONNX opset 11, 13, 16 reduction, 18 min/max) and Scatter (opset 9-10, the
// deprecated name of the same op without reduction), any dtype: y = data, then for every
// element of indices (int32 or int64, data's rank, may be a runtime input)
// y[i0, .., indices[i0, .., ik, ..], ..] = updates[i0, .., ik, ..] with the index on `axis`
// (default 0); reduction add/mul (min/max) combines with what is there instead of replacing it.
// updates has indices' shape, which is at most data's in every dimension but the axis. Indices
// are applied in order (duplicates: the last one wins without reduction). Negative indices count
// from the end; one outside [-n, n) found at run time makes run() return invalid_argument
// before anything is scattered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace indexing {

/// What ScatterElements and Scatter share.
struct scatter_elements_impl {
    struct attributes {
        std::int64_t axis = 0;
        std::string reduction = "none";
    };

    struct args {
        operand data, indices, updates, y;
        bool index64 = true;
        indexing::reduction reduce = indexing::reduction::none;
        std::uint32_t rank = 0, axis = 0;
        std::int64_t dims[max_rank] = {};        ///< indices' (= updates') dims
        std::int64_t y_strides[max_rank] = {};   ///< data's (= output's) element strides
        std::int64_t axis_len = 0;
        std::int64_t count = 0;                  ///< indices' element count
        std::size_t data_bytes = 0;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = indexing::expect_scatter_inputs(ctx, a.reduction); s != status::ok) return s;
        const shape& data = ctx.input_shape(0);
        const shape& ind = ctx.input_shape(1);
        const shape& upd = ctx.input_shape(2);
        std::size_t axis = 0;
        if (status s = indexing::expect_data_axis(ctx, a.axis, axis); s != status::ok) return s;
        if (ind.rank() != data.rank())
            return ctx.fail(status::shape_mismatch, "indices {} must have the rank of data {} ({})", ind, data, data.rank());
        if (upd != ind) return ctx.fail(status::shape_mismatch, "updates {} must have the shape of indices {}", upd, ind);
        if (status s = indexing::expect_indices_fit(ctx, data, ind, axis); s != status::ok) return s;
        if (size_of(ctx.input_type(0)) == 0) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.set_output(0, ctx.input_type(0), data);
        return status::ok;
    }

    // The definition: check every index, copy data (unless in place), then apply the updates in
    // order, walking indices with an odometer.
    template <class T>
    static bool reference(const args& g, const std::byte* x, const std::byte* ind, const T* upd, T* y) noexcept {
        for (std::int64_t n = 0; n < g.count; ++n) {
            std::int64_t i = indexing::load_index(ind, g.index64, static_cast<std::size_t>(n));
            if (!indexing::wrap_index(i, g.axis_len)) return false;
        }
        if (x != reinterpret_cast<const std::byte*>(y) && g.data_bytes != 0) std::memmove(y, x, g.data_bytes);
        std::int64_t coord[max_rank] = {};
        for (std::int64_t n = 0; n < g.count; ++n) {
            std::int64_t i = indexing::load_index(ind, g.index64, static_cast<std::size_t>(n));
            indexing::wrap_index(i, g.axis_len);
            std::int64_t offset = 0;
            for (std::uint32_t d = 0; d < g.rank; ++d) offset += (d == g.axis ? i : coord[d]) * g.y_strides[d];
            indexing::combine(y[offset], upd[n], g.reduce);
            for (std::uint32_t d = g.rank; d-- > 0;) {
                if (++coord[d] < g.dims[d]) break;
                coord[d] = 0;
            }
        }
        return true;
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        if (!reference<T>(g, ctx.at<const std::byte>(g.data), ctx.at<const std::byte>(g.indices), ctx.at<const T>(g.updates), ctx.at<T>(g.y)))
            indexing::fail_out_of_range(ctx);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        const shape& data = ctx.input_shape(0);
        const shape& ind = ctx.input_shape(1);
        std::size_t axis = 0;
        normalize_axis(a.axis, data.rank(), axis);
        args g;
        g.data = ctx.input(0);
        g.indices = ctx.input(1);
        g.updates = ctx.input(2);
        g.y = ctx.output(0);
        g.index64 = ctx.input_type(1) == dtype::int64;
        if (status s = indexing::parse_reduction(ctx, a.reduction, g.reduce); s != status::ok) return s;
        g.rank = static_cast<std::uint32_t>(data.rank());
        g.axis = static_cast<std::uint32_t>(axis);
        for (std::size_t d = 0; d < ind.rank(); ++d) g.dims[d] = ind[d];
        contiguous_strides(data, g.y_strides);
        g.axis_len = data[axis];
        g.count = ind.elements();
        g.data_bytes = static_cast<std::size_t>(data.elements()) * size_of(ctx.input_type(0));
        kernel_fn fn = nullptr;
        visit_dtype(ctx.input_type(0), [&](auto tag) { fn = &kernel<decltype(tag)>; });
        if (!fn) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.emit(fn, g);
        return status::ok;
    }
};

} // namespace indexing

struct scatter_elements : indexing::scatter_elements_impl {
    static constexpr std::string_view onnx_name = "ScatterElements";
    static constexpr op_flags flags = op_flags::in_place;
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("axis", &attributes::axis), attr("reduction", &attributes::reduction));
};

/// Scatter: ScatterElements under its opset 9 name (deprecated from opset 11 on), no reduction.
struct scatter : indexing::scatter_elements_impl {
    static constexpr std::string_view onnx_name = "Scatter";
    static constexpr op_flags flags = op_flags::in_place;
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));
};

} // namespace ops
EMBER_NAMESPACE_END
