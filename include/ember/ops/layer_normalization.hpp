// SPDX-License-Identifier: Apache-2.0
// LayerNormalization (ONNX opset 17), float32, float64 and float16: X seen as [rows, size] at
// `axis` (default -1; size = the product of dims [axis, rank)); each row is normalised,
//     Y = (X - mean) / sqrt(var + epsilon) * Scale + B,
// with the population variance. Scale and the optional B broadcast to X (numpy rules, towards
// X). The optional outputs Mean and InvStdDev (1 / sqrt(var + epsilon)) have X's shape with dims
// [axis, rank) set to 1, in float32 (stash_type 1, the only one supported; statistics are
// computed in double).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "ember/ops/norm_support.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// Element strides of `in` seen with `out`'s rank (right-aligned; 0 on broadcast dimensions).
/// False when `in` does not broadcast to `out` (numpy rules, one way).
inline bool strides_towards(const shape& in, const shape& out, std::int64_t* strides) noexcept {
    if (in.rank() > out.rank()) return false;
    std::int64_t own[max_rank] = {};
    contiguous_strides(in, own);
    const std::size_t lead = out.rank() - in.rank();
    for (std::size_t i = 0; i < out.rank(); ++i) {
        if (i < lead) {
            strides[i] = 0;
            continue;
        }
        const std::int64_t d = in[i - lead];
        if (d != out[i] && d != 1) return false;
        strides[i] = d == 1 ? 0 : own[i - lead];
    }
    return true;
}

/// Offset of row-major element `index` of a tensor of `dims`, through `strides`.
inline std::int64_t offset_through(std::int64_t index, const shape& dims, const std::int64_t* strides) noexcept {
    std::int64_t off = 0;
    for (std::size_t i = dims.rank(); i-- > 0;) {
        off += (index % dims[i]) * strides[i];
        index /= dims[i];
    }
    return off;
}

