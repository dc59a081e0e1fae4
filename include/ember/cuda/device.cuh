// SPDX-License-Identifier: Apache-2.0
// The CUDA extension's vocabulary: what a failed GPU call was (api + code, named by the library's
// own error name) and RAII owners for streams, events, device buffers and the cuBLAS / cuDNN
// handles. Include through <ember/cuda/cuda.cuh> from a .cu file; never pulled in by ember.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "ember/config.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace cuda {

/// Which library a failed call belongs to.
enum class api : std::uint8_t { none, runtime, cublas, cudnn };

/// The outcome of one GPU call: ok, or the library and its error code. No allocation.
struct call_result {
    api source = api::none;
    int code = 0;

    constexpr bool ok() const noexcept { return source == api::none; }
    /// The library's own name for the code ("cudaErrorMemoryAllocation", "CUBLAS_STATUS_...").
    const char* name() const noexcept {
        switch (source) {
            case api::none: return "ok";
            case api::runtime: return cudaGetErrorName(static_cast<cudaError_t>(code));
            case api::cudnn: return cudnnGetErrorString(static_cast<cudnnStatus_t>(code));
            case api::cublas: return cublas_name(static_cast<cublasStatus_t>(code));
        }
        return "unknown";
    }

    static const char* cublas_name(cublasStatus_t s) noexcept {
        switch (s) {
            case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
            case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
            case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
            case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
            case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
            case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
            case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
            case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
            case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
            default: return "CUBLAS_STATUS_UNKNOWN";
        }
    }
};

inline call_result check(cudaError_t e) noexcept { return e == cudaSuccess ? call_result{} : call_result{api::runtime, static_cast<int>(e)}; }
inline call_result check(cublasStatus_t e) noexcept {
    return e == CUBLAS_STATUS_SUCCESS ? call_result{} : call_result{api::cublas, static_cast<int>(e)};
}
inline call_result check(cudnnStatus_t e) noexcept { return e == CUDNN_STATUS_SUCCESS ? call_result{} : call_result{api::cudnn, static_cast<int>(e)}; }
/// After a kernel launch: the launch's own error, without waiting for the kernel.
inline call_result launched() noexcept { return check(cudaPeekAtLastError()); }

/// status::device_error with "<what>: <library error name>".
inline error_info device_failure(const call_result& r, std::string_view what) {
    return error_info{status::device_error, -1, ember::detail::format("{}: {}", what, r.name())};
}

/// Whether this process sees at least one CUDA device (false, and why, when not: no driver, no
/// GPU). For tests and tools that skip without a GPU.
inline bool device_present(const char** why = nullptr) noexcept {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
        (void)cudaGetLastError();  // clear the sticky error of a failed query
        return false;
    }
    return true;
}

namespace detail {
/// One owned handle with its destroy function; moves, never copies.
template <class H, class Destroy>
class owner {
public:
    owner() = default;
    explicit owner(H h) noexcept : h_(h) {}
    owner(owner&& o) noexcept : h_(std::exchange(o.h_, H{})) {}
    owner& operator=(owner&& o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, H{});
        }
        return *this;
    }
    owner(const owner&) = delete;
    owner& operator=(const owner&) = delete;
    ~owner() { reset(); }

    H get() const noexcept { return h_; }
    explicit operator bool() const noexcept { return h_ != H{}; }
    void reset() noexcept {
        if (h_ != H{}) Destroy{}(h_);
        h_ = H{};
    }

private:
    H h_{};
};

