// SPDX-License-Identifier: Apache-2.0
// Expand (ONNX opset 8+) and Tile (opset 6+), any dtype. Expand broadcasts input 0 to the shape
// in input 1 (int64, known at compile time) by numpy's rules in both directions: a 1 in either
// shape takes the other's size, so the output may be larger than the shape asked for. Tile
// repeats input 0 repeats[d] times along each dimension d (input 1, int64, known at compile
// time, one entry per dimension). Both are one strided copy that reads some input elements
// many times (stride 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/ops/layout.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct expand {
    static constexpr std::string_view onnx_name = "Expand";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (ctx.input_type(1) != dtype::int64) return ctx.fail(status::invalid_model, "the shape input must be int64, got {}", ctx.input_type(1));
        std::vector<std::int64_t> dims;
        if (status s = constant_ints(ctx, 1, "shape", dims); s != status::ok) return s;
        if (!shape::valid_rank(dims.size()))
            return ctx.fail(status::unsupported_op, "shape {} has rank {}, more than EMBER_MAX_RANK ({})", dims, dims.size(), max_rank);
        shape target;
        for (std::int64_t d : dims) {
            if (d < 0) return ctx.fail(status::invalid_model, "shape {} has a negative dimension", dims);
            target.push_back(d);
        }
        shape out;
        if (!broadcast_shapes(ctx.input_shape(0), target, out))
            return ctx.fail(status::shape_mismatch, "input of shape {} cannot be broadcast to shape {}", ctx.input_shape(0), target);
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    static status bind(const attributes&, bind_context& ctx) {
        const shape& in = ctx.input_shape(0);
        const shape& out = ctx.output_shape(0);
        std::int64_t strides[max_rank] = {};
        contiguous_strides(in, strides);
        strided_copy_args g;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        const std::size_t lead = out.rank() - in.rank();
        for (std::size_t d = 0; d < out.rank(); ++d) {
            const bool from_input = d >= lead && in[d - lead] != 1;
            g.push(out[d], from_input ? strides[d - lead] : 0);
        }
        return emit_strided_copy(ctx, ctx.input_type(0), g);
    }
};

struct tile {
    static constexpr std::string_view onnx_name = "Tile";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    static status repeats_of(infer_context& ctx, std::vector<std::int64_t>& repeats) {
        if (ctx.opset() < 6) return ctx.fail(status::unsupported_op, "Tile before opset 6 is not supported; opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (ctx.input_type(1) != dtype::int64)
            return ctx.fail(status::invalid_model, "the repeats input must be int64, got {}", ctx.input_type(1));
        if (status s = constant_ints(ctx, 1, "repeats", repeats); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        if (repeats.size() != in.rank())
            return ctx.fail(status::invalid_model, "repeats {} has {} entries but the input {} has rank {}", repeats, repeats.size(), in, in.rank());
        for (std::int64_t r : repeats)
            if (r < 0) return ctx.fail(status::invalid_model, "repeats {} has a negative entry", repeats);
        return status::ok;
    }

    static status infer(const attributes&, infer_context& ctx) {
        std::vector<std::int64_t> repeats;
        if (status s = repeats_of(ctx, repeats); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        shape out;
        for (std::size_t d = 0; d < in.rank(); ++d) {
            std::int64_t n = 0;
            if (!ember::detail::checked_mul(in[d], repeats[d], n))
                return ctx.fail(status::shape_mismatch, "tiling input {} by {} overflows", in, repeats);
            out.push_back(n);
        }
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    // Output dimension d seen as (repeats[d], in[d]) with input strides (0, stride[d]).
    static status bind(const attributes&, bind_context& ctx) {
        std::vector<std::int64_t> repeats;
        if (status s = repeats_of(ctx, repeats); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        std::int64_t strides[max_rank] = {};
        contiguous_strides(in, strides);
        strided_copy_args g;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        for (std::size_t d = 0; d < in.rank(); ++d) {
            g.push(repeats[d], 0);
            g.push(in[d], strides[d]);
        }
        return emit_strided_copy(ctx, ctx.input_type(0), g);
    }
};

} // namespace ops
EMBER_NAMESPACE_END
