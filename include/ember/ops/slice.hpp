// SPDX-License-Identifier: Apache-2.0
// Slice (ONNX opset 1+), any dtype: for each listed axis, the elements start, start + step, ...
// up to but excluding end. Before opset 10 starts/ends/axes are attributes and the step is 1;
// from opset 10 they are inputs (int32 or int64, known at compile time) with optional axes and
// steps, and a step may be negative. Negative starts and ends count from the back of the axis;
// then, as the ONNX spec says, both are clamped to [0, dim] for a positive step and to
// [0, dim - 1] (start) and [-1, dim - 1] (end) for a negative one, so out-of-range bounds such as
// INT64_MAX mean "to the end".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/ops/layout.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct slice {
    static constexpr std::string_view onnx_name = "Slice";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::optional<std::vector<std::int64_t>> starts, ends, axes;  // opset < 10
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("starts", &attributes::starts), attr("ends", &attributes::ends), attr("axes", &attributes::axes));

    /// Per input dimension: the first element read and the step (1 and 0 for untouched axes);
    /// `dims` is the output shape.
    struct plan {
        shape dims;
        std::int64_t start[max_rank] = {};
        std::int64_t step[max_rank] = {};
    };

    /// ONNX's clamping of one axis: the first index and the output length.
    static void resolve(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step, std::int64_t& first,
                        std::int64_t& length) noexcept {
        if (start < 0) start += dim;
        if (end < 0) end += dim;
        auto clamp = [](std::int64_t v, std::int64_t lo, std::int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); };
        if (step > 0) {
            start = clamp(start, 0, dim);
            end = clamp(end, 0, dim);
            length = end > start ? (end - start - 1) / step + 1 : 0;
        } else {
            start = clamp(start, 0, dim - 1);
            end = clamp(end, -1, dim - 1);
            const std::int64_t back = step == INT64_MIN ? INT64_MAX : -step;  // same result, no overflow
            length = start > end ? (start - end - 1) / back + 1 : 0;
        }
        if (dim == 0) length = 0;
        first = length > 0 ? start : 0;
    }

    static status make_plan(const attributes& a, infer_context& ctx, plan& p) {
        std::vector<std::int64_t> starts, ends, axes, steps;
        bool has_axes = false, has_steps = false;
        if (ctx.opset() < 10) {
            if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
            if (!a.starts || !a.ends) return ctx.fail(status::invalid_model, "attributes 'starts' and 'ends' are required before opset 10");
            starts = *a.starts;
            ends = *a.ends;
            if (a.axes) {
                axes = *a.axes;
                has_axes = true;
            }
        } else {
            if (a.starts || a.ends || a.axes)
                return ctx.fail(status::invalid_model, "from opset 10 starts, ends and axes are inputs, not attributes (opset is {})", ctx.opset());
            if (status s = ctx.expect_inputs(3, 5); s != status::ok) return s;
            if (status s = constant_ints(ctx, 1, "starts", starts); s != status::ok) return s;
            if (status s = constant_ints(ctx, 2, "ends", ends); s != status::ok) return s;
            if (ctx.has_input(3)) {
                if (status s = constant_ints(ctx, 3, "axes", axes); s != status::ok) return s;
                has_axes = true;
            }
            if (ctx.has_input(4)) {
                if (status s = constant_ints(ctx, 4, "steps", steps); s != status::ok) return s;
                has_steps = true;
            }
        }
        const shape& in = ctx.input_shape(0);
        if (starts.size() != ends.size())
            return ctx.fail(status::invalid_model, "starts {} and ends {} differ in length", starts, ends);
        if (!has_axes)
            for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
        if (axes.size() != starts.size())
            return ctx.fail(status::invalid_model, "axes {} and starts {} differ in length", axes, starts);
        if (!has_steps) steps.assign(starts.size(), 1);
        if (steps.size() != starts.size())
            return ctx.fail(status::invalid_model, "steps {} and starts {} differ in length", steps, starts);
        std::vector<std::size_t> norm;
        if (status s = normalize_axes(ctx, axes, in.rank(), norm); s != status::ok) return s;
        p.dims = in;
        for (std::size_t d = 0; d < in.rank(); ++d) {
            p.start[d] = 0;
            p.step[d] = 1;
        }
        for (std::size_t i = 0; i < norm.size(); ++i) {
            if (steps[i] == 0) return ctx.fail(status::invalid_model, "steps {} has a 0 (axis {})", steps, axes[i]);
            const std::size_t d = norm[i];
            std::int64_t first = 0, length = 0;
            resolve(in[d], starts[i], ends[i], steps[i], first, length);
            p.dims[d] = length;
            p.start[d] = first;
            p.step[d] = length > 1 ? steps[i] : 1;  // |step| < dim then, so step * stride cannot overflow
        }
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        plan p;
        if (status s = make_plan(a, ctx, p); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), p.dims);
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        plan p;
        if (status s = make_plan(a, ctx, p); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        std::int64_t strides[max_rank] = {};
        contiguous_strides(in, strides);
        strided_copy_args g;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        for (std::size_t d = 0; d < in.rank(); ++d) {
            g.base += p.start[d] * strides[d];
            g.push(p.dims[d], p.step[d] * strides[d]);
        }
        return emit_strided_copy(ctx, ctx.input_type(0), g);
    }
};

} // namespace ops
EMBER_NAMESPACE_END
