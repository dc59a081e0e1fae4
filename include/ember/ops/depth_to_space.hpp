// SPDX-License-Identifier: Apache-2.0
// DepthToSpace (ONNX opset 1, 11 mode, 13) and SpaceToDepth (opset 1, 13), any dtype, on NCHW
// input of rank 4 with `blocksize` b (required, >= 1).
// DepthToSpace moves channel blocks into b x b spatial blocks: [N, C, H, W] -> [N, C/(b*b), H*b,
// W*b]; mode DCR (the default) reads the channels as [b, b, C/(b*b)], CRD as [C/(b*b), b, b].
// SpaceToDepth is its DCR inverse: [N, C, H, W] -> [N, C*b*b, H/b, W/b].
// Each is a reshape to 6-D, a transpose and a reshape, run by Transpose's kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ember/ops/op_support.hpp"
#include "ember/ops/transpose.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace indexing {

/// Emits Transpose's kernel for `view` (the input seen as 6-D) permuted by perm.
inline status bind_block_transpose(bind_context& ctx, const std::int64_t (&view)[6], const std::size_t (&perm)[6]) {
    transpose::args g;
    g.x = ctx.input(0);
    g.y = ctx.output(0);
    g.rank = 6;
    std::int64_t strides[6] = {};
    std::int64_t acc = 1;
    for (std::size_t i = 6; i-- > 0;) {
        strides[i] = acc;
        acc *= view[i];
    }
    for (std::size_t i = 0; i < 6; ++i) {
        g.dims[i] = view[perm[i]];
        g.in_strides[i] = strides[perm[i]];
    }
    g.count = acc;
    kernel_fn fn = nullptr;
    switch (size_of(ctx.input_type(0))) {
        case 1: fn = &transpose::kernel<1>; break;
        case 2: fn = &transpose::kernel<2>; break;
        case 4: fn = &transpose::kernel<4>; break;
        case 8: fn = &transpose::kernel<8>; break;
        default: return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
    }
    ctx.emit(fn, g);
    return status::ok;
}

/// Checks the input is 4-D with a supported dtype and blocksize >= 1.
inline status check_block_input(infer_context& ctx, std::int64_t blocksize) {
    if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
    const shape& in = ctx.input_shape(0);
    if (in.rank() != 4) return ctx.fail(status::shape_mismatch, "input must be 4-D (NCHW), got shape {}", in);
    if (blocksize < 1) return ctx.fail(status::invalid_model, "blocksize must be >= 1, got {}", blocksize);
    const std::size_t e = size_of(ctx.input_type(0));
    if (e != 1 && e != 2 && e != 4 && e != 8) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
    return status::ok;
}

} // namespace indexing

struct depth_to_space {
    static constexpr std::string_view onnx_name = "DepthToSpace";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t blocksize = 0;
        std::string mode = "DCR";
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(required_attr("blocksize", &attributes::blocksize), attr("mode", &attributes::mode));

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = indexing::check_block_input(ctx, a.blocksize); s != status::ok) return s;
        if (a.mode != "DCR" && a.mode != "CRD") return ctx.fail(status::invalid_model, "mode '{}' is not DCR or CRD", a.mode);
        if (a.mode != "DCR" && ctx.opset() < 11)
            return ctx.fail(status::invalid_model, "mode '{}' needs opset 11 or later, the model has opset {}", a.mode, ctx.opset());
        const shape& in = ctx.input_shape(0);
        const std::int64_t b = a.blocksize;
        if (b > in[1] || in[1] % (b * b) != 0)
            return ctx.fail(status::shape_mismatch, "channels {} of input {} are not a multiple of blocksize^2 = {}", in[1], in, b * b);
        ctx.set_output(0, ctx.input_type(0), shape{in[0], in[1] / (b * b), in[2] * b, in[3] * b});
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        const shape& in = ctx.input_shape(0);
        const std::int64_t b = a.blocksize, n = in[0], c = in[1] / (b * b), h = in[2], w = in[3];
        if (a.mode == "CRD") {
            // [N, C', b, b, H, W] -> [N, C', H, b, W, b]
            const std::int64_t view[6] = {n, c, b, b, h, w};
            const std::size_t perm[6] = {0, 1, 4, 2, 5, 3};
            return indexing::bind_block_transpose(ctx, view, perm);
        }
        // DCR: [N, b, b, C', H, W] -> [N, C', H, b, W, b]
        const std::int64_t view[6] = {n, b, b, c, h, w};
        const std::size_t perm[6] = {0, 3, 4, 1, 5, 2};
        return indexing::bind_block_transpose(ctx, view, perm);
    }
};

struct space_to_depth {
    static constexpr std::string_view onnx_name = "SpaceToDepth";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t blocksize = 0;
    };
    static constexpr auto onnx_attributes = std::make_tuple(required_attr("blocksize", &attributes::blocksize));

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = indexing::check_block_input(ctx, a.blocksize); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        const std::int64_t b = a.blocksize;
        if (in[2] % b != 0 || in[3] % b != 0)
            return ctx.fail(status::shape_mismatch, "height {} and width {} of input {} must be multiples of blocksize {}", in[2], in[3], in, b);
        std::int64_t bb = 0, channels = 0;
        if (!detail::checked_mul(b, b, bb) || !detail::checked_mul(in[1], bb, channels))
            return ctx.fail(status::shape_mismatch, "blocksize {} is too large for input {}", b, in);
        ctx.set_output(0, ctx.input_type(0), shape{in[0], channels, in[2] / b, in[3] / b});
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        const shape& in = ctx.input_shape(0);
        const std::int64_t b = a.blocksize;
        // [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b]
        const std::int64_t view[6] = {in[0], in[1], in[2] / b, b, in[3] / b, b};
        const std::size_t perm[6] = {0, 3, 5, 1, 2, 4};
        return indexing::bind_block_transpose(ctx, view, perm);
    }
};

} // namespace ops
EMBER_NAMESPACE_END
