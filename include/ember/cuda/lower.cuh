// SPDX-License-Identifier: Apache-2.0
// Lowering a graph to CUDA steps, on the host and without touching the GPU: compile() runs as for
// the CPU (passes, folding, shapes, one memory plan), each node is bound to its reference kernel,
// and the step_lowering hook (compile/compile.hpp) turns each reference step into a CUDA step
// whose arguments are the same operands (region, offset) and geometry. The GPU side
// (cuda/plan.cuh) then uploads the weights, creates the cuDNN descriptors and runs the steps.
// What cannot run on the GPU fails here with unsupported_op naming the node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/compile/compile.hpp"
#include "ember/cuda/kernels.cuh"

EMBER_NAMESPACE_BEGIN
namespace cuda {

/// The arithmetic of GEMMs and convolutions (element-wise kernels are always FP32).
enum class precision : std::uint8_t {
    fp32,  ///< FP32 FMA everywhere (no tensor cores): the CPU's results within rounding
    tf32,  ///< TF32 tensor cores for GEMM/conv (10-bit mantissa products, FP32 accumulation)
    fp16,  ///< FP16 tensor cores: convolutions with constant weights on FP16 data (input and
           ///< weights rounded to FP16, FP32 accumulation, output back to FP32 in the epilogue;
           ///< values beyond FP16's range are lost); GEMMs with cuBLAS's FAST_16F compute type
};

/// What cuda::compile() takes: the CPU compile options (shapes, dim values, passes, folding,
/// memory reuse; `isa` is ignored) and the GPU's own choices.
struct options {
    compile_options graph;
    precision math = precision::fp32;
    /// The most scratch memory one convolution may use (cuDNN algorithm choice).
    std::size_t max_workspace_bytes = std::size_t{256} << 20;
    /// Choose each convolution's algorithm by timing cuDNN's candidates at compile (as
    /// torch.backends.cudnn.benchmark does) instead of cuDNN's heuristics: slower compile, and
    /// the choice can differ from run to run; off by default.
    bool measure_algorithms = false;
};

/// What a step sees at run time: the base pointer of every region on the device (arena, weights,
/// io slots: as the CPU plan numbers them), the stream, the library handles and the scratch.
struct run_context {
    std::byte* const* regions = nullptr;
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    cudnnHandle_t dnn = nullptr;
    void* workspace = nullptr;
    std::size_t workspace_bytes = 0;

    template <class T>
    T* at(operand o) const noexcept {
        return reinterpret_cast<T*>(regions[o.region] + o.offset);
    }
};

using step_fn = call_result (*)(const void* args, const run_context& ctx) noexcept;

struct step {
    step_fn fn = nullptr;
    const void* args = nullptr;  ///< owned by the plan
    std::int32_t node = -1;      ///< the user's graph node (for messages and profiles)
};

namespace steps {

using kernels::unary;

/// The epilogue terms of a GEMM or convolution as operands (resolved per run).
struct epilogue {
    operand bias, c, z;
    bool has_bias = false, has_c = false, has_z = false;
    std::int64_t bias_inner = 0, bias_count = 1;  ///< see kernels::epilogue_args
    std::int64_t cols = 1, c_row = 0, c_col = 0;
    float beta = 1.0f;
    unary act = unary::identity;
    float p0 = 0.0f, p1 = 0.0f;

    kernels::epilogue_args resolve(float* y, std::int64_t n, const run_context& ctx) const noexcept {
        kernels::epilogue_args e;
        e.y = y;
        e.n = n;
        e.cols = cols;
        e.bias = has_bias ? ctx.at<const float>(bias) : nullptr;
        e.bias_inner = bias_inner;
        e.bias_count = bias_count;
        e.c = has_c ? ctx.at<const float>(c) : nullptr;
        e.c_row = c_row;
        e.c_col = c_col;
        e.beta = beta;
        e.z = has_z ? ctx.at<const float>(z) : nullptr;
        e.act = act;
        e.p0 = p0;
        e.p1 = p1;
        return e;
    }
};

struct copy {
    operand src, dst;
    std::size_t bytes = 0;
    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& a = *static_cast<const copy*>(p);
        const std::byte* s = ctx.at<const std::byte>(a.src);
        std::byte* d = ctx.at<std::byte>(a.dst);
        if (s == d || a.bytes == 0) return {};
        return check(cudaMemcpyAsync(d, s, a.bytes, cudaMemcpyDeviceToDevice, ctx.stream));
    }
};

struct unary_op {
    operand x, y, lo, hi;
    bool has_lo = false, has_hi = false;
    std::int64_t n = 0;
    unary kind = unary::identity;
    float p0 = 0.0f, p1 = 0.0f;
    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& a = *static_cast<const unary_op*>(p);
        return kernels::launch_unary(ctx.stream, a.kind, ctx.at<const float>(a.x), ctx.at<float>(a.y), a.n, a.p0, a.p1,
                                     a.has_lo ? ctx.at<const float>(a.lo) : nullptr, a.has_hi ? ctx.at<const float>(a.hi) : nullptr);
    }
};

