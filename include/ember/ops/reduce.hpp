// SPDX-License-Identifier: Apache-2.0
// The Reduce* ops (ONNX opset 1+): ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare. Each reduces the `axes`
// (negative from opset 11; none or empty: all of them) and keeps them as 1s when keepdims=1.
// ReduceSum takes the axes as an optional input from opset 13, the others from opset 18; that
// input must be known at compile time. With axes as an input, noop_with_empty_axes=1 makes empty
// axes mean "reduce nothing" (the output is the input).
//
// One reference kernel serves every op: the input seen as kept x reduced dimensions, one output
// per kept index, the ops differing only in how they start, accumulate and finish. Reducing an
// empty set gives the op's identity: 0 for the sums and norms, 1 for the product, -inf (the
// lowest integer) for Max, +inf (the highest) for Min, -inf for LogSum and LogSumExp, NaN for a
// floating-point Mean (0 for an integer one).
//
// The geometry (reduce_geometry) is shared with the normalizations that work per reduced set
// (MeanVarianceNormalization).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ember/ops/copy.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/row_mean.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

// ---------------------------------------------------------------------------------------------
// Element types: what the kernels compute in.

namespace reduce_detail {

template <class T>
inline constexpr bool is_float_like =
    std::is_floating_point_v<T> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

/// Floating types compute in double; integers in a 64-bit integer of their signedness (unsigned
/// arithmetic for sums and products, so that overflow wraps instead of being undefined).
template <class T>
using real_t = std::conditional_t<is_float_like<T>, double, std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;

template <class T>
double to_double(T v) noexcept {
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) return static_cast<double>(static_cast<float>(v));
    else return static_cast<double>(v);
}

template <class T>
real_t<T> widen(T v) noexcept {
    if constexpr (is_float_like<T>) return to_double(v);
    else return static_cast<real_t<T>>(v);
}

/// double -> T: floats round, integers truncate toward zero (out of range saturates; NaN is 0).
template <class T>
T narrow(double v) noexcept {
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) return T(static_cast<float>(v));
    else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v);
    else {
        if (std::isnan(v)) return T{0};
        if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
        if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
        return static_cast<T>(v);
    }
}

template <class T>
bool is_nan(T v) noexcept {
    if constexpr (is_float_like<T>) return std::isnan(to_double(v));
    else return false;
}

/// Calls fn(T{}) for the numeric dtypes (not bool); false for others.
template <class Fn>
bool visit_numeric(dtype t, Fn&& fn) {
    bool ok = false;
    visit_dtype(t, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (!std::is_same_v<T, bool>) {
            fn(tag);
            ok = true;
        }
    });
    return ok;
}

/// Calls fn(T{}) for float32, float64 and float16; false for others.
template <class Fn>
bool visit_floating(dtype t, Fn&& fn) {
    switch (t) {
        case dtype::float32: fn(float{}); return true;
        case dtype::float64: fn(double{}); return true;
        case dtype::float16: fn(float16{}); return true;
        default: return false;
    }
}

} // namespace reduce_detail

// ---------------------------------------------------------------------------------------------
// Geometry: kept and reduced dimensions, each merged where adjacent and given as sizes + strides
// into the (row-major) input.

struct reduce_geometry {
    std::uint32_t kept_rank = 0, red_rank = 0;
    std::int64_t kept_size[max_rank] = {}, kept_stride[max_rank] = {};
    std::int64_t red_size[max_rank] = {}, red_stride[max_rank] = {};
    std::int64_t out_count = 1;  ///< product of the kept sizes (the number of reduced sets)
    std::int64_t red_count = 1;  ///< elements in each reduced set

    /// Input offset of the first element of reduced set o (o in [0, out_count), row-major over
    /// the kept dimensions, which is the output's order).
    std::int64_t base(std::int64_t o) const noexcept {
        std::int64_t off = 0;
        for (std::uint32_t i = kept_rank; i-- > 0;) {
            off += (o % kept_size[i]) * kept_stride[i];
            o /= kept_size[i];
        }
        return off;
    }

    /// Calls fn(offset) for each input offset of the reduced set starting at `base`, row-major.
    template <class Fn>
    void for_each(std::int64_t base, Fn&& fn) const noexcept {
        if (red_count == 0) return;
        std::int64_t idx[max_rank] = {};
        std::int64_t off = base;
        for (;;) {
            fn(off);
            std::uint32_t d = red_rank;
            for (;;) {
                if (d == 0) return;
                --d;
                off += red_stride[d];
                if (++idx[d] < red_size[d]) break;
                off -= red_stride[d] * red_size[d];
                idx[d] = 0;
            }
        }
    }
};

