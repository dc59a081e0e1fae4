// SPDX-License-Identifier: Apache-2.0
// Compress (ONNX opset 9, 11 negative axis), any dtype: keeps the slices along `axis` whose
// entry in the 1-D bool condition is true. Without axis the input is flattened first. The
// condition decides the output's shape, so it must be known at compile time; it may be shorter
// than the axis (missing entries count as false), and entries past the axis must be false.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct compress {
    static constexpr std::string_view onnx_name = "Compress";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::optional<std::int64_t> axis;  // absent: the input flattened
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis));

    /// The input seen as [outer, axis_len, block bytes]; `kept` lists the kept axis positions.
    struct args {
        operand x, y;
        std::int64_t outer = 0, axis_len = 0;
        std::size_t block_bytes = 0;
        std::vector<std::int64_t> kept;
    };

    /// outer/axis_len/block and the kept positions, from the condition; fails with a message.
    static status plan(const attributes& a, infer_context& ctx, args& g) {
        const tensor* cond = ctx.require_constant(1, "condition");
        if (!cond) return status::unsupported_op;
        if (cond->type() != dtype::boolean || cond->rank() != 1)
            return ctx.fail(status::invalid_model, "input 1 (condition) must be a 1-D bool tensor, got {} of shape {}", cond->type(), cond->dims());
        const shape& in = ctx.input_shape(0);
        std::size_t axis = 0;
        if (a.axis) {
            if (*a.axis < 0 && ctx.opset() < 11)
                return ctx.fail(status::invalid_model, "negative axis {} needs opset 11 or later, the model has opset {}", *a.axis, ctx.opset());
            if (!normalize_axis(*a.axis, in.rank(), axis))
                return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {} (rank {})", *a.axis, in, in.rank());
            g.outer = indexing::product(in, 0, axis);
            g.axis_len = in[axis];
            g.block_bytes = static_cast<std::size_t>(indexing::product(in, axis + 1, in.rank())) * size_of(ctx.input_type(0));
        } else {
            g.outer = 1;
            g.axis_len = in.elements();
            g.block_bytes = size_of(ctx.input_type(0));
        }
        const bool* c = cond->data<bool>();
        g.kept.clear();
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(cond->size()); ++i) {
            bool on = false;
            std::memcpy(&on, c + i, 1);
            if (!on) continue;
            if (i >= g.axis_len)
                return ctx.fail(status::shape_mismatch, "condition {} is true at {}, past the length {} of the input {} on the axis", cond->dims(), i,
                                g.axis_len, in);
            g.kept.push_back(i);
        }
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (size_of(ctx.input_type(0)) == 0) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        shape out;
        if (a.axis) {
            std::size_t axis = 0;
            normalize_axis(*a.axis, in.rank(), axis);
            out = in;
            out[axis] = static_cast<std::int64_t>(g.kept.size());
        } else {
            out.push_back(static_cast<std::int64_t>(g.kept.size()));
        }
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    // The definition: one block copy per kept position per outer row.
    static void reference(const args& g, const std::byte* x, std::byte* y) noexcept {
        if (g.block_bytes == 0) return;
        const auto kept = static_cast<std::int64_t>(g.kept.size());
        for (std::int64_t o = 0; o < g.outer; ++o)
            for (std::int64_t j = 0; j < kept; ++j)
                std::memcpy(y + static_cast<std::size_t>(o * kept + j) * g.block_bytes,
                            x + static_cast<std::size_t>(o * g.axis_len + g.kept[static_cast<std::size_t>(j)]) * g.block_bytes, g.block_bytes);
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const std::byte>(g.x), ctx.at<std::byte>(g.y));
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        ctx.emit(&kernel, std::move(g));
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