struct binary_op {
    operand a, b, y;
    kernels::binary kind = kernels::binary::add;
    std::int64_t n = 0;
    kernels::dims_strides s;
    bool same = false, b_scalar = false;
    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const binary_op*>(p);
        return kernels::launch_binary(ctx.stream, g.kind, ctx.at<const float>(g.a), ctx.at<const float>(g.b), ctx.at<float>(g.y), g.n, g.s, g.same,
                                      g.b_scalar);
    }
};

struct strided_copy {
    operand x, y;
    std::size_t elem_bytes = 4;
    std::int64_t n = 0, base = 0;
    kernels::dims_strides s;
    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const strided_copy*>(p);
        return kernels::launch_strided_copy(ctx.stream, g.elem_bytes, ctx.at<const std::byte>(g.x), ctx.at<std::byte>(g.y), g.n, g.base, g.s);
    }
};

struct concat {
    struct part {
        operand x;
        std::size_t block_bytes = 0, offset = 0;
    };
    std::vector<part> parts;
    operand y;
    std::size_t outer = 0, row_bytes = 0;
    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const concat*>(p);
        std::byte* y = ctx.at<std::byte>(g.y);
        for (const part& k : g.parts) {
            if (k.block_bytes == 0 || g.outer == 0) continue;
            if (call_result r = check(cudaMemcpy2DAsync(y + k.offset, g.row_bytes, ctx.at<const std::byte>(k.x), k.block_bytes, k.block_bytes, g.outer,
                                                        cudaMemcpyDeviceToDevice, ctx.stream));
                !r.ok())
                return r;
        }
        return {};
    }
};

struct pool {
    operand x, y;
    kernels::pool_args g;
    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& a = *static_cast<const pool*>(p);
        return kernels::launch_pool(ctx.stream, ctx.at<const float>(a.x), ctx.at<float>(a.y), a.g);
    }
};

struct lines {
    operand x, y;
    kernels::line_op op = kernels::line_op::mean;
    kernels::lines g;
    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& a = *static_cast<const lines*>(p);
        return kernels::launch_lines(ctx.stream, a.op, ctx.at<const float>(a.x), ctx.at<float>(a.y), a.g);
    }
};

struct reduce {
    operand x, y;
    kernels::line_op op = kernels::line_op::mean;
    kernels::reduce_geometry g;
    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& a = *static_cast<const reduce*>(p);
        return kernels::launch_reduce(ctx.stream, a.op, ctx.at<const float>(a.x), ctx.at<float>(a.y), a.g);
    }
};

/// Y = alpha * op(A) op(B) (+ the epilogue), row-major, over `batch` matrices: cuBLAS sees the
/// column-major transpose (Y^T = op(B)^T op(A)^T).
struct gemm {
    operand a, b, y;
    std::int64_t m = 0, n = 0, k = 0, batch = 1;
    std::int64_t stride_a = 0, stride_b = 0;  ///< elements between batch items (0: shared)
    bool trans_a = false, trans_b = false;
    float alpha = 1.0f;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    epilogue post;
    /// Element offsets of A, B and Y for each strided-batched call; empty: one call at offset 0.
    struct call {
        std::int64_t a = 0, b = 0, y = 0;
    };
    std::vector<call> calls;

    call_result multiply(const run_context& ctx, const call& c) const noexcept {
        const float zero = 0.0f;
        const int lda = static_cast<int>(trans_a ? m : k), ldb = static_cast<int>(trans_b ? k : n);
        return check(cublasGemmStridedBatchedEx(ctx.blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                                                static_cast<int>(m), static_cast<int>(k), &alpha, ctx.at<const float>(b) + c.b, CUDA_R_32F, ldb,
                                                stride_b, ctx.at<const float>(a) + c.a, CUDA_R_32F, lda, stride_a, &zero, ctx.at<float>(y) + c.y,
                                                CUDA_R_32F, static_cast<int>(n), m * n, static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT));
    }

    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const gemm*>(p);
        const std::int64_t total = (g.calls.empty() ? 1 : static_cast<std::int64_t>(g.calls.size())) * g.batch * g.m * g.n;
        if (total == 0) return {};
        if (g.k == 0) {  // empty sums: Y = 0 (cuBLAS takes no zero leading dimension)
            if (call_result r = check(cudaMemsetAsync(ctx.at<float>(g.y), 0, static_cast<std::size_t>(total) * sizeof(float), ctx.stream)); !r.ok())
                return r;
        } else if (g.calls.empty()) {
            if (call_result r = g.multiply(ctx, call{}); !r.ok()) return r;
        } else {
            for (const call& c : g.calls)
                if (call_result r = g.multiply(ctx, c); !r.ok()) return r;
        }
        return kernels::launch_epilogue(ctx.stream, g.post.resolve(ctx.at<float>(g.y), total, ctx));
    }
};

