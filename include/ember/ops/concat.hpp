// SPDX-License-Identifier: Apache-2.0
// Concat (ONNX opset 4+), any dtype: joins its inputs along `axis` (required; negative from
// opset 11). Every input has the output's dtype and rank and the same dimensions except on the
// axis; inputs with zero length on the axis are allowed and contribute nothing. Where every
// dimension before the axis is 1 (a channel Concat of one image), compile() usually has the inputs
// computed straight into the output and binds no step (op_flags::concatenates, plan_joins() in
// compile/compile.hpp); the kernel below runs for the rest.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct concat {
    static constexpr std::string_view onnx_name = "Concat";
    static constexpr op_flags flags = op_flags::concatenates;

    struct attributes {
        std::int64_t axis = 0;
    };
    static constexpr auto onnx_attributes = std::make_tuple(required_attr("axis", &attributes::axis));

    /// Input and output seen as [outer, block]: input k's block of block_bytes[k] bytes goes to
    /// byte offsets[k] of each output row of row_bytes.
    struct args {
        std::vector<operand> inputs;
        std::vector<std::size_t> block_bytes;
        std::vector<std::size_t> offsets;
        operand y;
        std::size_t outer = 0;
        std::size_t row_bytes = 0;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        if (ctx.input_count() == 0) return ctx.fail(status::invalid_model, "expected at least 1 input, got 0");
        for (std::size_t i = 0; i < ctx.input_count(); ++i)
            if (!ctx.has_input(i)) return ctx.fail(status::invalid_model, "input {} is missing", i);
        const shape& first = ctx.input_shape(0);
        if (first.rank() == 0) return ctx.fail(status::shape_mismatch, "inputs must have rank >= 1, input 0 is a scalar");
        if (a.axis < 0 && ctx.opset() < 11)
            return ctx.fail(status::invalid_model, "negative axis {} needs opset 11 or later, the model has opset {}", a.axis, ctx.opset());
        std::size_t axis = 0;
        if (!normalize_axis(a.axis, first.rank(), axis))
            return ctx.fail(status::invalid_model, "axis {} is out of range for inputs of rank {} (input 0 has shape {})", a.axis, first.rank(),
                            first);
        shape out = first;
        for (std::size_t i = 1; i < ctx.input_count(); ++i) {
            const shape& s = ctx.input_shape(i);
            if (ctx.input_type(i) != ctx.input_type(0))
                return ctx.fail(status::shape_mismatch, "input {} has dtype {}, input 0 has {}", i, ctx.input_type(i), ctx.input_type(0));
            if (s.rank() != first.rank())
                return ctx.fail(status::shape_mismatch, "input {} of shape {} has rank {}, input 0 of shape {} has rank {}", i, s, s.rank(), first,
                                first.rank());
            for (std::size_t d = 0; d < s.rank(); ++d)
                if (d != axis && s[d] != first[d])
                    return ctx.fail(status::shape_mismatch, "input {} of shape {} differs from input 0 of shape {} in dimension {} (axis is {})", i,
                                    s, first, d, axis);
            out[axis] += s[axis];
        }
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    // The definition, one input at a time: input k's rows go to their columns of the output rows,
    // each row in pieces of up to piece_bytes so that a few long rows (a channel Concat of one
    // image) split over the threads too.
    static constexpr std::size_t piece_bytes = std::size_t{64} << 10;
    static void place(const args& g, std::size_t k, const std::byte* x, std::byte* y, const executor* ex) noexcept {
        const std::size_t block = g.block_bytes[k];
        if (block == 0 || g.outer == 0) return;
        std::byte* dst = y + g.offsets[k];
        const std::size_t pieces = (block + piece_bytes - 1) / piece_bytes;
        parallel_for(ex, g.outer * pieces, [&](std::size_t begin, std::size_t end) {
            for (std::size_t i = begin; i < end; ++i) {
                const std::size_t o = i / pieces, at = i % pieces * piece_bytes;
                std::memcpy(dst + o * g.row_bytes + at, x + o * block + at, std::min(piece_bytes, block - at));
            }
        });
    }
    /// All inputs at once: xs[k] is input k.
    static void reference(const args& g, const std::byte* const* xs, std::byte* y, const executor* ex) noexcept {
        for (std::size_t k = 0; k < g.inputs.size(); ++k) place(g, k, xs[k], y, ex);
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        std::byte* y = ctx.at<std::byte>(g.y);
        for (std::size_t k = 0; k < g.inputs.size(); ++k) place(g, k, ctx.at<const std::byte>(g.inputs[k]), y, ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        const shape& out = ctx.output_shape(0);
        std::size_t axis = 0;
        normalize_axis(a.axis, out.rank(), axis);
        std::size_t outer = 1, inner = 1;
        for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<std::size_t>(out[d]);
        for (std::size_t d = axis + 1; d < out.rank(); ++d) inner *= static_cast<std::size_t>(out[d]);
        const std::size_t elem = size_of(ctx.input_type(0));
        args g;
        g.y = ctx.output(0);
        g.outer = outer;
        g.row_bytes = static_cast<std::size_t>(out[axis]) * inner * elem;
        std::size_t offset = 0;
        for (std::size_t k = 0; k < ctx.input_count(); ++k) {
            const std::size_t block = static_cast<std::size_t>(ctx.input_shape(k)[axis]) * inner * elem;
            g.inputs.push_back(ctx.input(k));
            g.block_bytes.push_back(block);
            g.offsets.push_back(offset);
            offset += block;
        }
        ctx.emit(&kernel, std::move(g));
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
