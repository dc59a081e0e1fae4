// SPDX-License-Identifier: Apache-2.0
// Shared machinery of the element-wise binary ops with numpy broadcasting (Add, Sub, Mul, Div,
// Pow, Mod, the comparisons, And/Or/Xor, BitShift, PRelu): shape inference, broadcast strides
// computed once at compile time, and one reference kernel per (dtypes, function) chosen at bind
// time. An op is a function object Fn (its members are the ONNX attributes) plus a short struct:
//
//     struct add_fn {
//         static dtype_set types(std::int64_t opset);          // accepted dtypes of input 0
//         template <class T> T operator()(T a, T b) const noexcept;   // T: compute type
//     };
//     struct add : binary_op<add_fn> { static constexpr std::string_view onnx_name = "Add"; ... };
//
// Optional members of Fn: `fast_float` (a kernels::binary_kind: float32 runs the kernel table's
// vector row kernel over a collapsed broadcast plan when compiled with kernels), `fast_square`
// (Pow: a float32 input 1 that is the constant 2 runs as the fast a * a), `output` (a fixed
// output dtype, e.g. bool for Less), `second_types` (input 1 has its own dtypes, e.g. Pow's
// exponent; otherwise both inputs share one dtype),
// `supported`/`second_supported` (the dtypes that get a kernel at all), `check(ctx)` (attribute
// constraints). Ops that existed before opset 7 also take the legacy `broadcast`/`axis`
// attributes (legacy_broadcast_attributes()): B's shape matches a run of A's dimensions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ember/ops/element_types.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// Broadcast iteration plan: output dims and, per input, the element stride of each output dim
/// (0 where that input is broadcast). The innermost dimension runs as a plain loop.
struct broadcast_args {
    operand a, b, y;
    std::uint32_t rank = 0;
    std::int64_t dims[max_rank] = {};
    std::int64_t a_strides[max_rank] = {};
    std::int64_t b_strides[max_rank] = {};
    std::int64_t count = 0;
};

/// Strides of `in` (right-aligned against out), with 0 on broadcast dimensions.
inline void broadcast_strides(const shape& in, const shape& out, std::int64_t* strides) noexcept {
    std::int64_t own[max_rank] = {};
    contiguous_strides(in, own);
    const std::size_t lead = out.rank() - in.rank();
    for (std::size_t i = 0; i < out.rank(); ++i)
        strides[i] = i < lead || in[i - lead] == 1 ? 0 : own[i - lead];
}

/// The plan for inputs of shapes a and b (as broadcast; see legacy broadcasting) into output 0.
inline broadcast_args make_broadcast_args(const bind_context& ctx, const shape& a, const shape& b) {
    broadcast_args args;
    args.a = ctx.input(0);
    args.b = ctx.input(1);
    args.y = ctx.output(0);
    const shape& out = ctx.output_shape(0);
    args.rank = static_cast<std::uint32_t>(out.rank());
    for (std::size_t i = 0; i < out.rank(); ++i) args.dims[i] = out[i];
    broadcast_strides(a, out, args.a_strides);
    broadcast_strides(b, out, args.b_strides);
    args.count = out.elements();
    return args;
}
inline broadcast_args make_broadcast_args(const bind_context& ctx) { return make_broadcast_args(ctx, ctx.input_shape(0), ctx.input_shape(1)); }

