// SPDX-License-Identifier: Apache-2.0
// TopK (ONNX opset 1+), any numeric dtype: the k largest (largest=1, default) or smallest
// (largest=0, opset 11) elements of each line along `axis` (default -1), as Values and their
// int64 Indices. k is the attribute `k` before opset 10 and a 1-element int64 input from 10 on;
// that input must be known at compile time (it fixes the output shape). The result is always
// sorted (best first; sorted=0 allows any order, so this one is as good), ties going to the lower
// index. A NaN counts as larger than every number.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct top_k {
    static constexpr std::string_view onnx_name = "TopK";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t axis = -1;
        std::optional<std::int64_t> k;         // opset 1-9
        std::optional<std::int64_t> largest;   // opset 11: default 1
        std::optional<std::int64_t> sorted;    // opset 11: default 1
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis), attr("k", &attributes::k),
                                                            attr("largest", &attributes::largest), attr("sorted", &attributes::sorted));

    /// X seen as [outer, axis_len, inner]; k of each line kept.
    struct args {
        operand x, values, indices, work;
        std::int64_t outer = 0, axis_len = 0, inner = 0, k = 0;
        bool largest = true;
        bool has_values = false, has_indices = false;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g, shape& out) {
        const bool k_input = ctx.opset() >= 10;
        if (status s = ctx.expect_inputs(k_input ? 2 : 1, k_input ? 2 : 1); s != status::ok) return s;
        if (ctx.output_count() > 2) return ctx.fail(status::invalid_model, "expected 1 or 2 outputs, got {}", ctx.output_count());
        if (ctx.input_type(0) == dtype::boolean || ctx.input_type(0) == dtype::undefined)
            return ctx.fail(status::unsupported_op, "input 0 has dtype {}, expected a numeric dtype", ctx.input_type(0));
        if ((a.largest || a.sorted) && ctx.opset() < 11)
            return ctx.fail(status::invalid_model, "attributes 'largest' and 'sorted' need opset 11 or later (opset is {})", ctx.opset());
        std::int64_t k = 0;
        if (k_input) {
            if (a.k) return ctx.fail(status::invalid_model, "from opset 10 k is input 1, not an attribute (opset is {})", ctx.opset());
            if (ctx.input_type(1) != dtype::int64) return ctx.fail(status::invalid_model, "input 1 (K) must be int64, got {}", ctx.input_type(1));
            const tensor* t = ctx.require_constant(1, "K");
            if (!t) return status::unsupported_op;
            if (t->size() != 1 || t->rank() > 1)
                return ctx.fail(status::invalid_model, "input 1 (K) must hold exactly one value, got shape {}", t->dims());
            k = t->data<std::int64_t>()[0];
        } else {
            if (!a.k) return ctx.fail(status::invalid_model, "required attribute 'k' is missing (opset {} < 10)", ctx.opset());
            k = *a.k;
        }
        const shape& x = ctx.input_shape(0);
        std::size_t axis = 0;
        if (!normalize_axis(a.axis, x.rank(), axis))
            return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {} (rank {})", a.axis, x, x.rank());
        if (k < 0 || k > x[axis])
            return ctx.fail(status::invalid_model, "k is {}, expected 0 to {} (the length of axis {} of input {})", k, x[axis], a.axis, x);
        g.outer = 1;
        g.inner = 1;
        for (std::size_t i = 0; i < axis; ++i) g.outer *= x[i];
        for (std::size_t i = axis + 1; i < x.rank(); ++i) g.inner *= x[i];
        g.axis_len = x[axis];
        g.k = k;
        g.largest = a.largest.value_or(1) != 0;
        out = x;
        out[axis] = k;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), out);
        ctx.set_output(1, dtype::int64, out);
        return status::ok;
    }

    /// Scratch: one index per element of a line.
    static std::size_t workspace_bytes(const attributes&, const infer_context& ctx) {
        const shape& x = ctx.input_shape(0);
        std::int64_t longest = 0;
        for (std::size_t i = 0; i < x.rank(); ++i) longest = x[i] > longest ? x[i] : longest;
        return static_cast<std::size_t>(longest) * sizeof(std::int64_t);
    }

    // The definition: per line, a partial sort of its indices by (value, then lower index first).
    // `work` holds axis_len indices. values / indices may be null (unused outputs).
    template <class T>
    static void reference(const args& g, const T* x, T* values, std::int64_t* indices, std::int64_t* work) noexcept {
        using reduce_detail::is_nan;
        using reduce_detail::widen;
        const std::int64_t L = g.axis_len, S = g.inner, K = g.k;
        for (std::int64_t line = 0; line < g.outer * S; ++line) {
            const std::int64_t o = line / S, i = line % S;
            const T* xl = x + o * L * S + i;
            for (std::int64_t j = 0; j < L; ++j) work[j] = j;
            // A strict weak order: NaN above every number, equal values by index.
            auto before = [&](std::int64_t p, std::int64_t q) {
                const T a = xl[p * S], b = xl[q * S];
                const bool na = is_nan(a), nb = is_nan(b);
                if (na || nb) {
                    if (na && nb) return p < q;
                    return g.largest ? na : nb;
                }
                const auto wa = widen(a), wb = widen(b);
                if (wa != wb) return g.largest ? wa > wb : wa < wb;
                return p < q;
            };
            std::partial_sort(work, work + K, work + L, before);
            for (std::int64_t j = 0; j < K; ++j) {
                const std::int64_t at = (o * K + j) * S + i;
                if (values) values[at] = xl[work[j] * S];
                if (indices) indices[at] = work[j];
            }
        }
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), g.has_values ? ctx.at<T>(g.values) : nullptr,
                     g.has_indices ? ctx.at<std::int64_t>(g.indices) : nullptr, ctx.at<std::int64_t>(g.work));
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        if (out.elements() == 0) return status::ok;  // k = 0 or an empty input: nothing to write
        g.x = ctx.input(0);
        g.has_values = ctx.has_output(0);
        g.has_indices = ctx.has_output(1);
        if (g.has_values) g.values = ctx.output(0);
        if (g.has_indices) g.indices = ctx.output(1);
        g.work = ctx.workspace();
        kernel_fn fn = nullptr;
        reduce_detail::visit_numeric(ctx.input_type(0), [&](auto tag) { fn = &kernel<decltype(tag)>; });
        if (!fn) return ctx.fail(status::unsupported_op, "no kernel for dtype {}", ctx.input_type(0));
        ctx.emit(fn, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
