// SPDX-License-Identifier: Apache-2.0
// The README's CUDA snippet, compiled with the CUDA extension (EMBER_BUILD_CUDA) and run on the
// bundled Fashion-MNIST model: "cuda snippet: ok" on a machine with a GPU, "cuda snippet: skipped"
// and why on one without (the code still compiles and links there).
#include <cstdio>
#include <vector>

#include <ember/cuda/cuda.cuh>
#include <ember/onnx.hpp>

// Runs the model at `path` on `stream`: x in, y out (host memory; pinned for truly async copies).
ember::status run_on_gpu(const char* path, cudaStream_t stream, const float* x, float* y) {
    auto g = ember::onnx::load_file(path);
    if (!g) return g.error().code;
    ember::cuda::options o;                         // o.graph: the CPU compile_options (shapes, passes...)
    o.graph.dim_values.push_back({"batch", 1});     // the value of a symbolic dimension, as on the CPU
    o.math = ember::cuda::precision::tf32;          // fp32 (the default), tf32 or fp16 tensor cores
    auto p = ember::cuda::compile(*g, o);           // weights uploaded once, cuDNN algorithms chosen
    if (!p) return p.error().code;
    auto s = ember::cuda::session::create(*p, stream);  // device arena + scratch, cuBLAS/cuDNN on `stream`
    if (!s) return s.error().code;
    (void)s->upload_input(0, x, p->input(0).bytes);     // or bind_input(0, device_pointer, bytes)
    if (s->run() != ember::status::ok) {                // queues every step: no cudaMalloc, no sync
        std::fprintf(stderr, "%s\n", s->last_error());  // "step 12 'conv3' (FusedConv): CUDNN_STATUS_..."
        return ember::status::device_error;
    }
    // The whole run as one CUDA graph: capture once, then replay() per frame or request.
    if (s->capture() != ember::status::ok || s->replay() != ember::status::ok) return ember::status::device_error;
    (void)s->download_output(0, y, p->output(0).bytes);
    return s->synchronize();  // y is ready
}

int main() {
    const char* why = nullptr;
    if (!ember::cuda::device_present(&why)) {
        std::printf("cuda snippet: skipped (no CUDA device: %s)\n", why ? why : "?");
        return 0;
    }
    auto stream = ember::cuda::stream::create();  // a stream of our own: the default one cannot be captured
    if (!stream) {
        std::printf("cuda snippet: failed (%s)\n", stream.error().message.c_str());
        return 1;
    }
    std::vector<float> x(28 * 28, 0.5f), y(10, -1.0f);
    const ember::status s = run_on_gpu(EMBER_SOURCE_DIR "/models/fashion_mnist/model.onnx", stream->get(), x.data(), y.data());
    if (s != ember::status::ok) {
        std::printf("cuda snippet: failed (%s)\n", std::string(ember::to_string(s)).c_str());
        return 1;
    }
    float sum = 0.0f;
    for (float v : y) sum += v;
    std::printf("cuda snippet: ok (10 outputs, sum %.3f)\n", sum);
    return 0;
}
