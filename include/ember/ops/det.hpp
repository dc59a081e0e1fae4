// SPDX-License-Identifier: Apache-2.0
// Det (ONNX opset 11+), float32, float64 and float16: the determinant of each square matrix of
// X [*, M, M], giving [*]. LU decomposition with partial pivoting, in double, in the workspace;
// an empty (0 x 0) matrix has determinant 1.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct det {
    static constexpr std::string_view onnx_name = "Det";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {};
    static constexpr auto onnx_attributes = std::make_tuple();

    struct args {
        operand x, y, work;
        std::int64_t count = 0, m = 0;
    };

    static status infer(const attributes&, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        if (x.rank() < 2 || x[x.rank() - 1] != x[x.rank() - 2])
            return ctx.fail(status::shape_mismatch, "input must be [*, M, M] (square matrices), got {}", x);
        shape out;
        for (std::size_t i = 0; i + 2 < x.rank(); ++i) out.push_back(x[i]);
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    static std::size_t workspace_bytes(const attributes&, const infer_context& ctx) {
        const shape& x = ctx.input_shape(0);
        const auto m = x.rank() >= 2 ? static_cast<std::size_t>(x[x.rank() - 1]) : 0;
        return m * m * sizeof(double);
    }

    // The definition: Gaussian elimination with partial pivoting on a copy in `a` (m * m).
    static double determinant(double* a, std::int64_t m) noexcept {
        double d = 1.0;
        for (std::int64_t c = 0; c < m; ++c) {
            std::int64_t piv = c;
            for (std::int64_t r = c + 1; r < m; ++r)
                if (std::fabs(a[r * m + c]) > std::fabs(a[piv * m + c])) piv = r;
            if (a[piv * m + c] == 0.0) return 0.0;
            if (piv != c) {
                for (std::int64_t j = 0; j < m; ++j) {
                    const double t = a[c * m + j];
                    a[c * m + j] = a[piv * m + j];
                    a[piv * m + j] = t;
                }
                d = -d;
            }
            const double p = a[c * m + c];
            d *= p;
            for (std::int64_t r = c + 1; r < m; ++r) {
                const double f = a[r * m + c] / p;
                for (std::int64_t j = c; j < m; ++j) a[r * m + j] -= f * a[c * m + j];
            }
        }
        return d;
    }

    template <class T>
    static void reference(const args& g, const T* x, T* y, double* work) noexcept {
        const std::int64_t mm = g.m * g.m;
        for (std::int64_t i = 0; i < g.count; ++i) {
            for (std::int64_t j = 0; j < mm; ++j) work[j] = reduce_detail::to_double(x[i * mm + j]);
            y[i] = reduce_detail::narrow<T>(determinant(work, g.m));
        }
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<T>(g, ctx.at<const T>(g.x), ctx.at<T>(g.y), g.m > 0 ? ctx.at<double>(g.work) : nullptr);
    }

    static status bind(const attributes&, bind_context& ctx) {
        const shape& x = ctx.input_shape(0);
        args g;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        g.work = ctx.workspace();
        g.m = x[x.rank() - 1];
        g.count = ctx.output_shape(0).elements();
        kernel_fn fn = nullptr;
        reduce_detail::visit_floating(ctx.input_type(0), [&](auto tag) { fn = &kernel<decltype(tag)>; });
        ctx.emit(fn, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
