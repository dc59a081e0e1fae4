// SPDX-License-Identifier: Apache-2.0
// Pad (ONNX opset 2+), any dtype: adds pads[d] elements before and pads[rank + d] after each
// dimension d; negative pads remove elements instead. Before opset 11 `pads` and the float
// `value` are attributes; from opset 11 they are inputs: pads (int64, known at compile time) and
// an optional scalar constant_value of the data's dtype, read at run time. Modes: constant
// (the value), edge (the nearest edge element) and reflect (mirrored about the edge element,
// which is not repeated; pads longer than the axis reflect again, as numpy.pad does).
// opset 18's axes input and opset 19's wrap mode are not supported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ember/ops/cast.hpp"
#include "ember/ops/layout.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct pad {
    static constexpr std::string_view onnx_name = "Pad";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::string mode = "constant";
        std::optional<std::vector<std::int64_t>> pads;  // opset < 11
        std::optional<float> value;                     // opset < 11, 0 when absent
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("mode", &attributes::mode), attr("pads", &attributes::pads), attr("value", &attributes::value));

    enum class pad_mode : std::uint8_t { constant, edge, reflect };

    struct args {
        operand x, y, value;
        bool value_input = false;  ///< read the constant from `value` at run time
        pad_mode mode = pad_mode::constant;
        std::uint32_t rank = 0;
        std::int64_t out_dims[max_rank] = {};
        std::int64_t in_dims[max_rank] = {};
        std::int64_t in_strides[max_rank] = {};
        std::int64_t before[max_rank] = {};
        std::int64_t count = 0;
        std::byte fill[8] = {};  ///< the constant when it is not an input
    };

    static status parse(const attributes& a, infer_context& ctx, pad_mode& mode, std::vector<std::int64_t>& pads) {
        if (ctx.opset() < 2) return ctx.fail(status::unsupported_op, "Pad before opset 2 (paddings) is not supported; opset is {}", ctx.opset());
        if (a.mode == "constant") mode = pad_mode::constant;
        else if (a.mode == "edge") mode = pad_mode::edge;
        else if (a.mode == "reflect") mode = pad_mode::reflect;
        else return ctx.fail(status::unsupported_op, "mode '{}' is not supported (constant, edge, reflect)", a.mode);
        if (ctx.opset() < 11) {
            if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
            if (!a.pads) return ctx.fail(status::invalid_model, "required attribute 'pads' is missing");
            pads = *a.pads;
        } else {
            if (a.pads || a.value)
                return ctx.fail(status::invalid_model, "from opset 11 pads and the value are inputs, not attributes (opset is {})", ctx.opset());
            if (status s = ctx.expect_inputs(2, 3); s != status::ok) return s;
            if (status s = constant_ints(ctx, 1, "pads", pads); s != status::ok) return s;
            if (ctx.has_input(2)) {
                if (ctx.input_type(2) != ctx.input_type(0))
                    return ctx.fail(status::invalid_model, "constant_value has dtype {}, the data has {}", ctx.input_type(2), ctx.input_type(0));
                if (ctx.input_shape(2).elements() != 1)
                    return ctx.fail(status::invalid_model, "constant_value must hold one element, it has shape {}", ctx.input_shape(2));
            }
        }
        const shape& in = ctx.input_shape(0);
        if (pads.size() != 2 * in.rank())
            return ctx.fail(status::invalid_model, "pads {} has {} entries, expected 2 * rank = {} for input {}", pads, pads.size(), 2 * in.rank(),
                            in);
        for (std::size_t d = 0; d < in.rank(); ++d) {
            const std::int64_t b = pads[d], e = pads[in.rank() + d];
            const std::int64_t limit = std::int64_t{1} << 40;
            if (b < -limit || b > limit || e < -limit || e > limit)
                return ctx.fail(status::invalid_model, "pads {} has an entry out of range", pads);
            if (in[d] + b + e < 0)
                return ctx.fail(status::shape_mismatch, "pads {} remove more than dimension {} of input {} holds", pads, d, in);
            if (mode != pad_mode::constant && in[d] == 0 && in[d] + b + e > 0)
                return ctx.fail(status::shape_mismatch, "{} padding of empty dimension {} of input {} has nothing to copy", a.mode, d, in);
        }
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        pad_mode mode = pad_mode::constant;
        std::vector<std::int64_t> pads;
        if (status s = parse(a, ctx, mode, pads); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        shape out;
        for (std::size_t d = 0; d < in.rank(); ++d) out.push_back(in[d] + pads[d] + pads[in.rank() + d]);
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    /// The input index that output index i of a dimension reads, or -1 for the constant.
    static std::int64_t source(const args& g, std::size_t d, std::int64_t i) noexcept {
        const std::int64_t n = g.in_dims[d];
        std::int64_t j = i - g.before[d];
        if (j >= 0 && j < n) return j;
        switch (g.mode) {
            case pad_mode::constant: return -1;
            case pad_mode::edge: return j < 0 ? 0 : n - 1;
            case pad_mode::reflect: {
                if (n == 1) return 0;
                const std::int64_t period = 2 * (n - 1);
                j %= period;
                if (j < 0) j += period;
                return j < n ? j : period - j;
            }
        }
        return -1;
    }

    // The definition: every output element from its source element, or the constant.
    template <std::size_t Bytes>
    static void reference(const args& g, const std::byte* x, std::byte* y, const std::byte* fill) noexcept {
        std::int64_t index[max_rank] = {};
        for (std::int64_t o = 0; o < g.count; ++o) {
            std::int64_t offset = 0;
            bool inside = true;
            for (std::size_t d = 0; d < g.rank && inside; ++d) {
                const std::int64_t j = source(g, d, index[d]);
                inside = j >= 0;
                offset += j * g.in_strides[d];
            }
            std::memcpy(y + static_cast<std::size_t>(o) * Bytes, inside ? x + static_cast<std::size_t>(offset) * Bytes : fill, Bytes);
            for (std::size_t d = g.rank; d-- > 0;) {
                if (++index[d] < g.out_dims[d]) break;
                index[d] = 0;
            }
        }
    }

    template <std::size_t Bytes>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        const std::byte* fill = g.value_input ? ctx.at<const std::byte>(g.value) : g.fill;
        reference<Bytes>(g, ctx.at<const std::byte>(g.x), ctx.at<std::byte>(g.y), fill);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        std::vector<std::int64_t> pads;
        if (status s = parse(a, ctx, g.mode, pads); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        g.rank = static_cast<std::uint32_t>(in.rank());
        contiguous_strides(in, g.in_strides);
        for (std::size_t d = 0; d < in.rank(); ++d) {
            g.in_dims[d] = in[d];
            g.out_dims[d] = ctx.output_shape(0)[d];
            g.before[d] = pads[d];
        }
        g.count = ctx.output_shape(0).elements();
        if (ctx.opset() >= 11 && ctx.has_input(2)) {
            g.value_input = true;
            g.value = ctx.input(2);
        } else if (ctx.opset() < 11) {
            visit_dtype(ctx.input_type(0), [&](auto t) {
                const auto v = convert_element<decltype(t)>(a.value.value_or(0.0f));
                std::memcpy(g.fill, &v, sizeof v);
            });
        }
        kernel_fn fn = nullptr;
        switch (size_of(ctx.input_type(0))) {
            case 1: fn = &kernel<1>; break;
            case 2: fn = &kernel<2>; break;
            case 4: fn = &kernel<4>; break;
            case 8: fn = &kernel<8>; break;
            default: return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        }
        ctx.emit(fn, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
