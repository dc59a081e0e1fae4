// SPDX-License-Identifier: Apache-2.0
// GatherElements (ONNX opset 11, 13), any dtype: y[i0, .., ik, ..] = data[i0, .., indices[i0,
// .., ik, ..], ..] with the index replacing the coordinate on `axis` (default 0). indices (int32
// or int64, may be a runtime input) has data's rank, and every dimension other than the axis at
// most data's; y has indices' shape. Negative indices count from the end of the axis; one
// outside [-n, n) found at run time makes run() return invalid_argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct gather_elements {
    static constexpr std::string_view onnx_name = "GatherElements";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t axis = 0;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));

    struct args {
        operand data, indices, y;
        bool index64 = true;
        std::uint32_t rank = 0, axis = 0;
        std::int64_t dims[max_rank] = {};          ///< indices' (= output's) dims
        std::int64_t data_strides[max_rank] = {};  ///< data's element strides
        std::int64_t axis_len = 0;                 ///< data's length on the axis
        std::int64_t count = 0;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (status s = indexing::expect_indices(ctx, 1, "indices"); s != status::ok) return s;
        const shape& data = ctx.input_shape(0);
        const shape& ind = ctx.input_shape(1);
        std::size_t axis = 0;
        if (status s = indexing::expect_data_axis(ctx, a.axis, axis); s != status::ok) return s;
        if (ind.rank() != data.rank())
            return ctx.fail(status::shape_mismatch, "indices {} must have the rank of data {} ({})", ind, data, data.rank());
        if (status s = indexing::expect_indices_fit(ctx, data, ind, axis); s != status::ok) return s;
        if (size_of(ctx.input_type(0)) == 0) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.set_output(0, ctx.input_type(0), ind);
        return status::ok;
    }

    // The definition: walks the output in order with an odometer, reading data at the same
    // coordinates except on the axis, where the index says.
    template <std::size_t Bytes>
    static bool reference(const args& g, const std::byte* x, const std::byte* ind, std::byte* y) noexcept {
        std::int64_t coord[max_rank] = {};
        for (std::int64_t n = 0; n < g.count; ++n) {
            std::int64_t i = indexing::load_index(ind, g.index64, static_cast<std::size_t>(n));
            if (!indexing::wrap_index(i, g.axis_len)) return false;
            std::int64_t offset = 0;
            for (std::uint32_t d = 0; d < g.rank; ++d) offset += (d == g.axis ? i : coord[d]) * g.data_strides[d];
            std::memcpy(y + static_cast<std::size_t>(n) * Bytes, x + static_cast<std::size_t>(offset) * Bytes, Bytes);
            for (std::uint32_t d = g.rank; d-- > 0;) {
                if (++coord[d] < g.dims[d]) break;
                coord[d] = 0;
            }
        }
        return true;
    }

    template <std::size_t Bytes>
    struct run_for {
        static void run(const void* p, const run_context& ctx) noexcept {
            const auto& g = *static_cast<const args*>(p);
            if (!reference<Bytes>(g, ctx.at<const std::byte>(g.data), ctx.at<const std::byte>(g.indices), ctx.at<std::byte>(g.y)))
                indexing::fail_out_of_range(ctx);
        }
    };

    static status bind(const attributes& a, bind_context& ctx) {
        const shape& data = ctx.input_shape(0);
        const shape& ind = ctx.input_shape(1);
        std::size_t axis = 0;
        normalize_axis(a.axis, data.rank(), axis);
        args g;
        g.data = ctx.input(0);
        g.indices = ctx.input(1);
        g.y = ctx.output(0);
        g.index64 = ctx.input_type(1) == dtype::int64;
        g.rank = static_cast<std::uint32_t>(data.rank());
        g.axis = static_cast<std::uint32_t>(axis);
        for (std::size_t d = 0; d < ind.rank(); ++d) g.dims[d] = ind[d];
        contiguous_strides(data, g.data_strides);
        g.axis_len = data[axis];
        g.count = ind.elements();
        const kernel_fn fn = indexing::kernel_for_size<run_for>(size_of(ctx.input_type(0)));
        if (!fn) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.emit(fn, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
