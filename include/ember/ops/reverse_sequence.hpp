// SPDX-License-Identifier: Apache-2.0
// ReverseSequence (ONNX opset 10), any dtype: for each batch entry b (along batch_axis, default
// 1) reverses the first sequence_lens[b] entries along time_axis (default 0) and copies the rest.
// The two axes are 0 and 1 in either order; the input has rank >= 2. sequence_lens is int64
// (int32 accepted) of shape [batch] and may be a runtime input; a length outside [0, time]
// found at run time makes run() return invalid_argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct reverse_sequence {
    static constexpr std::string_view onnx_name = "ReverseSequence";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t batch_axis = 1;
        std::int64_t time_axis = 0;
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("batch_axis", &attributes::batch_axis), attr("time_axis", &attributes::time_axis));

    /// Blocks of block_bytes (the dims after the first two) at (b, t) = b * batch_stride +
    /// t * time_stride blocks.
    struct args {
        operand x, lens, y;
        bool index64 = true;
        std::int64_t batch = 0, time = 0, batch_stride = 0, time_stride = 0;
        std::size_t block_bytes = 0;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (status s = indexing::expect_indices(ctx, 1, "sequence_lens"); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        if (in.rank() < 2) return ctx.fail(status::shape_mismatch, "input must have rank >= 2, got shape {}", in);
        const bool ok = (a.batch_axis == 0 && a.time_axis == 1) || (a.batch_axis == 1 && a.time_axis == 0);
        if (!ok)
            return ctx.fail(status::invalid_model, "batch_axis {} and time_axis {} must be 0 and 1 in some order", a.batch_axis, a.time_axis);
        const shape& lens = ctx.input_shape(1);
        const std::int64_t batch = in[static_cast<std::size_t>(a.batch_axis)];
        if (lens.rank() != 1 || lens[0] != batch)
            return ctx.fail(status::shape_mismatch, "sequence_lens {} must have shape [{}], the batch size of input {}", lens, batch, in);
        if (size_of(ctx.input_type(0)) == 0) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.set_output(0, ctx.input_type(0), in);
        return status::ok;
    }

    // The definition: check every length, then copy each block to its place.
    static bool reference(const args& g, const std::byte* x, const std::byte* lens, std::byte* y) noexcept {
        for (std::int64_t b = 0; b < g.batch; ++b) {
            const std::int64_t len = indexing::load_index(lens, g.index64, static_cast<std::size_t>(b));
            if (len < 0 || len > g.time) return false;
        }
        if (g.block_bytes == 0) return true;
        for (std::int64_t b = 0; b < g.batch; ++b) {
            const std::int64_t len = indexing::load_index(lens, g.index64, static_cast<std::size_t>(b));
            for (std::int64_t t = 0; t < g.time; ++t) {
                const std::int64_t from = t < len ? len - 1 - t : t;
                std::memcpy(y + static_cast<std::size_t>(b * g.batch_stride + t * g.time_stride) * g.block_bytes,
                            x + static_cast<std::size_t>(b * g.batch_stride + from * g.time_stride) * g.block_bytes, g.block_bytes);
            }
        }
        return true;
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        if (!reference(g, ctx.at<const std::byte>(g.x), ctx.at<const std::byte>(g.lens), ctx.at<std::byte>(g.y)))
            indexing::fail_out_of_range(ctx);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        const shape& in = ctx.input_shape(0);
        args g;
        g.x = ctx.input(0);
        g.lens = ctx.input(1);
        g.y = ctx.output(0);
        g.index64 = ctx.input_type(1) == dtype::int64;
        g.batch = in[static_cast<std::size_t>(a.batch_axis)];
        g.time = in[static_cast<std::size_t>(a.time_axis)];
        // dims 0 and 1 in memory order: dim 1 has stride 1 block, dim 0 has stride in[1] blocks
        g.batch_stride = a.batch_axis == 0 ? in[1] : 1;
        g.time_stride = a.time_axis == 0 ? in[1] : 1;
        g.block_bytes = static_cast<std::size_t>(indexing::product(in, 2, in.rank())) * size_of(ctx.input_type(0));
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