/// The geometry of reducing the dimensions of `in` marked in `reduced`.
inline reduce_geometry make_reduce_geometry(const shape& in, const bool* reduced) noexcept {
    reduce_geometry g;
    std::int64_t strides[max_rank] = {};
    contiguous_strides(in, strides);
    int last = -1;  // class of the previous kept dimension: 0 kept, 1 reduced
    for (std::size_t i = 0; i < in.rank(); ++i) {
        const int cls = reduced[i] ? 1 : 0;
        (cls ? g.red_count : g.out_count) *= in[i];
        if (in[i] == 1) continue;  // contributes nothing to either side
        std::int64_t* sizes = cls ? g.red_size : g.kept_size;
        std::int64_t* strs = cls ? g.red_stride : g.kept_stride;
        std::uint32_t& rank = cls ? g.red_rank : g.kept_rank;
        if (last == cls && rank > 0) {  // adjacent to the previous one of its class: merge
            sizes[rank - 1] *= in[i];
            strs[rank - 1] = strides[i];
        } else {
            sizes[rank] = in[i];
            strs[rank] = strides[i];
            ++rank;
        }
        last = cls;
    }
    return g;
}

/// Reads `axes` for an input of rank `rank` into `mask` (true = reduced). Fails with a message on
/// an axis out of range or repeated.
inline status axes_mask(infer_context& ctx, const std::vector<std::int64_t>& axes, std::size_t rank, bool* mask) {
    for (std::size_t i = 0; i < max_rank; ++i) mask[i] = false;
    for (std::int64_t a : axes) {
        std::size_t k = 0;
        if (!normalize_axis(a, rank, k))
            return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {} (rank {}); axes are {}", a, ctx.input_shape(0),
                            rank, axes);
        if (mask[k]) return ctx.fail(status::invalid_model, "axis {} appears more than once in axes {}", a, axes);
        mask[k] = true;
    }
    return status::ok;
}

// ---------------------------------------------------------------------------------------------
// The ops.

enum class reduce_kind { sum, mean, max, min, prod, l1, l2, log_sum, log_sum_exp, sum_square };

constexpr std::string_view reduce_onnx_name(reduce_kind k) noexcept {
    switch (k) {
        case reduce_kind::sum: return "ReduceSum";
        case reduce_kind::mean: return "ReduceMean";
        case reduce_kind::max: return "ReduceMax";
        case reduce_kind::min: return "ReduceMin";
        case reduce_kind::prod: return "ReduceProd";
        case reduce_kind::l1: return "ReduceL1";
        case reduce_kind::l2: return "ReduceL2";
        case reduce_kind::log_sum: return "ReduceLogSum";
        case reduce_kind::log_sum_exp: return "ReduceLogSumExp";
        case reduce_kind::sum_square: return "ReduceSumSquare";
    }
    return "";
}

