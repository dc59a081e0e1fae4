// SPDX-License-Identifier: Apache-2.0
// cuda::plan and cuda::session: a graph compiled for an NVIDIA GPU and run on a caller's stream.
//
//     auto p = ember::cuda::compile(graph);              // lowers, uploads weights, picks conv algorithms
//     auto s = ember::cuda::session::create(*p, stream); // device arena, cuBLAS/cuDNN handles
//     s->upload_input(0, host_x, bytes);                 // cudaMemcpyAsync on the stream
//     s->run();                                          // queues every step; no cudaMalloc, no sync
//     s->download_output(0, host_y, bytes);
//     cudaStreamSynchronize(stream);
//
// The plan is immutable after compile() and shared by sessions on any threads and streams; a
// session is one stream's state and is used from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ember/cuda/device.cuh"
#include "ember/cuda/lower.cuh"

EMBER_NAMESPACE_BEGIN
namespace cuda {

class session;

class plan {
public:
    plan() = default;
    plan(plan&&) noexcept = default;
    plan& operator=(plan&&) noexcept = default;

    /// Device bytes of arena one session needs (the CPU plan's memory plan, exactly).
    std::size_t arena_bytes() const noexcept { return host_.arena_bytes(); }
    /// Device bytes of weights the plan holds (uploaded once, at compile()).
    std::size_t weights_bytes() const noexcept { return weights_.size_bytes(); }
    /// Device scratch one session needs for the convolutions' algorithms.
    std::size_t workspace_bytes() const noexcept { return workspace_bytes_; }
    precision math() const noexcept { return math_; }

    std::size_t step_count() const noexcept { return steps_.size(); }
    std::string_view step_name(std::size_t i) const noexcept { return names_[i]; }
    std::string_view step_op(std::size_t i) const noexcept { return ops_[i]; }

    std::size_t input_count() const noexcept { return host_.input_count(); }
    std::size_t output_count() const noexcept { return host_.output_count(); }
    const io_info& input(std::size_t i) const noexcept { return host_.input(i); }
    const io_info& output(std::size_t i) const noexcept { return host_.output(i); }
    std::size_t input_index(std::string_view name) const noexcept { return host_.input_index(name); }
    std::size_t output_index(std::string_view name) const noexcept { return host_.output_index(name); }
    std::size_t region_count() const noexcept { return host_.region_count(); }

private:
    friend class session;
    friend result<plan> compile(const graph& g, const options& o);

    plan(const plan&) = delete;
    plan& operator=(const plan&) = delete;

