// SPDX-License-Identifier: Apache-2.0
// The quantized matrix products (ONNX opset 10+), reference kernels, with numpy.matmul's shapes
// (as MatMul: 1-D operands promoted, batch dimensions broadcast):
//
//   MatMulInteger(A, B, a_zero_point?, B_zero_point?) -> int32
//       Y[.., m, n] = sum_k (A[.., m, k] - a_zp) * (B[.., k, n] - b_zp)
//       a_zp: a scalar, a 1-D [M] (per row), or [.., M, 1] (per row of each matrix, batch dims 1
//       or A's); b_zp: a scalar, a 1-D [N] (per column), or [.., 1, N].
//   QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) -> y_zp's type
//       y = saturate(round((sum_k (a - a_zp) * (b - b_zp)) * (a_scale * b_scale / y_scale)) + y_zp)
//       a's scale and zero point per tensor or per row ([M]); b's per tensor or per column ([N]);
//       y's per tensor.
// A and B are uint8 or int8 (any combination). The accumulator is exact (int64) and converts
// to int32 for MatMulInteger; round is half to even, saturate clamps to uint8 / int8.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/ops/binary.hpp"
#include "ember/ops/matmul.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/quantize_linear.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

namespace qmatmul_detail {

/// Where the zero point (or scale) of output element (batch, m, n) lives: offset = sum over the
/// output batch dims of index * batch_strides + m * row_stride + n * col_stride.
struct param_layout {
    std::int64_t batch_strides[max_rank] = {};
    std::int64_t row_stride = 0, col_stride = 0;
};

/// Checks the shape of a zero point (or scale) of operand `which` (0 = A, 1 = B), input index
/// zi, against that operand's shape `op` (1-D promoted) and the output batch shape; fills
/// layout. With allow_nd false only a single value or the 1-D per-row / per-column form is
/// accepted (QLinearMatMul).
inline status plan_param(infer_context& ctx, std::size_t zi, const char* what, int which, const shape& op_raw, const shape& out_batch,
                         bool allow_nd, param_layout& layout) {
    layout = param_layout{};
    const shape& z = ctx.input_shape(zi);
    shape op = op_raw;
    if (op.rank() == 1) op = which == 0 ? shape{1, op_raw[0]} : shape{op_raw[0], 1};
    const std::int64_t rows = op[op.rank() - 2], cols = op[op.rank() - 1];
    const std::int64_t own = which == 0 ? rows : cols;  // M for A, N for B
    if (quant_detail::is_single(z)) return status::ok;
    if (z.rank() == 1 && z[0] == own) {
        (which == 0 ? layout.row_stride : layout.col_stride) = 1;
        return status::ok;
    }
    const char* form = which == 0 ? "a scalar, [M] or [..., M, 1]" : "a scalar, [N] or [..., 1, N]";
    const char* short_form = which == 0 ? "a scalar or [M] (per row)" : "a scalar or [N] (per column)";
    if (!allow_nd || z.rank() != op_raw.rank() || z.rank() < 2)
        return ctx.fail(status::shape_mismatch, "{} has shape {}; for operand {} it must be {}", what, z, op_raw, allow_nd ? form : short_form);
    const std::size_t r = z.rank();
    bool ok = which == 0 ? z[r - 1] == 1 && (z[r - 2] == 1 || z[r - 2] == rows) : z[r - 2] == 1 && (z[r - 1] == 1 || z[r - 1] == cols);
    shape z_batch;
    for (std::size_t i = 0; ok && i + 2 < r; ++i) {
        ok = z[i] == 1 || z[i] == op[i];
        z_batch.push_back(z[i]);
    }
    if (!ok) return ctx.fail(status::shape_mismatch, "{} has shape {}; for operand {} it must be {}", what, z, op_raw, form);
    const std::int64_t matrix = z[r - 2] * z[r - 1];
    if (which == 0) layout.row_stride = z[r - 2] == 1 ? 0 : 1;
    else layout.col_stride = z[r - 1] == 1 ? 0 : 1;
    std::int64_t s[max_rank] = {};
    broadcast_strides(z_batch, out_batch, s);
    for (std::size_t i = 0; i < out_batch.rank(); ++i) layout.batch_strides[i] = s[i] * matrix;
    return status::ok;
}

/// The batch shape of the output (matmul's broadcast of the operands' batch dims).
inline shape output_batch(const shape& out, const shape& a, const shape& b) {
    shape batch;
    const std::size_t drop = (a.rank() != 1 ? 1 : 0) + (b.rank() != 1 ? 1 : 0);
    for (std::size_t i = 0; i + drop < out.rank(); ++i) batch.push_back(out[i]);
    return batch;
}

/// The shared loop: acc(batch, m, n) with exact integer zero-point subtraction, handed to
/// out(index, m, n, acc). za / zb may be null (zero point 0). The batch_count * M output rows
/// are split over the executor; out() writes only its own element.
template <class A, class B, class Out>
void product(const matmul::args& g, const A* a_all, const B* b_all, const A* za, const param_layout& la, const B* zb, const param_layout& lb,
             Out out, const executor* ex) noexcept {
    const std::int64_t M = g.m, N = g.n, K = g.k;
    if (M == 0 || N == 0) return;
    parallel_for(ex, static_cast<std::size_t>(g.batch_count * M), [&](std::size_t begin, std::size_t end) {
        for (auto row = static_cast<std::int64_t>(begin); row < static_cast<std::int64_t>(end); ++row) {
            const std::int64_t batch = row / M, m = row % M;
            std::int64_t a_off = 0, b_off = 0, za_off = 0, zb_off = 0, rest = batch;
            for (std::size_t d = g.batch_rank; d-- > 0;) {
                const std::int64_t idx = rest % g.batch_dims[d];
                rest /= g.batch_dims[d];
                a_off += idx * g.a_batch_strides[d];
                b_off += idx * g.b_batch_strides[d];
                za_off += idx * la.batch_strides[d];
                zb_off += idx * lb.batch_strides[d];
            }
            const std::int64_t a_zp = za ? za[za_off + m * la.row_stride] : 0;
            for (std::int64_t n = 0; n < N; ++n) {
                const std::int64_t b_zp = zb ? zb[zb_off + n * lb.col_stride] : 0;
                std::int64_t acc = 0;
                for (std::int64_t k = 0; k < K; ++k)
                    acc += (static_cast<std::int64_t>(a_all[a_off + m * K + k]) - a_zp) * (static_cast<std::int64_t>(b_all[b_off + k * N + n]) - b_zp);
                out(row * N + n, m, n, acc);
            }
        }
    });
}

} // namespace qmatmul_detail

