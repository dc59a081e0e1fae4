// SPDX-License-Identifier: Apache-2.0
// BM_gemm_f32/M/N/K: one Gemm node (A an input, B constant: packed at compile time) through
// compile + session, single-threaded (no executor, max_threads 1) so that it compares with one
// core's peak. Counters: GFLOP/s (2*M*N*K per run) and peak_%, that rate against the single-core
// FP32 FMA peak given in GFLOP/s by the environment variable EMBER_PEAK_GFLOPS (default 238: one
// Zen 5 core with AVX-512, ../shared/anchors/README.md; 119 for its AVX2 path). The label is the
// ISA the plan's kernels use (plan::isa(); EMBER_ISA=avx2 etc. to force one).
//
//     EMBER_PEAK_GFLOPS=238 build/gcc/bench/gemm_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <optional>
#include <ctime>
#include <string>
#include <vector>

#include <ember/ember.hpp>

#include "bench_support.hpp"

namespace {
using ember::bench::random_tensor;

double peak_gflops() {
    const char* env = std::getenv("EMBER_PEAK_GFLOPS");
    const double v = env ? std::atof(env) : 0.0;
    return v > 0.0 ? v : 238.0;
}

double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

void BM_gemm_f32(benchmark::State& state) {
    const std::int64_t m = state.range(0), n = state.range(1), k = state.range(2);
    ember::graph_builder b("gemm");
    const auto a = b.input("a", ember::dtype::float32, {m, k});
    b.output(b.node("Gemm", {a, b.constant("w", random_tensor({k, n}, 1))}), "y");
    std::optional<ember::plan> p = ember::bench::compile_single_thread(state, std::move(b).build());
    if (!p) return;
    ember::session s(*p);
    const ember::tensor a_value = random_tensor({m, k}, 2);
    if (!ember::bench::bind_first_input(state, s, a_value)) return;
    // peak_% is computed here, over this thread's CPU time (what GFLOP/s is divided by): a rate
    // counter would print it as "%/s".
    const double t0 = thread_cpu_seconds();
    for (auto _ : state) benchmark::DoNotOptimize(s.run());
    const double cpu_seconds = thread_cpu_seconds() - t0;
    const double gflop = 2e-9 * double(m) * double(n) * double(k);
    state.counters["GFLOP/s"] = benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
    if (cpu_seconds > 0.0) state.counters["peak_%"] = 100.0 * gflop * double(state.iterations()) / cpu_seconds / peak_gflops();
    state.SetLabel(std::string(p->isa()));
}
} // namespace

BENCHMARK(BM_gemm_f32)->Args({1, 64, 64})->Args({32, 64, 64})->Args({64, 256, 256})->Args({256, 256, 256})->Args({1024, 1024, 1024});

BENCHMARK_MAIN();
