// SPDX-License-Identifier: Apache-2.0
// Gather (ONNX opset 1, 11, 13), any dtype: picks entries of data along `axis` (default 0,
// negative counts from the end) by an int32 or int64 index tensor, which may be a runtime
// input. Output shape = data.shape[:axis] + indices.shape + data.shape[axis+1:]. Negative
// indices count from the end of the axis; an index outside [-n, n) found at run time makes run()
// return invalid_argument, and nothing is read out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct gather {
    static constexpr std::string_view onnx_name = "Gather";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t axis = 0;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));

    /// data seen as [outer, axis_len, block bytes]; output as [outer, index_count, block bytes].
    struct args {
        operand data, indices, y;
        bool index64 = true;
        std::int64_t outer = 0, axis_len = 0, index_count = 0;
        std::size_t block_bytes = 0;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (status s = indexing::expect_indices(ctx, 1, "indices"); s != status::ok) return s;
        const shape& data = ctx.input_shape(0);
        const shape& ind = ctx.input_shape(1);
        std::size_t axis = 0;
        if (status s = indexing::expect_data_axis(ctx, a.axis, axis); s != status::ok) return s;
        if (!shape::valid_rank(data.rank() - 1 + ind.rank()))
            return ctx.fail(status::unsupported_op, "output rank {} is more than EMBER_MAX_RANK ({})", data.rank() - 1 + ind.rank(), max_rank);
        if (size_of(ctx.input_type(0)) == 0) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        if (data[axis] == 0 && ind.elements() != 0)
            return ctx.fail(status::shape_mismatch, "data {} has length 0 on axis {}, so no index is valid", data, axis);
        shape out;
        for (std::size_t d = 0; d < axis; ++d) out.push_back(data[d]);
        for (std::size_t d = 0; d < ind.rank(); ++d) out.push_back(ind[d]);
        for (std::size_t d = axis + 1; d < data.rank(); ++d) out.push_back(data[d]);
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    // The definition: every index is checked first, then each output block is copied from the
    // data block it names.
    static bool reference(const args& g, const std::byte* x, const std::byte* ind, std::byte* y) noexcept {
        for (std::int64_t j = 0; j < g.index_count; ++j) {
            std::int64_t i = indexing::load_index(ind, g.index64, static_cast<std::size_t>(j));
            if (!indexing::wrap_index(i, g.axis_len)) return false;
        }
        if (g.block_bytes == 0) return true;
        for (std::int64_t o = 0; o < g.outer; ++o)
            for (std::int64_t j = 0; j < g.index_count; ++j) {
                std::int64_t i = indexing::load_index(ind, g.index64, static_cast<std::size_t>(j));
                indexing::wrap_index(i, g.axis_len);
                std::memcpy(y + static_cast<std::size_t>(o * g.index_count + j) * g.block_bytes,
                            x + static_cast<std::size_t>(o * g.axis_len + i) * g.block_bytes, g.block_bytes);
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
        std::size_t axis = 0;
        normalize_axis(a.axis, data.rank(), axis);
        args g;
        g.data = ctx.input(0);
        g.indices = ctx.input(1);
        g.y = ctx.output(0);
        g.index64 = ctx.input_type(1) == dtype::int64;
        g.outer = indexing::product(data, 0, axis);
        g.axis_len = data[axis];
        g.index_count = ctx.input_shape(1).elements();
        g.block_bytes = static_cast<std::size_t>(indexing::product(data, axis + 1, data.rank())) * size_of(ctx.input_type(0));
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