    ember::plan host_;
    std::vector<step> steps_;
    std::vector<ember::detail::erased> args_;
    std::vector<std::string> names_, ops_;
    device_buffer weights_;
    std::vector<detail::owner<cudnnTensorDescriptor_t, detail::tensor_desc_destroy>> tensors_;
    std::vector<detail::owner<cudnnFilterDescriptor_t, detail::filter_desc_destroy>> filters_;
    std::vector<detail::owner<cudnnConvolutionDescriptor_t, detail::conv_desc_destroy>> convs_;
    std::vector<device_buffer> half_weights_;  ///< precision::fp16: each convolution's weights in FP16
    std::size_t workspace_bytes_ = 0;
    precision math_ = precision::fp32;
};

namespace detail {

inline cudnnMathType_t cudnn_math(precision p) noexcept {
    switch (p) {
        case precision::tf32: return CUDNN_TENSOR_OP_MATH;
        case precision::fp16: return CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
        case precision::fp32: break;
    }
    return CUDNN_FMA_MATH;
}

} // namespace detail

/// Compiles g for the current CUDA device: lowers it (cuda::lower: same passes, shapes and memory
/// plan as the CPU), uploads the weights, makes the cuDNN descriptors and picks each
/// convolution's algorithm. Allocates and synchronises; not for the frame loop. Fails like
/// ember::compile(), with unsupported_op for a node the GPU cannot run, and with device_error
/// (naming the CUDA error) when the device does.
[[nodiscard]] inline result<plan> compile(const graph& g, const options& o = {}) {
    result<detail::lowered> low = lower(g, o);
    if (!low) return low.error();
    plan p;
    p.math_ = o.math;
    p.host_ = std::move(low->host);
    p.steps_ = std::move(low->steps);
    p.args_ = std::move(low->args);
    p.names_ = std::move(low->names);
    p.ops_ = std::move(low->ops);

    // weights: the host plan's weights region, byte for byte
    const std::size_t wbytes = p.host_.weights_bytes();
    result<device_buffer> w = device_buffer::allocate(wbytes);
    if (!w) return w.error();
    p.weights_ = std::move(*w);
    if (wbytes != 0)
        if (call_result r = check(cudaMemcpy(p.weights_.data(), p.host_.weights(), wbytes, cudaMemcpyHostToDevice)); !r.ok())
            return device_failure(r, "uploading the weights");

    if (low->convs.empty()) return result<plan>(std::move(p));
    cudnnHandle_t raw = nullptr;
    if (call_result r = check(cudnnCreate(&raw)); !r.ok()) return device_failure(r, "cudnnCreate");
    const cudnn_handle dnn(raw);
    for (steps::conv* c : low->convs) {
        cudnnTensorDescriptor_t x = nullptr, y = nullptr;
        cudnnFilterDescriptor_t f = nullptr;
        cudnnConvolutionDescriptor_t cd = nullptr;
        if (call_result r = check(cudnnCreateTensorDescriptor(&x)); !r.ok()) return device_failure(r, "cudnnCreateTensorDescriptor");
        p.tensors_.emplace_back(x);
        if (call_result r = check(cudnnCreateTensorDescriptor(&y)); !r.ok()) return device_failure(r, "cudnnCreateTensorDescriptor");
        p.tensors_.emplace_back(y);
        if (call_result r = check(cudnnCreateFilterDescriptor(&f)); !r.ok()) return device_failure(r, "cudnnCreateFilterDescriptor");
        p.filters_.emplace_back(f);
        if (call_result r = check(cudnnCreateConvolutionDescriptor(&cd)); !r.ok()) return device_failure(r, "cudnnCreateConvolutionDescriptor");
        p.convs_.emplace_back(cd);
        auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
        // FP16 data for a convolution whose weights are constants (converted here, once)
        c->half = o.math == precision::fp16 && c->w.region == weights_region;
        const cudnnDataType_t data = c->half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
        call_result r = check(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, data, i32(c->batch), i32(c->in_channels * c->group), i32(c->in_h),
                                                         i32(c->in_w)));
        if (r.ok()) r = check(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, data, i32(c->batch), i32(c->out_channels), i32(c->out_h), i32(c->out_w)));
        if (r.ok()) r = check(cudnnSetFilter4dDescriptor(f, data, CUDNN_TENSOR_NCHW, i32(c->out_channels), i32(c->in_channels), i32(c->kh), i32(c->kw)));
        if (r.ok())
            r = check(cudnnSetConvolution2dDescriptor(cd, i32(c->pad_h), i32(c->pad_w), i32(c->stride_h), i32(c->stride_w), i32(c->dil_h), i32(c->dil_w),
                                                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        if (r.ok()) r = check(cudnnSetConvolutionGroupCount(cd, i32(c->group)));
        if (r.ok()) r = check(cudnnSetConvolutionMathType(cd, c->half ? CUDNN_TENSOR_OP_MATH : detail::cudnn_math(o.math)));
        if (r.ok() && c->half) {
            const std::int64_t wn = c->out_channels * c->in_channels * c->kh * c->kw;
            result<device_buffer> w16 = device_buffer::allocate(static_cast<std::size_t>(wn) * sizeof(__half));
            if (!w16) return w16.error();
            r = kernels::launch_to_half(nullptr, reinterpret_cast<const float*>(p.weights_.data() + c->w.offset), reinterpret_cast<__half*>(w16->data()), wn);
            c->w16 = reinterpret_cast<const __half*>(w16->data());
            p.half_weights_.push_back(std::move(*w16));
        }
        if (!r.ok()) return device_failure(r, "describing a convolution to cuDNN");
        int n = 0, ch = 0, h = 0, wd = 0;
        if (call_result q = check(cudnnGetConvolution2dForwardOutputDim(cd, x, f, &n, &ch, &h, &wd)); !q.ok())
            return device_failure(q, "cudnnGetConvolution2dForwardOutputDim");
        if (n != c->batch || ch != c->out_channels || h != c->out_h || wd != c->out_w)
            return error_info{status::unsupported_op, -1,
                              ember::detail::format("cuDNN computes a convolution output of [{}, {}, {}, {}] where the graph has [{}, {}, {}, {}]", n, ch, h,
                                                    wd, c->batch, c->out_channels, c->out_h, c->out_w)};
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int found = 0;
        const call_result q = check(o.measure_algorithms
                                        ? cudnnFindConvolutionForwardAlgorithm(dnn.get(), x, f, cd, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf)
                                        : cudnnGetConvolutionForwardAlgorithm_v7(dnn.get(), x, f, cd, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf));
        if (!q.ok()) return device_failure(q, o.measure_algorithms ? "cudnnFindConvolutionForwardAlgorithm" : "cudnnGetConvolutionForwardAlgorithm_v7");
        bool chosen = false;
        for (int k = 0; k < found && !chosen; ++k) {
            if (perf[k].status != CUDNN_STATUS_SUCCESS || perf[k].memory > o.max_workspace_bytes) continue;
            // fp32 keeps to FMA math: skip an algorithm cuDNN would run on tensor cores
            if (o.math == precision::fp32 && perf[k].mathType != CUDNN_FMA_MATH && perf[k].mathType != CUDNN_DEFAULT_MATH) continue;
            c->algo = perf[k].algo;
            c->workspace_bytes = perf[k].memory;
            chosen = true;
        }
        if (!chosen) {
            std::size_t bytes = 0;
            c->algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
            if (call_result q = check(cudnnGetConvolutionForwardWorkspaceSize(dnn.get(), x, f, cd, y, c->algo, &bytes)); !q.ok())
                return device_failure(q, "cudnnGetConvolutionForwardWorkspaceSize");
            c->workspace_bytes = bytes;
        }
        c->x_desc = x;
        c->y_desc = y;
        c->w_desc = f;
        c->conv_desc = cd;
        std::size_t need = c->workspace_bytes;
        if (c->half) {  // [cuDNN's scratch][X in FP16][Y in FP16]
            c->x16 = align_up(need, 256);
            c->y16 = align_up(c->x16 + static_cast<std::size_t>(c->x_count()) * sizeof(__half), 256);
            need = c->y16 + static_cast<std::size_t>(c->y_count()) * sizeof(__half);
        }
        if (need > p.workspace_bytes_) p.workspace_bytes_ = need;
    }
    if (call_result r = check(cudaDeviceSynchronize()); !r.ok()) return device_failure(r, "converting the weights to FP16");
    return result<plan>(std::move(p));
}

/// One stream's state for running a plan: the device arena, the scratch, the cuBLAS and cuDNN
/// handles bound to the stream, and the region table. run() only queues work.
class session {
public:
    session(session&&) noexcept = default;
    session& operator=(session&&) noexcept = default;

