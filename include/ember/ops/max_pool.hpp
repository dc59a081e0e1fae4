// SPDX-License-Identifier: Apache-2.0
// MaxPool (ONNX opset 1+), float32, float64, float16, int8 and uint8 (opset 12), 1 to 3 spatial
// dimensions: the largest value of each
// (dilated) window, padding never taking part. The optional second output Indices (int64) holds
// each maximum's position in the input flattened as a whole (batch and channel included, padding
// not), row-major for storage_order 0 and with the spatial dimensions reversed for 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/ops/fast_gemm.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct max_pool {
    static constexpr std::string_view onnx_name = "MaxPool";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::string auto_pad = "NOTSET";
        bool ceil_mode = false;
        std::vector<std::int64_t> dilations;     // empty: 1 per spatial dimension
        std::vector<std::int64_t> kernel_shape;  // required
        std::vector<std::int64_t> pads;          // [x1_begin, x2_begin, ..., x1_end, x2_end]; empty: 0
        std::int64_t storage_order = 0;          // 0 row-major, 1 column-major (Indices only)
        std::vector<std::int64_t> strides;       // empty: 1 per spatial dimension
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("auto_pad", &attributes::auto_pad), attr("ceil_mode", &attributes::ceil_mode),
                        attr("dilations", &attributes::dilations), required_attr("kernel_shape", &attributes::kernel_shape),
                        attr("pads", &attributes::pads), attr("storage_order", &attributes::storage_order),
                        attr("strides", &attributes::strides));

    struct args {
        operand x, y, indices;
        bool has_indices = false;
        std::int64_t planes = 0;  // N * C
        window_geometry geo;
        std::int64_t index_stride[max_window_rank] = {};  // per spatial dimension, for Indices
    };

    static status plan(const attributes& a, infer_context& ctx, args& g) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16, dtype::int8, dtype::uint8}); s != status::ok) return s;
        if (ctx.output_count() > 2) return ctx.fail(status::invalid_model, "expected 1 or 2 outputs (Y, Indices), got {}", ctx.output_count());
        const shape& x = ctx.input_shape(0);
        if (status s = expect_window_input(ctx, x, "X"); s != status::ok) return s;
        const std::size_t S = x.rank() - 2;
        if (a.kernel_shape.size() != S)
            return ctx.fail(status::invalid_model, "kernel_shape {} has {} values, expected {} (one per spatial dimension of X {})", a.kernel_shape,
                            a.kernel_shape.size(), S, x);
        if (a.storage_order != 0 && a.storage_order != 1)
            return ctx.fail(status::invalid_model, "storage_order is {}, expected 0 (row-major) or 1 (column-major)", a.storage_order);
        const window_spec spec{a.auto_pad, a.pads, a.strides, a.dilations, a.ceil_mode};
        if (status s = make_window_geometry(ctx, x, a.kernel_shape.data(), spec, g.geo); s != status::ok) return s;
        g.planes = x[0] * x[1];
        // Index strides of the three (unit-padded) spatial dimensions: row-major, or column-major
        // over the op's own S dimensions (the unit ones always have coordinate 0).
        const window_geometry& G = g.geo;
        if (a.storage_order == 0) {
            g.index_stride[2] = 1;
            g.index_stride[1] = G.in[2];
            g.index_stride[0] = G.in[1] * G.in[2];
        } else {
            g.index_stride[0] = 1;
            g.index_stride[1] = G.in[0];
            g.index_stride[2] = G.in[0] * G.in[1];
        }
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        const shape out = window_output_shape(ctx.input_shape(0), ctx.input_shape(0)[1], g.geo);
        ctx.set_output(0, ctx.input_type(0), out);
        ctx.set_output(1, dtype::int64, out);
        return status::ok;
    }

    // The definition: the maximum over the window's positions inside the input, the first one
    // winning ties (and a NaN only when it comes first). A window lying wholly in the padding
    // gives -inf (the lowest value for integers) and index -1. Planes (n, c) are split over the
    // executor; indices may be null. float16 compares through float.
    template <class T>
    static void reference(const args& g, const T* x, T* y, std::int64_t* indices, const executor* ex) noexcept {
        using C = std::conditional_t<std::is_same_v<T, float16>, float, T>;  // the comparison type
        constexpr C lowest = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
        const window_geometry& G = g.geo;
        const std::int64_t in_size = G.in_size(), out_size = G.out_size();
        parallel_for(ex, static_cast<std::size_t>(g.planes), [&](std::size_t begin, std::size_t end) {
            for (auto plane = static_cast<std::int64_t>(begin); plane < static_cast<std::int64_t>(end); ++plane) {
                const T* xp = x + plane * in_size;
                for_each_window_output(G, [&](std::int64_t o0, std::int64_t o1, std::int64_t o2) {
                    C best = lowest;
                    std::int64_t best_index = -1;
                    for_each_window_tap(G, o0, o1, o2, [&](auto i0, auto i1, auto i2, auto, auto, auto) {
                        const C v = static_cast<C>(xp[(i0 * G.in[1] + i1) * G.in[2] + i2]);
                        if (best_index < 0 || v > best) {
                            best = v;
                            best_index = i0 * g.index_stride[0] + i1 * g.index_stride[1] + i2 * g.index_stride[2];
                        }
                    });
                    const std::int64_t o = plane * out_size + (o0 * G.out[1] + o1) * G.out[2] + o2;
                    y[o] = static_cast<T>(best);
                    if (indices) indices[o] = best_index < 0 ? -1 : plane * in_size + best_index;
                });
            }
        });
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<T>(g.y), g.has_indices ? ctx.at<std::int64_t>(g.indices) : nullptr, ctx.exec);
    }

    // The fast path (kernels/maxpool_f32.hpp): float32, 1 or 2 spatial dims, no Indices output.
    struct fast_args {
        const simd::kernel_table* table = nullptr;
        operand x, y;
        kernels::dwconv_f32_problem geometry;
        operand workspace;
        std::int64_t slots = 1;
    };

    static bool fast_path(const args& g, const infer_context& ctx) noexcept {
        return ctx.kernels() && ctx.input_type(0) == dtype::float32 && !ctx.has_output(1) && g.geo.rank >= 1 && g.geo.rank <= 2;
    }

    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        args g;
        if (plan(a, const_cast<infer_context&>(ctx), g) != status::ok || !fast_path(g, ctx)) return 0;
        return maxpool_plane_workspace(*ctx.kernels(), plane_geometry(g.geo, g.planes, 1));
    }

    static void fast_kernel(const void* p, const run_context& ctx) noexcept {
        const auto& f = *static_cast<const fast_args*>(p);
        kernels::dwconv_f32_problem d = f.geometry;
        d.x = ctx.at<const float>(f.x);
        d.y = ctx.at<float>(f.y);
        f.table->maxpool_f32(d, ctx.at<float>(f.workspace), f.slots, ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        if (fast_path(g, ctx)) {
            fast_args f;
            f.table = ctx.kernels()->table;
            f.x = ctx.input(0);
            f.y = ctx.output(0);
            f.geometry = plane_geometry(g.geo, g.planes, 1);
            f.workspace = ctx.workspace();
            f.slots = static_cast<std::int64_t>(ctx.kernels()->slots);
            ctx.emit(&fast_kernel, f);
            return status::ok;
        }
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        g.has_indices = ctx.has_output(1);
        if (g.has_indices) g.indices = ctx.output(1);
        switch (ctx.input_type(0)) {
            case dtype::float64: ctx.emit(&kernel<double>, g); break;
            case dtype::float16: ctx.emit(&kernel<float16>, g); break;
            case dtype::int8: ctx.emit(&kernel<std::int8_t>, g); break;
            case dtype::uint8: ctx.emit(&kernel<std::uint8_t>, g); break;
            default: ctx.emit(&kernel<float>, g); break;
        }
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
