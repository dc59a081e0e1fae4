// SPDX-License-Identifier: Apache-2.0
// BM_conv_f32/<layer>: one Conv node (constant weights and bias, "same" padding) through
// graph_builder + compile + session, single-threaded (no executor, max_threads 1), on the conv
// shapes that dominate ResNet-50 and MobileNetV2. Counter GFLOP/s counts 2 * MACs; the label is
// the ISA the plan's kernels use (plan::isa(); EMBER_ISA=avx2 etc. to force one).
//
//     build/gcc/bench/conv_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ember/ember.hpp>

#include "bench_support.hpp"

namespace {
using ember::bench::random_tensor;

struct conv_shape {
    std::int64_t n, c, h, w;  // input NCHW
    std::int64_t m, k;        // output channels, square kernel
    std::int64_t stride = 1, group = 1;
};

void BM_conv_f32(benchmark::State& state, conv_shape cs) {
    const std::int64_t pad = cs.k / 2;
    const std::int64_t oh = (cs.h + 2 * pad - cs.k) / cs.stride + 1, ow = (cs.w + 2 * pad - cs.k) / cs.stride + 1;
    ember::graph_builder b("conv");
    const auto x = b.input("x", ember::dtype::float32, {cs.n, cs.c, cs.h, cs.w});
    const auto w = b.constant("w", random_tensor({cs.m, cs.c / cs.group, cs.k, cs.k}, 1));
    const auto bias = b.constant("b", random_tensor({cs.m}, 2));
    const std::vector<ember::attribute> attrs{
        ember::attribute::of("kernel_shape", std::vector<std::int64_t>{cs.k, cs.k}),
        ember::attribute::of("strides", std::vector<std::int64_t>{cs.stride, cs.stride}),
        ember::attribute::of("pads", std::vector<std::int64_t>{pad, pad, pad, pad}),
        ember::attribute::of("group", cs.group)};
    b.output(b.node("Conv", {x, w, bias}, attrs), "y");
    std::optional<ember::plan> p = ember::bench::compile_single_thread(state, std::move(b).build());
    if (!p) return;
    ember::session s(*p);
    const ember::tensor x_value = random_tensor({cs.n, cs.c, cs.h, cs.w}, 3);
    if (!ember::bench::bind_first_input(state, s, x_value)) return;
    for (auto _ : state) benchmark::DoNotOptimize(s.run());
    const double macs = double(cs.n * cs.m * oh * ow) * double(cs.c / cs.group * cs.k * cs.k);
    state.counters["GFLOP/s"] = benchmark::Counter(2e-9 * macs, benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(std::string(p->isa()));
}
} // namespace

// ResNet-50: the stem, then a 3x3 and the 1x1 reduce/expand of stage 2, a 3x3 of stages 3 and 5.
BENCHMARK_CAPTURE(BM_conv_f32, r50_stem_3x224x224_7x7s2_64, conv_shape{1, 3, 224, 224, 64, 7, 2})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, r50_64x56x56_3x3_64, conv_shape{1, 64, 56, 56, 64, 3})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, r50_256x56x56_1x1_64, conv_shape{1, 256, 56, 56, 64, 1})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, r50_64x56x56_1x1_256, conv_shape{1, 64, 56, 56, 256, 1})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, r50_128x28x28_3x3_128, conv_shape{1, 128, 28, 28, 128, 3})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, r50_256x14x14_3x3_256, conv_shape{1, 256, 14, 14, 256, 3})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, r50_512x7x7_3x3_512, conv_shape{1, 512, 7, 7, 512, 3})->Unit(benchmark::kMillisecond);
// MobileNetV2: depthwise 3x3 at four sizes and stride 2, and a 1x1 projection; EfficientNet-B0's
// depthwise 5x5 stride 2.
BENCHMARK_CAPTURE(BM_conv_f32, mv2_dw_32x112x112_3x3, conv_shape{1, 32, 112, 112, 32, 3, 1, 32})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_dw_144x56x56_3x3, conv_shape{1, 144, 56, 56, 144, 3, 1, 144})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_dw_960x7x7_3x3, conv_shape{1, 960, 7, 7, 960, 3, 1, 960})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_dw_96x112x112_3x3s2, conv_shape{1, 96, 112, 112, 96, 3, 2, 96})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_dw_576x14x14_3x3, conv_shape{1, 576, 14, 14, 576, 3, 1, 576})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_96x56x56_1x1_24, conv_shape{1, 96, 56, 56, 24, 1})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, effb0_dw_144x56x56_5x5s2, conv_shape{1, 144, 56, 56, 144, 5, 2, 144})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
