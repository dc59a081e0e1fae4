// SPDX-License-Identifier: Apache-2.0
// Split (ONNX opset 2+), any dtype: cuts input 0 along `axis` (default 0, negative counts from
// the back) into the node's outputs, of the lengths in `split` (an attribute before opset 13, an
// optional int64 input known at compile time from 13 on) or, without it, of equal length (the
// axis must then divide evenly). Each output is one strided copy. opset 18's num_outputs is not
// supported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/ops/layout.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct split {
    static constexpr std::string_view onnx_name = "Split";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t axis = 0;
        std::optional<std::vector<std::int64_t>> split;  // opset < 13
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis), attr("split", &attributes::split));

    /// The axis and each output's length along it.
    static status lengths(const attributes& a, infer_context& ctx, std::size_t& axis, std::vector<std::int64_t>& parts) {
        if (ctx.opset() < 2) return ctx.fail(status::unsupported_op, "Split before opset 2 is not supported; opset is {}", ctx.opset());
        bool given = false;
        if (ctx.opset() < 13) {
            if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
            if (a.split) {
                parts = *a.split;
                given = true;
            }
        } else {
            if (a.split) return ctx.fail(status::invalid_model, "from opset 13 'split' is an input, not an attribute (opset is {})", ctx.opset());
            if (status s = ctx.expect_inputs(1, 2); s != status::ok) return s;
            if (ctx.has_input(1)) {
                if (status s = constant_ints(ctx, 1, "split", parts); s != status::ok) return s;
                given = true;
            }
        }
        const shape& in = ctx.input_shape(0);
        // ONNX allows a negative axis from opset 11; PyTorch exports one at opset 6 too
        // (pytorch-converted/test_GLU) and ONNX Runtime accepts it, so we do as well.
        if (!normalize_axis(a.axis, in.rank(), axis))
            return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {}", a.axis, in);
        const std::size_t outputs = ctx.output_count();
        if (outputs == 0) return ctx.fail(status::invalid_model, "Split needs at least one output");
        const std::int64_t dim = in[axis];
        if (!given) {
            const auto n = static_cast<std::int64_t>(outputs);
            if (dim % n != 0)
                return ctx.fail(status::shape_mismatch, "axis {} of input {} (length {}) does not split into {} equal parts", axis, in, dim, n);
            parts.assign(outputs, dim / n);
            return status::ok;
        }
        if (parts.size() != outputs)
            return ctx.fail(status::invalid_model, "split {} has {} entries but the node has {} outputs", parts, parts.size(), outputs);
        std::int64_t total = 0;
        for (std::int64_t p : parts) {
            if (p < 0 || p > dim) return ctx.fail(status::invalid_model, "split {} has invalid length {}", parts, p);
            total += p;
        }
        if (total != dim)
            return ctx.fail(status::shape_mismatch, "split {} adds up to {} but axis {} of input {} has length {}", parts, total, axis, in, dim);
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        std::size_t axis = 0;
        std::vector<std::int64_t> parts;
        if (status s = lengths(a, ctx, axis, parts); s != status::ok) return s;
        for (std::size_t k = 0; k < parts.size(); ++k) {
            shape out = ctx.input_shape(0);
            out[axis] = parts[k];
            ctx.set_output(k, ctx.input_type(0), out);
        }
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        std::size_t axis = 0;
        std::vector<std::int64_t> parts;
        if (status s = lengths(a, ctx, axis, parts); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        std::int64_t strides[max_rank] = {};
        contiguous_strides(in, strides);
        std::int64_t offset = 0;
        for (std::size_t k = 0; k < parts.size(); ++k) {
            if (ctx.has_output(k)) {
                strided_copy_args g;
                g.x = ctx.input(0);
                g.y = ctx.output(k);
                g.base = offset * strides[axis];
                for (std::size_t d = 0; d < in.rank(); ++d) g.push(d == axis ? parts[k] : in[d], strides[d]);
                if (status s = emit_strided_copy(ctx, ctx.input_type(0), g); s != status::ok) return s;
            }
            offset += parts[k];
        }
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
