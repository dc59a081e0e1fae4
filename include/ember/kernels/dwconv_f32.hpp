// SPDX-License-Identifier: Apache-2.0
// Depthwise convolution (one filter per channel, NCHW) and max pooling over xsimd, with the conv epilogue
// act(y + bias + residual). Each output row: the columns whose whole window lies inside the
// input run as vectors (lane l = output column ow + l), the few at the borders as scalars. Planes
// (image, channel) are split over the executor; each is summed in a fixed order, so the bits do
// not depend on the thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "ember/config.hpp"
#include "ember/kernels/activation.hpp"
#include "ember/runtime/executor.hpp"

EMBER_NAMESPACE_BEGIN
namespace kernels {

struct dwconv_f32_problem {
    const float* x = nullptr;         // [planes, in_h, in_w]
    const float* w = nullptr;         // [channels, kh, kw]
    const float* bias = nullptr;      // [channels] or null
    const float* residual = nullptr;  // like y, or null
    float* y = nullptr;               // [planes, out_h, out_w]
    std::int64_t planes = 0, channels = 0;  // planes = batch * channels
    std::int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0, kh = 0, kw = 0;
    std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
    activation_spec act;
};

namespace dwconv_detail {

// y[0, n) = act(y + residual), vectors then a padded last vector.
template <class Arch, class Act>
void finish_row(float* y, const float* res, std::int64_t n, const Act& act) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    std::int64_t j = 0;
    for (; j + W <= n; j += W) {
        B v = B::load_unaligned(y + j);
        if (res) v += B::load_unaligned(res + j);
        act(v).store_unaligned(y + j);
    }
    if (j < n) {
        alignas(64) float tmp[64] = {};
        for (std::int64_t t = 0; t < n - j; ++t) tmp[t] = y[j + t] + (res ? res[j + t] : 0.0f);
        act(B::load_aligned(tmp)).store_aligned(tmp);
        for (std::int64_t t = 0; t < n - j; ++t) y[j + t] = tmp[t];
    }
}

// One plane of a depthwise convolution (Max = false: sum of w * x, + bias) or of a max pool
// (Max = true: the largest x in the window; taps in the padding are skipped, and a window wholly
// in the padding gives -inf; no weights, bias or activation).
template <class Arch, bool Max, class Act>
void plane(const dwconv_f32_problem& p, std::int64_t index, const Act& act) noexcept {
    using B = xsimd::batch<float, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
    const std::int64_t c = index % p.channels;
    const float* x = p.x + index * p.in_h * p.in_w;
    const float* w = Max ? nullptr : p.w + c * p.kh * p.kw;
    const float bias = p.bias ? p.bias[c] : 0.0f;
    const float init = Max ? -std::numeric_limits<float>::infinity() : 0.0f;
    float* y = p.y + index * p.out_h * p.out_w;
    const float* res = p.residual ? p.residual + index * p.out_h * p.out_w : nullptr;
    // interior columns: ow * sw - pw >= 0 and ow * sw - pw + (kw - 1) * dw < in_w
    std::int64_t lo = (p.pad_w + p.stride_w - 1) / p.stride_w;
    const std::int64_t last_tap = p.in_w - 1 - (p.kw - 1) * p.dil_w + p.pad_w;  // ow * sw <= last_tap
    std::int64_t hi = last_tap < 0 ? 0 : last_tap / p.stride_w + 1;
    if (hi > p.out_w) hi = p.out_w;
    if (lo > hi) lo = hi;
    alignas(64) float lanes[64];
    for (std::int64_t oh = 0; oh < p.out_h; ++oh) {
        float* yrow = y + oh * p.out_w;
        const std::int64_t ih0 = oh * p.stride_h - p.pad_h;
        // a border column: taps outside the input are skipped
        auto border_at = [&](std::int64_t ow) {
            float acc = init;
            const std::int64_t iw0 = ow * p.stride_w - p.pad_w;
            for (std::int64_t r = 0; r < p.kh; ++r) {
                const std::int64_t ih = ih0 + r * p.dil_h;
                if (ih < 0 || ih >= p.in_h) continue;
                for (std::int64_t q = 0; q < p.kw; ++q) {
                    const std::int64_t iw = iw0 + q * p.dil_w;
                    if (iw < 0 || iw >= p.in_w) continue;
                    const float v = x[ih * p.in_w + iw];
                    if constexpr (Max) acc = v > acc ? v : acc;
                    else acc += v * w[r * p.kw + q];
                }
            }
            yrow[ow] = acc + bias;
        };
        // W interior columns from ow on, as one vector
        auto vector_at = [&](std::int64_t ow) {
            B acc(init);
            for (std::int64_t r = 0; r < p.kh; ++r) {
                const std::int64_t ih = ih0 + r * p.dil_h;
                if (ih < 0 || ih >= p.in_h) continue;
                const float* xrow = x + ih * p.in_w + ow * p.stride_w - p.pad_w;
                for (std::int64_t q = 0; q < p.kw; ++q) {
                    B v;
                    if (p.stride_w == 1) {
                        v = B::load_unaligned(xrow + q * p.dil_w);
                    } else {
                        for (std::int64_t l = 0; l < W; ++l) lanes[l] = xrow[l * p.stride_w + q * p.dil_w];
                        v = B::load_aligned(lanes);
                    }
                    if constexpr (Max) acc = xsimd::max(acc, v);
                    else acc = xsimd::fma(v, B(w[r * p.kw + q]), acc);
                }
            }
            (acc + B(bias)).store_unaligned(yrow + ow);
        };
        // interior columns of a row narrower than a vector: no bounds checks on the columns
        auto interior_at = [&](std::int64_t ow) {
            float acc = init;
            const std::int64_t iw0 = ow * p.stride_w - p.pad_w;
            for (std::int64_t r = 0; r < p.kh; ++r) {
                const std::int64_t ih = ih0 + r * p.dil_h;
                if (ih < 0 || ih >= p.in_h) continue;
                const float* xrow = x + ih * p.in_w + iw0;
                for (std::int64_t q = 0; q < p.kw; ++q) {
                    const float v = xrow[q * p.dil_w];
                    if constexpr (Max) acc = v > acc ? v : acc;
                    else acc += v * w[r * p.kw + q];
                }
            }
            yrow[ow] = acc + bias;
        };
        for (std::int64_t ow = 0; ow < lo; ++ow) border_at(ow);
        if (hi - lo >= W) {
            std::int64_t ow = lo;
            for (; ow + W <= hi; ow += W) vector_at(ow);
            if (ow < hi) vector_at(hi - W);  // overlaps the last full vector: those columns get the same bits again
        } else {
            for (std::int64_t ow = lo; ow < hi; ++ow) interior_at(ow);
        }
        for (std::int64_t ow = hi; ow < p.out_w; ++ow) border_at(ow);
        if constexpr (!Max) finish_row<Arch>(yrow, res ? res + oh * p.out_w : nullptr, p.out_w, act);
    }
}

} // namespace dwconv_detail

template <class Arch>
void dwconv_f32(const dwconv_f32_problem& p, const executor* ex) noexcept {
    visit_activation(p.act, [&](auto act) {
        parallel_for(ex, static_cast<std::size_t>(p.planes), [&](std::size_t begin, std::size_t end) noexcept {
            for (std::size_t i = begin; i < end; ++i) dwconv_detail::plane<Arch, false>(p, static_cast<std::int64_t>(i), act);
        });
    });
}

/// Max pooling, 2-D NCHW, over the same geometry (w, bias, residual and act unused; channels = 1
/// is fine). Matches MaxPool's reference except for NaN (xsimd's max does not propagate it).
template <class Arch>
void maxpool_f32(const dwconv_f32_problem& p, const executor* ex) noexcept {
    parallel_for(ex, static_cast<std::size_t>(p.planes), [&](std::size_t begin, std::size_t end) noexcept {
        for (std::size_t i = begin; i < end; ++i) dwconv_detail::plane<Arch, true>(p, static_cast<std::int64_t>(i), identity_fn{});
    });
}

} // namespace kernels
EMBER_NAMESPACE_END
