// SPDX-License-Identifier: Apache-2.0
// ArgMax and ArgMin (ONNX opset 1+), any numeric dtype: the int64 index of the largest
// (smallest) element along `axis` (default 0; negative from opset 11), the axis kept as 1 when
// keepdims=1 (default) or removed. On ties the first index wins, or the last with
// select_last_index=1 (opset 12). A NaN counts as larger (ArgMax) or smaller (ArgMin) than every
// number, so its index is chosen, as numpy does. The axis must not be empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

template <bool IsMax>
struct arg_reduce_op {
    static constexpr std::string_view onnx_name = IsMax ? "ArgMax" : "ArgMin";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t axis = 0;
        std::int64_t keepdims = 1;
        std::optional<std::int64_t> select_last_index;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis), attr("keepdims", &attributes::keepdims),
                                                            attr("select_last_index", &attributes::select_last_index));

    /// The input seen as [outer, axis_len, inner].
    struct args {
        operand x, y;
        std::int64_t outer = 0, axis_len = 0, inner = 0;
        bool last = false;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g, shape& out) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (ctx.input_type(0) == dtype::boolean || ctx.input_type(0) == dtype::undefined)
            return ctx.fail(status::unsupported_op, "input 0 has dtype {}, expected a numeric dtype", ctx.input_type(0));
        if (a.select_last_index && ctx.opset() < 12)
            return ctx.fail(status::invalid_model, "attribute 'select_last_index' needs opset 12 or later (opset is {})", ctx.opset());
        const shape& in = ctx.input_shape(0);
        std::size_t k = 0;
        if (!normalize_axis(a.axis, in.rank(), k))
            return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {} (rank {})", a.axis, in, in.rank());
        if (in[k] == 0)
            return ctx.fail(status::shape_mismatch, "axis {} of input {} is empty: there is no {} of nothing", a.axis, in, onnx_name);
        g.outer = 1;
        g.inner = 1;
        for (std::size_t i = 0; i < k; ++i) g.outer *= in[i];
        for (std::size_t i = k + 1; i < in.rank(); ++i) g.inner *= in[i];
        g.axis_len = in[k];
        g.last = a.select_last_index.value_or(0) != 0;
        out = shape();
        for (std::size_t i = 0; i < in.rank(); ++i)
            if (i != k) out.push_back(in[i]);
            else if (a.keepdims) out.push_back(1);
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        ctx.set_output(0, dtype::int64, out);
        return status::ok;
    }

    /// True when v should replace the current best b (strictly better, or equal and `last`).
    template <class T>
    static bool better(T v, T b, bool last) noexcept {
        using namespace reduce_detail;
        if (is_nan(b)) return false;  // the first NaN stays
        if (is_nan(v)) return true;
        const auto wv = widen(v), wb = widen(b);
        return IsMax ? (wv > wb || (last && wv == wb)) : (wv < wb || (last && wv == wb));
    }

    // The definition: a scan of each line of axis_len elements (stride inner).
    template <class T>
    static void reference(const args& g, const T* x, std::int64_t* y, const executor* ex) noexcept {
        parallel_for(ex, static_cast<std::size_t>(g.outer * g.inner), [&](std::size_t begin, std::size_t end) {
            for (auto line = static_cast<std::int64_t>(begin); line < static_cast<std::int64_t>(end); ++line) {
                const T* xl = x + (line / g.inner) * g.axis_len * g.inner + line % g.inner;
                std::int64_t best = 0;
                for (std::int64_t j = 1; j < g.axis_len; ++j)
                    if (better(xl[j * g.inner], xl[best * g.inner], g.last)) best = j;
                y[line] = best;
            }
        });
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<std::int64_t>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        kernel_fn fn = nullptr;
        reduce_detail::visit_numeric(ctx.input_type(0), [&](auto tag) { fn = &kernel<decltype(tag)>; });
        if (!fn) return ctx.fail(status::unsupported_op, "no kernel for dtype {}", ctx.input_type(0));
        ctx.emit(fn, g);
        return status::ok;
    }
};

using arg_max = arg_reduce_op<true>;
using arg_min = arg_reduce_op<false>;

} // namespace ops
EMBER_NAMESPACE_END
