// SPDX-License-Identifier: Apache-2.0
// batching_bench: throughput and latency of many client threads asking for inferences at once,
// served three ways over the same model:
//   one-at-a-time  an ember::batcher with max_batch 1: requests queue and run one by one, each
//                  on the whole thread pool (what a server without batching does)
//   batched        an ember::batcher with max_batch B: queued requests run together as one batch
//                  on the same pool
//   batched xN     the same with N instances (N = the pool's threads), each single-threaded:
//                  N batches side by side, no pool
//   instances xN   N single-threaded instances with max_batch 1: N requests side by side
//   own-session    no queue: every client thread runs its own session of one plan on its own
//                  thread (as many runs at once as clients, each single-threaded)
// at each concurrency (client threads). Prints one line per (concurrency, mode): requests/s,
// latency p50/p90/p99 in ms and the mean batch size, the median of --rounds interleaved rounds.
//
//   batching_bench [--model M.onnx] [--threads N] [--spin US] [--max-batch B] [--max-delay-us U]
//                  [--concurrency 1,4,16,64] [--seconds S] [--rounds R]
//
// The pool's threads spin --spin microseconds before parking (default 200, as ember-run and
// ember-serve: without it every op of a batch-1 run pays a futex wake-up).
//
// The model defaults to the anchor zoo's mobilenet_v2 (../shared/anchors/setup.sh); its first
// axis must be the batch. Its own main (not Google Benchmark's): the figures are per request
// across threads, which Benchmark's per-iteration timing does not give.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>
#include <ember/runtime/batcher.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

struct settings {
    std::string model;
    std::size_t threads = 0;  // the pool: 0 = one per hardware thread
    std::size_t spin_us = 200;
    std::size_t max_batch = 16;
    std::size_t max_delay_us = 2000;
    std::vector<std::size_t> concurrency{1, 4, 16, 64};
    double seconds = 3.0;
    std::size_t rounds = 3;
};

[[noreturn]] void die(const std::string& why) {
    std::fprintf(stderr, "batching_bench: %s\n", why.c_str());
    std::exit(1);
}

std::size_t number(const char* flag, const char* text) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (!end || *end != '\0' || end == text) die(std::string(flag) + ": expected a whole number, got '" + text + "'");
    return static_cast<std::size_t>(v);
}

settings parse(int argc, char** argv) {
    settings s;
    if (const char* home = std::getenv("HOME")) s.model = std::string(home) + "/.cache/ember-anchors/models/mobilenet_v2.onnx";
    if (const char* zoo = std::getenv("EMBER_ANCHORS")) s.model = std::string(zoo) + "/models/mobilenet_v2.onnx";
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) die(flag + ": needs a value");
        const char* value = argv[++i];
        if (flag == "--model") s.model = value;
        else if (flag == "--threads") s.threads = number("--threads", value);
        else if (flag == "--spin") s.spin_us = number("--spin", value);
        else if (flag == "--max-batch") s.max_batch = number("--max-batch", value);
        else if (flag == "--max-delay-us") s.max_delay_us = number("--max-delay-us", value);
        else if (flag == "--seconds") s.seconds = static_cast<double>(number("--seconds", value));
        else if (flag == "--rounds") s.rounds = number("--rounds", value);
        else if (flag == "--concurrency") {
            s.concurrency.clear();
            std::string list = value;
            for (std::size_t at = 0; at <= list.size();) {
                const std::size_t comma = std::min(list.find(',', at), list.size());
                s.concurrency.push_back(number("--concurrency", list.substr(at, comma - at).c_str()));
                at = comma + 1;
            }
        } else die(flag + ": unknown flag");
    }
    if (s.max_batch == 0 || s.rounds == 0 || s.seconds <= 0) die("--max-batch, --rounds and --seconds must be positive");
    return s;
}

struct measurement {
    double per_second = 0, p50 = 0, p90 = 0, p99 = 0, mean_batch = 1;
};

double percentile(std::vector<double>& ms, double p) {
    if (ms.empty()) return 0;
    const std::size_t k = std::min(ms.size() - 1, static_cast<std::size_t>(p * static_cast<double>(ms.size())));
    std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(k), ms.end());
    return ms[k];
}