    /// Allocates the arena and scratch on the current device and creates the handles (all the
    /// allocation a session ever does). stream may be 0 (the legacy default stream).
    static result<session> create(const plan& p, cudaStream_t stream) {
        session s;
        s.plan_ = &p;
        s.stream_ = stream;
        result<device_buffer> arena = device_buffer::allocate(p.arena_bytes());
        if (!arena) return arena.error();
        s.arena_ = std::move(*arena);
        result<device_buffer> ws = device_buffer::allocate(p.workspace_bytes());
        if (!ws) return ws.error();
        s.workspace_ = std::move(*ws);
        // cuBLAS gets its own scratch, so that it allocates nothing while a graph is captured
        result<device_buffer> blas_ws = device_buffer::allocate(blas_workspace_bytes);
        if (!blas_ws) return blas_ws.error();
        s.blas_workspace_ = std::move(*blas_ws);
        cublasHandle_t blas = nullptr;
        if (call_result r = check(cublasCreate(&blas)); !r.ok()) return device_failure(r, "cublasCreate");
        s.blas_ = cublas_handle(blas);
        call_result r = check(cublasSetStream(blas, stream));
        if (r.ok()) r = check(cublasSetWorkspace(blas, s.blas_workspace_.data(), s.blas_workspace_.size_bytes()));
        if (r.ok()) r = check(cublasSetMathMode(blas, p.math() == precision::fp32 ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH));
        if (!r.ok()) return device_failure(r, "setting up cuBLAS");
        cudnnHandle_t dnn = nullptr;
        if (call_result q = check(cudnnCreate(&dnn)); !q.ok()) return device_failure(q, "cudnnCreate");
        s.dnn_ = cudnn_handle(dnn);
        if (call_result q = check(cudnnSetStream(dnn, stream)); !q.ok()) return device_failure(q, "cudnnSetStream");
        s.regions_.assign(p.region_count(), nullptr);
        s.regions_[arena_region] = s.arena_.data();
        s.regions_[weights_region] = p.weights_.data();
        for (std::size_t i = 0; i < p.input_count(); ++i) s.regions_[p.input(i).region] = s.arena_.data() + p.input(i).arena_offset;
        for (std::size_t i = 0; i < p.output_count(); ++i) s.regions_[p.output(i).region] = s.arena_.data() + p.output(i).arena_offset;
        return result<session>(std::move(s));
    }

