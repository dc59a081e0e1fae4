// SPDX-License-Identifier: Apache-2.0
// ember's own CUDA kernels: element-wise (unary, broadcasting binary, the GEMM/conv epilogue),
// strided copies (Slice, Split, Expand, Transpose), pooling, softmax and reductions. Each
// launcher queues its kernel on a stream and returns the launch's result; none waits, none
// allocates. Index math is 64-bit; grids are capped and loops grid-stride.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "ember/config.hpp"
#include "ember/cuda/device.cuh"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace cuda {
namespace kernels {

/// Element-wise functions the GPU runs: the fused activations first (in kernels::activation's
/// order, so that value casts between them), then the other unary ops.
enum class unary : std::uint8_t {
    identity, relu, clip, leaky_relu, hard_sigmoid, hard_swish, sigmoid, silu, gelu,  // = kernels::activation
    tanh, exp, log, sqrt, neg, abs, reciprocal, erf, floor, ceil, softplus, elu,
};
enum class binary : std::uint8_t { add, sub, mul, div, pow, max, min };

inline constexpr int max_dims = 8;

/// Shape and per-operand element strides of a broadcasting or strided operation (up to max_dims).
struct dims_strides {
    int rank = 0;
    std::int64_t dims[max_dims] = {};
    std::int64_t a[max_dims] = {};  ///< first operand (or the source)
    std::int64_t b[max_dims] = {};  ///< second operand
};

__device__ __forceinline__ float apply(unary k, float x, float p0, float p1) {
    switch (k) {
        case unary::identity: return x;
        case unary::relu: return x > 0.0f ? x : 0.0f;
        case unary::clip: return fminf(fmaxf(x, p0), p1);
        case unary::leaky_relu: return x >= 0.0f ? x : p0 * x;
        case unary::hard_sigmoid: return fminf(fmaxf(p0 * x + p1, 0.0f), 1.0f);
        case unary::hard_swish: return x * fminf(fmaxf(x * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);
        case unary::sigmoid: return 1.0f / (1.0f + expf(-x));
        case unary::silu: return x / (1.0f + expf(-x));
        case unary::gelu: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
        case unary::tanh: return tanhf(x);
        case unary::exp: return expf(x);
        case unary::log: return logf(x);
        case unary::sqrt: return sqrtf(x);
        case unary::neg: return -x;
        case unary::abs: return fabsf(x);
        case unary::reciprocal: return 1.0f / x;
        case unary::erf: return erff(x);
        case unary::floor: return floorf(x);
        case unary::ceil: return ceilf(x);
        case unary::softplus: return log1pf(expf(-fabsf(x))) + fmaxf(x, 0.0f);
        case unary::elu: return x >= 0.0f ? x : p0 * (expf(x) - 1.0f);
    }
    return x;
}

__device__ __forceinline__ float apply(binary k, float a, float b) {
    switch (k) {
        case binary::add: return a + b;
        case binary::sub: return a - b;
        case binary::mul: return a * b;
        case binary::div: return a / b;
        case binary::pow: return powf(a, b);
        case binary::max: return fmaxf(a, b);
        case binary::min: return fminf(a, b);
    }
    return a;
}

inline unsigned grid_for(std::int64_t n, unsigned block = 256) noexcept {
    const std::int64_t blocks = (n + block - 1) / block;
    return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 * 4 ? 65535 * 4 : blocks));
}

#define EMBER_CUDA_GRID_STRIDE(i, n) \
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

/// Offsets of element i (row-major over dims) in the two operands of s.
__device__ __forceinline__ void offsets_of(const dims_strides& s, std::int64_t i, std::int64_t& oa, std::int64_t& ob) {
    oa = 0;
    ob = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
        const std::int64_t q = i / s.dims[d], r = i - q * s.dims[d];
        oa += r * s.a[d];
        ob += r * s.b[d];
        i = q;
    }
}

// -- element-wise -------------------------------------------------------------------------------