/// The definition of every broadcasting binary op: y[i] = fn(a[ia], b[ib]) with a multi-index
/// counter over the output. y may alias a when a is not broadcast (each element is read before
/// it is written).
template <class A, class B, class Y, class Fn>
void broadcast_reference(const broadcast_args& args, const A* a, const B* b, Y* y, Fn fn) noexcept {
    if (args.count == 0) return;
    if (args.rank == 0) {
        y[0] = fn(a[0], b[0]);
        return;
    }
    const std::size_t last = args.rank - 1;
    const std::int64_t inner = args.dims[last];
    const std::int64_t sa = args.a_strides[last], sb = args.b_strides[last];
    std::int64_t index[max_rank] = {};
    std::int64_t offset_a = 0, offset_b = 0;
    for (std::int64_t out = 0; out < args.count; out += inner) {
        for (std::int64_t j = 0; j < inner; ++j) y[out + j] = fn(a[offset_a + j * sa], b[offset_b + j * sb]);
        // advance the outer index (dims 0..last-1) like an odometer
        for (std::size_t d = last; d-- > 0;) {
            offset_a += args.a_strides[d];
            offset_b += args.b_strides[d];
            if (++index[d] < args.dims[d]) break;
            offset_a -= args.a_strides[d] * args.dims[d];
            offset_b -= args.b_strides[d] * args.dims[d];
            index[d] = 0;
        }
    }
}

template <class T, class Fn>
void broadcast_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& args = *static_cast<const broadcast_args*>(p);
    broadcast_reference(args, ctx.at<const T>(args.a), ctx.at<const T>(args.b), ctx.at<T>(args.y), Fn{});
}

// ---------------------------------------------------------------------------------------------
// binary_op

namespace elementwise_detail {
template <class Fn, class = void>
struct binary_output {
    static constexpr dtype value = dtype::undefined;
};
template <class Fn>
struct binary_output<Fn, std::void_t<decltype(Fn::output)>> {
    static constexpr dtype value = Fn::output;
};
template <class Fn, class = void>
struct has_second_types : std::false_type {};
template <class Fn>
struct has_second_types<Fn, std::void_t<decltype(Fn::second_types(std::int64_t{}))>> : std::true_type {};
template <class Fn, class = void>
struct binary_supported {
    static constexpr dtype_set value = types::all;
};
template <class Fn>
struct binary_supported<Fn, std::void_t<decltype(Fn::supported)>> {
    static constexpr dtype_set value = Fn::supported;
};
template <class Fn, class = void>
struct second_supported {
    static constexpr dtype_set value = types::all;
};
template <class Fn>
struct second_supported<Fn, std::void_t<decltype(Fn::second_supported)>> {
    static constexpr dtype_set value = Fn::second_supported;
};
template <class Fn, class = void>
struct has_fast_float : std::false_type {};
template <class Fn>
struct has_fast_float<Fn, std::void_t<decltype(Fn::fast_float)>> : std::true_type {};
template <class Fn, class = void>
struct has_fast_square : std::false_type {};
template <class Fn>
struct has_fast_square<Fn, std::void_t<decltype(Fn::fast_square)>> : std::true_type {};
template <class Fn, class = void>
struct has_binary_check : std::false_type {};
template <class Fn>
struct has_binary_check<Fn, std::void_t<decltype(std::declval<const Fn&>().check(std::declval<infer_context&>()))>> : std::true_type {};
} // namespace elementwise_detail

/// The legacy (opset < 7) broadcasting attributes; absent in models of opset 7 and later.
struct legacy_broadcast {
    std::optional<std::int64_t> broadcast;
    std::optional<std::int64_t> axis;
};

