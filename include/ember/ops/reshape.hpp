// SPDX-License-Identifier: Apache-2.0
// Reshape (ONNX opset 5+), any dtype: the same elements in the same order under a new shape,
// given as an int64 second input that must be known at compile time. In the shape, 0 copies the
// input's dimension at that index (unless allowzero=1, opset 14, where 0 means 0) and a single -1
// is inferred from the element count. Planned in place, so it usually costs nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/ops/copy.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct reshape {
    static constexpr std::string_view onnx_name = "Reshape";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;

    struct attributes {
        bool allowzero = false;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("allowzero", &attributes::allowzero));

    static status infer(const attributes& a, infer_context& ctx) {
        if (ctx.opset() < 5)
            return ctx.fail(status::unsupported_op, "Reshape before opset 5 (shape as an attribute) is not supported; opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (ctx.input_type(1) != dtype::int64)
            return ctx.fail(status::invalid_model, "the shape input must be int64, got {}", ctx.input_type(1));
        const tensor* target = ctx.require_constant(1, "shape");
        if (!target) return status::unsupported_op;
        const shape& in = ctx.input_shape(0);
        if (target->rank() != 1)
            return ctx.fail(status::invalid_model, "the shape input must be 1-D, got shape {}", target->dims());
        const std::size_t rank = target->size();
        if (!shape::valid_rank(rank))
            return ctx.fail(status::unsupported_op, "target rank {} is more than EMBER_MAX_RANK ({})", rank, max_rank);
        const std::int64_t* wanted = target->data<std::int64_t>();
        std::vector<std::int64_t> requested(wanted, wanted + rank);

        shape out;
        std::size_t inferred = rank;  // index of the -1, rank when none
        bool has_zero = false;
        std::int64_t known = 1;  // product of the dims other than the -1
        for (std::size_t i = 0; i < rank; ++i) {
            std::int64_t d = wanted[i];
            if (d == -1) {
                if (inferred != rank)
                    return ctx.fail(status::invalid_model, "shape {} has more than one -1 (input shape {})", requested, in);
                inferred = i;
                out.push_back(1);
                continue;
            }
            if (d < -1) return ctx.fail(status::invalid_model, "shape {} has invalid dimension {} at index {}", requested, d, i);
            if (d == 0 && !a.allowzero) {
                if (i >= in.rank())
                    return ctx.fail(status::shape_mismatch, "shape {} copies dimension {} (0) but the input {} has rank {}", requested, i,
                                    in, in.rank());
                d = in[i];
            } else if (d == 0) {
                has_zero = true;
            }
            if (!detail::checked_mul(known, d, known))
                return ctx.fail(status::shape_mismatch, "shape {} has too many elements", requested);
            out.push_back(d);
        }
        const std::int64_t total = in.elements();
        if (inferred != rank) {
            if (has_zero)
                return ctx.fail(status::invalid_model, "shape {} has both -1 and 0 with allowzero=1", requested);
            if (known == 0 || total % known != 0)
                return ctx.fail(status::shape_mismatch,
                                "cannot infer the -1 in shape {}: input {} has {} elements and the other dimensions multiply to {}", requested,
                                in, total, known);
            out[inferred] = total / known;
        } else if (known != total) {
            return ctx.fail(status::shape_mismatch, "cannot reshape input {} ({} elements) to {} ({} elements; requested {})", in, total, out,
                            known, requested);
        }
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    static status bind(const attributes&, bind_context& ctx) { return bind_copy(ctx); }
};

} // namespace ops
EMBER_NAMESPACE_END
