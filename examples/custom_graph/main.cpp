// SPDX-License-Identifier: Apache-2.0
// custom_graph: builds a tiny CNN in C++ with ember::graph_builder, compiles it, runs it on a
// thread pool over a caller-owned arena, and checks the result against plain loops written out
// below. Prints "custom_graph: ok" when the numbers agree; exits 1 with a line on stderr when not.
//
//     image [1, 1, 8, 8] -> Conv 3x3, 4 filters, pad 1 -> Relu -> MaxPool 2x2 -> Flatten
//                        -> Gemm [64 x 10] -> Softmax -> probs [1, 10]
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <ember/ember.hpp>

namespace {

constexpr int side = 8;        // input image is side x side, one channel
constexpr int filters = 4;     // conv output channels
constexpr int pooled = side / 2;
constexpr int features = filters * pooled * pooled;  // 64
constexpr int classes = 10;

int fail(const char* what, const ember::error_info& e) {
    std::fprintf(stderr, "custom_graph: %s: %s (%s)\n", what, e.message.c_str(), std::string(ember::to_string(e.code)).c_str());
    return 1;
}
int fail(const char* what) {
    std::fprintf(stderr, "custom_graph: %s\n", what);
    return 1;
}

// Deterministic "trained" weights: a fixed formula, so the example needs no files.
std::vector<float> fill(std::size_t n, float scale, float phase) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * static_cast<float>(i) + phase);
    return v;
}

struct weights {
    std::vector<float> conv_w = fill(filters * 1 * 3 * 3, 0.5f, 0.1f);  // [4, 1, 3, 3]
    std::vector<float> conv_b = fill(filters, 0.1f, 1.0f);              // [4]
    std::vector<float> fc_w = fill(features * classes, 0.2f, 0.3f);     // [64, 10]
    std::vector<float> fc_b = fill(classes, 0.05f, 2.0f);               // [10]
};

// The same network as plain loops: what the compiled plan must reproduce.
std::vector<float> expected_probs(const weights& w, const std::vector<float>& image) {
    std::vector<float> conv(filters * side * side);
    for (int m = 0; m < filters; ++m)
        for (int y = 0; y < side; ++y)
            for (int x = 0; x < side; ++x) {
                float acc = w.conv_b[m];
                for (int ky = 0; ky < 3; ++ky)
                    for (int kx = 0; kx < 3; ++kx) {
                        const int iy = y + ky - 1, ix = x + kx - 1;  // pad 1: outside reads zero
                        if (iy >= 0 && iy < side && ix >= 0 && ix < side)
                            acc += image[iy * side + ix] * w.conv_w[(m * 3 + ky) * 3 + kx];
                    }
                conv[(m * side + y) * side + x] = std::max(acc, 0.0f);  // Relu
            }
    std::vector<float> flat(features);  // MaxPool 2x2 stride 2, then Flatten (NCHW order)
    for (int m = 0; m < filters; ++m)
        for (int y = 0; y < pooled; ++y)
            for (int x = 0; x < pooled; ++x) {
                float best = conv[(m * side + 2 * y) * side + 2 * x];
                for (int dy = 0; dy < 2; ++dy)
                    for (int dx = 0; dx < 2; ++dx) best = std::max(best, conv[(m * side + 2 * y + dy) * side + 2 * x + dx]);
                flat[(m * pooled + y) * pooled + x] = best;
            }
    std::vector<float> logits(classes);
    for (int j = 0; j < classes; ++j) {
        float acc = w.fc_b[j];
        for (int k = 0; k < features; ++k) acc += flat[k] * w.fc_w[k * classes + j];
        logits[j] = acc;
    }
    const float top = *std::max_element(logits.begin(), logits.end());
    float sum = 0.0f;
    for (float& l : logits) sum += (l = std::exp(l - top));
    for (float& l : logits) l /= sum;
    return logits;
}