    /// Device address of input or output slot i (its buffer in the arena unless bound).
    void* input(std::size_t i) const noexcept { return regions_[plan_->input(i).region]; }
    void* output(std::size_t i) const noexcept { return regions_[plan_->output(i).region]; }

    /// Reads input i from caller-owned device memory of exactly its bytes (no copy at run).
    status bind_input(std::size_t i, void* device, std::size_t bytes) noexcept { return bind(i, true, device, bytes); }
    /// Writes output i into caller-owned device memory of exactly its bytes.
    status bind_output(std::size_t i, void* device, std::size_t bytes) noexcept { return bind(i, false, device, bytes); }

    /// Queues a copy of input i from host memory (asynchronous for pinned memory).
    status upload_input(std::size_t i, const void* host, std::size_t bytes) noexcept {
        if (i >= plan_->input_count() || bytes != plan_->input(i).bytes) return status::invalid_argument;
        return record(check(cudaMemcpyAsync(input(i), host, bytes, cudaMemcpyHostToDevice, stream_)), "upload_input", -1);
    }
    /// Queues a copy of output i into host memory; valid after the stream reaches it.
    status download_output(std::size_t i, void* host, std::size_t bytes) noexcept {
        if (i >= plan_->output_count() || bytes != plan_->output(i).bytes) return status::invalid_argument;
        return record(check(cudaMemcpyAsync(host, output(i), bytes, cudaMemcpyDeviceToHost, stream_)), "download_output", -1);
    }

    /// Queues every step on the stream. No allocation, no synchronisation, no exception. A
    /// failed launch returns device_error; last_error() then names the step and the CUDA error.
    [[nodiscard]] status run() noexcept {
        const run_context ctx{regions_.data(), stream_, blas_.get(), dnn_.get(), workspace_.data(), workspace_.size_bytes()};
        for (std::size_t i = 0; i < plan_->steps_.size(); ++i) {
            const step& s = plan_->steps_[i];
            if (status st = record(s.fn(s.args, ctx), "step", static_cast<std::int64_t>(i)); st != status::ok) return st;
        }
        return status::ok;
    }

