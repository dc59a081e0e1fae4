// SPDX-License-Identifier: Apache-2.0
// Shared machinery of the element-wise unary ops. An op is a function object Fn (its members are
// the ONNX attributes, with ONNX defaults) plus a one-line struct:
//
//     struct leaky_relu_fn {
//         float alpha = 0.01f;
//         static dtype_set types(std::int64_t opset) { ... }          // accepted input dtypes
//         template <class T> T operator()(T x) const noexcept { ... } // T: float, double, ints
//     };
//     struct leaky_relu : unary_op<leaky_relu_fn> {
//         static constexpr std::string_view onnx_name = "LeakyRelu";
//         static constexpr auto onnx_attributes = std::make_tuple(attr("alpha", &leaky_relu_fn::alpha));
//     };
//
// unary_op gives infer() (same shape; dtype checked against Fn::types(opset); output dtype
// Fn::output when Fn declares one, e.g. bool for IsNaN, else the input's), bind() (one kernel per
// dtype, chosen at compile time) and reference() over float32 for tests. float16 and bfloat16
// compute in float; Fn::supported (optional) limits which dtypes get a kernel instantiated.
// Fn::fast_float() (optional) names the kernels::activation_spec that float32 runs as, through
// the kernel table's vector activation kernel, when the graph is compiled with kernels.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "ember/ops/element_types.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace elementwise_detail {
template <class Fn, class = void>
struct fixed_output {
    static constexpr dtype value = dtype::undefined;
};
template <class Fn>
struct fixed_output<Fn, std::void_t<decltype(Fn::output)>> {
    static constexpr dtype value = Fn::output;
};
template <class Fn, class = void>
struct has_check : std::false_type {};
template <class Fn>
struct has_check<Fn, std::void_t<decltype(std::declval<const Fn&>().check(std::declval<infer_context&>()))>> : std::true_type {};
template <class Fn, class = void>
struct supported_types {
    static constexpr dtype_set value = types::all;
};
template <class Fn>
struct supported_types<Fn, std::void_t<decltype(Fn::supported)>> {
    static constexpr dtype_set value = Fn::supported;
};
template <class Fn, class = void>
struct has_fast_activation : std::false_type {};
template <class Fn>
struct has_fast_activation<Fn, std::void_t<decltype(std::declval<const Fn&>().fast_float())>> : std::true_type {};
} // namespace elementwise_detail

/// A float32 activation over n contiguous elements through the kernel table, in `pieces` parts.
struct fast_activation_args {
    operand x, y;
    std::int64_t n = 0;
    std::int64_t pieces = 1;
    kernels::activation_spec act;
    decltype(simd::kernel_table::activation_f32) run = nullptr;
};

inline void fast_activation_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& f = *static_cast<const fast_activation_args*>(p);
    const float* x = ctx.at<const float>(f.x);
    float* y = ctx.at<float>(f.y);
    for_each_piece(ctx.exec, f.n, f.pieces, [&](std::int64_t begin, std::int64_t end) noexcept {
        f.run(f.act, x + begin, y + begin, end - begin);
    });
}

template <class Fn>
struct unary_map_args {
    operand x, y;
    std::size_t n = 0;
    Fn fn;
};

/// y[i] = fn(x[i]) in T's compute type, stored as R. x and y may alias (same element size).
template <class Fn, class T, class R>
void unary_map_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& a = *static_cast<const unary_map_args<Fn>*>(p);
    const storage_t<T>* x = ctx.at<const storage_t<T>>(a.x);
    storage_t<R>* y = ctx.at<storage_t<R>>(a.y);
    for (std::size_t i = 0; i < a.n; ++i) y[i] = element<R>::store(static_cast<compute_t<R>>(a.fn(element<T>::load(x[i]))));
}

template <class Fn, op_flags Flags = (elementwise_detail::fixed_output<Fn>::value == dtype::undefined ? op_flags::elementwise | op_flags::in_place
                                                                                           : op_flags::elementwise)>
struct unary_op {
    static constexpr op_flags flags = Flags;
    using attributes = Fn;
    static constexpr auto onnx_attributes = std::make_tuple();

    static dtype output_type(dtype in) noexcept {
        constexpr dtype fixed = elementwise_detail::fixed_output<Fn>::value;
        return fixed == dtype::undefined ? in : fixed;
    }

    static status infer(const attributes& fn, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = expect_dtype(ctx, 0, Fn::types(ctx.opset()) & elementwise_detail::supported_types<Fn>::value); s != status::ok) return s;
        if constexpr (elementwise_detail::has_check<Fn>::value) {  // attribute constraints (Celu's alpha != 0)
            if (status s = fn.check(ctx); s != status::ok) return s;
        }
        ctx.set_output(0, output_type(ctx.input_type(0)), ctx.input_shape(0));
        return status::ok;
    }

    static status bind(const attributes& fn, bind_context& ctx) {
        if constexpr (elementwise_detail::has_fast_activation<Fn>::value) {
            if (ctx.kernels() && ctx.input_type(0) == dtype::float32) {
                fast_activation_args f;
                f.x = ctx.input(0);
                f.y = ctx.output(0);
                f.n = ctx.input_shape(0).elements();
                f.pieces = elementwise_pieces(f.n, ctx.kernels()->slots);
                f.act = fn.fast_float();
                f.run = ctx.kernels()->table->activation_f32;
                ctx.emit(&fast_activation_kernel, f);
                return status::ok;
            }
        }
        kernel_fn k = nullptr;
        visit_dtype(ctx.input_type(0), [&](auto tag) {
            using T = decltype(tag);
            if constexpr ((elementwise_detail::supported_types<Fn>::value & bit_of_type<T>) != 0) {
                constexpr dtype fixed = elementwise_detail::fixed_output<Fn>::value;
                if constexpr (fixed == dtype::boolean)
                    k = &unary_map_kernel<Fn, T, bool>;
                else
                    k = &unary_map_kernel<Fn, T, T>;
            }
        });
        if (!k) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.emit(k, unary_map_args<Fn>{ctx.input(0), ctx.output(0), static_cast<std::size_t>(ctx.input_shape(0).elements()), fn});
        return status::ok;
    }

    /// The definition over float32 (the kernel's loop); x and y may alias.
    static void reference(const attributes& fn, const float* x, float* y, std::size_t n) noexcept {
        for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<float>(fn(x[i]));
    }
};

// ---------------------------------------------------------------------------------------------
// The float32-only helpers of the first ops (kept for ops outside this family that use them).

template <class Op>
struct unary_args {
    operand x, y;
    std::size_t n = 0;
    typename Op::attributes attrs;
};

template <class Op>
void unary_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& a = *static_cast<const unary_args<Op>*>(p);
    Op::reference(a.attrs, ctx.at<const float>(a.x), ctx.at<float>(a.y), a.n);
}

/// infer() of a float32 element-wise op: one input, output of the same shape.
inline status infer_unary_f32(infer_context& ctx) {
    if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
    if (status s = ctx.expect_type(0, {dtype::float32}); s != status::ok) return s;
    ctx.set_output(0, dtype::float32, ctx.input_shape(0));
    return status::ok;
}

template <class Op>
status bind_unary_f32(const typename Op::attributes& attrs, bind_context& ctx) {
    ctx.emit(&unary_kernel<Op>, unary_args<Op>{ctx.input(0), ctx.output(0), static_cast<std::size_t>(ctx.input_shape(0).elements()), attrs});
    return status::ok;
}

} // namespace ops
EMBER_NAMESPACE_END
