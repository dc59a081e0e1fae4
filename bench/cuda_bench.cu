// SPDX-License-Identifier: Apache-2.0
// GPU latency and throughput of a model at several batch sizes (default: the zoo's resnet50 at
// batch 1, 8 and 64), for each arithmetic (FP32, TF32, FP16 tensor cores), each run captured once
// as a CUDA graph and replayed; the time of each replay is taken with CUDA events. Prints one
// line per (batch, math): median and p90 ms per batch and images/s at the median.
//
//     ember_cuda_bench [MODEL.onnx] [--batch 1,8,64] [--math fp32,tf32,fp16] [--repeat 50] [--measure]
//
// Convolution algorithms come from cuDNN's heuristics, or from timing them at compile with
// --measure (options::measure_algorithms; on an H200 with resnet50 that chose slower ones).
//
// The model's first input dimension is re-declared as the symbol "batch", so a model exported
// at batch 1 runs at any batch (ResNet's Flatten + Gemm tail does not depend on it).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <ember/cuda/cuda.cuh>
#include <ember/onnx.hpp>

namespace cuda = ember::cuda;

namespace {

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        const std::size_t comma = s.find(',', start);
        out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

int fail(const std::string& what) {
    std::fprintf(stderr, "ember_cuda_bench: %s\n", what.c_str());
    return 1;
}

} // namespace

int main(int argc, char** argv) {
    std::string model;
    if (const char* home = std::getenv("HOME")) model = std::string(home) + "/.cache/ember-anchors/models/resnet50.onnx";
    if (const char* env = std::getenv("EMBER_ANCHORS")) model = std::string(env) + "/models/resnet50.onnx";
    std::vector<std::string> batches = {"1", "8", "64"}, maths = {"fp32", "tf32", "fp16"};
    int repeat = 50;
    bool measure = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--batch" && i + 1 < argc) batches = split(argv[++i]);
        else if (a == "--math" && i + 1 < argc) maths = split(argv[++i]);
        else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
        else if (a == "--measure") measure = true;
        else if (!a.empty() && a[0] != '-') model = a;
        else return fail("usage: ember_cuda_bench [MODEL.onnx] [--batch 1,8,64] [--math fp32,tf32,fp16] [--repeat N] [--measure]");
    }
    const char* why = nullptr;
    if (!cuda::device_present(&why)) return fail(std::string("no CUDA device: ") + (why ? why : "?"));
    auto g = ember::onnx::load_file(model);
    if (!g) return fail(g.error().message);
    if (g->inputs.empty()) return fail(model + ": the model has no input");
    ember::value& in = g->values[g->inputs[0]];
    if (!in.declared.rank_known || in.declared.rank() == 0) return fail(model + ": the first input has no known rank");
    in.declared.dims[0].value = -1;
    in.declared.dims[0].symbol = "batch";

    cudaDeviceProp prop{};
    (void)cudaGetDeviceProperties(&prop, 0);
    std::printf("model %s on %s, convolution algorithms %s\n", model.c_str(), prop.name, measure ? "timed" : "by heuristic");
    std::printf("%-6s %-5s %10s %10s %12s %10s\n", "batch", "math", "median_ms", "p90_ms", "images/s", "run_ms");
    for (const std::string& bs : batches) {
        const int batch = std::atoi(bs.c_str());
        if (batch <= 0) return fail("bad batch '" + bs + "'");
        for (const std::string& m : maths) {
            cuda::options o;
            o.measure_algorithms = measure;
            o.graph.dim_values.push_back(ember::dim_value{"batch", batch});
            if (m == "fp32") o.math = cuda::precision::fp32;
            else if (m == "tf32") o.math = cuda::precision::tf32;
            else if (m == "fp16") o.math = cuda::precision::fp16;
            else return fail("bad math '" + m + "' (fp32, tf32 or fp16)");
            auto p = cuda::compile(*g, o);
            if (!p) return fail(p.error().message);
            auto stream = cuda::stream::create();
            if (!stream) return fail(stream.error().message);
            auto s = cuda::session::create(*p, stream->get());
            if (!s) return fail(s.error().message);
            std::vector<float> x(p->input(0).dims.elements(), 0.5f);
            if (s->upload_input(0, x.data(), p->input(0).bytes) != ember::status::ok) return fail(s->last_error());
            auto start = cuda::event::create(), stop = cuda::event::create();
            if (!start || !stop) return fail("cudaEventCreate failed");
            // one plain run, timed the same way (it includes launching every step from the host)
            for (int w = 0; w < 3; ++w)
                if (s->run() != ember::status::ok) return fail(s->last_error());
            (void)start->record(stream->get());
            if (s->run() != ember::status::ok) return fail(s->last_error());
            (void)stop->record(stream->get());
            (void)stop->synchronize();
            const float run_ms = stop->elapsed_ms(*start);
            if (s->capture() != ember::status::ok) return fail(s->last_error());
            for (int w = 0; w < 5; ++w)
                if (s->replay() != ember::status::ok) return fail(s->last_error());
            std::vector<float> ms;
            for (int r = 0; r < repeat; ++r) {
                (void)start->record(stream->get());
                if (s->replay() != ember::status::ok) return fail(s->last_error());
                (void)stop->record(stream->get());
                if (stop->synchronize().ok() == false) return fail("the replay failed");
                ms.push_back(stop->elapsed_ms(*start));
            }
            if (s->synchronize() != ember::status::ok) return fail(s->last_error());
            std::sort(ms.begin(), ms.end());
            const float median = ms[ms.size() / 2], p90 = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
            std::printf("%-6d %-5s %10.3f %10.3f %12.1f %10.3f\n", batch, m.c_str(), median, p90, batch * 1000.0 / median, run_ms);
        }
    }
    return 0;
}
