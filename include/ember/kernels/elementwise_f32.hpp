// SPDX-License-Identifier: Apache-2.0
// The float32 element-wise, reduction and normalisation kernels over xsimd that the ops outside
// GEMM and convolution run: one row of a broadcasting binary op (Add, Sub, Mul, Div), the
// activations as stand-alone ops, the mean of each plane (GlobalAveragePool), softmax along a
// contiguous axis and LayerNormalization over trailing axes. Each works on one contiguous range;
// the ops split the work over the executor and walk the broadcast strides, so these stay small
// and the same on every ISA.
//
// Bits: add, sub, mul and div are IEEE operations and match the scalar reference exactly (tails
// run as scalars here, which is the same operation). Sums (the mean, softmax's denominator) are
// taken in vector lanes and then across them: a different order from the reference's, so they
// match it to rounding. The activations and softmax's exp are xsimd's, within a few ULP of std::.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/activation.hpp"
#include "ember/kernels/narrow.hpp"

EMBER_NAMESPACE_BEGIN
namespace kernels {

enum class binary_kind : std::uint8_t { add, sub, mul, div };

namespace elementwise_detail {

struct add_op {
    template <class T>
    T operator()(T a, T b) const noexcept { return a + b; }
};
struct sub_op {
    template <class T>
    T operator()(T a, T b) const noexcept { return a - b; }
};
struct mul_op {
    template <class T>
    T operator()(T a, T b) const noexcept { return a * b; }
};
struct div_op {
    template <class T>
    T operator()(T a, T b) const noexcept { return a / b; }
#if defined(__aarch64__)
    // xsimd 8.1's neon64 float division is NEON's reciprocal estimate with Newton steps, not
    // exact: AArch64's own vdivq_f32 is (found by the QEMU run of the bit-exact test)
    xsimd::batch<float, xsimd::neon64> operator()(xsimd::batch<float, xsimd::neon64> a, xsimd::batch<float, xsimd::neon64> b) const noexcept {
        return vdivq_f32(a, b);
    }
#endif
};

// y[i] = op(a[i * sa], b[i * sb]) for i in [0, n), with sa, sb each 0 (a broadcast scalar) or 1.
// The three layouts get their own loops so that the scalar operand is splatted once.
template <class Arch, class Op>
void binary_row(Op op, const float* a, std::int64_t sa, const float* b, std::int64_t sb, float* y, std::int64_t n) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    std::int64_t i = 0;
    if (sa != 0 && sb != 0) {
        for (; i + W <= n; i += W) op(B::load_unaligned(a + i), B::load_unaligned(b + i)).store_unaligned(y + i);
        for (; i < n; ++i) y[i] = op(a[i], b[i]);
    } else if (sb == 0 && sa != 0) {
        const B vb(b[0]);
        for (; i + W <= n; i += W) op(B::load_unaligned(a + i), vb).store_unaligned(y + i);
        for (; i < n; ++i) y[i] = op(a[i], b[0]);
    } else if (sa == 0 && sb != 0) {
        const B va(a[0]);
        for (; i + W <= n; i += W) op(va, B::load_unaligned(b + i)).store_unaligned(y + i);
        for (; i < n; ++i) y[i] = op(a[0], b[i]);
    } else {
        const float v = op(a[0], b[0]);
        for (; i < n; ++i) y[i] = v;
    }
}

// The sum of v's lanes in lane order (not xsimd::hadd: 8.1's AVX-512F one needs AVX-512DQ).
template <class Arch>
float lane_sum(xsimd::batch<float, Arch> v) noexcept {
    constexpr std::size_t W = xsimd::batch<float, Arch>::size;
    alignas(64) float lanes[W];
    v.store_aligned(lanes);
    float total = lanes[0];
    for (std::size_t t = 1; t < W; ++t) total += lanes[t];
    return total;
}

// Sum of x[0, n) in vector lanes, then across them.
template <class Arch>
float sum(const float* x, std::int64_t n) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    B acc0(0.0f), acc1(0.0f);
    std::int64_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
        acc0 += B::load_unaligned(x + i);
        acc1 += B::load_unaligned(x + i + W);
    }
    if (i + W <= n) {
        acc0 += B::load_unaligned(x + i);
        i += W;
    }
    float total = lane_sum<Arch>(acc0 + acc1);
    for (; i < n; ++i) total += x[i];
    return total;
}

} // namespace elementwise_detail

