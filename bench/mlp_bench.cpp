// SPDX-License-Identifier: Apache-2.0
// The tiny 32-64-64-8 MLP (ReLU, ReLU, linear; the anchor zoo's mlp_tiny), per call, three ways
// in one binary and one run: BM_mlp_tiny_static (ember::tiny::network, sizes as template
// arguments), BM_mlp_tiny_plan (compile() + session::run() over bound buffers, one thread) and
// BM_mlp_tiny_eigen_floor (fixed-size Eigen 3.4, written as ../shared/anchors/mlp_floor.cpp:
// the floor). Same seeded weights in all three; the input changes every call (x[0] flips sign)
// and each run is a noinline call, so nothing is hoisted out of the loop. ONNX Runtime's figure
// comes from node ../shared/anchors/bench_ort.js --mlp (about 2.3 us through its C API here).
// Built twice (bench/CMakeLists.txt): mlp_bench with the project's flags, mlp_bench_native with
// the floor's -O3 -march=native.
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <ember/ember.hpp>
#include <ember/tiny.hpp>

#include "bench_support.hpp"

namespace {

constexpr std::size_t widths[] = {32, 64, 64, 8};

// The weights, [in][out] per layer (ONNX Gemm's B), and the biases.
struct mlp_weights {
    std::vector<float> w[3], b[3];
    mlp_weights() {
        for (std::size_t l = 0; l < 3; ++l) {
            const ember::tensor wt = ember::bench::random_tensor({std::int64_t(widths[l]), std::int64_t(widths[l + 1])}, 10 + unsigned(l));
            const ember::tensor bt = ember::bench::random_tensor({std::int64_t(widths[l + 1])}, 20 + unsigned(l));
            w[l].assign(wt.data<float>(), wt.data<float>() + wt.size());
            b[l].assign(bt.data<float>(), bt.data<float>() + bt.size());
        }
    }
};
const mlp_weights& weights() {
    static const mlp_weights w;
    return w;
}

std::array<float, 32> first_input() {
    std::array<float, 32> x{};
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i) * 0.7f);
    return x;
}

using tiny_mlp = ember::tiny::network<ember::tiny::dense<32, 64, ember::tiny::relu>, ember::tiny::dense<64, 64, ember::tiny::relu>,
                                      ember::tiny::dense<64, 8>>;

__attribute__((noinline)) void run_tiny(const tiny_mlp& net, const float* x, float* y) { net.run(x, y); }

// Written as ../shared/anchors/mlp_floor.cpp writes it.
struct eigen_mlp {
    Eigen::Matrix<float, 64, 32> W1;
    Eigen::Matrix<float, 64, 64> W2;
    Eigen::Matrix<float, 8, 64> W3;
    Eigen::Matrix<float, 64, 1> b1, b2;
    Eigen::Matrix<float, 8, 1> b3;
    __attribute__((noinline)) void run(const Eigen::Matrix<float, 32, 1>& x, Eigen::Matrix<float, 8, 1>& y) const {
        Eigen::Matrix<float, 64, 1> h1 = (W1 * x + b1).cwiseMax(0.f);
        Eigen::Matrix<float, 64, 1> h2 = (W2 * h1 + b2).cwiseMax(0.f);
        y.noalias() = W3 * h2 + b3;
    }
};

// The static network's output for the first input, which the other two must give too.
std::array<float, 8> expected_output() {
    tiny_mlp net;
    const mlp_weights& m = weights();
    (void)net.layer<0>().set_weights(m.w[0], m.b[0]);
    (void)net.layer<1>().set_weights(m.w[1], m.b[1]);
    (void)net.layer<2>().set_weights(m.w[2], m.b[2]);
    std::array<float, 8> y{};
    net.run(first_input().data(), y.data());
    return y;
}

bool agrees(benchmark::State& state, const float* y) {
    const std::array<float, 8> want = expected_output();
    for (std::size_t k = 0; k < 8; ++k)
        if (std::fabs(y[k] - want[k]) > 1e-4f * (1.0f + std::fabs(want[k]))) {
            state.SkipWithError("the outputs differ from the static network's");
            return false;
        }
    return true;
}

