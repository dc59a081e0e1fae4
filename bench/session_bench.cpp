// SPDX-License-Identifier: Apache-2.0
// BM_session_run_mlp_tiny: per-call cost of session::run() on the 32-64-64-8 MLP that the
// zoo's mlp_tiny is (ONNX Runtime: ~2.3 us through its C API; fixed-size Eigen floor: ~0.17 us,
// see ../shared/anchors/README.md). Reference kernels for now.
#include <benchmark/benchmark.h>

#include <vector>

#include <ember/ember.hpp>

#include "bench_support.hpp"

namespace {
using ember::bench::random_tensor;

void BM_session_run_mlp_tiny(benchmark::State& state) {
    ember::graph_builder b("mlp_tiny");
    auto h = b.input("x", ember::dtype::float32, {1, 32});
    const std::int64_t widths[] = {32, 64, 64, 8};
    for (int l = 0; l < 3; ++l) {
        h = b.node("Gemm", {h, b.constant("w" + std::to_string(l), random_tensor({widths[l], widths[l + 1]}, 10 + l)),
                            b.constant("b" + std::to_string(l), random_tensor({widths[l + 1]}, 20 + l))});
        if (l < 2) h = b.node("Relu", {h});
    }
    b.output(h, "y");
    auto p = ember::compile(*std::move(b).build());
    if (!p) {
        state.SkipWithError(p.error().message.c_str());
        return;
    }
    std::vector<std::byte> arena(p->arena_bytes());
    ember::session s(*p, arena);
    for (auto _ : state) benchmark::DoNotOptimize(s.run());
}
} // namespace

BENCHMARK(BM_session_run_mlp_tiny);

BENCHMARK_MAIN();
