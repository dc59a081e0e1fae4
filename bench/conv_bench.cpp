// SPDX-License-Identifier: Apache-2.0
// BM_conv_f32/<layer>: one Conv node (constant weights and bias, "same" padding) through
// graph_builder + compile + session, single-threaded (no executor, max_threads 1), on the conv
// shapes that dominate ResNet-50 and MobileNetV2; BM_qlinearconv/<layer>: the same as QLinearConv
// (INT8). Counter GFLOP/s (GOP/s) counts 2 * MACs; the label is
// the ISA the plan's kernels use (plan::isa(); EMBER_ISA=avx2 etc. to force one).
//
//     build/gcc/bench/conv_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstddef>
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

// The same layer as QLinearConv (uint8 x and y, int8 weights with per-channel scales, an int32
// bias): the INT8 GEMM, or the INT8 depthwise kernel for the depthwise shapes.
void BM_qlinearconv(benchmark::State& state, conv_shape cs) {
    const std::int64_t pad = cs.k / 2;
    const std::int64_t oh = (cs.h + 2 * pad - cs.k) / cs.stride + 1, ow = (cs.w + 2 * pad - cs.k) / cs.stride + 1;
    const auto bytes = [](const ember::shape& dims, unsigned seed, bool is_signed) {
        ember::tensor f = random_tensor(dims, seed);  // values in [-1, 1)
        ember::tensor t = *ember::tensor::create(is_signed ? ember::dtype::int8 : ember::dtype::uint8, dims);
        for (std::size_t i = 0; i < f.size(); ++i) {
            const int v = static_cast<int>(f.data<float>()[i] * 127.0f);
            if (is_signed) t.data<std::int8_t>()[i] = static_cast<std::int8_t>(v);
            else t.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v + 128);
        }
        return t;
    };
    const auto scalar_f32 = [](float v) {
        ember::tensor t = *ember::tensor::create(ember::dtype::float32, ember::shape{});
        t.data<float>()[0] = v;
        return t;
    };
    const auto zero_point = [](ember::dtype type, std::int64_t n, int v) {
        ember::tensor t = *ember::tensor::create(type, n == 0 ? ember::shape{} : ember::shape{n});
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (type == ember::dtype::int8) t.data<std::int8_t>()[i] = static_cast<std::int8_t>(v);
            else t.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v);
        }
        return t;
    };
    ember::tensor w_scale = *ember::tensor::create(ember::dtype::float32, ember::shape{cs.m});
    ember::tensor bias = *ember::tensor::create(ember::dtype::int32, ember::shape{cs.m});
    for (std::int64_t m = 0; m < cs.m; ++m) {
        w_scale.data<float>()[m] = 0.002f + 0.0001f * static_cast<float>(m % 7);
        bias.data<std::int32_t>()[m] = static_cast<std::int32_t>(m * 37 % 2000) - 1000;
    }
    ember::graph_builder b("qconv");
    const auto x = b.input("x", ember::dtype::uint8, {cs.n, cs.c, cs.h, cs.w});
    const std::vector<ember::value_id> in{x,
                                          b.constant("xs", scalar_f32(0.02f)),
                                          b.constant("xz", zero_point(ember::dtype::uint8, 0, 120)),
                                          b.constant("w", bytes({cs.m, cs.c / cs.group, cs.k, cs.k}, 1, true)),
                                          b.constant("ws", std::move(w_scale)),
                                          b.constant("wz", zero_point(ember::dtype::int8, cs.m, 0)),
                                          b.constant("ys", scalar_f32(0.05f)),
                                          b.constant("yz", zero_point(ember::dtype::uint8, 0, 110)),
                                          b.constant("b", std::move(bias))};
    const std::vector<ember::attribute> attrs{
        ember::attribute::of("kernel_shape", std::vector<std::int64_t>{cs.k, cs.k}),
        ember::attribute::of("strides", std::vector<std::int64_t>{cs.stride, cs.stride}),
        ember::attribute::of("pads", std::vector<std::int64_t>{pad, pad, pad, pad}),
        ember::attribute::of("group", cs.group)};
    b.output(b.node("QLinearConv", in, attrs), "y");
    std::optional<ember::plan> p = ember::bench::compile_single_thread(state, std::move(b).build());
    if (!p) return;
    ember::session s(*p);
    const ember::tensor x_value = bytes({cs.n, cs.c, cs.h, cs.w}, 3, false);
    if (!ember::bench::bind_first_input(state, s, x_value)) return;
    for (auto _ : state) benchmark::DoNotOptimize(s.run());
    const double macs = double(cs.n * cs.m * oh * ow) * double(cs.c / cs.group * cs.k * cs.k);
    state.counters["GOP/s"] = benchmark::Counter(2e-9 * macs, benchmark::Counter::kIsIterationInvariantRate);
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
// narrow outputs (14x14, 7x7): the GEMM runs transposed (channels across the vector lanes)
BENCHMARK_CAPTURE(BM_conv_f32, r50_1024x14x14_1x1_256, conv_shape{1, 1024, 14, 14, 256, 1})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, r50_512x7x7_1x1_2048, conv_shape{1, 512, 7, 7, 2048, 1})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, r50_2048x7x7_1x1_512, conv_shape{1, 2048, 7, 7, 512, 1})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_320x7x7_1x1_1280, conv_shape{1, 320, 7, 7, 1280, 1})->Unit(benchmark::kMillisecond);
// MobileNetV2: depthwise 3x3 at four sizes and stride 2, and a 1x1 projection; EfficientNet-B0's
// depthwise 5x5 stride 2.
BENCHMARK_CAPTURE(BM_conv_f32, mv2_dw_32x112x112_3x3, conv_shape{1, 32, 112, 112, 32, 3, 1, 32})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_dw_144x56x56_3x3, conv_shape{1, 144, 56, 56, 144, 3, 1, 144})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_dw_960x7x7_3x3, conv_shape{1, 960, 7, 7, 960, 3, 1, 960})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_dw_96x112x112_3x3s2, conv_shape{1, 96, 112, 112, 96, 3, 2, 96})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_dw_576x14x14_3x3, conv_shape{1, 576, 14, 14, 576, 3, 1, 576})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, mv2_96x56x56_1x1_24, conv_shape{1, 96, 56, 56, 24, 1})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv_f32, effb0_dw_144x56x56_5x5s2, conv_shape{1, 144, 56, 56, 144, 5, 2, 144})->Unit(benchmark::kMillisecond);

// INT8 (QLinearConv): MobileNetV2's depthwise layers as above, a ResNet-50 3x3 and a 1x1.
BENCHMARK_CAPTURE(BM_qlinearconv, mv2_dw_32x112x112_3x3, conv_shape{1, 32, 112, 112, 32, 3, 1, 32})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_qlinearconv, mv2_dw_144x56x56_3x3, conv_shape{1, 144, 56, 56, 144, 3, 1, 144})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_qlinearconv, mv2_dw_960x7x7_3x3, conv_shape{1, 960, 7, 7, 960, 3, 1, 960})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_qlinearconv, mv2_dw_96x112x112_3x3s2, conv_shape{1, 96, 112, 112, 96, 3, 2, 96})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_qlinearconv, mv2_dw_576x14x14_3x3, conv_shape{1, 576, 14, 14, 576, 3, 1, 576})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_qlinearconv, r50_64x56x56_3x3_64, conv_shape{1, 64, 56, 56, 64, 3})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_qlinearconv, r50_256x56x56_1x1_64, conv_shape{1, 256, 56, 56, 64, 1})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