// ---------------------------------------------------------------------------------------------

struct matmul_integer {
    static constexpr std::string_view onnx_name = "MatMulInteger";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    struct args {
        matmul::args mm;
        operand za, zb;
        bool has_za = false, has_zb = false;
        qmatmul_detail::param_layout la, lb;
    };

    static status plan(infer_context& ctx, args& g, shape& out) {
        if (ctx.opset() < 10) return ctx.fail(status::unsupported_op, "MatMulInteger exists from opset 10 on; the model's opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(2, 4); s != status::ok) return s;
        for (std::size_t i = 0; i < 2; ++i)
            if (status s = ctx.expect_type(i, {dtype::uint8, dtype::int8}); s != status::ok) return s;
        for (std::size_t i = 2; i < 4; ++i)
            if (ctx.has_input(i) && ctx.input_type(i) != ctx.input_type(i - 2))
                return ctx.fail(status::invalid_model, "{} has dtype {}, expected {} like {}", i == 2 ? "a_zero_point" : "b_zero_point",
                                ctx.input_type(i), ctx.input_type(i - 2), i == 2 ? "A" : "B");
        const shape& lhs = ctx.input_shape(0);
        const shape& rhs = ctx.input_shape(1);
        if (status s = matmul::check_shapes(ctx, lhs, rhs, out, &g.mm); s != status::ok) return s;
        const shape batch = qmatmul_detail::output_batch(out, lhs, rhs);
        if (ctx.has_input(2))
            if (status s = qmatmul_detail::plan_param(ctx, 2, "a_zero_point", 0, lhs, batch, true, g.la); s != status::ok) return s;
        if (ctx.has_input(3))
            if (status s = qmatmul_detail::plan_param(ctx, 3, "b_zero_point", 1, rhs, batch, true, g.lb); s != status::ok) return s;
        return status::ok;
    }

    static status infer(const attributes&, infer_context& ctx) {
        args g;
        shape out;
        if (status s = plan(ctx, g, out); s != status::ok) return s;
        ctx.set_output(0, dtype::int32, out);
        return status::ok;
    }

    // The definition: exact integer sums, converted to int32 (wrapping, as int32 hardware
    // accumulators do, only past 2^31).
    template <class A, class B>
    static void reference(const args& g, const A* a, const B* b, const A* za, const B* zb, std::int32_t* y, const executor* ex) noexcept {
        qmatmul_detail::product(
            g.mm, a, b, za, g.la, zb, g.lb, [&](std::int64_t i, std::int64_t, std::int64_t, std::int64_t acc) { y[i] = static_cast<std::int32_t>(acc); },
            ex);
    }

    template <class A, class B>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<A, B>(g, ctx.at<const A>(g.mm.a), ctx.at<const B>(g.mm.b), g.has_za ? ctx.at<const A>(g.za) : nullptr,
                        g.has_zb ? ctx.at<const B>(g.zb) : nullptr, ctx.at<std::int32_t>(g.mm.y), ctx.exec);
    }