struct layer_normalization {
    static constexpr std::string_view onnx_name = "LayerNormalization";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::int64_t axis = -1;
        float epsilon = 1e-5f;
        std::int64_t stash_type = 1;
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("axis", &attributes::axis), attr("epsilon", &attributes::epsilon), attr("stash_type", &attributes::stash_type));

    struct args {
        operand x, scale, b, y, mean, inv_std;
        bool has_b = false, has_mean = false, has_inv_std = false;
        shape dims;  // X's
        std::int64_t scale_strides[max_rank] = {}, b_strides[max_rank] = {};
        std::int64_t rows = 0, size = 0;
        std::size_t axis = 0;  // normalised: the rows are dims [0, axis)
        double epsilon = 0.0;
    };

    static status plan(const attributes& a, infer_context& ctx, args& g, shape& stats) {
        if (status s = ctx.expect_inputs(2, 3); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16}); s != status::ok) return s;
        for (std::size_t i = 1; i < 3; ++i)
            if (ctx.has_input(i) && ctx.input_type(i) != ctx.input_type(0))
                return ctx.fail(status::invalid_model, "input {} has dtype {}, X has {}", i, ctx.input_type(i), ctx.input_type(0));
        if (a.stash_type != 1)
            return ctx.fail(status::unsupported_op, "stash_type {} is not supported (only 1, float32)", a.stash_type);
        if (ctx.output_count() > 3) return ctx.fail(status::invalid_model, "expected 1 to 3 outputs, got {}", ctx.output_count());
        const shape& x = ctx.input_shape(0);
        std::size_t k = 0;
        if (!normalize_axis(a.axis, x.rank(), k))
            return ctx.fail(status::invalid_model, "axis {} is out of range for X of shape {} (rank {})", a.axis, x, x.rank());
        g.dims = x;
        g.axis = k;
        if (!strides_towards(ctx.input_shape(1), x, g.scale_strides))
            return ctx.fail(status::shape_mismatch, "Scale of shape {} does not broadcast to X of shape {}", ctx.input_shape(1), x);
        g.has_b = ctx.has_input(2);
        if (g.has_b && !strides_towards(ctx.input_shape(2), x, g.b_strides))
            return ctx.fail(status::shape_mismatch, "B of shape {} does not broadcast to X of shape {}", ctx.input_shape(2), x);
        g.rows = 1;
        g.size = 1;
        stats = x;
        for (std::size_t i = 0; i < x.rank(); ++i) {
            if (i < k) g.rows *= x[i];
            else {
                g.size *= x[i];
                stats[i] = 1;
            }
        }
        g.epsilon = a.epsilon;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        shape stats;
        if (status s = plan(a, ctx, g, stats); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), ctx.input_shape(0));
        ctx.set_output(1, dtype::float32, stats);
        ctx.set_output(2, dtype::float32, stats);
        return status::ok;
    }

    // The definition: per row, the mean and population variance in double, then each element.
    // An empty row (size 0) has mean NaN. mean / inv_std may be null.
    template <class T>
    static void reference(const args& g, const T* x, const T* scale, const T* b, T* y, float* mean, float* inv_std,
                          const executor* ex) noexcept {
        using reduce_detail::narrow;
        using reduce_detail::to_double;
        parallel_for(ex, static_cast<std::size_t>(g.rows), [&](std::size_t begin, std::size_t end) {
            for (auto r = static_cast<std::int64_t>(begin); r < static_cast<std::int64_t>(end); ++r) {
                const T* xr = x + r * g.size;
                double sum = 0.0;
                for (std::int64_t j = 0; j < g.size; ++j) sum += to_double(xr[j]);
                const double mu = sum / static_cast<double>(g.size);
                double sq = 0.0;
                for (std::int64_t j = 0; j < g.size; ++j) {
                    const double d = to_double(xr[j]) - mu;
                    sq += d * d;
                }
                const double inv = 1.0 / std::sqrt(sq / static_cast<double>(g.size) + g.epsilon);
                for (std::int64_t j = 0; j < g.size; ++j) {
                    const std::int64_t i = r * g.size + j;
                    double v = (to_double(xr[j]) - mu) * inv * to_double(scale[offset_through(i, g.dims, g.scale_strides)]);
                    if (b) v += to_double(b[offset_through(i, g.dims, g.b_strides)]);
                    y[i] = narrow<T>(v);
                }
                if (mean) mean[r] = static_cast<float>(mu);
                if (inv_std) inv_std[r] = static_cast<float>(inv);
            }
        });
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<const T>(g.scale), g.has_b ? ctx.at<const T>(g.b) : nullptr, ctx.at<T>(g.y),
                     g.has_mean ? ctx.at<float>(g.mean) : nullptr, g.has_inv_std ? ctx.at<float>(g.inv_std) : nullptr, ctx.exec);
    }

    // float32 with Scale and B holding one value per position of the row (the usual [size]):
    // the kernel table's vector LayerNorm, rows split over the executor in `pieces` parts.
    struct fast_args {
        args g;
        std::int64_t pieces = 1;
        decltype(simd::kernel_table::layer_norm_rows_f32) rows = nullptr;
    };

    /// Whether an operand of shape `s` and strides towards X has one value per row position.
    /// (As many values as a row, and none along the leading dimensions: then every trailing
    /// dimension matches X's, so the operand is the row's layout.)
    static bool per_row(const args& g, const std::int64_t* strides, const shape& s) noexcept {
        if (s.elements() != g.size) return false;
        for (std::size_t i = 0; i < g.axis; ++i)
            if (strides[i] != 0) return false;
        return true;
    }

    static void fast_kernel(const void* p, const run_context& ctx) noexcept {
        const auto& f = *static_cast<const fast_args*>(p);
        const args& g = f.g;
        const float* x = ctx.at<const float>(g.x);
        const float* scale = ctx.at<const float>(g.scale);
        const float* b = g.has_b ? ctx.at<const float>(g.b) : nullptr;
        float* y = ctx.at<float>(g.y);
        float* mean = g.has_mean ? ctx.at<float>(g.mean) : nullptr;
        float* inv_std = g.has_inv_std ? ctx.at<float>(g.inv_std) : nullptr;
        for_each_piece(ctx.exec, g.rows, f.pieces, [&](std::int64_t begin, std::int64_t end) noexcept {
            f.rows(x + begin * g.size, scale, b, y + begin * g.size, mean ? mean + begin : nullptr, inv_std ? inv_std + begin : nullptr,
                   end - begin, g.size, static_cast<float>(g.epsilon));
        });
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        shape stats;
        if (status s = plan(a, ctx, g, stats); s != status::ok) return s;
        g.x = ctx.input(0);
        g.scale = ctx.input(1);
        if (g.has_b) g.b = ctx.input(2);
        g.y = ctx.output(0);
        g.has_mean = ctx.has_output(1);
        g.has_inv_std = ctx.has_output(2);
        if (g.has_mean) g.mean = ctx.output(1);
        if (g.has_inv_std) g.inv_std = ctx.output(2);
        if (ctx.kernels() && ctx.input_type(0) == dtype::float32 && g.size > 0 && per_row(g, g.scale_strides, ctx.input_shape(1)) &&
            (!g.has_b || per_row(g, g.b_strides, ctx.input_shape(2)))) {
            fast_args f;
            f.g = g;
            f.pieces = row_pieces(g.rows, g.size, ctx.kernels()->slots);
            f.rows = ctx.kernels()->table->layer_norm_rows_f32;
            ctx.emit(&fast_kernel, f);
            return status::ok;
        }
        norm_detail::emit_floating<layer_normalization>(ctx, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