/// Runs `clients` threads, each calling request(client) in a loop for `seconds`; every call's
/// latency is kept (reserved up front).
template <class Request>
measurement drive(std::size_t clients, double seconds, Request&& request) {
    std::vector<std::vector<double>> latencies(clients);
    for (std::vector<double>& l : latencies) l.reserve(1 << 16);
    std::atomic<bool> go{false}, failed{false};
    const auto length = std::chrono::duration<double>(seconds);
    clock_type::time_point start, stop;
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < clients; ++c)
        threads.emplace_back([&, c] {
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            for (;;) {
                const clock_type::time_point t0 = clock_type::now();
                if (t0 - start >= length) break;
                if (!request(c)) failed = true;
                latencies[c].push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
            }
        });
    start = clock_type::now();
    go.store(true, std::memory_order_release);
    for (std::thread& t : threads) t.join();
    stop = clock_type::now();
    if (failed) die("a request failed");
    std::vector<double> all;
    for (const std::vector<double>& l : latencies) all.insert(all.end(), l.begin(), l.end());
    measurement m;
    m.per_second = static_cast<double>(all.size()) / std::chrono::duration<double>(stop - start).count();
    m.p50 = percentile(all, 0.50);
    m.p90 = percentile(all, 0.90);
    m.p99 = percentile(all, 0.99);
    return m;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    const settings s = parse(argc, argv);
    ember::result<ember::graph> g = ember::onnx::load_file(s.model);
    if (!g) die("model '" + s.model + "': " + g.error().message);

    ember::thread_pool pool(s.threads, std::chrono::microseconds(static_cast<std::int64_t>(s.spin_us)));
    pool.start();
    const ember::executor exec = pool.as_executor();

    ember::batcher_options one;
    one.max_batch = 1;
    one.max_delay = std::chrono::microseconds(0);
    one.max_queue = 4096;
    one.exec = &exec;
    ember::batcher_options many = one;
    many.max_batch = s.max_batch;
    many.max_delay = std::chrono::microseconds(s.max_delay_us);
    auto serial = ember::batcher::create(*g, {}, one);
    if (!serial) die(serial.error().message);
    auto batched = ember::batcher::create(*g, {}, many);
    if (!batched) die(batched.error().message);
    ember::batcher_options side_by_side = many;
    side_by_side.instances = pool.threads();
    side_by_side.exec = nullptr;
    auto instanced = ember::batcher::create(*g, {}, side_by_side);
    if (!instanced) die(instanced.error().message);
    ember::batcher_options singles = side_by_side;
    singles.max_batch = 1;
    singles.max_delay = std::chrono::microseconds(0);
    auto parallel = ember::batcher::create(*g, {}, singles);
    if (!parallel) die(parallel.error().message);
    // own-session: the batch-1 plan compiled for one thread, one session per client.
    ember::compile_options single;
    single.max_threads = 1;
    for (std::size_t i = 0; i < (*serial)->smallest_plan().input_count(); ++i)
        single.input_shapes.push_back({(*serial)->smallest_plan().input(i).name, (*serial)->smallest_plan().input(i).dims});
    ember::result<ember::plan> alone = ember::compile(*g, single);
    if (!alone) die(alone.error().message);

    const ember::plan& item = (*serial)->smallest_plan();
    const std::size_t max_clients = *std::max_element(s.concurrency.begin(), s.concurrency.end());
    // Per client: its input (random, seeded) and output buffers, and a session for own-session.
    std::vector<std::vector<std::vector<float>>> inputs(max_clients), outputs(max_clients);
    std::vector<std::unique_ptr<ember::session>> sessions;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (std::size_t c = 0; c < max_clients; ++c) {
        for (std::size_t i = 0; i < item.input_count(); ++i) {
            if (item.input(i).type != ember::dtype::float32) die("input '" + item.input(i).name + "' is not float32");
            inputs[c].emplace_back(item.input(i).bytes / sizeof(float));
            for (float& x : inputs[c].back()) x = dist(rng);
        }
        for (std::size_t i = 0; i < item.output_count(); ++i) outputs[c].emplace_back((item.output(i).bytes + 3) / 4);
        sessions.push_back(std::make_unique<ember::session>(*alone));
        for (std::size_t i = 0; i < item.input_count(); ++i)
            if (sessions.back()->bind_input(i, inputs[c][i].data(), item.input(i).bytes) != ember::status::ok) die("bind_input failed");
        for (std::size_t i = 0; i < item.output_count(); ++i)
            if (sessions.back()->bind_output(i, outputs[c][i].data(), item.output(i).bytes) != ember::status::ok) die("bind_output failed");
    }
    auto through = [&](ember::batcher& b) {
        return [&](std::size_t c) {
            const void* in[8];
            void* out[8];
            for (std::size_t i = 0; i < inputs[c].size() && i < 8; ++i) in[i] = inputs[c][i].data();
            for (std::size_t i = 0; i < outputs[c].size() && i < 8; ++i) out[i] = outputs[c][i].data();
            return b.run(ember::span<const void* const>(in, inputs[c].size()), ember::span<void* const>(out, outputs[c].size())) ==
                   ember::status::ok;
        };
    };

    std::printf("model %s, pool of %zu threads (spin %zu us), max batch %zu, max delay %zu us, %zu rounds of %.0f s, medians\n",
                s.model.c_str(), pool.threads(), s.spin_us, s.max_batch, s.max_delay_us, s.rounds, s.seconds);
    std::printf("%-12s %-14s %10s %9s %9s %9s %10s\n", "concurrency", "mode", "req/s", "p50 ms", "p90 ms", "p99 ms", "mean batch");
    const std::string modes[] = {"one-at-a-time", "batched", "batched x" + std::to_string(pool.threads()),
                                 "instances x" + std::to_string(pool.threads()), "own-session"};
    constexpr int mode_count = 5;
    for (std::size_t clients : s.concurrency) {
        std::vector<measurement> rounds[mode_count];
        for (std::size_t r = 0; r < s.rounds; ++r)
            for (int mode = 0; mode < mode_count; ++mode) {
                if (mode == 4) {
                    rounds[mode].push_back(drive(clients, s.seconds, [&](std::size_t c) { return sessions[c]->run() == ember::status::ok; }));
                    continue;
                }
                ember::batcher& b = mode == 0 ? **serial : mode == 1 ? **batched : mode == 2 ? **instanced : **parallel;
                const ember::batcher_stats before = b.stats();
                rounds[mode].push_back(drive(clients, s.seconds, through(b)));
                const ember::batcher_stats after = b.stats();
                rounds[mode].back().mean_batch =
                    static_cast<double>(after.items - before.items) / static_cast<double>(std::max<std::uint64_t>(1, after.batches - before.batches));
            }
        for (int mode = 0; mode < mode_count; ++mode) {
            auto pick = [&](double measurement::*field) {
                std::vector<double> v;
                for (const measurement& m : rounds[mode]) v.push_back(m.*field);
                return median(v);
            };
            std::printf("%-12zu %-14s %10.1f %9.2f %9.2f %9.2f %10.2f\n", clients, modes[mode].c_str(), pick(&measurement::per_second),
                        pick(&measurement::p50), pick(&measurement::p90), pick(&measurement::p99), pick(&measurement::mean_batch));
        }
        std::fflush(stdout);
    }
    return 0;
}