ember::result<ember::graph> build_cnn(const weights& w) {
    using ember::attribute;
    using ints = std::vector<std::int64_t>;

    ember::graph_builder b("tiny_cnn");
    const ember::value_id image = b.input("image", ember::dtype::float32, {1, 1, side, side});
    const ember::value_id conv_w = b.constant<float>("conv.w", {filters, 1, 3, 3}, w.conv_w);
    const ember::value_id conv_b = b.constant<float>("conv.b", {filters}, w.conv_b);
    const ember::value_id fc_w = b.constant<float>("fc.w", {features, classes}, w.fc_w);
    const ember::value_id fc_b = b.constant<float>("fc.b", {classes}, w.fc_b);

    ember::value_id v = b.node("Conv", {image, conv_w, conv_b}, {attribute::of("pads", ints{1, 1, 1, 1})}, "conv");
    v = b.node("Relu", {v}, {}, "relu");
    v = b.node("MaxPool", {v}, {attribute::of("kernel_shape", ints{2, 2}), attribute::of("strides", ints{2, 2})}, "pool");
    v = b.node("Flatten", {v}, {}, "flatten");
    v = b.node("Gemm", {v, fc_w, fc_b}, {}, "fc");
    v = b.node("Softmax", {v}, {attribute::of("axis", 1)}, "softmax");
    b.output(v, "probs");
    return std::move(b).build();
}

} // namespace

int main() {
    const weights w;
    ember::result<ember::graph> graph = build_cnn(w);
    if (!graph) return fail("build", graph.error());

    // Load time: compile once. The plan is immutable and could serve many sessions and threads.
    ember::result<ember::plan> plan = ember::compile(*graph);
    if (!plan) return fail("compile", plan.error());

    // The caller owns the arena; the session only borrows it. Two threads in all: this one and
    // one worker, started now so that run() allocates nothing.
    std::vector<std::byte> arena(plan->arena_bytes());
    ember::thread_pool pool(2);
    pool.start();
    const ember::executor exec = pool.as_executor();
    ember::session session(*plan, arena, &exec);
    if (session.state() != ember::status::ok) return fail("session: arena too small or misaligned");

    std::vector<float> image(side * side);
    for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) image[y * side + x] = static_cast<float>((3 * x + 5 * y) % 7) / 7.0f - 0.3f;
    if (session.bind_input("image", image) != ember::status::ok) return fail("bind_input: wrong size or type");

    // Per frame: only this. The output was not bound, so it lives in the arena.
    if (session.run() != ember::status::ok) return fail("run");
    const ember::tensor_view<const float> probs = session.output<float>(0);
    if (probs.size() != classes) return fail("output has the wrong size");

    std::printf("steps (%zu):\n", plan->steps().size());
    for (std::size_t i = 0; i < plan->steps().size(); ++i)
        std::printf("  %zu  %-8s %s\n", i, std::string(plan->step_op(i)).c_str(), std::string(plan->step_name(i)).c_str());
    std::printf("arena_bytes:   %zu\n", plan->arena_bytes());
    std::printf("weights_bytes: %zu\n", plan->weights_bytes());
    std::printf("probs:");
    for (float p : probs) std::printf(" %.6f", static_cast<double>(p));
    std::printf("\n");
    const auto top = static_cast<std::size_t>(std::max_element(probs.begin(), probs.end()) - probs.begin());
    std::printf("top class:     %zu (p = %.6f)\n", top, static_cast<double>(probs[top]));

    const std::vector<float> expected = expected_probs(w, image);
    for (int j = 0; j < classes; ++j)
        if (std::fabs(probs[j] - expected[j]) > 1e-5f + 1e-4f * expected[j]) {
            std::fprintf(stderr, "custom_graph: probs[%d] = %.7f, the plain loops give %.7f\n", j, static_cast<double>(probs[j]),
                         static_cast<double>(expected[j]));
            return 1;
        }
    std::printf("custom_graph: ok\n");
    return 0;
}
