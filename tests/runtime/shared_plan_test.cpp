// SPDX-License-Identifier: Apache-2.0
// One plan, many sessions, many threads: the bundled CNN's plan shared by eight threads at once,
// half of them on one shared thread_pool, each with inputs of its own, gives every thread the
// bits a lone session gives.
#include <doctest/doctest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>

using ember::status;

TEST_CASE("shared plan: eight threads, own sessions, some on one shared pool, the same bits as alone") {
    ember::result<ember::graph> g = ember::onnx::load_file(std::string(EMBER_SOURCE_DIR) + "/models/fashion_mnist/model.onnx");
    REQUIRE_MESSAGE(g, g.error().message);
    ember::compile_options o;
    for (ember::value_id v : g->inputs) {  // batch 1: every unknown dimension 1
        ember::shape dims;
        for (const ember::dim& d : g->values[v].declared.dims) dims.push_back(d.known() ? d.value : 1);
        o.input_shapes.push_back({g->values[v].name, dims});
    }
    o.max_threads = 2;
    ember::result<ember::plan> p = ember::compile(*g, o);
    REQUIRE_MESSAGE(p, p.error().message);
    REQUIRE(p->input_count() == 1);
    const std::size_t in_n = p->input(0).bytes / sizeof(float), out_n = p->output(0).bytes / sizeof(float);

    constexpr int threads = 8, runs = 25;
    std::vector<float> inputs(static_cast<std::size_t>(threads * runs) * in_n), expected(static_cast<std::size_t>(threads * runs) * out_n);
    std::mt19937 rng(31);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& x : inputs) x = dist(rng);
    {
        ember::session alone(*p);
        for (int k = 0; k < threads * runs; ++k) {
            REQUIRE(alone.bind_input(0, &inputs[k * in_n], in_n * sizeof(float)) == status::ok);
            REQUIRE(alone.bind_output(0, &expected[k * out_n], out_n * sizeof(float)) == status::ok);
            REQUIRE(alone.run() == status::ok);
        }
    }

    ember::thread_pool pool(2);
    const ember::executor exec = pool.as_executor();
    std::atomic<int> wrong{0}, failed{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            ember::session s(*p, t % 2 ? &exec : nullptr);  // odd threads share the pool: it is often busy with another's op
            std::vector<float> y(out_n);
            if (s.bind_output(0, y) != status::ok) ++failed;
            for (int r = 0; r < runs; ++r) {
                const int k = t * runs + r;
                if (s.bind_input(0, &inputs[k * in_n], in_n * sizeof(float)) != status::ok || s.run() != status::ok) {
                    ++failed;
                    continue;
                }
                if (y != std::vector<float>(expected.begin() + k * out_n, expected.begin() + (k + 1) * out_n)) ++wrong;
            }
        });
    for (std::thread& w : workers) w.join();
    CHECK(failed == 0);
    CHECK(wrong == 0);
}