/// Shapes of the two inputs as numpy broadcasting sees them, and the output shape. Before opset
/// 7 (when `legacy` applies): without broadcast=1 the shapes must be equal; with it, B matches
/// A's dimensions from `axis` on (default: B's trailing alignment), and is padded with 1s.
inline status binary_shapes(const legacy_broadcast& legacy, bool legacy_op, infer_context& ctx, shape& a, shape& b, shape& out) {
    a = ctx.input_shape(0);
    b = ctx.input_shape(1);
    if (legacy.broadcast || legacy.axis) {
        if (!legacy_op || ctx.opset() >= 7)
            return ctx.fail(status::invalid_model, "attributes 'broadcast' and 'axis' exist only before opset 7; the model has opset {}",
                            ctx.opset());
    }
    if (legacy_op && ctx.opset() < 7) {
        if (legacy.broadcast.value_or(0) == 0) {
            if (a != b)
                return ctx.fail(status::shape_mismatch, "shapes {} and {} differ and broadcast is 0 (opset {} broadcasts only with broadcast=1)",
                                a, b, ctx.opset());
            out = a;
            return status::ok;
        }
        if (b.rank() > a.rank())
            return ctx.fail(status::shape_mismatch, "with broadcast=1, B {} must not have a higher rank than A {}", b, a);
        const auto ra = static_cast<std::int64_t>(a.rank()), rb = static_cast<std::int64_t>(b.rank());
        std::int64_t axis = legacy.axis.value_or(ra - rb);
        if (axis < 0) axis += ra;
        if (axis < 0 || axis + rb > ra)
            return ctx.fail(status::invalid_model, "axis {} does not fit B {} into A {}", legacy.axis.value_or(ra - rb), b, a);
        shape padded;
        for (std::int64_t i = 0; i < ra; ++i) padded.push_back(i >= axis && i < axis + rb ? b[static_cast<std::size_t>(i - axis)] : 1);
        for (std::size_t i = 0; i < a.rank(); ++i)
            if (padded[i] != a[i] && padded[i] != 1)
                return ctx.fail(status::shape_mismatch, "B {} does not match A {} from axis {}", b, a, axis);
        b = padded;
        out = a;
        return status::ok;
    }
    if (!broadcast_shapes(a, b, out)) return ctx.fail(status::shape_mismatch, "shapes {} and {} do not broadcast", a, b);
    return status::ok;
}

template <class Fn>
struct binary_args {
    broadcast_args plan;
    Fn fn;
};

/// y = fn(a, b) over the broadcast plan, computing in the inputs' compute types, stored as R.
template <class Fn, class A, class B, class R>
void binary_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& args = *static_cast<const binary_args<Fn>*>(p);
    const Fn& fn = args.fn;
    broadcast_reference(args.plan, ctx.at<const storage_t<A>>(args.plan.a), ctx.at<const storage_t<B>>(args.plan.b),
                        ctx.at<storage_t<R>>(args.plan.y), [&fn](storage_t<A> a, storage_t<B> b) {
                            return element<R>::store(static_cast<compute_t<R>>(fn(element<A>::load(a), element<B>::load(b))));
                        });
}

/// The plan with its size-1 dimensions dropped and each run of dimensions that both inputs walk
/// alike (contiguous in each, or broadcast in each) merged into one, so that the inner loop is as
/// long as it can be: [1, C, H, W] * [1, C, 1, 1] becomes [C, H*W] with B's inner stride 0. The
/// inner stride of each input is then 0 or 1. Rank 0 comes out as rank 1 of one element.
inline broadcast_args collapse_broadcast(const broadcast_args& in) noexcept {
    broadcast_args out = in;
    out.rank = 0;
    for (std::uint32_t d = 0; d < in.rank; ++d) {
        if (in.dims[d] == 1) continue;
        const std::uint32_t r = out.rank;
        if (r > 0 && out.a_strides[r - 1] == in.a_strides[d] * in.dims[d] && out.b_strides[r - 1] == in.b_strides[d] * in.dims[d]) {
            out.dims[r - 1] *= in.dims[d];
            out.a_strides[r - 1] = in.a_strides[d];
            out.b_strides[r - 1] = in.b_strides[d];
            continue;
        }
        out.dims[r] = in.dims[d];
        out.a_strides[r] = in.a_strides[d];
        out.b_strides[r] = in.b_strides[d];
        out.rank = r + 1;
    }
    if (out.rank == 0) {
        out.rank = 1;
        out.dims[0] = in.count;  // 0 or 1
        out.a_strides[0] = out.b_strides[0] = 0;
    }
    return out;
}