/// A 2-D convolution through cuDNN (descriptors made by the plan at upload), then the epilogue.
struct conv {
    operand x, w, y;
    // geometry, from ops::conv::args
    std::int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
    std::int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1, kh = 1, kw = 1;
    std::int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_h = 0, pad_w = 0;
    epilogue post;
    // set by the plan on the GPU
    cudnnTensorDescriptor_t x_desc = nullptr, y_desc = nullptr;
    cudnnFilterDescriptor_t w_desc = nullptr;
    cudnnConvolutionDescriptor_t conv_desc = nullptr;
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    std::size_t workspace_bytes = 0;  ///< cuDNN's scratch, at the start of the session's workspace
    // FP16 (precision::fp16, constant weights): X is rounded into the workspace at x16,
    // cuDNN writes FP16 Y at y16, the epilogue reads it back into Y as FP32.
    bool half = false;
    const __half* w16 = nullptr;  ///< the weights in FP16, owned by the plan
    std::size_t x16 = 0, y16 = 0;  ///< byte offsets in the workspace

    std::int64_t x_count() const noexcept { return batch * in_channels * group * in_h * in_w; }
    std::int64_t y_count() const noexcept { return batch * out_channels * out_h * out_w; }

    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const conv*>(p);
        float* y = ctx.at<float>(g.y);
        const float one = 1.0f, zero = 0.0f;
        if (g.half) {
            auto* ws = static_cast<std::byte*>(ctx.workspace);
            auto* hx = reinterpret_cast<__half*>(ws + g.x16);
            auto* hy = reinterpret_cast<__half*>(ws + g.y16);
            if (call_result r = kernels::launch_to_half(ctx.stream, ctx.at<const float>(g.x), hx, g.x_count()); !r.ok()) return r;
            if (call_result r = check(cudnnConvolutionForward(ctx.dnn, &one, g.x_desc, hx, g.w_desc, g.w16, g.conv_desc, g.algo, ctx.workspace,
                                                              g.workspace_bytes, &zero, g.y_desc, hy));
                !r.ok())
                return r;
            kernels::epilogue_args e = g.post.resolve(y, g.y_count(), ctx);
            e.y16 = hy;
            return kernels::launch_epilogue(ctx.stream, e);
        }
        if (call_result r = check(cudnnConvolutionForward(ctx.dnn, &one, g.x_desc, ctx.at<const float>(g.x), g.w_desc, ctx.at<const float>(g.w),
                                                          g.conv_desc, g.algo, ctx.workspace, g.workspace_bytes, &zero, g.y_desc, y));
            !r.ok())
            return r;
        return kernels::launch_epilogue(ctx.stream, g.post.resolve(y, g.y_count(), ctx));
    }
};

struct layer_norm {
    operand x, scale, b, y;
    bool has_b = false;
    std::int64_t rows = 0, size = 0;
    float epsilon = 1e-5f;
    static call_result run(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const layer_norm*>(p);
        return kernels::launch_layer_norm(ctx.stream, ctx.at<const float>(g.x), ctx.at<const float>(g.scale), g.has_b ? ctx.at<const float>(g.b) : nullptr,
                                          ctx.at<float>(g.y), g.rows, g.size, g.epsilon);
    }
};

} // namespace steps

namespace detail {

/// The result of lowering: the CPU plan (io table, arena size, weights on the host, and the
/// copies into outputs as CPU steps) and the CUDA steps with their owned arguments.
struct lowered {
    plan host;
    std::vector<step> steps;
    std::vector<ember::detail::erased> args;
    std::vector<std::string> names, ops;
    std::vector<steps::conv*> convs;  ///< the conv steps, for the plan's cuDNN set-up
};

class lowering {
public:
    explicit lowering(const options& o) : options_(o) {}

    static status hook(void* self, bind_context& ctx, span<const bind_context::pending_step> emitted) {
        return static_cast<lowering*>(self)->lower(ctx, emitted);
    }

    template <class Args>
    Args* emit(step_fn fn, Args a, std::int32_t node, std::string name, std::string op) {
        ember::detail::erased e = ember::detail::erased::make<Args>(std::move(a));
        Args* p = static_cast<Args*>(e.get());
        out_.steps.push_back(step{fn, p, node});
        out_.args.push_back(std::move(e));
        out_.names.push_back(std::move(name));
        out_.ops.push_back(std::move(op));
        return p;
    }

    lowered& result() noexcept { return out_; }

    cublasComputeType_t compute() const noexcept {
        switch (options_.math) {
            case precision::tf32: return CUBLAS_COMPUTE_32F_FAST_TF32;
            case precision::fp16: return CUBLAS_COMPUTE_32F_FAST_16F;
            case precision::fp32: break;
        }
        return CUBLAS_COMPUTE_32F;
    }

private:
    status lower(bind_context& ctx, span<const bind_context::pending_step> emitted);