/// y = f(x); lo/hi (device scalars, may be null) override p0/p1 (Clip's min and max inputs).
template <int = 0>  // a template: one definition across translation units
__global__ void unary_kernel(unary k, const float* x, float* y, std::int64_t n, float p0, float p1, const float* lo, const float* hi) {
    if (lo) p0 = *lo;
    if (hi) p1 = *hi;
    EMBER_CUDA_GRID_STRIDE(i, n) y[i] = apply(k, x[i], p0, p1);
}

inline call_result launch_unary(cudaStream_t s, unary k, const float* x, float* y, std::int64_t n, float p0, float p1, const float* lo = nullptr,
                                const float* hi = nullptr) noexcept {
    if (n == 0) return {};
    unary_kernel<><<<grid_for(n), 256, 0, s>>>(k, x, y, n, p0, p1, lo, hi);
    return launched();
}

template <int = 0>  // a template: one definition across translation units
__global__ void binary_same_kernel(binary k, const float* a, const float* b, float* y, std::int64_t n) {
    EMBER_CUDA_GRID_STRIDE(i, n) y[i] = apply(k, a[i], b[i]);
}
template <int = 0>  // a template: one definition across translation units
__global__ void binary_scalar_kernel(binary k, const float* a, const float* b, float* y, std::int64_t n) {
    const float bv = *b;
    EMBER_CUDA_GRID_STRIDE(i, n) y[i] = apply(k, a[i], bv);
}
template <int = 0>  // a template: one definition across translation units
__global__ void binary_broadcast_kernel(binary k, const float* a, const float* b, float* y, std::int64_t n, dims_strides s) {
    EMBER_CUDA_GRID_STRIDE(i, n) {
        std::int64_t oa, ob;
        offsets_of(s, i, oa, ob);
        y[i] = apply(k, a[oa], b[ob]);
    }
}

/// y = a (op) b over the output shape of s, a and b read through s's strides (0 = broadcast).
inline call_result launch_binary(cudaStream_t st, binary k, const float* a, const float* b, float* y, std::int64_t n, const dims_strides& s,
                                 bool same, bool b_scalar) noexcept {
    if (n == 0) return {};
    if (same)
        binary_same_kernel<><<<grid_for(n), 256, 0, st>>>(k, a, b, y, n);
    else if (b_scalar)
        binary_scalar_kernel<><<<grid_for(n), 256, 0, st>>>(k, a, b, y, n);
    else
        binary_broadcast_kernel<><<<grid_for(n), 256, 0, st>>>(k, a, b, y, n, s);
    return launched();
}

/// The epilogue of a GEMM or convolution, in place on y ([rows, cols] as the op sees it):
/// y = act(y * scale + bias + beta * c + z) where bias is per row (`bias_inner` > 0: index
/// (i / bias_inner) % bias_count, a conv's channel) or per column (bias_inner == 0: i % bias_count),
/// c is read through (c_row, c_col) strides (Gemm's broadcast C), z has y's shape. Null terms
/// are skipped.
struct epilogue_args {
    float* y = nullptr;
    std::int64_t n = 0, cols = 1;
    const float* bias = nullptr;
    std::int64_t bias_inner = 0, bias_count = 1;
    const float* c = nullptr;
    std::int64_t c_row = 0, c_col = 0;
    float beta = 1.0f;
    const float* z = nullptr;
    unary act = unary::identity;
    float p0 = 0.0f, p1 = 0.0f;
    const __half* y16 = nullptr;  ///< when set, the op's result is here in FP16 (read instead of y)
};

template <int = 0>  // a template: one definition across translation units
__global__ void epilogue_kernel(epilogue_args e) {
    EMBER_CUDA_GRID_STRIDE(i, e.n) {
        float v = e.y16 ? __half2float(e.y16[i]) : e.y[i];
        if (e.bias) v += e.bias[e.bias_inner > 0 ? (i / e.bias_inner) % e.bias_count : i % e.bias_count];
        if (e.c) v += e.beta * e.c[(i / e.cols) * e.c_row + (i % e.cols) * e.c_col];
        if (e.z) v += e.z[i];
        e.y[i] = apply(e.act, v, e.p0, e.p1);
    }
}