    static status bind(const attributes&, bind_context& ctx) {
        args g;
        shape out;
        if (status s = plan(ctx, g, out); s != status::ok) return s;
        g.mm.a = ctx.input(0);
        g.mm.b = ctx.input(1);
        g.mm.y = ctx.output(0);
        g.has_za = ctx.has_input(2);
        g.has_zb = ctx.has_input(3);
        if (g.has_za) g.za = ctx.input(2);
        if (g.has_zb) g.zb = ctx.input(3);
        const dtype tb = ctx.input_type(1);
        ctx.emit(quant_detail::pick_u8_i8(ctx.input_type(0),
                                            [&](auto a) {
                                                return quant_detail::pick_u8_i8(tb, [&](auto b) -> kernel_fn {
                                                    return &kernel<decltype(a), decltype(b)>;
                                                });
                                            }),
                 g);
        return status::ok;
    }
};

// ---------------------------------------------------------------------------------------------

struct qlinear_matmul {
    static constexpr std::string_view onnx_name = "QLinearMatMul";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    struct args {
        matmul::args mm;
        operand a_scale, a_zp, b_scale, b_zp, y_scale, y_zp;
        qmatmul_detail::param_layout la, lb;  ///< shared by each operand's scale and zero point
    };

    static status plan(infer_context& ctx, args& g, shape& out) {
        if (ctx.opset() < 10) return ctx.fail(status::unsupported_op, "QLinearMatMul exists from opset 10 on; the model's opset is {}", ctx.opset());
        if (status s = ctx.expect_inputs(8, 8); s != status::ok) return s;
        for (std::size_t i : {0, 3})
            if (status s = ctx.expect_type(i, {dtype::uint8, dtype::int8}); s != status::ok) return s;
        if (status s = ctx.expect_type(7, {dtype::uint8, dtype::int8}); s != status::ok) return s;
        for (std::size_t i : {1, 4, 6})
            if (status s = ctx.expect_type(i, {dtype::float32}); s != status::ok) return s;
        if (ctx.input_type(2) != ctx.input_type(0))
            return ctx.fail(status::invalid_model, "a_zero_point has dtype {}, expected {} like a", ctx.input_type(2), ctx.input_type(0));
        if (ctx.input_type(5) != ctx.input_type(3))
            return ctx.fail(status::invalid_model, "b_zero_point has dtype {}, expected {} like b", ctx.input_type(5), ctx.input_type(3));
        const shape& lhs = ctx.input_shape(0);
        const shape& rhs = ctx.input_shape(3);
        if (status s = matmul::check_shapes(ctx, lhs, rhs, out, &g.mm); s != status::ok) return s;
        const shape batch = qmatmul_detail::output_batch(out, lhs, rhs);
        if (status s = qmatmul_detail::plan_param(ctx, 1, "a_scale", 0, lhs, batch, false, g.la); s != status::ok) return s;
        if (status s = qmatmul_detail::plan_param(ctx, 4, "b_scale", 1, rhs, batch, false, g.lb); s != status::ok) return s;
        if (ctx.input_shape(2).elements() != ctx.input_shape(1).elements())
            return ctx.fail(status::shape_mismatch, "a_zero_point has shape {}, expected a_scale's shape {}", ctx.input_shape(2), ctx.input_shape(1));
        if (ctx.input_shape(5).elements() != ctx.input_shape(4).elements())
            return ctx.fail(status::shape_mismatch, "b_zero_point has shape {}, expected b_scale's shape {}", ctx.input_shape(5), ctx.input_shape(4));
        for (std::size_t i : {6, 7})
            if (!quant_detail::is_single(ctx.input_shape(i)))
                return ctx.fail(status::shape_mismatch, "{} must be a scalar (per-tensor), got shape {}", i == 6 ? "y_scale" : "y_zero_point",
                                ctx.input_shape(i));
        return status::ok;
    }