void BM_mlp_tiny_static(benchmark::State& state) {
    static tiny_mlp net;  // 27 KB of weights inline
    const mlp_weights& m = weights();
    for (std::size_t l = 0; l < 3; ++l) {
        ember::result<void> r = l == 0 ? net.layer<0>().set_weights(m.w[0], m.b[0])
                                : l == 1 ? net.layer<1>().set_weights(m.w[1], m.b[1])
                                         : net.layer<2>().set_weights(m.w[2], m.b[2]);
        if (!r) return state.SkipWithError(r.error().message.c_str());
    }
    std::array<float, 32> x = first_input();
    std::array<float, 8> y{};
    run_tiny(net, x.data(), y.data());
    if (!agrees(state, y.data())) return;
    for (auto _ : state) {
        x[0] = -x[0];
        run_tiny(net, x.data(), y.data());
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
}

void BM_mlp_tiny_plan(benchmark::State& state) {
    const mlp_weights& m = weights();
    ember::graph_builder b("mlp_tiny");
    ember::value_id h = b.input("x", ember::dtype::float32, {1, 32});
    for (std::size_t l = 0; l < 3; ++l) {
        const std::string n = std::to_string(l);
        const std::int64_t in = std::int64_t(widths[l]), out = std::int64_t(widths[l + 1]);
        h = b.node("Gemm", {h, b.constant<float>("w" + n, {in, out}, m.w[l]), b.constant<float>("b" + n, {out}, m.b[l])});
        if (l < 2) h = b.node("Relu", {h});
    }
    b.output(h, "y");
    std::optional<ember::plan> p = ember::bench::compile_single_thread(state, std::move(b).build());
    if (!p) return;
    std::vector<std::byte> arena(p->arena_bytes());
    ember::session s(*p, arena);
    std::array<float, 32> x = first_input();
    std::array<float, 8> y{};
    if (s.bind_input(0, x) != ember::status::ok || s.bind_output(0, y) != ember::status::ok)
        return state.SkipWithError("bind failed");
    if (s.run() != ember::status::ok || !agrees(state, y.data())) return;
    state.SetLabel(std::string(p->isa()));
    for (auto _ : state) {
        x[0] = -x[0];
        benchmark::DoNotOptimize(s.run());
        benchmark::ClobberMemory();
    }
}

void BM_mlp_tiny_eigen_floor(benchmark::State& state) {
    const mlp_weights& m = weights();
    static eigen_mlp net;
    for (std::size_t i = 0; i < 32; ++i)
        for (std::size_t o = 0; o < 64; ++o) net.W1(Eigen::Index(o), Eigen::Index(i)) = m.w[0][i * 64 + o];
    for (std::size_t i = 0; i < 64; ++i)
        for (std::size_t o = 0; o < 64; ++o) net.W2(Eigen::Index(o), Eigen::Index(i)) = m.w[1][i * 64 + o];
    for (std::size_t i = 0; i < 64; ++i)
        for (std::size_t o = 0; o < 8; ++o) net.W3(Eigen::Index(o), Eigen::Index(i)) = m.w[2][i * 8 + o];
    for (std::size_t o = 0; o < 64; ++o) net.b1(Eigen::Index(o)) = m.b[0][o], net.b2(Eigen::Index(o)) = m.b[1][o];
    for (std::size_t o = 0; o < 8; ++o) net.b3(Eigen::Index(o)) = m.b[2][o];
    Eigen::Matrix<float, 32, 1> x;
    const std::array<float, 32> x0 = first_input();
    for (std::size_t i = 0; i < 32; ++i) x(Eigen::Index(i)) = x0[i];
    Eigen::Matrix<float, 8, 1> y;
    net.run(x, y);
    if (!agrees(state, y.data())) return;
    for (auto _ : state) {
        x(0) = -x(0);
        net.run(x, y);
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
}

} // namespace

BENCHMARK(BM_mlp_tiny_static);
BENCHMARK(BM_mlp_tiny_plan);
BENCHMARK(BM_mlp_tiny_eigen_floor);

BENCHMARK_MAIN();
