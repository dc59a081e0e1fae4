// SPDX-License-Identifier: Apache-2.0
// The variadic element-wise ops, one or more inputs broadcast together (numpy rules from opset
// 8; before it every input has the same shape): Max and Min (floats; every numeric type from
// opset 12; NaN wins, as in numpy), Sum and Mean (floats). bfloat16 from opset 13. float16 and
// bfloat16 accumulate in float.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ember/ops/binary.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace variadic_fn {
struct max {
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(opset >= 12 ? types::numeric : types::floats, opset); }
    static constexpr dtype_set supported = types::numeric | types::bf16;
    template <class C>
    static C combine(C acc, C v) noexcept {
        if constexpr (std::is_floating_point_v<C>) {
            if (std::isnan(acc)) return acc;
            if (std::isnan(v)) return v;
        }
        return v > acc ? v : acc;
    }
    template <class C>
    static C finish(C acc, std::size_t) noexcept {
        return acc;
    }
};
struct min {
    static dtype_set types(std::int64_t opset) noexcept { return max::types(opset); }
    static constexpr dtype_set supported = types::numeric | types::bf16;
    template <class C>
    static C combine(C acc, C v) noexcept {
        if constexpr (std::is_floating_point_v<C>) {
            if (std::isnan(acc)) return acc;
            if (std::isnan(v)) return v;
        }
        return v < acc ? v : acc;
    }
    template <class C>
    static C finish(C acc, std::size_t) noexcept {
        return acc;
    }
};
struct sum {
    static dtype_set types(std::int64_t opset) noexcept { return types::with_bf16(types::floats, opset); }
    static constexpr dtype_set supported = types::floats | types::bf16;
    template <class C>
    static C combine(C acc, C v) noexcept {
        return acc + v;
    }
    template <class C>
    static C finish(C acc, std::size_t) noexcept {
        return acc;
    }
};
struct mean {
    static dtype_set types(std::int64_t opset) noexcept { return sum::types(opset); }
    static constexpr dtype_set supported = types::floats | types::bf16;
    template <class C>
    static C combine(C acc, C v) noexcept {
        return acc + v;
    }
    template <class C>
    static C finish(C acc, std::size_t n) noexcept {
        return acc / static_cast<C>(n);
    }
};
} // namespace variadic_fn

/// A variadic op over Fn (static combine/finish): y = finish(combine(...combine(x0, x1)..., xn)).
template <class Fn>
struct variadic_op {
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place;
    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    struct args {
        std::vector<operand> inputs;
        std::vector<std::int64_t> strides;  ///< max_rank per input
        operand y;
        std::uint32_t rank = 0;
        std::int64_t dims[max_rank] = {};
        std::int64_t count = 0;
    };

    static status infer(const attributes&, infer_context& ctx) {
        if (ctx.input_count() == 0) return ctx.fail(status::invalid_model, "expected at least 1 input, got 0");
        for (std::size_t i = 0; i < ctx.input_count(); ++i)
            if (!ctx.has_input(i)) return ctx.fail(status::invalid_model, "input {} is missing", i);
        if (status s = expect_dtype(ctx, 0, Fn::types(ctx.opset())); s != status::ok) return s;
        shape out = ctx.input_shape(0);
        for (std::size_t i = 1; i < ctx.input_count(); ++i) {
            if (ctx.input_type(i) != ctx.input_type(0))
                return ctx.fail(status::shape_mismatch, "input {} has dtype {}, input 0 has {}", i, ctx.input_type(i), ctx.input_type(0));
            if (ctx.opset() < 8) {
                if (ctx.input_shape(i) != out)
                    return ctx.fail(status::shape_mismatch, "input {} has shape {}, input 0 has {} (no broadcasting before opset 8)", i,
                                    ctx.input_shape(i), out);
                continue;
            }
            shape next;
            if (!broadcast_shapes(out, ctx.input_shape(i), next))
                return ctx.fail(status::shape_mismatch, "input {} of shape {} does not broadcast with {}", i, ctx.input_shape(i), out);
            out = next;
        }
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        using C = compute_t<T>;
        const auto& a = *static_cast<const args*>(p);
        if (a.count == 0) return;
        const std::size_t n = a.inputs.size();
        storage_t<T>* y = ctx.at<storage_t<T>>(a.y);
        const std::size_t last = a.rank == 0 ? 0 : a.rank - 1;
        const std::int64_t inner = a.rank == 0 ? 1 : a.dims[last];
        std::int64_t index[max_rank] = {};
        for (std::int64_t row = 0; row < a.count; row += inner) {
            for (std::int64_t j = 0; j < inner; ++j) {
                C acc{};
                for (std::size_t k = 0; k < n; ++k) {
                    const std::int64_t* s = a.strides.data() + k * max_rank;
                    std::int64_t off = a.rank == 0 ? 0 : j * s[last];
                    for (std::size_t d = 0; d < last; ++d) off += index[d] * s[d];
                    const C v = element<T>::load(ctx.at<const storage_t<T>>(a.inputs[k])[off]);
                    acc = k == 0 ? v : Fn::combine(acc, v);
                }
                y[row + j] = element<T>::store(Fn::finish(acc, n));
            }
            for (std::size_t d = last; d-- > 0;) {
                if (++index[d] < a.dims[d]) break;
                index[d] = 0;
            }
        }
    }

    static status bind(const attributes&, bind_context& ctx) {
        args a;
        const shape& out = ctx.output_shape(0);
        a.y = ctx.output(0);
        a.rank = static_cast<std::uint32_t>(out.rank());
        for (std::size_t i = 0; i < out.rank(); ++i) a.dims[i] = out[i];
        a.count = out.elements();
        a.strides.assign(ctx.input_count() * max_rank, 0);
        for (std::size_t k = 0; k < ctx.input_count(); ++k) {
            a.inputs.push_back(ctx.input(k));
            broadcast_strides(ctx.input_shape(k), out, a.strides.data() + k * max_rank);
        }
        kernel_fn k = nullptr;
        visit_dtype(ctx.input_type(0), [&](auto tag) {
            using T = decltype(tag);
            if constexpr ((Fn::supported & bit_of_type<T>) != 0) k = &kernel<T>;
        });
        if (!k) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.emit(k, std::move(a));
        return status::ok;
    }
};

struct max : variadic_op<variadic_fn::max> {
    static constexpr std::string_view onnx_name = "Max";
};
struct min : variadic_op<variadic_fn::min> {
    static constexpr std::string_view onnx_name = "Min";
};
struct sum : variadic_op<variadic_fn::sum> {
    static constexpr std::string_view onnx_name = "Sum";
};
struct mean : variadic_op<variadic_fn::mean> {
    static constexpr std::string_view onnx_name = "Mean";
};

} // namespace ops
EMBER_NAMESPACE_END
