// SPDX-License-Identifier: Apache-2.0
// ScatterND (ONNX opset 11, 13, 16 reduction, 18 min/max), any dtype: y = data, then each row
// of k indices (the last dimension of the int64 indices tensor; int32 is accepted too; may be a
// runtime input) names a slice y[i1, .., ik, ...] that the matching slice of updates replaces,
// or is combined into with reduction add/mul (min/max). updates has shape
// indices.shape[:-1] + data.shape[k:]. Rows are applied in order. Negative indices count from the
// end; one out of range found at run time makes run() return invalid_argument before anything
// is scattered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct scatter_nd {
    static constexpr std::string_view onnx_name = "ScatterND";
    static constexpr op_flags flags = op_flags::in_place;

    struct attributes {
        std::string reduction = "none";
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("reduction", &attributes::reduction));

    struct args {
        operand data, indices, updates, y;
        bool index64 = true;
        indexing::reduction reduce = indexing::reduction::none;
        std::int64_t rows = 0;
        std::uint32_t k = 0;
        std::int64_t dims[max_rank] = {};           ///< data's dims indexed by a row
        std::int64_t slice_strides[max_rank] = {};  ///< in slices
        std::int64_t slice = 0;                     ///< elements per slice
        std::size_t data_bytes = 0;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = indexing::expect_scatter_inputs(ctx, a.reduction); s != status::ok) return s;
        const shape& data = ctx.input_shape(0);
        const shape& ind = ctx.input_shape(1);
        const shape& upd = ctx.input_shape(2);
        if (data.rank() == 0 || ind.rank() == 0)
            return ctx.fail(status::shape_mismatch, "data {} and indices {} must have rank >= 1", data, ind);
        const std::int64_t k = ind[ind.rank() - 1];
        if (k < 1 || k > static_cast<std::int64_t>(data.rank()))
            return ctx.fail(status::shape_mismatch, "the last dimension of indices {} is {}, it must be in [1, {}] for data {}", ind, k,
                            data.rank(), data);
        shape want;
        for (std::size_t d = 0; d + 1 < ind.rank(); ++d) want.push_back(ind[d]);
        if (!shape::valid_rank(want.rank() + data.rank() - static_cast<std::size_t>(k)))
            return ctx.fail(status::unsupported_op, "updates rank is more than EMBER_MAX_RANK ({})", max_rank);
        for (std::size_t d = static_cast<std::size_t>(k); d < data.rank(); ++d) want.push_back(data[d]);
        if (upd != want)
            return ctx.fail(status::shape_mismatch, "updates {} must have shape {} (indices {} without its last dimension, then data {} after {} dims)",
                            upd, want, ind, data, k);
        for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j)
            if (data[j] == 0 && ind.elements() != 0)
                return ctx.fail(status::shape_mismatch, "data {} has length 0 in dimension {}, so no index is valid", data, j);
        if (size_of(ctx.input_type(0)) == 0) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.set_output(0, ctx.input_type(0), data);
        return status::ok;
    }

    /// Offset of row r's slice in slices; false when an index is out of range.
    static bool row_offset(const args& g, const std::byte* ind, std::int64_t r, std::int64_t& offset) noexcept {
        offset = 0;
        for (std::uint32_t j = 0; j < g.k; ++j) {
            std::int64_t i = indexing::load_index(ind, g.index64, static_cast<std::size_t>(r * g.k + j));
            if (!indexing::wrap_index(i, g.dims[j])) return false;
            offset += i * g.slice_strides[j];
        }
        return true;
    }

    // The definition: check every row, copy data (unless in place), apply the rows in order.
    template <class T>
    static bool reference(const args& g, const std::byte* x, const std::byte* ind, const T* upd, T* y) noexcept {
        std::int64_t offset = 0;
        for (std::int64_t r = 0; r < g.rows; ++r)
            if (!row_offset(g, ind, r, offset)) return false;
        if (x != reinterpret_cast<const std::byte*>(y) && g.data_bytes != 0) std::memmove(y, x, g.data_bytes);
        for (std::int64_t r = 0; r < g.rows; ++r) {
            row_offset(g, ind, r, offset);
            T* dst = y + offset * g.slice;
            const T* src = upd + r * g.slice;
            for (std::int64_t e = 0; e < g.slice; ++e) indexing::combine(dst[e], src[e], g.reduce);
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
        const auto k = static_cast<std::size_t>(ind[ind.rank() - 1]);
        args g;
        g.data = ctx.input(0);
        g.indices = ctx.input(1);
        g.updates = ctx.input(2);
        g.y = ctx.output(0);
        g.index64 = ctx.input_type(1) == dtype::int64;
        if (status s = indexing::parse_reduction(ctx, a.reduction, g.reduce); s != status::ok) return s;
        g.rows = indexing::product(ind, 0, ind.rank() - 1);
        g.k = static_cast<std::uint32_t>(k);
        g.slice = indexing::product(data, k, data.rank());
        std::int64_t stride = 1;
        for (std::size_t j = k; j-- > 0;) {
            g.dims[j] = data[j];
            g.slice_strides[j] = stride;
            stride *= data[j];
        }
        g.data_bytes = static_cast<std::size_t>(data.elements()) * size_of(ctx.input_type(0));
        kernel_fn fn = nullptr;
        visit_dtype(ctx.input_type(0), [&](auto tag) { fn = &kernel<decltype(tag)>; });
        if (!fn) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.emit(fn, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