/// One contiguous row of a broadcasting binary op: y[i] = a[i * sa] op b[i * sb], i in [0, n),
/// with sa and sb each 0 (that operand is one broadcast value) or 1. y may alias a or b.
template <class Arch>
void binary_row_f32(binary_kind op, const float* a, std::int64_t sa, const float* b, std::int64_t sb, float* y, std::int64_t n) noexcept {
    using namespace elementwise_detail;
    switch (op) {
        case binary_kind::add: binary_row<Arch>(add_op{}, a, sa, b, sb, y, n); return;
        case binary_kind::sub: binary_row<Arch>(sub_op{}, a, sa, b, sb, y, n); return;
        case binary_kind::mul: binary_row<Arch>(mul_op{}, a, sa, b, sb, y, n); return;
        case binary_kind::div: binary_row<Arch>(div_op{}, a, sa, b, sb, y, n); return;
    }
}

/// y[0, n) = act(x[0, n)); y may alias x. The last partial vector goes through a padded batch,
/// so every element is computed by the same vector code.
template <class Arch>
void activation_f32(const activation_spec& spec, const float* x, float* y, std::int64_t n) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    visit_activation(spec, [&](auto act) {
        std::int64_t i = 0;
        for (; i + W <= n; i += W) act(B::load_unaligned(x + i)).store_unaligned(y + i);
        if (i < n) {
            alignas(64) float tmp[64] = {};
            for (std::int64_t t = 0; t < n - i; ++t) tmp[t] = x[i + t];
            act(B::load_aligned(tmp)).store_aligned(tmp);
            for (std::int64_t t = 0; t < n - i; ++t) y[i + t] = tmp[t];
        }
    });
}

/// QuantizeLinear per tensor: y = clamp(nearbyint(x / scale) + zero_point, lo, hi), NaN to the
/// zero point, as bytes (int8 as its two's complement). The division is IEEE (the reference's
/// float x / scale), nearbyint rounds half to even; the clamp is done in float, where an
/// integer-valued sum is exact below 2^24 and anything larger saturates anyway (so do +-inf).
template <class Arch>
void quantize_f32(const float* x, std::int64_t n, float scale, std::int32_t zero_point, std::int32_t lo, std::int32_t hi,
                  std::uint8_t* y) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    const B s(scale), zp(static_cast<float>(zero_point)), flo(static_cast<float>(lo)), fhi(static_cast<float>(hi));
    alignas(64) std::int32_t q[64];
    alignas(64) float tail[64] = {};
    for (std::int64_t i = 0; i < n; i += W) {
        const std::int64_t len = n - i < W ? n - i : W;
        B v;
        if (len == W) {
            v = B::load_unaligned(x + i);
        } else {
            for (std::int64_t t = 0; t < len; ++t) tail[t] = x[i + t];
            v = B::load_aligned(tail);
        }
        B r = xsimd::nearbyint(v / s) + zp;
        r = xsimd::select(xsimd::isnan(r), zp, xsimd::min(xsimd::max(r, flo), fhi));
        const auto qi = xsimd::to_int(r);
        if constexpr (byte_lanes<Arch>::available) {
            if (len == W) {
                byte_lanes<Arch>::store_low(qi, y + i);
                continue;
            }
        }
        qi.store_aligned(q);
        for (std::int64_t t = 0; t < len; ++t) y[i + t] = static_cast<std::uint8_t>(q[t]);
    }
}

/// DequantizeLinear per tensor: y = (float(x) - float(zero_point)) * scale, x uint8 or (is_signed)
/// int8 as its bytes: the reference's two float operations, so the same floats.
template <class Arch>
void dequantize_8bit(const std::uint8_t* x, std::int64_t n, bool is_signed, float scale, std::int32_t zero_point, float* y) noexcept {
    using B = xsimd::batch<float, Arch>;
    using I = xsimd::batch<std::int32_t, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    const B s(scale), zp(static_cast<float>(zero_point));
    alignas(64) std::int32_t q[64] = {};
    alignas(64) float tail[64];
    for (std::int64_t i = 0; i < n; i += W) {
        const std::int64_t len = n - i < W ? n - i : W;
        if constexpr (byte_lanes<Arch>::available) {
            if (len == W) {
                ((xsimd::to_float(byte_lanes<Arch>::widen(x + i, is_signed)) - zp) * s).store_unaligned(y + i);
                continue;
            }
        }
        if (is_signed)
            for (std::int64_t t = 0; t < len; ++t) q[t] = static_cast<std::int8_t>(x[i + t]);
        else
            for (std::int64_t t = 0; t < len; ++t) q[t] = x[i + t];
        const B v = (xsimd::to_float(I::load_aligned(q)) - zp) * s;
        if (len == W) {
            v.store_unaligned(y + i);
        } else {
            v.store_aligned(tail);
            for (std::int64_t t = 0; t < len; ++t) y[i + t] = tail[t];
        }
    }
}

