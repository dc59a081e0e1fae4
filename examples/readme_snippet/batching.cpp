// SPDX-License-Identifier: Apache-2.0
// The README's ember::batcher snippets, verbatim (the readme.snippets test keeps them the same),
// and a main() that runs them from 12 threads on the bundled model and checks every answer
// against a session of the batch-1 plan run alone.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>
#include <ember/runtime/batcher.hpp>

#ifndef EMBER_BUNDLED_MODEL_DIR
#error "EMBER_BUNDLED_MODEL_DIR must name models/fashion_mnist"
#endif

// Once, at load time: requests from any number of threads are gathered into batches of up to 16
// (a request waits at most 2 ms for company) and run on the pool. The model's first axis is the
// batch; one exported at batch 1 is fine.
std::unique_ptr<ember::batcher> make_batcher(const ember::graph& model, const ember::executor* pool) {
    ember::batcher_options options;
    options.max_batch = 16;
    options.max_delay = std::chrono::microseconds(2000);
    options.shed_after = std::chrono::milliseconds(50);  // refuse at once when the queue is this late
    options.exec = pool;
    ember::result<std::unique_ptr<ember::batcher>> made = ember::batcher::create(model, {}, options);
    if (!made) std::fprintf(stderr, "%s\n", made.error().message.c_str());
    return made ? std::move(*made) : nullptr;
}

// On any thread, per request: blocks until its batch has run. busy means shed: answer 503.
ember::status classify(ember::batcher& batcher, const float* picture, float* scores) {
    const void* inputs[] = {picture};
    void* outputs[] = {scores};
    return batcher.run(inputs, outputs);
}

int main() {
    auto fail = [](const char* what) {
        std::fprintf(stderr, "readme batching: %s\n", what);
        return 1;
    };
    ember::result<ember::graph> model = ember::onnx::load_file(std::string(EMBER_BUNDLED_MODEL_DIR) + "/model.onnx");
    if (!model) return fail(model.error().message.c_str());
    ember::thread_pool pool(2);
    pool.start();
    const ember::executor exec = pool.as_executor();
    std::unique_ptr<ember::batcher> batcher = make_batcher(*model, &exec);
    if (!batcher) return fail("make_batcher");

    // The oracle: the batch-1 plan, one session, one picture at a time.
    const ember::plan& single = batcher->smallest_plan();
    const std::size_t pixels = single.input(0).bytes / sizeof(float), classes = single.output(0).bytes / sizeof(float);
    constexpr int threads = 12, per_thread = 10;
    std::vector<float> pictures(threads * per_thread * pixels), expected(threads * per_thread * classes);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(0.0f, 1.0f);
    for (float& x : pictures) x = dist(rng);
    ember::session alone(single);
    for (int k = 0; k < threads * per_thread; ++k) {
        if (alone.bind_input(0, &pictures[k * pixels], pixels * sizeof(float)) != ember::status::ok ||
            alone.bind_output(0, &expected[k * classes], classes * sizeof(float)) != ember::status::ok || alone.run() != ember::status::ok)
            return fail("the batch-1 session");
    }

    std::atomic<int> wrong{0};
    std::vector<std::thread> clients;
    for (int t = 0; t < threads; ++t)
        clients.emplace_back([&, t] {
            std::vector<float> scores(classes);
            for (int i = 0; i < per_thread; ++i) {
                const int k = t * per_thread + i;
                if (classify(*batcher, &pictures[k * pixels], scores.data()) != ember::status::ok ||
                    std::memcmp(scores.data(), &expected[k * classes], classes * sizeof(float)) != 0)
                    ++wrong;
            }
        });
    for (std::thread& c : clients) c.join();
    const ember::batcher_stats stats = batcher->stats();
    if (wrong != 0) return fail("an answer differs from the batch-1 session's");
    if (stats.requests != threads * per_thread || stats.batches >= stats.requests) return fail("no request was batched with another");
    std::printf("readme batching: ok (%llu requests in %llu batches)\n", static_cast<unsigned long long>(stats.requests),
                static_cast<unsigned long long>(stats.batches));
    return 0;
}
