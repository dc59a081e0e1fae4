// SPDX-License-Identifier: Apache-2.0
// GatherND (ONNX opset 11, 12 batch_dims, 13), any dtype: each row of k indices (the last
// dimension of the int64 indices tensor; int32 is accepted too) picks a slice
// data[b.., i1, .., ik, ...] of data, after the first batch_dims dimensions, which data and
// indices share. Output shape = indices.shape[:-1] + data.shape[batch_dims + k:]. Negative
// indices count from the end; one out of range found at run time makes run() return
// invalid_argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct gather_nd {
    static constexpr std::string_view onnx_name = "GatherND";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t batch_dims = 0;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("batch_dims", &attributes::batch_dims));

    /// batches x tuples index rows of k entries; each picks a slice of slice_bytes out of its
    /// batch's data (batch_bytes apart), at offset sum(index_j * slice_strides[j]) slices.
    struct args {
        operand data, indices, y;
        bool index64 = true;
        std::int64_t batches = 0, tuples = 0;
        std::uint32_t k = 0;
        std::int64_t dims[max_rank] = {};           ///< data's dims indexed by the tuple
        std::int64_t slice_strides[max_rank] = {};  ///< in slices
        std::size_t slice_bytes = 0, batch_bytes = 0;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (status s = indexing::expect_indices(ctx, 1, "indices"); s != status::ok) return s;
        if (a.batch_dims != 0 && ctx.opset() < 12)
            return ctx.fail(status::invalid_model, "batch_dims needs opset 12 or later, the model has opset {}", ctx.opset());
        const shape& data = ctx.input_shape(0);
        const shape& ind = ctx.input_shape(1);
        if (data.rank() == 0 || ind.rank() == 0)
            return ctx.fail(status::shape_mismatch, "data {} and indices {} must have rank >= 1", data, ind);
        const std::int64_t b = a.batch_dims;
        if (b < 0 || b >= static_cast<std::int64_t>(data.rank()) || b >= static_cast<std::int64_t>(ind.rank()))
            return ctx.fail(status::invalid_model, "batch_dims {} must be in [0, min(rank of data {}, rank of indices {}))", b, data, ind);
        const auto batch = static_cast<std::size_t>(b);
        for (std::size_t d = 0; d < batch; ++d)
            if (data[d] != ind[d])
                return ctx.fail(status::shape_mismatch, "data {} and indices {} differ in batch dimension {} (batch_dims is {})", data, ind, d, b);
        const std::int64_t k = ind[ind.rank() - 1];
        if (k < 1 || k > static_cast<std::int64_t>(data.rank()) - b)
            return ctx.fail(status::shape_mismatch, "the last dimension of indices {} is {}, it must be in [1, {}] for data {} with batch_dims {}",
                            ind, k, static_cast<std::int64_t>(data.rank()) - b, data, b);
        const std::size_t out_rank = ind.rank() - 1 + data.rank() - batch - static_cast<std::size_t>(k);
        if (!shape::valid_rank(out_rank)) return ctx.fail(status::unsupported_op, "output rank {} is more than EMBER_MAX_RANK ({})", out_rank, max_rank);
        for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j)
            if (data[batch + j] == 0 && ind.elements() != 0)
                return ctx.fail(status::shape_mismatch, "data {} has length 0 in dimension {}, so no index is valid", data, batch + j);
        if (size_of(ctx.input_type(0)) == 0) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        shape out;
        for (std::size_t d = 0; d + 1 < ind.rank(); ++d) out.push_back(ind[d]);
        for (std::size_t d = batch + static_cast<std::size_t>(k); d < data.rank(); ++d) out.push_back(data[d]);
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    // The definition: one slice copy per index row.
    static bool reference(const args& g, const std::byte* x, const std::byte* ind, std::byte* y) noexcept {
        for (std::int64_t b = 0; b < g.batches; ++b)
            for (std::int64_t t = 0; t < g.tuples; ++t) {
                const std::int64_t row = b * g.tuples + t;
                std::int64_t offset = 0;
                for (std::uint32_t j = 0; j < g.k; ++j) {
                    std::int64_t i = indexing::load_index(ind, g.index64, static_cast<std::size_t>(row * g.k + j));
                    if (!indexing::wrap_index(i, g.dims[j])) return false;
                    offset += i * g.slice_strides[j];
                }
                if (g.slice_bytes != 0)
                    std::memcpy(y + static_cast<std::size_t>(row) * g.slice_bytes,
                                x + static_cast<std::size_t>(b) * g.batch_bytes + static_cast<std::size_t>(offset) * g.slice_bytes, g.slice_bytes);
            }
        return true;
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        if (!reference(g, ctx.at<const std::byte>(g.data), ctx.at<const std::byte>(g.indices), ctx.at<std::byte>(g.y)))
            indexing::fail_out_of_range(ctx);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        const shape& data = ctx.input_shape(0);
        const shape& ind = ctx.input_shape(1);
        const auto batch = static_cast<std::size_t>(a.batch_dims);
        const auto k = static_cast<std::size_t>(ind[ind.rank() - 1]);
        const std::size_t elem = size_of(ctx.input_type(0));
        args g;
        g.data = ctx.input(0);
        g.indices = ctx.input(1);
        g.y = ctx.output(0);
        g.index64 = ctx.input_type(1) == dtype::int64;
        g.batches = indexing::product(data, 0, batch);
        g.tuples = indexing::product(ind, batch, ind.rank() - 1);
        g.k = static_cast<std::uint32_t>(k);
        g.slice_bytes = static_cast<std::size_t>(indexing::product(data, batch + k, data.rank())) * elem;
        g.batch_bytes = static_cast<std::size_t>(indexing::product(data, batch, data.rank())) * elem;
        std::int64_t stride = 1;
        for (std::size_t j = k; j-- > 0;) {
            g.dims[j] = data[batch + j];
            g.slice_strides[j] = stride;
            stride *= data[batch + j];
        }
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