/// y[r] = mean of x[r * size, (r + 1) * size) for r in [0, rows) (size > 0).
template <class Arch>
void row_mean_f32(const float* x, std::int64_t rows, std::int64_t size, float* y) noexcept {
    const float scale = 1.0f / static_cast<float>(size);
    for (std::int64_t r = 0; r < rows; ++r) y[r] = elementwise_detail::sum<Arch>(x + r * size, size) * scale;
}

/// Softmax of each of `rows` contiguous rows of n values (n > 0): y = exp(x - max) / sum. y may
/// alias x.
template <class Arch>
void softmax_rows_f32(const float* x, float* y, std::int64_t rows, std::int64_t n) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        float* yr = y + r * n;
        float max = xr[0];
        std::int64_t i = 0;
        if (n >= W) {
            B vmax = B::load_unaligned(xr);
            for (i = W; i + W <= n; i += W) vmax = xsimd::max(vmax, B::load_unaligned(xr + i));
            alignas(64) float lanes[W];
            vmax.store_aligned(lanes);
            max = lanes[0];
            for (std::int64_t t = 1; t < W; ++t) max = lanes[t] > max ? lanes[t] : max;
        }
        for (; i < n; ++i) max = xr[i] > max ? xr[i] : max;
        // exp(x - max) into y, summed in lanes; the tail through a padded batch (its pad lanes
        // are -inf, whose exp is 0).
        const B vm(max);
        B acc(0.0f);
        for (i = 0; i + W <= n; i += W) {
            const B e = xsimd::exp(B::load_unaligned(xr + i) - vm);
            e.store_unaligned(yr + i);
            acc += e;
        }
        if (i < n) {
            alignas(64) float tmp[64];
            for (std::int64_t t = 0; t < W; ++t) tmp[t] = i + t < n ? xr[i + t] : -std::numeric_limits<float>::infinity();
            const B e = xsimd::exp(B::load_aligned(tmp) - vm);
            acc += e;
            e.store_aligned(tmp);
            for (std::int64_t t = 0; t < n - i; ++t) yr[i + t] = tmp[t];
        }
        const float inv = 1.0f / elementwise_detail::lane_sum<Arch>(acc);
        const B vinv(inv);
        for (i = 0; i + W <= n; i += W) (B::load_unaligned(yr + i) * vinv).store_unaligned(yr + i);
        for (; i < n; ++i) yr[i] *= inv;
    }
}

/// LayerNormalization of `rows` contiguous rows of n floats (n > 0): y = (x - mean) /
/// sqrt(var + eps) * scale + bias, population variance, two passes over the row in float (the
/// reference works in double). scale and bias hold n values (bias may be null); mean and inv_std,
/// when not null, get each row's statistics.
template <class Arch>
void layer_norm_rows_f32(const float* x, const float* scale, const float* bias, float* y, float* mean, float* inv_std, std::int64_t rows,
                         std::int64_t n, float eps) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        float* yr = y + r * n;
        const float mu = elementwise_detail::sum<Arch>(xr, n) / static_cast<float>(n);
        const B vmu(mu);
        B acc(0.0f);
        std::int64_t i = 0;
        for (; i + W <= n; i += W) {
            const B d = B::load_unaligned(xr + i) - vmu;
            acc = xsimd::fma(d, d, acc);
        }
        float sq = elementwise_detail::lane_sum<Arch>(acc);
        for (; i < n; ++i) sq += (xr[i] - mu) * (xr[i] - mu);
        const float inv = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
        const B vinv(inv);
        for (i = 0; i + W <= n; i += W) {
            B v = (B::load_unaligned(xr + i) - vmu) * vinv * B::load_unaligned(scale + i);
            if (bias) v += B::load_unaligned(bias + i);
            v.store_unaligned(yr + i);
        }
        for (; i < n; ++i) yr[i] = (xr[i] - mu) * inv * scale[i] + (bias ? bias[i] : 0.0f);
        if (mean) mean[r] = mu;
        if (inv_std) inv_std[r] = inv;
    }
}

} // namespace kernels
EMBER_NAMESPACE_END