inline call_result launch_epilogue(cudaStream_t s, const epilogue_args& e) noexcept {
    if (e.n == 0 || (!e.bias && !e.c && !e.z && !e.y16 && e.act == unary::identity)) return {};
    epilogue_kernel<><<<grid_for(e.n), 256, 0, s>>>(e);
    return launched();
}

/// y = x rounded to FP16 (the input of an FP16 convolution).
template <int = 0>
__global__ void to_half_kernel(const float* x, __half* y, std::int64_t n) {
    EMBER_CUDA_GRID_STRIDE(i, n) y[i] = __float2half_rn(x[i]);
}

inline call_result launch_to_half(cudaStream_t s, const float* x, __half* y, std::int64_t n) noexcept {
    if (n == 0) return {};
    to_half_kernel<><<<grid_for(n), 256, 0, s>>>(x, y, n);
    return launched();
}

// -- data movement ------------------------------------------------------------------------------

/// y[i] = x[base + offset of i through s.a]: Slice, Split, Expand and Transpose. Elements of
/// Bytes bytes moved as one word.
template <class Word>
__global__ void strided_copy_kernel(const Word* x, Word* y, std::int64_t n, std::int64_t base, dims_strides s) {
    EMBER_CUDA_GRID_STRIDE(i, n) {
        std::int64_t oa, ob;
        offsets_of(s, i, oa, ob);
        y[i] = x[base + oa];
    }
}

inline call_result launch_strided_copy(cudaStream_t st, std::size_t elem_bytes, const void* x, void* y, std::int64_t n, std::int64_t base,
                                       const dims_strides& s) noexcept {
    if (n == 0) return {};
    switch (elem_bytes) {
        case 1: strided_copy_kernel<<<grid_for(n), 256, 0, st>>>(static_cast<const std::uint8_t*>(x), static_cast<std::uint8_t*>(y), n, base, s); break;
        case 2: strided_copy_kernel<<<grid_for(n), 256, 0, st>>>(static_cast<const std::uint16_t*>(x), static_cast<std::uint16_t*>(y), n, base, s); break;
        case 4: strided_copy_kernel<<<grid_for(n), 256, 0, st>>>(static_cast<const std::uint32_t*>(x), static_cast<std::uint32_t*>(y), n, base, s); break;
        case 8: strided_copy_kernel<<<grid_for(n), 256, 0, st>>>(static_cast<const std::uint64_t*>(x), static_cast<std::uint64_t*>(y), n, base, s); break;
        default: return call_result{api::runtime, static_cast<int>(cudaErrorInvalidValue)};
    }
    return launched();
}

// -- pooling --------------------------------------------------------------------------------------

/// Max or average pooling over [planes, d0, d1, d2] (1-D and 2-D pools have leading sizes of 1),
/// the window as ops/window.hpp's window_geometry gives it. The taps are for_each_window_tap's
/// and average's divisor ops::average_pool's; written out here, as device code cannot call that
/// host template with a lambda (nvcc would need --expt-relaxed-constexpr from every user).
struct pool_args {
    std::int64_t planes = 0;
    ops::window_geometry geo;
    bool max = true;                 ///< max pool, else average
    bool count_include_pad = false;  ///< average: divide by the taps inside the padded input
};

