// SPDX-License-Identifier: Apache-2.0
// Squeeze and Unsqueeze (ONNX opset 1+), any dtype: remove or insert size-1 dimensions. The axes
// are an attribute before opset 13 and an int64 input (known at compile time) from 13 on;
// negative axes count from the back (opset 11). Squeeze without axes (or with an empty list, as
// ONNX Runtime reads it) removes every size-1 dimension. Both only move bytes and are planned
// in place, so they usually cost nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/ops/copy.hpp"
#include "ember/ops/layout.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// The axes of (Un)Squeeze: the attribute before opset 13, input 1 from 13 (optional when
/// `optional_input`). `given` is false when there are none.
inline status squeeze_axes_of(const std::optional<std::vector<std::int64_t>>& attribute, infer_context& ctx, bool optional_input,
                           std::vector<std::int64_t>& axes, bool& given) {
    given = false;
    if (ctx.opset() < 13) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (attribute) {
            axes = *attribute;
            given = true;
        }
        return status::ok;
    }
    if (attribute) return ctx.fail(status::invalid_model, "from opset 13 the axes are an input, not an attribute (opset is {})", ctx.opset());
    if (status s = ctx.expect_inputs(optional_input ? 1 : 2, 2); s != status::ok) return s;
    if (!ctx.has_input(1)) return status::ok;
    if (status s = constant_ints(ctx, 1, "axes", axes); s != status::ok) return s;
    given = true;
    return status::ok;
}

struct squeeze {
    static constexpr std::string_view onnx_name = "Squeeze";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;

    struct attributes {
        std::optional<std::vector<std::int64_t>> axes;  // opset < 13
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axes", &attributes::axes));

    static status infer(const attributes& a, infer_context& ctx) {
        std::vector<std::int64_t> axes;
        bool given = false;
        if (status s = squeeze_axes_of(a.axes, ctx, true, axes, given); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        std::vector<bool> drop(in.rank(), false);
        if (given && !axes.empty()) {  // empty axes remove every size-1 dimension, as in ONNX Runtime
            std::vector<std::size_t> norm;
            if (status s = normalize_axes(ctx, axes, in.rank(), norm); s != status::ok) return s;
            for (std::size_t k : norm) {
                if (in[k] != 1)
                    return ctx.fail(status::shape_mismatch, "cannot squeeze axis {} of input {}: its size is {}, not 1", k, in, in[k]);
                drop[k] = true;
            }
        } else {
            for (std::size_t k = 0; k < in.rank(); ++k) drop[k] = in[k] == 1;
        }
        shape out;
        for (std::size_t k = 0; k < in.rank(); ++k)
            if (!drop[k]) out.push_back(in[k]);
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    static status bind(const attributes&, bind_context& ctx) { return bind_copy(ctx); }
};

struct unsqueeze {
    static constexpr std::string_view onnx_name = "Unsqueeze";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;

    struct attributes {
        std::optional<std::vector<std::int64_t>> axes;  // opset < 13, required there
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axes", &attributes::axes));

    static status infer(const attributes& a, infer_context& ctx) {
        std::vector<std::int64_t> axes;
        bool given = false;
        if (status s = squeeze_axes_of(a.axes, ctx, false, axes, given); s != status::ok) return s;
        if (!given) return ctx.fail(status::invalid_model, "required attribute 'axes' is missing");
        const shape& in = ctx.input_shape(0);
        const std::size_t rank = in.rank() + axes.size();
        if (!shape::valid_rank(rank))
            return ctx.fail(status::unsupported_op, "output rank {} is more than EMBER_MAX_RANK ({})", rank, max_rank);
        std::vector<std::size_t> norm;
        if (status s = normalize_axes(ctx, axes, rank, norm); s != status::ok) return s;
        std::vector<bool> inserted(rank, false);
        for (std::size_t k : norm) inserted[k] = true;
        shape out;
        std::size_t next = 0;
        for (std::size_t k = 0; k < rank; ++k) out.push_back(inserted[k] ? 1 : in[next++]);
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    static status bind(const attributes&, bind_context& ctx) { return bind_copy(ctx); }
};

} // namespace ops
EMBER_NAMESPACE_END