/// The definition of reducing one set: start, accumulate each element, finish.
template <reduce_kind K, class T>
T reduce_set(const reduce_geometry& g, const T* x, std::int64_t base) noexcept {
    using namespace reduce_detail;
    using R = real_t<T>;
    const std::int64_t n = g.red_count;
    if constexpr (K == reduce_kind::max || K == reduce_kind::min) {
        constexpr bool is_max = K == reduce_kind::max;
        if (n == 0) {
            if constexpr (is_float_like<T>)
                return narrow<T>(is_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
            else
                return is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        }
        bool first = true, nan = false;
        T best{};
        g.for_each(base, [&](std::int64_t off) {
            const T v = x[off];
            if (is_nan(v)) nan = true;
            if (nan) return;
            if (first || (is_max ? widen(v) > widen(best) : widen(v) < widen(best))) best = v;
            first = false;
        });
        if constexpr (is_float_like<T>)
            if (nan) return narrow<T>(std::numeric_limits<double>::quiet_NaN());
        return best;
    } else if constexpr (K == reduce_kind::log_sum_exp) {
        double max = -std::numeric_limits<double>::infinity();
        bool nan = false;
        g.for_each(base, [&](std::int64_t off) {
            const double v = to_double(x[off]);
            if (std::isnan(v)) nan = true;
            else if (v > max) max = v;
        });
        if (nan) return narrow<T>(std::numeric_limits<double>::quiet_NaN());
        if (!std::isfinite(max)) return narrow<T>(max);  // empty or all -inf: -inf; any +inf: +inf
        double sum = 0.0;
        g.for_each(base, [&](std::int64_t off) { sum += std::exp(to_double(x[off]) - max); });
        return narrow<T>(max + std::log(sum));
    } else {
        // Sums and the product: floats in double, integers in 64 bits (unsigned, wrapping).
        using A = std::conditional_t<is_float_like<T>, double, std::uint64_t>;
        A acc = K == reduce_kind::prod ? A(1) : A(0);
        g.for_each(base, [&](std::int64_t off) {
            const R v = widen(x[off]);
            if constexpr (K == reduce_kind::prod) acc *= static_cast<A>(v);
            else if constexpr (K == reduce_kind::sum_square || K == reduce_kind::l2) acc += static_cast<A>(v) * static_cast<A>(v);
            else if constexpr (K == reduce_kind::l1) {
                if constexpr (is_float_like<T>) acc += std::fabs(v);
                else if constexpr (std::is_signed_v<T>) acc += v < 0 ? A(0) - static_cast<A>(v) : static_cast<A>(v);
                else acc += static_cast<A>(v);
            } else acc += static_cast<A>(v);
        });
        if constexpr (is_float_like<T>) {
            if constexpr (K == reduce_kind::mean) return narrow<T>(acc / static_cast<double>(n));  // n = 0: NaN
            else if constexpr (K == reduce_kind::l2) return narrow<T>(std::sqrt(acc));
            else if constexpr (K == reduce_kind::log_sum) return narrow<T>(std::log(acc));
            else return narrow<T>(acc);
        } else {
            const R total = static_cast<R>(acc);  // two's complement wrap for signed types
            if constexpr (K == reduce_kind::mean) return n == 0 ? T{0} : static_cast<T>(total / static_cast<R>(n));
            else if constexpr (K == reduce_kind::l2) return narrow<T>(std::sqrt(static_cast<double>(total)));
            else if constexpr (K == reduce_kind::log_sum) return narrow<T>(std::log(static_cast<double>(total)));
            else return static_cast<T>(total);
        }
    }
}

/// The definition of a whole reduction: one reduce_set per output element, split over the
/// executor.
template <reduce_kind K, class T>
void reduce_reference(const reduce_geometry& g, const T* x, T* y, const executor* ex) noexcept {
    parallel_for(ex, static_cast<std::size_t>(g.out_count), [&](std::size_t begin, std::size_t end) {
        for (auto o = static_cast<std::int64_t>(begin); o < static_cast<std::int64_t>(end); ++o) y[o] = reduce_set<K>(g, x, g.base(o));
    });
}

struct reduce_args {
    operand x, y;
    reduce_geometry geo;
};

template <reduce_kind K, class T>
void reduce_kernel(const void* p, const run_context& ctx) noexcept {
    const auto& a = *static_cast<const reduce_args*>(p);
    reduce_reference<K>(a.geo, ctx.at<const T>(a.x), ctx.at<T>(a.y), ctx.exec);
}

template <reduce_kind K>
struct reduce_op {
    static constexpr std::string_view onnx_name = reduce_onnx_name(K);
    static constexpr op_flags flags = op_flags::none;
    /// The first opset where the axes are input 1 instead of an attribute.
    static constexpr std::int64_t axes_input_opset = K == reduce_kind::sum ? 13 : 18;

    struct attributes {
        std::optional<std::vector<std::int64_t>> axes;
        std::int64_t keepdims = 1;
        std::optional<std::int64_t> noop_with_empty_axes;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axes", &attributes::axes), attr("keepdims", &attributes::keepdims),
                                                            attr("noop_with_empty_axes", &attributes::noop_with_empty_axes));

    struct plan_t {
        bool noop = false;  ///< empty axes with noop_with_empty_axes: the output is the input
        bool reduced[max_rank] = {};
        shape out;
    };

    /// Checks the node and works out what is reduced; shared by infer() and bind().
    static status plan(const attributes& a, infer_context& ctx, plan_t& p) {
        const bool axes_input = ctx.opset() >= axes_input_opset;
        if (status s = ctx.expect_inputs(1, axes_input ? 2 : 1); s != status::ok) return s;
        if (status s = check_type(ctx); s != status::ok) return s;
        if (axes_input && a.axes)
            return ctx.fail(status::invalid_model, "from opset {} the axes are input 1, not an attribute (opset is {})", axes_input_opset,
                            ctx.opset());
        if (!axes_input && a.noop_with_empty_axes)
            return ctx.fail(status::invalid_model, "attribute 'noop_with_empty_axes' needs opset {} or later (opset is {})", axes_input_opset,
                            ctx.opset());
        std::vector<std::int64_t> axes;
        if (a.axes) axes = *a.axes;
        if (axes_input && ctx.has_input(1)) {
            const tensor* t = ctx.require_constant(1, "axes");
            if (!t) return status::unsupported_op;
            if (t->rank() > 1 || !infer_context::ints_of(*t, axes))
                return ctx.fail(status::invalid_model, "the axes input must be a 1-D int64 tensor, got {} of shape {}", t->type(), t->dims());
        }
        const shape& in = ctx.input_shape(0);
        if (axes.empty() && a.noop_with_empty_axes.value_or(0) != 0) {
            p.noop = true;
            p.out = in;
            return status::ok;
        }
        if (axes.empty()) {
            for (std::size_t i = 0; i < in.rank(); ++i) p.reduced[i] = true;
        } else if (status s = axes_mask(ctx, axes, in.rank(), p.reduced); s != status::ok) {
            return s;
        }
        p.out = shape();
        for (std::size_t i = 0; i < in.rank(); ++i) {
            if (!p.reduced[i]) p.out.push_back(in[i]);
            else if (a.keepdims) p.out.push_back(1);
        }
        return status::ok;
    }

    static status check_type(infer_context& ctx) {
        if constexpr (K == reduce_kind::max || K == reduce_kind::min)
            return ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16, dtype::int8, dtype::uint8, dtype::int32,
                                       dtype::int64, dtype::uint32, dtype::uint64});
        else
            return ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16, dtype::int32, dtype::int64,
                                       dtype::uint32, dtype::uint64});
    }

    static status infer(const attributes& a, infer_context& ctx) {
        plan_t p;
        if (status s = plan(a, ctx, p); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), p.out);
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        plan_t p;
        if (status s = plan(a, ctx, p); s != status::ok) return s;
        if (p.noop) return bind_copy(ctx);
        reduce_args args;
        args.x = ctx.input(0);
        args.y = ctx.output(0);
        args.geo = make_reduce_geometry(ctx.input_shape(0), p.reduced);
        if constexpr (K == reduce_kind::mean) {
            // float32 over a trailing block of axes (LayerNorm's mean): contiguous rows
            const shape& in = ctx.input_shape(0);
            std::size_t k = in.rank();
            while (k > 0 && p.reduced[k - 1]) --k;
            bool trailing = k < in.rank();
            for (std::size_t i = 0; i < k; ++i) trailing = trailing && !p.reduced[i];
            std::int64_t rows = 1, size = 1;
            for (std::size_t i = 0; i < in.rank(); ++i) (i < k ? rows : size) *= in[i];
            if (ctx.kernels() && ctx.input_type(0) == dtype::float32 && trailing && size > 0) {
                emit_row_mean(ctx, rows, size);
                return status::ok;
            }
        }
        kernel_fn fn = nullptr;
        reduce_detail::visit_numeric(ctx.input_type(0), [&](auto tag) { fn = &reduce_kernel<K, decltype(tag)>; });
        if (!fn) return ctx.fail(status::unsupported_op, "no kernel for dtype {}", ctx.input_type(0));
        ctx.emit(fn, args);
        return status::ok;
    }
};

using reduce_sum = reduce_op<reduce_kind::sum>;
using reduce_mean = reduce_op<reduce_kind::mean>;
using reduce_max = reduce_op<reduce_kind::max>;
using reduce_min = reduce_op<reduce_kind::min>;
using reduce_prod = reduce_op<reduce_kind::prod>;
using reduce_l1 = reduce_op<reduce_kind::l1>;
using reduce_l2 = reduce_op<reduce_kind::l2>;
using reduce_log_sum = reduce_op<reduce_kind::log_sum>;
using reduce_log_sum_exp = reduce_op<reduce_kind::log_sum_exp>;
using reduce_sum_square = reduce_op<reduce_kind::sum_square>;

} // namespace ops
EMBER_NAMESPACE_END