    /// Records one run() into a CUDA graph (bindings as they are now), for replay() to launch
    /// with one call. Run it again after re-binding. Needs a stream of the caller's: CUDA cannot
    /// capture the legacy default stream (0), so a session made on it gets invalid_argument.
    [[nodiscard]] status capture() noexcept {
        graph_.reset();
        if (!stream_) {
            std::snprintf(error_, sizeof(error_), "capture: the legacy default stream (0) cannot be captured; create the session on a stream");
            return status::invalid_argument;
        }
        if (status s = record(check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal)), "cudaStreamBeginCapture", -1); s != status::ok)
            return s;
        const status ran = run();
        cudaGraph_t g = nullptr;
        const call_result ended = check(cudaStreamEndCapture(stream_, &g));
        if (ran != status::ok) {
            if (g) (void)cudaGraphDestroy(g);
            return ran;
        }
        if (status s = record(ended, "cudaStreamEndCapture", -1); s != status::ok) return s;
        cudaGraphExec_t exec = nullptr;
        const call_result made = check(cudaGraphInstantiate(&exec, g, 0));
        (void)cudaGraphDestroy(g);
        if (status s = record(made, "cudaGraphInstantiate", -1); s != status::ok) return s;
        graph_ = graph_exec(exec);
        return status::ok;
    }
    /// Launches the captured graph on the stream (invalid_argument before capture()).
    [[nodiscard]] status replay() noexcept {
        if (!graph_) return status::invalid_argument;
        return record(check(cudaGraphLaunch(graph_.get(), stream_)), "cudaGraphLaunch", -1);
    }

    /// Waits for the stream (for callers that want run() to be synchronous).
    [[nodiscard]] status synchronize() noexcept { return record(check(cudaStreamSynchronize(stream_)), "cudaStreamSynchronize", -1); }

    /// What the last failure was: "step 12 'conv3' (Conv): CUDNN_STATUS_BAD_PARAM"; "" if none.
    const char* last_error() const noexcept { return error_; }
    cudaStream_t stream() const noexcept { return stream_; }
    const plan& compiled() const noexcept { return *plan_; }

    static constexpr std::size_t blas_workspace_bytes = std::size_t{32} << 20;

private:
    session() = default;

    status bind(std::size_t i, bool is_input, void* device, std::size_t bytes) noexcept {
        const std::size_t count = is_input ? plan_->input_count() : plan_->output_count();
        if (i >= count || !device) return status::invalid_argument;
        const io_info& info = is_input ? plan_->input(i) : plan_->output(i);
        if (bytes != info.bytes) return status::invalid_argument;
        regions_[info.region] = static_cast<std::byte*>(device);
        return status::ok;
    }

    status record(const call_result& r, const char* what, std::int64_t step_index) noexcept {
        if (r.ok()) return status::ok;
        if (step_index >= 0) {
            const auto i = static_cast<std::size_t>(step_index);
            std::snprintf(error_, sizeof(error_), "step %zu '%.*s' (%.*s): %s", i, static_cast<int>(plan_->step_name(i).size()), plan_->step_name(i).data(),
                          static_cast<int>(plan_->step_op(i).size()), plan_->step_op(i).data(), r.name());
        } else {
            std::snprintf(error_, sizeof(error_), "%s: %s", what, r.name());
        }
        return status::device_error;
    }

    const plan* plan_ = nullptr;
    cudaStream_t stream_ = nullptr;
    device_buffer arena_, workspace_, blas_workspace_;
    cublas_handle blas_;
    cudnn_handle dnn_;
    graph_exec graph_;
    std::vector<std::byte*> regions_;
    char error_[256] = {};
};

} // namespace cuda
EMBER_NAMESPACE_END