/// Calls row(offset_a, offset_b, offset_y, n) for each stretch of the inner dimension that the
/// flat output range [begin, end) covers, in order.
template <class Row>
void for_each_broadcast_row(const broadcast_args& p, std::int64_t begin, std::int64_t end, Row&& row) noexcept {
    if (begin >= end) return;  // also keeps an empty plan's zero dimensions out of the divisions
    const std::size_t last = p.rank - 1;
    std::int64_t index[max_rank] = {};
    std::int64_t oa = 0, ob = 0;
    for (std::size_t d = p.rank, rest = static_cast<std::size_t>(begin); d-- > 0;) {
        index[d] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(p.dims[d]));
        rest /= static_cast<std::size_t>(p.dims[d]);
        oa += index[d] * p.a_strides[d];
        ob += index[d] * p.b_strides[d];
    }
    for (std::int64_t pos = begin; pos < end;) {
        const std::int64_t n = std::min(p.dims[last] - index[last], end - pos);
        row(oa, ob, pos, n);
        pos += n;
        // back to the row's start, then the next row (the outer dimensions as an odometer)
        oa -= index[last] * p.a_strides[last];
        ob -= index[last] * p.b_strides[last];
        index[last] = 0;
        for (std::size_t d = last; d-- > 0;) {
            oa += p.a_strides[d];
            ob += p.b_strides[d];
            if (++index[d] < p.dims[d]) break;
            oa -= p.a_strides[d] * p.dims[d];
            ob -= p.b_strides[d] * p.dims[d];
            index[d] = 0;
        }
    }
}

struct fast_binary_args {
    broadcast_args plan;  // collapsed
    kernels::binary_kind op = kernels::binary_kind::add;
    decltype(simd::kernel_table::binary_row_f32) row = nullptr;
    std::int64_t pieces = 1;
};

inline void fast_binary_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& f = *static_cast<const fast_binary_args*>(p);
    const float* a = ctx.at<const float>(f.plan.a);
    const float* b = ctx.at<const float>(f.plan.b);
    float* y = ctx.at<float>(f.plan.y);
    const std::int64_t count = f.plan.count, pieces = f.pieces;
    for_each_piece(ctx.exec, count, pieces, [&](std::int64_t begin, std::int64_t end) noexcept {
        const std::int64_t sa = f.plan.a_strides[f.plan.rank - 1], sb = f.plan.b_strides[f.plan.rank - 1];
        for_each_broadcast_row(f.plan, begin, end, [&](std::int64_t oa, std::int64_t ob, std::int64_t oy, std::int64_t n) noexcept {
            f.row(f.op, a + oa, sa, b + ob, sb, y + oy, n);
        });
    });
}

/// Emits the fast float32 step of `op` over `plan` (collapsed here).
inline void emit_fast_binary(bind_context& ctx, const broadcast_args& plan, kernels::binary_kind op) {
    fast_binary_args f;
    f.plan = collapse_broadcast(plan);
    f.op = op;
    f.row = ctx.kernels()->table->binary_row_f32;
    f.pieces = elementwise_pieces(f.plan.count, ctx.kernels()->slots);
    ctx.emit(&fast_binary_kernel, f);
}

/// A broadcasting binary op over Fn. `Legacy`: the op has the opset < 7 broadcast/axis attributes.
template <class Fn, bool Legacy = false,
          op_flags Flags = (elementwise_detail::binary_output<Fn>::value == dtype::undefined ? op_flags::elementwise | op_flags::in_place
                                                                                             : op_flags::elementwise)>
struct binary_op {
    static constexpr op_flags flags = Flags;
    struct attributes : Fn, legacy_broadcast {};
    static constexpr auto onnx_attributes = std::make_tuple();

    static dtype output_type(dtype a) noexcept {
        constexpr dtype fixed = elementwise_detail::binary_output<Fn>::value;
        return fixed == dtype::undefined ? a : fixed;
    }