struct stream_destroy {
    void operator()(cudaStream_t s) const noexcept { (void)cudaStreamDestroy(s); }
};
struct event_destroy {
    void operator()(cudaEvent_t e) const noexcept { (void)cudaEventDestroy(e); }
};
struct cublas_destroy {
    void operator()(cublasHandle_t h) const noexcept { (void)cublasDestroy(h); }
};
struct cudnn_destroy {
    void operator()(cudnnHandle_t h) const noexcept { (void)cudnnDestroy(h); }
};
struct graph_exec_destroy {
    void operator()(cudaGraphExec_t g) const noexcept { (void)cudaGraphExecDestroy(g); }
};
struct tensor_desc_destroy {
    void operator()(cudnnTensorDescriptor_t d) const noexcept { (void)cudnnDestroyTensorDescriptor(d); }
};
struct filter_desc_destroy {
    void operator()(cudnnFilterDescriptor_t d) const noexcept { (void)cudnnDestroyFilterDescriptor(d); }
};
struct conv_desc_destroy {
    void operator()(cudnnConvolutionDescriptor_t d) const noexcept { (void)cudnnDestroyConvolutionDescriptor(d); }
};
struct activation_desc_destroy {
    void operator()(cudnnActivationDescriptor_t d) const noexcept { (void)cudnnDestroyActivationDescriptor(d); }
};
} // namespace detail

/// An owned CUDA stream (non-blocking with respect to the legacy default stream).
class stream {
public:
    static result<stream> create() {
        cudaStream_t s = nullptr;
        if (call_result r = check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); !r.ok()) return device_failure(r, "cudaStreamCreate");
        stream out;
        out.s_ = handle(s);
        return result<stream>(std::move(out));
    }
    cudaStream_t get() const noexcept { return s_.get(); }
    /// Waits for everything queued on the stream.
    call_result synchronize() const noexcept { return check(cudaStreamSynchronize(s_.get())); }

private:
    using handle = detail::owner<cudaStream_t, detail::stream_destroy>;
    handle s_;
};

/// An owned CUDA event, for timing a stream (elapsed_ms) or ordering streams.
class event {
public:
    static result<event> create() {
        cudaEvent_t e = nullptr;
        if (call_result r = check(cudaEventCreate(&e)); !r.ok()) return device_failure(r, "cudaEventCreate");
        event out;
        out.e_ = handle(e);
        return result<event>(std::move(out));
    }
    cudaEvent_t get() const noexcept { return e_.get(); }
    call_result record(cudaStream_t s) const noexcept { return check(cudaEventRecord(e_.get(), s)); }
    call_result synchronize() const noexcept { return check(cudaEventSynchronize(e_.get())); }
    /// Milliseconds from `start` to this event (both recorded and complete).
    float elapsed_ms(const event& start) const noexcept {
        float ms = 0.0f;
        (void)cudaEventElapsedTime(&ms, start.get(), e_.get());
        return ms;
    }

private:
    using handle = detail::owner<cudaEvent_t, detail::event_destroy>;
    handle e_;
};

/// Owned device memory (cudaMalloc / cudaFree).
class device_buffer {
public:
    device_buffer() = default;
    device_buffer(device_buffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    device_buffer& operator=(device_buffer&& o) noexcept {
        if (this != &o) {
            release();
            p_ = std::exchange(o.p_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    ~device_buffer() { release(); }

    /// bytes of device memory (at least 256 bytes apart from others, as cudaMalloc aligns).
    static result<device_buffer> allocate(std::size_t bytes) {
        device_buffer b;
        if (bytes == 0) return result<device_buffer>(std::move(b));
        void* p = nullptr;
        if (call_result r = check(cudaMalloc(&p, bytes)); !r.ok())
            return error_info{r.code == cudaErrorMemoryAllocation ? status::out_of_memory : status::device_error, -1,
                              ember::detail::format("cudaMalloc of {} bytes: {}", bytes, r.name())};
        b.p_ = static_cast<std::byte*>(p);
        b.bytes_ = bytes;
        return result<device_buffer>(std::move(b));
    }
    std::byte* data() const noexcept { return p_; }
    std::size_t size_bytes() const noexcept { return bytes_; }

private:
    void release() noexcept {
        if (p_) (void)cudaFree(p_);
        p_ = nullptr;
        bytes_ = 0;
    }
    std::byte* p_ = nullptr;
    std::size_t bytes_ = 0;
};

using cublas_handle = detail::owner<cublasHandle_t, detail::cublas_destroy>;
using cudnn_handle = detail::owner<cudnnHandle_t, detail::cudnn_destroy>;
using graph_exec = detail::owner<cudaGraphExec_t, detail::graph_exec_destroy>;

} // namespace cuda
EMBER_NAMESPACE_END