template <int = 0>
__global__ void pool_kernel(const float* x, float* y, pool_args a) {
    const ops::window_geometry& g = a.geo;
    const std::int64_t out_size = g.out_size(), in_size = g.in_size();
    EMBER_CUDA_GRID_STRIDE(i, a.planes * out_size) {
        const std::int64_t plane = i / out_size, o = i % out_size;
        const std::int64_t o0 = o / (g.out[1] * g.out[2]), o1 = (o / g.out[2]) % g.out[1], o2 = o % g.out[2];
        const float* xp = x + plane * in_size;
        float best = -INFINITY, sum = 0.0f;
        bool any = false;
        for (std::int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
            const std::int64_t i0 = o0 * g.stride[0] - g.pad_begin[0] + k0 * g.dilation[0];
            if (i0 < 0 || i0 >= g.in[0]) continue;
            for (std::int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
                const std::int64_t i1 = o1 * g.stride[1] - g.pad_begin[1] + k1 * g.dilation[1];
                if (i1 < 0 || i1 >= g.in[1]) continue;
                for (std::int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
                    const std::int64_t i2 = o2 * g.stride[2] - g.pad_begin[2] + k2 * g.dilation[2];
                    if (i2 < 0 || i2 >= g.in[2]) continue;
                    const float v = xp[(i0 * g.in[1] + i1) * g.in[2] + i2];
                    if (!any || v > best) best = v;
                    sum += v;
                    any = true;
                }
            }
        }
        if (a.max) {
            y[i] = best;
            continue;
        }
        std::int64_t count = 1;
        const std::int64_t o3[3] = {o0, o1, o2};
        for (int d = 0; d < 3; ++d) {
            const std::int64_t lo = a.count_include_pad ? -g.pad_begin[d] : 0, hi = a.count_include_pad ? g.in[d] + g.pad_end[d] : g.in[d];
            std::int64_t n = 0;
            for (std::int64_t k = 0; k < g.kernel[d]; ++k) {
                const std::int64_t p = o3[d] * g.stride[d] - g.pad_begin[d] + k * g.dilation[d];
                n += p >= lo && p < hi ? 1 : 0;
            }
            count *= n;
        }
        y[i] = count > 0 ? sum / static_cast<float>(count) : 0.0f;
    }
}

inline call_result launch_pool(cudaStream_t s, const float* x, float* y, const pool_args& a) noexcept {
    const std::int64_t n = a.planes * a.geo.out_size();
    if (n == 0) return {};
    pool_kernel<><<<grid_for(n), 256, 0, s>>>(x, y, a);
    return launched();
}

// -- reductions along lines -----------------------------------------------------------------------

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/// The input as [outer, len, inner]: line (o, j) holds the len values x[(o * len + t) * inner + j].
/// One warp per line.
struct lines {
    std::int64_t outer = 0, len = 0, inner = 1;
};

enum class line_op : std::uint8_t { softmax, mean, sum, max, min };

template <int = 0>  // a template: one definition across translation units
__global__ void line_kernel(line_op op, const float* x, float* y, lines g) {
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
    const int lane = threadIdx.x % 32;
    for (std::int64_t line = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; line < g.outer * g.inner; line += warps) {
        const std::int64_t o = line / g.inner, j = line % g.inner;
        const float* xl = x + o * g.len * g.inner + j;
        switch (op) {
            case line_op::softmax: {
                float m = -INFINITY;
                for (std::int64_t t = lane; t < g.len; t += 32) m = fmaxf(m, xl[t * g.inner]);
                m = warp_max(m);
                float s = 0.0f;
                for (std::int64_t t = lane; t < g.len; t += 32) s += expf(xl[t * g.inner] - m);
                s = warp_sum(s);
                float* yl = y + o * g.len * g.inner + j;
                for (std::int64_t t = lane; t < g.len; t += 32) yl[t * g.inner] = expf(xl[t * g.inner] - m) / s;
                break;
            }
            case line_op::mean:
            case line_op::sum: {
                float s = 0.0f;
                for (std::int64_t t = lane; t < g.len; t += 32) s += xl[t * g.inner];
                s = warp_sum(s);
                if (lane == 0) y[line] = op == line_op::mean ? (g.len > 0 ? s / static_cast<float>(g.len) : 0.0f) : s;
                break;
            }
            case line_op::max:
            case line_op::min: {
                const bool mx = op == line_op::max;
                float m = mx ? -INFINITY : INFINITY;
                for (std::int64_t t = lane; t < g.len; t += 32) m = mx ? fmaxf(m, xl[t * g.inner]) : fminf(m, xl[t * g.inner]);
                m = mx ? warp_max(m) : -warp_max(-m);
                if (lane == 0) y[line] = m;
                break;
            }
        }
    }
}

