// SPDX-License-Identifier: Apache-2.0
// BM_gemm_f32/M/N/K: one Gemm node through compile + session, the reference kernel for now
// (the packed kernels of the fast-kernels issue will be measured by the same benchmark).
#include <benchmark/benchmark.h>

#include <vector>

#include <ember/ember.hpp>

#include "bench_support.hpp"

namespace {
using ember::bench::random_tensor;

void BM_gemm_f32(benchmark::State& state) {
    const std::int64_t m = state.range(0), n = state.range(1), k = state.range(2);
    ember::graph_builder b("gemm");
    const auto a = b.input("a", ember::dtype::float32, {m, k});
    b.output(b.node("Gemm", {a, b.constant("w", random_tensor({k, n}, 1))}), "y");
    auto g = std::move(b).build();
    auto p = ember::compile(*g);
    if (!p) {
        state.SkipWithError(p.error().message.c_str());
        return;
    }
    ember::session s(*p);
    const ember::tensor in = random_tensor({m, k}, 2);
    if (s.bind_input(0, in.bytes(), in.size_bytes()) != ember::status::ok) state.SkipWithError("bind");
    for (auto _ : state) benchmark::DoNotOptimize(s.run());
    state.counters["GFLOP/s"] = benchmark::Counter(2e-9 * double(m * n * k), benchmark::Counter::kIsIterationInvariantRate);
}
} // namespace

BENCHMARK(BM_gemm_f32)->Args({1, 64, 64})->Args({32, 64, 64})->Args({64, 256, 256})->Args({256, 256, 256});

BENCHMARK_MAIN();