    const options& options_;
    lowered out_;
};

// -- one translation per reference kernel ----------------------------------------------------------

inline void fill_dims(kernels::dims_strides& s, std::uint32_t rank, const std::int64_t* dims, const std::int64_t* a, const std::int64_t* b) noexcept {
    s.rank = static_cast<int>(rank);
    for (std::uint32_t d = 0; d < rank; ++d) {
        s.dims[d] = dims[d];
        s.a[d] = a ? a[d] : 0;
        s.b[d] = b ? b[d] : 0;
    }
}

inline kernels::unary unary_of(ops::activation a) noexcept { return static_cast<kernels::unary>(static_cast<std::uint8_t>(a)); }

inline steps::epilogue epilogue_of(ops::activation act, const ops::activation_params& p) noexcept {
    steps::epilogue e;
    e.act = unary_of(act);
    e.p0 = p.alpha;
    e.p1 = p.beta;
    return e;
}

struct translation {
    kernel_fn cpu;
    status (*lower)(lowering& l, const void* args, bind_context& ctx);
};

template <class Fn>
status lower_unary(lowering& l, const void* p, bind_context& ctx, kernels::unary kind, float p0 = 0.0f, float p1 = 0.0f) {
    const auto& a = *static_cast<const ops::unary_map_args<Fn>*>(p);
    steps::unary_op u;
    u.x = a.x;
    u.y = a.y;
    u.n = static_cast<std::int64_t>(a.n);
    u.kind = kind;
    u.p0 = p0;
    u.p1 = p1;
    l.emit(&steps::unary_op::run, u, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

template <class Fn, kernels::unary Kind>
status lower_plain_unary(lowering& l, const void* p, bind_context& ctx) {
    return lower_unary<Fn>(l, p, ctx, Kind);
}

inline status lower_leaky_relu(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::unary_map_args<ops::activation_fn::leaky_relu>*>(p);
    return lower_unary<ops::activation_fn::leaky_relu>(l, p, ctx, kernels::unary::leaky_relu, a.fn.alpha);
}
inline status lower_elu(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::unary_map_args<ops::activation_fn::elu>*>(p);
    return lower_unary<ops::activation_fn::elu>(l, p, ctx, kernels::unary::elu, a.fn.alpha);
}
inline status lower_hard_sigmoid(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::unary_map_args<ops::activation_fn::hard_sigmoid>*>(p);
    return lower_unary<ops::activation_fn::hard_sigmoid>(l, p, ctx, kernels::unary::hard_sigmoid, a.fn.alpha, a.fn.beta);
}

inline status lower_clip(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::clip::args*>(p);
    steps::unary_op u;
    u.x = a.x;
    u.y = a.y;
    u.n = static_cast<std::int64_t>(a.n);
    u.kind = kernels::unary::clip;
    u.p0 = a.use_attrs ? a.attr_lo : -INFINITY;
    u.p1 = a.use_attrs ? a.attr_hi : INFINITY;
    u.has_lo = a.has_lo;
    u.has_hi = a.has_hi;
    u.lo = a.lo;
    u.hi = a.hi;
    l.emit(&steps::unary_op::run, u, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

template <class Fn, kernels::binary Kind>
status lower_binary(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = static_cast<const ops::binary_args<Fn>*>(p)->plan;
    if (a.rank > static_cast<std::uint32_t>(kernels::max_dims))
        return ctx.fail(status::unsupported_op, "the GPU kernels take up to {} dimensions, got {}", kernels::max_dims, a.rank);
    steps::binary_op b;
    b.a = a.a;
    b.b = a.b;
    b.y = a.y;
    b.kind = Kind;
    b.n = a.count;
    fill_dims(b.s, a.rank, a.dims, a.a_strides, a.b_strides);
    bool same = true, b_scalar = true;
    std::int64_t expect = 1;
    for (std::uint32_t d = a.rank; d-- > 0;) {
        same = same && (a.dims[d] == 1 || (a.a_strides[d] == expect && a.b_strides[d] == expect));
        b_scalar = b_scalar && (a.dims[d] == 1 || (a.a_strides[d] == expect && a.b_strides[d] == 0));
        expect *= a.dims[d];
    }
    b.same = same;
    b.b_scalar = !same && b_scalar;
    l.emit(&steps::binary_op::run, b, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

inline status lower_copy(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::copy_args*>(p);
    if (a.src.region == a.dst.region && a.src.offset == a.dst.offset) return status::ok;  // in place: nothing to run
    l.emit(&steps::copy::run, steps::copy{a.src, a.dst, a.bytes}, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

template <std::size_t Bytes>
status lower_strided(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::strided_copy_args*>(p);
    if (a.rank > static_cast<std::uint32_t>(kernels::max_dims))
        return ctx.fail(status::unsupported_op, "the GPU copy takes up to {} dimensions, got {}", kernels::max_dims, a.rank);
    steps::strided_copy s;
    s.x = a.x;
    s.y = a.y;
    s.elem_bytes = Bytes;
    s.n = a.count;
    s.base = a.base;
    fill_dims(s.s, a.rank, a.dims, a.strides, nullptr);
    l.emit(&steps::strided_copy::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

template <std::size_t Bytes>
status lower_transpose(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::transpose::args*>(p);
    steps::strided_copy s;
    s.x = a.x;
    s.y = a.y;
    s.elem_bytes = Bytes;
    s.n = a.count;
    fill_dims(s.s, a.rank, a.dims, a.in_strides, nullptr);
    l.emit(&steps::strided_copy::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

inline status lower_concat(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::concat::args*>(p);
    steps::concat c;
    c.y = a.y;
    c.outer = a.outer;
    c.row_bytes = a.row_bytes;
    for (std::size_t k = 0; k < a.inputs.size(); ++k) c.parts.push_back(steps::concat::part{a.inputs[k], a.block_bytes[k], a.offsets[k]});
    l.emit(&steps::concat::run, std::move(c), static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

inline status lower_max_pool(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::max_pool::args*>(p);
    if (a.has_indices) return ctx.fail(status::unsupported_op, "MaxPool's Indices output is not supported on the GPU");
    l.emit(&steps::pool::run, steps::pool{a.x, a.y, kernels::pool_args{a.planes, a.geo, true, false}}, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name,
           ctx.node().op_type);
    return status::ok;
}

inline status lower_average_pool(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::average_pool::args*>(p);
    l.emit(&steps::pool::run, steps::pool{a.x, a.y, kernels::pool_args{a.planes, a.geo, false, a.count_include_pad}}, static_cast<std::int32_t>(ctx.node_index()),
           ctx.node().name, ctx.node().op_type);
    return status::ok;
}

inline status lower_global_average_pool(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::global_average_pool::args*>(p);
    steps::lines s;
    s.x = a.x;
    s.y = a.y;
    s.op = kernels::line_op::mean;
    s.g = kernels::lines{a.planes, a.plane_size, 1};
    l.emit(&steps::lines::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

inline status lower_softmax(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::softmax::args*>(p);
    steps::lines s;
    s.x = a.x;
    s.y = a.y;
    s.op = kernels::line_op::softmax;
    s.g = kernels::lines{a.outer, a.axis_len, a.inner};
    l.emit(&steps::lines::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

template <ops::reduce_kind K, kernels::line_op Op>
status lower_reduce(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::reduce_args*>(p);
    const ops::reduce_geometry& G = a.geo;
    if (G.kept_rank > static_cast<std::uint32_t>(kernels::max_dims) || G.red_rank > static_cast<std::uint32_t>(kernels::max_dims))
        return ctx.fail(status::unsupported_op, "the GPU reduction takes up to {} dimensions", kernels::max_dims);
    steps::reduce r;
    r.x = a.x;
    r.y = a.y;
    r.op = Op;
    r.g.kept_rank = static_cast<int>(G.kept_rank);
    r.g.red_rank = static_cast<int>(G.red_rank);
    for (std::uint32_t d = 0; d < G.kept_rank; ++d) {
        r.g.kept_size[d] = G.kept_size[d];
        r.g.kept_stride[d] = G.kept_stride[d];
    }
    for (std::uint32_t d = 0; d < G.red_rank; ++d) {
        r.g.red_size[d] = G.red_size[d];
        r.g.red_stride[d] = G.red_stride[d];
    }
    r.g.out_count = G.out_count;
    r.g.red_count = G.red_count;
    l.emit(&steps::reduce::run, r, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

inline status lower_layer_norm(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::layer_normalization::args*>(p);
    if (a.has_mean || a.has_inv_std) return ctx.fail(status::unsupported_op, "LayerNormalization's Mean and InvStdDev outputs are not computed on the GPU");
    if (!ops::layer_normalization::per_row(a, a.scale_strides, ctx.input_shape(1)) ||
        (a.has_b && !ops::layer_normalization::per_row(a, a.b_strides, ctx.input_shape(2))))
        return ctx.fail(status::unsupported_op, "on the GPU, Scale and B must hold one value per position of the normalised row");
    steps::layer_norm s;
    s.x = a.x;
    s.scale = a.scale;
    s.b = a.b;
    s.has_b = a.has_b;
    s.y = a.y;
    s.rows = a.rows;
    s.size = a.size;
    s.epsilon = static_cast<float>(a.epsilon);
    l.emit(&steps::layer_norm::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

inline void gemm_geometry(steps::gemm& s, const ops::gemm::args& g, const lowering& l) noexcept {
    s.a = g.a;
    s.b = g.b;
    s.y = g.y;
    s.m = g.m;
    s.n = g.n;
    s.k = g.k;
    s.trans_a = g.attrs.trans_a;
    s.trans_b = g.attrs.trans_b;
    s.alpha = g.attrs.alpha;
    s.compute = l.compute();
    if (g.has_c) {
        s.post.has_c = true;
        s.post.c = g.c;
        s.post.c_row = g.c_row_stride;
        s.post.c_col = g.c_col_stride;
        s.post.beta = g.attrs.beta;
        s.post.cols = g.n;
    }
}

inline status lower_gemm(lowering& l, const void* p, bind_context& ctx) {
    steps::gemm s;
    gemm_geometry(s, *static_cast<const ops::gemm::args*>(p), l);
    l.emit(&steps::gemm::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

inline status lower_fused_gemm(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::fused_gemm::args*>(p);
    steps::gemm s;
    s.post = epilogue_of(a.act, a.params);
    gemm_geometry(s, a.base, l);
    s.post.has_z = a.has_z;
    s.post.z = a.z;
    l.emit(&steps::gemm::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

/// MatMul's batches as strided-batched GEMMs: the largest trailing block of batch dimensions over
/// which both operands' offsets grow linearly is one cuBLAS call; the leading batch indices (where
/// an operand broadcasts, [2, 3, M, K] x [1, 3, K, N]) become a list of calls, made at compile.
inline status matmul_geometry(steps::gemm& s, const ops::matmul::args& g, const lowering& l) {
    s.a = g.a;
    s.b = g.b;
    s.y = g.y;
    s.m = g.m;
    s.n = g.n;
    s.k = g.k;
    s.compute = l.compute();
    const std::int64_t count = g.batch_count;
    auto offsets = [&](std::int64_t t, std::int64_t& ao, std::int64_t& bo) { ops::batch_offsets(g, t, ao, bo); };
    // candidates for the calls' batch: products of trailing batch dims, largest first
    std::vector<std::int64_t> inner_sizes;
    std::int64_t product = 1;
    for (std::uint32_t d = g.batch_rank; d-- > 0;) {
        product *= g.batch_dims[d];
        inner_sizes.insert(inner_sizes.begin(), product);
    }
    inner_sizes.push_back(1);
    std::int64_t inner = 1, sa = 0, sb = 0;
    for (std::int64_t candidate : inner_sizes) {
        if (candidate <= 0 || count % candidate != 0) continue;
        std::int64_t a0 = 0, b0 = 0, a1 = 0, b1 = 0;
        offsets(0, a0, b0);
        if (candidate > 1) offsets(1, a1, b1);
        const std::int64_t da = a1 - a0, db = b1 - b0;
        bool linear = true;
        for (std::int64_t t = 0; t < count && linear; ++t) {
            std::int64_t ao = 0, bo = 0, go = 0, gb = 0;
            offsets(t, ao, bo);
            offsets(t - t % candidate, go, gb);
            linear = ao == go + (t % candidate) * da && bo == gb + (t % candidate) * db;
        }
        if (linear) {
            inner = candidate;
            sa = da;
            sb = db;
            break;
        }
    }
    s.batch = count == 0 ? 0 : inner;
    s.stride_a = sa;
    s.stride_b = sb;
    if (count > 0 && inner < count) {
        for (std::int64_t t = 0; t < count; t += inner) {
            std::int64_t ao = 0, bo = 0;
            offsets(t, ao, bo);
            s.calls.push_back(steps::gemm::call{ao, bo, t * g.m * g.n});
        }
    } else if (sb == 0 && sa == g.m * g.k && count > 1) {  // one shared B: the batch folds into M
        s.m = g.m * count;
        s.batch = 1;
        s.stride_a = 0;
    }
    return status::ok;
}

inline status lower_matmul(lowering& l, const void* p, bind_context& ctx) {
    steps::gemm s;
    if (status st = matmul_geometry(s, *static_cast<const ops::matmul::args*>(p), l); st != status::ok) return st;
    l.emit(&steps::gemm::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

inline status lower_fused_matmul(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::fused_matmul::args*>(p);
    steps::gemm s;
    if (status st = matmul_geometry(s, a.base, l); st != status::ok) return st;
    s.post = epilogue_of(a.act, a.params);
    s.post.has_bias = a.has_bias;
    s.post.bias = a.bias;
    s.post.bias_count = a.base.n;
    s.post.has_z = a.has_z;
    s.post.z = a.z;
    l.emit(&steps::gemm::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type);
    return status::ok;
}

inline status conv_geometry(steps::conv& s, const ops::conv::args& g, bind_context& ctx) {
    const ops::window_geometry& G = g.geo;
    if (G.rank == 0 || G.rank > 2) return ctx.fail(status::unsupported_op, "only 1-D and 2-D convolutions run on the GPU, got {}-D", G.rank);
    for (int d = 1; d < 3; ++d)
        if (G.pad_begin[d] != G.pad_end[d])
            return ctx.fail(status::unsupported_op, "asymmetric padding ({} before, {} after) is not supported on the GPU (cuDNN pads both sides alike)",
                            G.pad_begin[d], G.pad_end[d]);
    s.x = g.x;
    s.w = g.w;
    s.y = g.y;
    s.batch = g.batch;
    s.in_channels = g.in_channels;
    s.out_channels = g.out_channels;
    s.group = g.group;
    s.in_h = G.in[1];
    s.in_w = G.in[2];
    s.out_h = G.out[1];
    s.out_w = G.out[2];
    s.kh = G.kernel[1];
    s.kw = G.kernel[2];
    s.stride_h = G.stride[1];
    s.stride_w = G.stride[2];
    s.dil_h = G.dilation[1];
    s.dil_w = G.dilation[2];
    s.pad_h = G.pad_begin[1];
    s.pad_w = G.pad_begin[2];
    if (g.has_b) {
        s.post.has_bias = true;
        s.post.bias = g.b;
        s.post.bias_inner = s.out_h * s.out_w;
        s.post.bias_count = g.out_channels;
    }
    return status::ok;
}

inline status lower_conv(lowering& l, const void* p, bind_context& ctx) {
    steps::conv s;
    if (status st = conv_geometry(s, *static_cast<const ops::conv::args*>(p), ctx); st != status::ok) return st;
    l.result().convs.push_back(l.emit(&steps::conv::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type));
    return status::ok;
}

inline status lower_fused_conv(lowering& l, const void* p, bind_context& ctx) {
    const auto& a = *static_cast<const ops::fused_conv::args*>(p);
    steps::conv s;
    s.post = epilogue_of(a.act, a.params);
    if (status st = conv_geometry(s, a.base, ctx); st != status::ok) return st;
    s.post.has_z = a.has_z;
    s.post.z = a.z;
    l.result().convs.push_back(l.emit(&steps::conv::run, s, static_cast<std::int32_t>(ctx.node_index()), ctx.node().name, ctx.node().op_type));
    return status::ok;
}

/// Every reference kernel the GPU runs, and its translation.
inline span<const translation> translations() noexcept {
    using K = kernels::unary;
    using B = kernels::binary;
    static const translation table[] = {
        {&ops::copy_kernel, &lower_copy},
        {&ops::unary_map_kernel<ops::relu_fn, float, float>, &lower_plain_unary<ops::relu_fn, K::relu>},
        {&ops::unary_map_kernel<ops::sigmoid_fn, float, float>, &lower_plain_unary<ops::sigmoid_fn, K::sigmoid>},
        {&ops::unary_map_kernel<ops::tanh_fn, float, float>, &lower_plain_unary<ops::tanh_fn, K::tanh>},
        {&ops::unary_map_kernel<ops::math_fn::sqrt, float, float>, &lower_plain_unary<ops::math_fn::sqrt, K::sqrt>},
        {&ops::unary_map_kernel<ops::math_fn::exp, float, float>, &lower_plain_unary<ops::math_fn::exp, K::exp>},
        {&ops::unary_map_kernel<ops::math_fn::log, float, float>, &lower_plain_unary<ops::math_fn::log, K::log>},
        {&ops::unary_map_kernel<ops::math_fn::neg, float, float>, &lower_plain_unary<ops::math_fn::neg, K::neg>},
        {&ops::unary_map_kernel<ops::math_fn::abs, float, float>, &lower_plain_unary<ops::math_fn::abs, K::abs>},
        {&ops::unary_map_kernel<ops::math_fn::reciprocal, float, float>, &lower_plain_unary<ops::math_fn::reciprocal, K::reciprocal>},
        {&ops::unary_map_kernel<ops::math_fn::erf, float, float>, &lower_plain_unary<ops::math_fn::erf, K::erf>},
        {&ops::unary_map_kernel<ops::math_fn::floor, float, float>, &lower_plain_unary<ops::math_fn::floor, K::floor>},
        {&ops::unary_map_kernel<ops::math_fn::ceil, float, float>, &lower_plain_unary<ops::math_fn::ceil, K::ceil>},
        {&ops::unary_map_kernel<ops::activation_fn::hard_swish, float, float>, &lower_plain_unary<ops::activation_fn::hard_swish, K::hard_swish>},
        {&ops::unary_map_kernel<ops::activation_fn::softplus, float, float>, &lower_plain_unary<ops::activation_fn::softplus, K::softplus>},
        {&ops::unary_map_kernel<ops::activation_fn::leaky_relu, float, float>, &lower_leaky_relu},
        {&ops::unary_map_kernel<ops::activation_fn::elu, float, float>, &lower_elu},
        {&ops::unary_map_kernel<ops::activation_fn::hard_sigmoid, float, float>, &lower_hard_sigmoid},
        {&ops::clip::kernel<float>, &lower_clip},
        {&ops::binary_kernel<ops::add_fn, float, float, float>, &lower_binary<ops::add_fn, B::add>},
        {&ops::binary_kernel<ops::sub_fn, float, float, float>, &lower_binary<ops::sub_fn, B::sub>},
        {&ops::binary_kernel<ops::mul_fn, float, float, float>, &lower_binary<ops::mul_fn, B::mul>},
        {&ops::binary_kernel<ops::div_fn, float, float, float>, &lower_binary<ops::div_fn, B::div>},
        {&ops::binary_kernel<ops::pow_fn, float, float, float>, &lower_binary<ops::pow_fn, B::pow>},
        {&ops::strided_copy_kernel<1>, &lower_strided<1>},
        {&ops::strided_copy_kernel<2>, &lower_strided<2>},
        {&ops::strided_copy_kernel<4>, &lower_strided<4>},
        {&ops::strided_copy_kernel<8>, &lower_strided<8>},
        {&ops::transpose::kernel<1>, &lower_transpose<1>},
        {&ops::transpose::kernel<2>, &lower_transpose<2>},
        {&ops::transpose::kernel<4>, &lower_transpose<4>},
        {&ops::transpose::kernel<8>, &lower_transpose<8>},
        {&ops::concat::kernel, &lower_concat},
        {&ops::max_pool::kernel<float>, &lower_max_pool},
        {&ops::average_pool::kernel, &lower_average_pool},
        {&ops::global_average_pool::kernel, &lower_global_average_pool},
        {&ops::softmax::kernel, &lower_softmax},
        {&ops::reduce_kernel<ops::reduce_kind::mean, float>, &lower_reduce<ops::reduce_kind::mean, kernels::line_op::mean>},
        {&ops::reduce_kernel<ops::reduce_kind::sum, float>, &lower_reduce<ops::reduce_kind::sum, kernels::line_op::sum>},
        {&ops::reduce_kernel<ops::reduce_kind::max, float>, &lower_reduce<ops::reduce_kind::max, kernels::line_op::max>},
        {&ops::reduce_kernel<ops::reduce_kind::min, float>, &lower_reduce<ops::reduce_kind::min, kernels::line_op::min>},
        {&ops::layer_normalization::kernel<float>, &lower_layer_norm},
        {&ops::gemm::kernel, &lower_gemm},
        {&ops::fused_gemm::kernel, &lower_fused_gemm},
        {&ops::matmul::kernel, &lower_matmul},
        {&ops::fused_matmul::kernel, &lower_fused_matmul},
        {&ops::conv::kernel, &lower_conv},
        {&ops::fused_conv::kernel, &lower_fused_conv},
    };
    return span<const translation>(table, sizeof(table) / sizeof(table[0]));
}

inline status lowering::lower(bind_context& ctx, span<const bind_context::pending_step> emitted) {
    for (const bind_context::pending_step& p : emitted) {
        const translation* found = nullptr;
        for (const translation& t : translations())
            if (t.cpu == p.fn) found = &t;
        if (!found) {
            std::string types;
            for (std::size_t i = 0; i < ctx.input_count(); ++i)
                if (ctx.has_input(i)) types += (types.empty() ? "" : ", ") + std::string(to_string(ctx.input_type(i)));
            return ctx.fail(status::unsupported_op, "op '{}' with inputs of dtype {} has no GPU kernel (the CUDA extension runs float32 {})",
                            ctx.node().op_type, types.empty() ? std::string("none") : types,
                            "Conv, Gemm, MatMul, pooling, element-wise, Softmax, LayerNormalization, reductions and layout ops");
        }
        if (status s = found->lower(*this, p.args.get(), ctx); s != status::ok) return s;
    }
    return status::ok;
}

} // namespace detail

/// Lowers g for the GPU without touching it: every node mapped to a CUDA step over the CPU's
/// memory plan. For tests and tools (an op the GPU cannot run fails here, naming the node);
/// cuda::compile() calls it first.
[[nodiscard]] inline result<detail::lowered> lower(const graph& g, const options& o = {}) {
    compile_options cpu = o.graph;
    cpu.isa = "reference";  // the reference kernels' steps are what lowering translates
    detail::lowering l(o);
    const ember::detail::step_lowering hook{&l, &detail::lowering::hook};
    result<plan> host = ember::detail::compiler(g, cpu, &hook).run();
    if (!host) return host.error();
    detail::lowered& out = l.result();
    out.host = std::move(*host);
    // compile() leaves the copies into graph outputs as CPU steps: they become device copies
    for (std::size_t i = 0; i < out.host.steps().size(); ++i) {
        const ember::step& s = out.host.steps()[i];
        if (s.fn != &ops::copy_kernel)
            return error_info{status::unsupported_op, s.node, ember::detail::format("step '{}' of the plan has no GPU kernel", out.host.step_name(i))};
        const auto& c = *static_cast<const ops::copy_args*>(s.args);
        l.emit(&steps::copy::run, steps::copy{c.src, c.dst, c.bytes}, -1, std::string(out.host.step_name(i)), "Copy");
    }
    return std::move(out);
}

} // namespace cuda
EMBER_NAMESPACE_END