inline call_result launch_lines(cudaStream_t s, line_op op, const float* x, float* y, const lines& g) noexcept {
    const std::int64_t n = g.outer * g.inner;
    if (n == 0) return {};
    line_kernel<><<<grid_for(n * 32, 256), 256, 0, s>>>(op, x, y, g);
    return launched();
}

/// LayerNormalization over rows of `size` values: y = (x - mean) / sqrt(var + eps) * scale + b,
/// scale and b per position in the row. One warp per row.
template <int = 0>  // a template: one definition across translation units
__global__ void layer_norm_kernel(const float* x, const float* scale, const float* b, float* y, std::int64_t rows, std::int64_t size, float eps) {
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
    const int lane = threadIdx.x % 32;
    for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; r < rows; r += warps) {
        const float* xr = x + r * size;
        float s = 0.0f;
        for (std::int64_t t = lane; t < size; t += 32) s += xr[t];
        const float mean = warp_sum(s) / static_cast<float>(size);
        float v = 0.0f;
        for (std::int64_t t = lane; t < size; t += 32) v += (xr[t] - mean) * (xr[t] - mean);
        const float inv = rsqrtf(warp_sum(v) / static_cast<float>(size) + eps);
        float* yr = y + r * size;
        for (std::int64_t t = lane; t < size; t += 32) yr[t] = (xr[t] - mean) * inv * scale[t] + (b ? b[t] : 0.0f);
    }
}

inline call_result launch_layer_norm(cudaStream_t s, const float* x, const float* scale, const float* b, float* y, std::int64_t rows, std::int64_t size,
                                     float eps) noexcept {
    if (rows == 0 || size == 0) return {};
    layer_norm_kernel<><<<grid_for(rows * 32, 256), 256, 0, s>>>(x, scale, b, y, rows, size, eps);
    return launched();
}

/// A general reduction: out_count sets of red_count values, set o starting at base(o) through the
/// kept strides, its members through the reduced strides (ops/reduce.hpp's reduce_geometry).
struct reduce_geometry {
    int kept_rank = 0, red_rank = 0;
    std::int64_t kept_size[max_dims] = {}, kept_stride[max_dims] = {};
    std::int64_t red_size[max_dims] = {}, red_stride[max_dims] = {};
    std::int64_t out_count = 1, red_count = 1;
};

template <int = 0>  // a template: one definition across translation units
__global__ void reduce_kernel(line_op op, const float* x, float* y, reduce_geometry g) {
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
    const int lane = threadIdx.x % 32;
    for (std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; o < g.out_count; o += warps) {
        std::int64_t base = 0, rest = o;
        for (int d = g.kept_rank - 1; d >= 0; --d) {
            base += (rest % g.kept_size[d]) * g.kept_stride[d];
            rest /= g.kept_size[d];
        }
        const bool mx = op == line_op::max, mn = op == line_op::min;
        float acc = mx ? -INFINITY : (mn ? INFINITY : 0.0f);
        for (std::int64_t t = lane; t < g.red_count; t += 32) {
            std::int64_t off = base, r = t;
            for (int d = g.red_rank - 1; d >= 0; --d) {
                off += (r % g.red_size[d]) * g.red_stride[d];
                r /= g.red_size[d];
            }
            const float v = x[off];
            acc = mx ? fmaxf(acc, v) : (mn ? fminf(acc, v) : acc + v);
        }
        acc = mx ? warp_max(acc) : (mn ? -warp_max(-acc) : warp_sum(acc));
        if (lane == 0) y[o] = op == line_op::mean ? (g.red_count > 0 ? acc / static_cast<float>(g.red_count) : 0.0f) : acc;
    }
}

inline call_result launch_reduce(cudaStream_t s, line_op op, const float* x, float* y, const reduce_geometry& g) noexcept {
    if (g.out_count == 0) return {};
    reduce_kernel<><<<grid_for(g.out_count * 32, 256), 256, 0, s>>>(op, x, y, g);
    return launched();
}

#undef EMBER_CUDA_GRID_STRIDE

} // namespace kernels
} // namespace cuda
EMBER_NAMESPACE_END