    static status infer(const attributes&, infer_context& ctx) {
        args g;
        shape out;
        if (status s = plan(ctx, g, out); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(7), out);
        return status::ok;
    }

    // The definition: the exact integer product, scaled by a_scale * b_scale / y_scale (float,
    // per row / column), rounded half to even, shifted by y_zp, clamped.
    template <class A, class B, class Y>
    static void reference(const args& g, const A* a, const float* a_scale, const A* a_zp, const B* b, const float* b_scale, const B* b_zp,
                          float y_scale, Y y_zp, Y* y, const executor* ex) noexcept {
        qmatmul_detail::product(
            g.mm, a, b, a_zp, g.la, b_zp, g.lb,
            [&](std::int64_t i, std::int64_t m, std::int64_t n, std::int64_t acc) {
                const float multiplier = a_scale[m * g.la.row_stride] * b_scale[n * g.lb.col_stride] / y_scale;
                const double real = static_cast<double>(acc) * static_cast<double>(multiplier);
                y[i] = quant_detail::saturate<Y>(quant_detail::round_half_even(real) + static_cast<double>(y_zp), y_zp);
            },
            ex);
    }

    template <class A, class B, class Y>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<A, B, Y>(g, ctx.at<const A>(g.mm.a), ctx.at<const float>(g.a_scale), ctx.at<const A>(g.a_zp), ctx.at<const B>(g.mm.b),
                           ctx.at<const float>(g.b_scale), ctx.at<const B>(g.b_zp), *ctx.at<const float>(g.y_scale), *ctx.at<const Y>(g.y_zp),
                           ctx.at<Y>(g.mm.y), ctx.exec);
    }

    static status bind(const attributes&, bind_context& ctx) {
        args g;
        shape out;
        if (status s = plan(ctx, g, out); s != status::ok) return s;
        g.mm.a = ctx.input(0);
        g.a_scale = ctx.input(1);
        g.a_zp = ctx.input(2);
        g.mm.b = ctx.input(3);
        g.b_scale = ctx.input(4);
        g.b_zp = ctx.input(5);
        g.y_scale = ctx.input(6);
        g.y_zp = ctx.input(7);
        g.mm.y = ctx.output(0);
        const dtype tb = ctx.input_type(3), ty = ctx.input_type(7);
        ctx.emit(quant_detail::pick_u8_i8(ctx.input_type(0),
                                            [&](auto a) {
                                                return quant_detail::pick_u8_i8(tb, [&](auto b) {
                                                    return quant_detail::pick_u8_i8(ty, [&](auto yt) -> kernel_fn {
                                                        return &kernel<decltype(a), decltype(b), decltype(yt)>;
                                                    });
                                                });
                                            }),
                 g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