    static status infer(const attributes& attrs, infer_context& ctx) {
        if (status s = ctx.expect_inputs(2, 2); s != status::ok) return s;
        if (status s = expect_dtype(ctx, 0, Fn::types(ctx.opset()) & elementwise_detail::binary_supported<Fn>::value); s != status::ok) return s;
        if constexpr (elementwise_detail::has_second_types<Fn>::value) {
            if (status s = expect_dtype(ctx, 1, Fn::second_types(ctx.opset()) & elementwise_detail::second_supported<Fn>::value); s != status::ok)
                return s;
        } else if (ctx.input_type(1) != ctx.input_type(0)) {
            return ctx.fail(status::shape_mismatch, "inputs have different dtypes: {} and {}", ctx.input_type(0), ctx.input_type(1));
        }
        if constexpr (elementwise_detail::has_binary_check<Fn>::value) {
            if (status s = static_cast<const Fn&>(attrs).check(ctx); s != status::ok) return s;
        }
        shape a, b, out;
        if (status s = binary_shapes(attrs, Legacy, ctx, a, b, out); s != status::ok) return s;
        ctx.set_output(0, output_type(ctx.input_type(0)), out);
        return status::ok;
    }

    template <class A>
    using result_t = std::conditional_t<elementwise_detail::binary_output<Fn>::value == dtype::boolean, bool, A>;

    template <class A, class B>
    static kernel_fn kernel_for() noexcept {
        if constexpr ((elementwise_detail::second_supported<Fn>::value & bit_of_type<B>) != 0)
            return &binary_kernel<Fn, A, B, result_t<A>>;
        else
            return nullptr;
    }

    /// The kernel for input 0 of type A and input 1 of dtype b (null when not supported).
    template <class A>
    static kernel_fn pick_kernel(dtype b) noexcept {
        if constexpr ((elementwise_detail::binary_supported<Fn>::value & bit_of_type<A>) == 0) {
            return nullptr;
        } else if constexpr (elementwise_detail::has_second_types<Fn>::value) {
            kernel_fn k = nullptr;
            visit_dtype(b, [&k](auto tag_b) { k = kernel_for<A, decltype(tag_b)>(); });
            return k;
        } else {
            return &binary_kernel<Fn, A, A, result_t<A>>;
        }
    }

    static status bind(const attributes& attrs, bind_context& ctx) {
        shape a, b, out;
        if (status s = binary_shapes(attrs, Legacy, ctx, a, b, out); s != status::ok) return s;
        if constexpr (elementwise_detail::has_fast_square<Fn>::value) {
            const tensor* e = ctx.input_constant(1);
            if (ctx.kernels() && ctx.input_type(0) == dtype::float32 && e && e->type() == dtype::float32 && e->size() == 1 &&
                e->data<float>()[0] == 2.0f) {
                // x * x: the plan of x against itself, broadcast to the output as x is
                broadcast_args plan = make_broadcast_args(ctx, a, b);
                plan.b = plan.a;
                for (std::uint32_t d = 0; d < plan.rank; ++d) plan.b_strides[d] = plan.a_strides[d];
                emit_fast_binary(ctx, plan, kernels::binary_kind::mul);
                return status::ok;
            }
        }
        if constexpr (elementwise_detail::has_fast_float<Fn>::value) {
            if (ctx.kernels() && ctx.input_type(0) == dtype::float32 && ctx.input_type(1) == dtype::float32) {
                emit_fast_binary(ctx, make_broadcast_args(ctx, a, b), Fn::fast_float);
                return status::ok;
            }
        }
        kernel_fn k = nullptr;
        visit_dtype(ctx.input_type(0), [&](auto tag_a) { k = pick_kernel<decltype(tag_a)>(ctx.input_type(1)); });
        if (!k) return ctx.fail(status::unsupported_op, "dtypes {} and {} are not supported", ctx.input_type(0), ctx.input_type(1));
        ctx.emit(k, binary_args<Fn>{make_broadcast_args(ctx, a, b), static_cast<const Fn&>(attrs)});
        return status::ok;
    }
};

/// onnx_attributes of an op that existed before opset 7 (Add, Sub, Mul, Div, Pow, And, ...).
constexpr auto legacy_broadcast_attributes() noexcept {
    return std::make_tuple(attr("broadcast", &legacy_broadcast::broadcast), attr("axis", &legacy_broadcast::axis));
}

} // namespace ops
EMBER_NAMESPACE_END
