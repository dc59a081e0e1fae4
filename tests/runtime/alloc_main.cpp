// SPDX-License-Identifier: Apache-2.0
// ember_alloc_test: once a plan is compiled and a session created, session::run() and run_for()
// make no heap allocation, take no lock and throw nothing, on any thread of the process: on one
// thread, over a lock-free job system of the test's own (a spinning worker) and over a started
// thread_pool (whose workers park on a futex, not on a mutex). Checked for small graphs of the
// main op families (built with graph_builder), for every model of the anchor zoo that is present
// (skipped, with the reason, when the zoo is absent) and, on one thread, for every ONNX
// conformance model (libonnx-testdata) that compiles. tests/support/alloc_hooks.hpp replaces malloc, operator new,
// the mutex and condition-variable calls and the exception allocator for the whole process,
// which is why this is an executable of its own and not part of ember_tests.
//
// Also checked: plan::arena_bytes() is known before the first run (the session runs over a
// caller-owned arena of exactly that size, and the guard bytes after it are never written),
// run_for()'s outputs are run()'s, bit for bit, and a run() and a run_for() walk with a
// trace_recorder hooked in (session::set_profile_hook) allocate, lock and throw nothing either
// and record every step. And ember::batcher::run() from four threads allocates and throws
// nothing (it locks its queue, by contract).
//
// Prints one line per case; exit code 0 when every case passes, 1 otherwise.
#include "support/alloc_hooks.hpp"  // defines malloc & co.: include it in this one file only

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <ember/ember.hpp>
#include <ember/runtime/batcher.hpp>

#include "support/onnx_cases.hpp"
#include "support/zoo.hpp"

using ember::attribute;
using ember::dtype;
using ember::run_budget;
using ember::status;
using ember::value_id;

namespace {

int failures = 0;

void fail(const std::string& name, const std::string& why) {
    std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
    ++failures;
}

ember::tensor random_f32(const ember::shape& dims, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(dims.elements()));
    for (float& x : v) x = dist(rng);
    ember::result<ember::tensor> t = ember::tensor::copy_of<float>(dims, ember::span<const float>(v.data(), v.size()));
    return t ? std::move(*t) : ember::tensor();
}

std::vector<std::int64_t> ints(std::initializer_list<std::int64_t> v) { return v; }

// The small graphs: one per family of kernels and steps (GEMM and epilogues, convolution with
// pooling, attention with normalization, shape ops, runtime indexing, elementwise math).
struct small_graph {
    const char* name;
    ember::result<ember::graph> g;
};

ember::result<ember::graph> mlp() {
    ember::graph_builder b("mlp");
    const value_id x = b.input("x", dtype::float32, {2, 16});
    value_id h = b.node("Gemm", {x, b.constant("w1", random_f32({16, 32}, 1)), b.constant("b1", random_f32({32}, 2))});
    h = b.node("Relu", {h});
    h = b.node("Gemm", {h, b.constant("w2", random_f32({32, 8}, 3))}, {attribute::of("alpha", 0.5f)});
    h = b.node("Add", {h, b.constant("k", random_f32({1, 8}, 4))});
    h = b.node("Tanh", {b.node("Mul", {h, h})});
    b.output(b.node("Sigmoid", {h}), "y");
    return std::move(b).build();
}

ember::result<ember::graph> convnet() {
    ember::graph_builder b("convnet");
    const value_id x = b.input("x", dtype::float32, {1, 3, 16, 16});
    const std::vector<attribute> same3 = {attribute::of("kernel_shape", ints({3, 3})), attribute::of("pads", ints({1, 1, 1, 1}))};
    value_id h = b.node("Conv", {x, b.constant("w1", random_f32({8, 3, 3, 3}, 5)), b.constant("b1", random_f32({8}, 6))}, same3);
    h = b.node("BatchNormalization", {h, b.constant("scale", random_f32({8}, 7)), b.constant("bias", random_f32({8}, 8)),
                                      b.constant("mean", random_f32({8}, 9)), b.constant<float>("var", {8}, {1, 2, 3, 4, 1, 2, 3, 4})});
    h = b.node("Relu", {h});
    h = b.node("MaxPool", {h}, {attribute::of("kernel_shape", ints({2, 2})), attribute::of("strides", ints({2, 2}))});
    std::vector<attribute> depthwise = same3;
    depthwise.push_back(attribute::of("group", 8));
    h = b.node("Conv", {h, b.constant("dw", random_f32({8, 1, 3, 3}, 10))}, depthwise);
    h = b.node("Clip", {h, b.constant<float>("lo", {}, {0.0f}), b.constant<float>("hi", {}, {6.0f})});
    h = b.node("Conv", {h, b.constant("pw", random_f32({16, 8, 1, 1}, 11))});
    h = b.node("AveragePool", {h}, {attribute::of("kernel_shape", ints({2, 2})), attribute::of("strides", ints({2, 2}))});
    h = b.node("GlobalAveragePool", {h});
    h = b.node("Flatten", {h});
    h = b.node("Gemm", {h, b.constant("fc", random_f32({10, 16}, 12))}, {attribute::of("transB", 1)});
    b.output(b.node("Softmax", {h}, {attribute::of("axis", 1)}), "y");
    return std::move(b).build();
}

ember::result<ember::graph> attention() {
    ember::graph_builder b("attention");
    const value_id x = b.input("x", dtype::float32, {1, 8, 16});
    const value_id q = b.node("MatMul", {x, b.constant("wq", random_f32({16, 16}, 13))});
    const value_id k = b.node("MatMul", {x, b.constant("wk", random_f32({16, 16}, 14))});
    const value_id v = b.node("MatMul", {x, b.constant("wv", random_f32({16, 16}, 15))});
    value_id s = b.node("MatMul", {q, b.node("Transpose", {k}, {attribute::of("perm", ints({0, 2, 1}))})});
    s = b.node("Mul", {s, b.constant<float>("scale", {}, {0.25f})});
    value_id h = b.node("MatMul", {b.node("Softmax", {s}, {attribute::of("axis", -1)}), v});
    h = b.node("Add", {h, x});
    h = b.node("LayerNormalization", {h, b.constant("ln_w", random_f32({16}, 16)), b.constant("ln_b", random_f32({16}, 17))},
               {attribute::of("axis", -1)});
    value_id f = b.node("MatMul", {h, b.constant("w_up", random_f32({16, 32}, 18))});
    f = b.node("Div", {f, b.constant<float>("sqrt2", {}, {1.41421356f})});
    f = b.node("Mul", {f, b.node("Sigmoid", {f})});
    f = b.node("MatMul", {f, b.constant("w_down", random_f32({32, 16}, 19))});
    b.output(b.node("Add", {f, h}), "y");
    return std::move(b).build();
}

ember::result<ember::graph> shapes() {
    ember::graph_builder b("shapes");
    const value_id x = b.input("x", dtype::float32, {2, 3, 4});
    const value_id r = b.node("Reshape", {x, b.constant<std::int64_t>("to", {2}, {6, 4})});
    const value_id t = b.node("Transpose", {r}, {attribute::of("perm", ints({1, 0}))});
    const value_id c = b.node("Concat", {t, b.node("Neg", {t})}, {attribute::of("axis", 0)});
    const value_id s = b.node("Slice", {c, b.constant<std::int64_t>("starts", {2}, {1, 1}), b.constant<std::int64_t>("ends", {2}, {7, 5})});
    const value_id p = b.node("Pad", {s, b.constant<std::int64_t>("pads", {4}, {1, 0, 0, 2})});
    const value_id m = b.node("ReduceMean", {p}, {attribute::of("axes", ints({1})), attribute::of("keepdims", 1)});
    b.output(b.node("Sub", {p, m}), "y");
    b.output(b.node("Unsqueeze", {m, b.constant<std::int64_t>("axes", {1}, {0})}), "mean");
    return std::move(b).build();
}

ember::result<ember::graph> gather() {
    ember::graph_builder b("gather");
    const value_id data = b.constant("table", random_f32({16, 8}, 20));
    const value_id idx = b.input("idx", dtype::int64, {4});
    const value_id rows = b.node("Gather", {data, idx});
    b.output(b.node("Relu", {b.node("MatMul", {rows, b.constant("w", random_f32({8, 4}, 21))})}), "y");
    return std::move(b).build();
}

ember::result<ember::graph> elementwise() {
    ember::graph_builder b("elementwise");
    const value_id x = b.input("x", dtype::float32, {3, 37});  // 37: vector tails on every ISA
    value_id h = b.node("Abs", {x});
    h = b.node("Sqrt", {b.node("Add", {h, b.constant<float>("eps", {}, {0.5f})})});
    h = b.node("Pow", {h, b.constant<float>("two", {}, {2.0f})});
    h = b.node("Exp", {b.node("Neg", {h})});
    h = b.node("Max", {h, b.node("HardSigmoid", {x})});
    h = b.node("Where", {b.node("Greater", {x, b.constant<float>("zero", {}, {0.0f})}), h, b.node("Erf", {x})});
    b.output(b.node("LeakyRelu", {h}, {attribute::of("alpha", 0.1f)}), "y");
    return std::move(b).build();
}

// A game's own job system, as README's "Threads" describes: one worker that spins on an atomic
// (never sleeps, never locks) and takes half of each parallel_for. With it, any lock seen during a
// parallel run is ember's own.
class spin_jobs {
public:
    spin_jobs() : worker_([this] { work(); }) {}
    ~spin_jobs() {
        stop_.store(true, std::memory_order_release);
        worker_.join();
    }
    spin_jobs(const spin_jobs&) = delete;
    spin_jobs& operator=(const spin_jobs&) = delete;

    ember::executor as_executor() noexcept {
        ember::executor exec;
        exec.ctx = this;
        exec.parallel_for = [](void* ctx, std::size_t n, ember::range_fn fn, void* fn_ctx) noexcept {
            static_cast<spin_jobs*>(ctx)->parallel_for(n, fn, fn_ctx);
        };
        exec.concurrency = 2;
        return exec;
    }

private:
    static bool& inside() noexcept {
        static thread_local bool flag = false;
        return flag;
    }
    void parallel_for(std::size_t n, ember::range_fn fn, void* fn_ctx) noexcept {
        if (n < 2 || inside()) {  // nested: inline
            if (n) fn(fn_ctx, 0, n);
            return;
        }
        fn_ = fn;
        fn_ctx_ = fn_ctx;
        half_ = n / 2;
        done_.store(false, std::memory_order_relaxed);
        posted_.fetch_add(1, std::memory_order_release);
        inside() = true;
        fn(fn_ctx, half_, n);
        inside() = false;
        while (!done_.load(std::memory_order_acquire)) std::this_thread::yield();
    }
    void work() noexcept {
        inside() = true;
        std::uint64_t seen = 0;
        while (!stop_.load(std::memory_order_acquire)) {
            const std::uint64_t now = posted_.load(std::memory_order_acquire);
            if (now == seen) {
                std::this_thread::yield();
                continue;
            }
            seen = now;
            fn_(fn_ctx_, 0, half_);
            done_.store(true, std::memory_order_release);
        }
    }

    ember::range_fn fn_ = nullptr;
    void* fn_ctx_ = nullptr;
    std::size_t half_ = 0;
    std::atomic<std::uint64_t> posted_{0};
    std::atomic<bool> done_{false}, stop_{false};
    std::thread worker_;
};

// One model's run, checked. `input` fills input 0 (an int64 input gets indices in range).
struct check_case {
    std::string name;
    const ember::plan* plan = nullptr;
    const ember::executor* exec = nullptr;
    const ember::tensor* input = nullptr;
    int run_for_frames_ms = 0;  // 0: run_for one step per call; else a time budget of that many ms
    const std::vector<const ember::tensor*>* inputs = nullptr;  // else: one per plan input (null: not bound)
    bool quiet = false;  // print failures only
};

std::string counts_text(const ember::test::hooks::counts& c) {
    return std::to_string(c.allocations) + " allocations, " + std::to_string(c.locks) + " locks, " +
           std::to_string(c.throws) + " throws";
}

void check(const check_case& c) {
    using namespace ember::test;
    const ember::plan& p = *c.plan;
    // The arena's size is known from the plan before any run: a caller-owned buffer of exactly
    // arena_bytes(), followed by guard bytes that no run may touch.
    constexpr std::size_t guard = 256;
    const std::size_t arena_bytes = p.arena_bytes();
    std::vector<std::byte> memory(arena_bytes + guard, std::byte{0xa5});
    ember::session s(p, ember::span<std::byte>(memory.data(), arena_bytes), c.exec);
    if (s.state() != status::ok) return fail(c.name, "session state " + std::string(ember::to_string(s.state())));

    // Input 0 from the caller's tensor (or, for int64 indices, 0, 3, 6, ...); every graph here has
    // one input. Outputs stay in the arena; their bytes after run() are kept for run_for().
    std::vector<std::int64_t> indices;
    if (!c.inputs && p.input(0).type == dtype::int64) {
        indices.resize(p.input(0).bytes / sizeof(std::int64_t));
        for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<std::int64_t>(i * 3 % 16);
        if (s.bind_input(0, indices.data(), p.input(0).bytes) != status::ok) return fail(c.name, "bind_input");
    } else if (c.input) {
        if (s.bind_input(0, c.input->bytes(), c.input->size_bytes()) != status::ok) return fail(c.name, "bind_input");
    } else if (c.inputs) {
        for (std::size_t i = 0; i < c.inputs->size(); ++i)
            if (const ember::tensor* t = (*c.inputs)[i]; t && s.bind_input(i, t->bytes(), t->size_bytes()) != status::ok)
                return fail(c.name, "bind_input " + p.input(i).name);
    }
    std::vector<std::vector<std::byte>> after_run(p.output_count());
    for (std::size_t i = 0; i < p.output_count(); ++i) after_run[i].resize(p.output(i).bytes);
    const auto output_bytes = [&](std::size_t i) {
        const ember::io_info& io = p.output(i);
        return memory.data() + io.arena_offset;  // outputs are not bound: they live in the arena
    };

    // Sized here, before the window: recording into it allocates nothing.
    ember::trace_recorder recorder(2 * p.steps().size());

    status run_status = status::ok, profiled_status = status::ok;
    ember::run_progress progress, profiled_progress;
    std::size_t calls = 0;
    hooks::counts seen;
    {
        hooks::window w;
        run_status = s.run();
        for (std::size_t i = 0; i < p.output_count(); ++i) std::memcpy(after_run[i].data(), output_bytes(i), after_run[i].size());
        const run_budget budget = c.run_for_frames_ms > 0 ? run_budget::time(std::chrono::milliseconds(c.run_for_frames_ms))
                                                          : run_budget::steps(1);
        do {
            progress = s.run_for(budget);
            ++calls;
        } while (progress.in_progress());
        s.set_profile_hook(recorder.hook());
        profiled_status = s.run();
        do profiled_progress = s.run_for(budget);
        while (profiled_progress.in_progress());
        s.set_profile_hook({});
        seen = w.take();
    }

    std::string problems;
    if (run_status != status::ok) problems += "; run() gave " + std::string(ember::to_string(run_status));
    if (!progress.done()) problems += "; run_for() ended with " + std::string(ember::to_string(progress.code));
    if (progress.steps_done != p.steps().size()) problems += "; run_for() ran " + std::to_string(progress.steps_done) + " steps";
    if (profiled_status != status::ok || !profiled_progress.done()) problems += "; the run() or run_for() with a trace_recorder failed";
    if (recorder.size() != 2 * p.steps().size() || recorder.dropped() != 0)
        problems += "; the trace_recorder holds " + std::to_string(recorder.size()) + " events, not 2 x " + std::to_string(p.steps().size());
    for (std::size_t i = 0; i < p.output_count(); ++i)
        if (std::memcmp(after_run[i].data(), output_bytes(i), after_run[i].size()) != 0)
            problems += "; output " + p.output(i).name + " of run_for() differs from run()'s";
    for (std::size_t i = arena_bytes; i < memory.size(); ++i)
        if (memory[i] != std::byte{0xa5}) {
            problems += "; the run wrote past arena_bytes() (" + std::to_string(arena_bytes) + ")";
            break;
        }
    if (!seen.none())
        problems += "; " + counts_text(seen) + " during run() and run_for() (with and without a trace_recorder)";
    if (!problems.empty()) return fail(c.name, problems.substr(2));
    if (c.quiet) return;
    std::printf("ok   %s: %zu steps, arena %zu bytes, run() and %zu run_for() calls, the same recorded: %s\n", c.name.c_str(), p.steps().size(),
                arena_bytes, calls, counts_text(seen).c_str());
}

// The hooks see what they are meant to see, so that a zero above means something.
bool hooks_count() {
    using namespace ember::test;
    if (!hooks::active()) {
        std::printf("skipped: the allocation hooks are off in this build (a sanitizer owns malloc)\n");
        return false;
    }
    hooks::counts c;
    {
        hooks::window w;
        std::vector<int>* v = new std::vector<int>(3);
        void* raw = std::malloc(16);
        std::mutex m;
        m.lock();
        m.unlock();
        try {
            throw std::string("counted");
        } catch (const std::string&) {
        }
        c = w.take();
        std::free(raw);
        delete v;
    }
    if (c.allocations < 2 || c.locks < 1 || c.throws < 1) {
        fail("hooks", "the hooks missed something: " + counts_text(c));
        return false;
    }
    std::printf("ok   hooks: a new, a malloc, a mutex and a throw were counted (%s)\n", counts_text(c).c_str());
    return true;
}

struct executors {
    const ember::executor* spin = nullptr;
    ember::thread_pool* pool = nullptr;
};

void check_plan(const std::string& name, const ember::plan& p, const ember::tensor* input, const executors& ex, int frame_ms) {
    check({name + " (one thread)", &p, nullptr, input, frame_ms});
    check({name + " (spinning job system)", &p, ex.spin, input, frame_ms});
    // The pool runs only for its own case (started before the window, so that the first run()
    // does not start, that is allocate, its threads).
    ex.pool->start();
    const ember::executor pool_exec = ex.pool->as_executor();
    check({name + " (thread_pool)", &p, &pool_exec, input, frame_ms});
    ex.pool->stop();
}


// ONNX's conformance models (libonnx-testdata) that compile: each over its first data set, on
// one thread (the pool and the job system are covered above). Prints one line for the lot.
void check_conformance_models() {
    const std::vector<ember::test::onnx_case> cases = ember::test::list_onnx_cases(ember::test::onnx_testdata_dir);
    if (cases.empty()) {
        std::printf("skipped: ONNX's conformance models: none under %s (apt-get install libonnx-testdata)\n", ember::test::onnx_testdata_dir);
        return;
    }
    const int failures_before = failures;
    std::size_t checked = 0, not_compiled = 0, steps = 0;
    for (const ember::test::onnx_case& oc : cases) {
        ember::result<ember::graph> g = ember::onnx::load_file((oc.dir / "model.onnx").string());
        std::vector<ember::tensor> inputs;
        std::string why;
        if (!g || !ember::test::load_pbs(oc.dir / "test_data_set_0", "input", g->inputs.size(), inputs, why)) {
            ++not_compiled;
            continue;
        }
        int frozen = 0;
        ember::result<ember::plan> p = ember::test::compile_onnx_case(*g, inputs, frozen);
        if (!p) {
            ++not_compiled;
            continue;
        }
        std::vector<const ember::tensor*> bound(p->input_count(), nullptr);  // by the plan's order
        for (std::size_t i = 0; i < g->inputs.size() && i < inputs.size(); ++i)
            if (const std::size_t at = p->input_index(g->values[g->inputs[i]].name); at != ember::plan::npos) bound[at] = &inputs[i];
        check_case c;
        c.name = oc.name;
        c.plan = &*p;
        c.inputs = &bound;
        c.quiet = true;
        check(c);
        ++checked;
        steps += p->steps().size();
    }
    std::printf("%s ONNX conformance models: %zu compiled and checked (%zu steps in all), %d failed; %zu did not load or compile (their data set or an op ember lacks)\n",
                failures == failures_before ? "ok  " : "FAIL", checked, steps, failures - failures_before, not_compiled);
}
// ember::batcher::run() from four threads at once allocates nothing and throws nothing; it does
// lock (the batcher's queue mutex and each caller's condition variable), which is its contract.
void check_batcher(const ember::executor* exec) {
    ember::graph_builder b("rows");
    const value_id x = b.input("x", dtype::float32, {"batch", 16});
    b.output(b.node("Relu", {b.node("Gemm", {x, b.constant("w", random_f32({16, 8}, 5)), b.constant("b", random_f32({8}, 6))})}), "y");
    ember::result<ember::graph> g = std::move(b).build();
    if (!g) return fail("batcher", "graph_builder: " + g.error().message);
    ember::batcher_options o;
    o.max_batch = 4;
    o.max_delay = std::chrono::microseconds(100);
    o.exec = exec;
    auto batcher = ember::batcher::create(*g, {}, o);
    if (!batcher) return fail("batcher", batcher.error().message);
    constexpr int clients = 4, requests = 50;
    std::atomic<bool> go{false};
    std::atomic<int> ready{0}, finished{0}, failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < clients; ++t)
        threads.emplace_back([&] {
            std::vector<float> in(16, 0.5f), out(8);  // before the window opens
            const void* ins[] = {in.data()};
            void* outs[] = {out.data()};
            ready.fetch_add(1, std::memory_order_acq_rel);
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            for (int r = 0; r < requests; ++r)
                if ((*batcher)->run(ins, outs) != status::ok) ++failed;
            finished.fetch_add(1, std::memory_order_acq_rel);
        });
    while (ready.load(std::memory_order_acquire) < clients) std::this_thread::yield();
    ember::test::hooks::counts seen;
    {
        ember::test::hooks::window w;
        go.store(true, std::memory_order_release);
        while (finished.load(std::memory_order_acquire) < clients) std::this_thread::yield();
        seen = w.take();
    }
    for (std::thread& t : threads) t.join();
    const ember::batcher_stats stats = (*batcher)->stats();
    if (failed != 0) return fail("batcher", std::to_string(failed.load()) + " requests failed");
    if (seen.allocations != 0 || seen.throws != 0) return fail("batcher", counts_text(seen) + " during batcher::run() on 4 threads");
    std::printf("ok   batcher: %d requests from %d threads in %llu batches: %ld allocations, %ld throws (%ld locks: its queue)\n",
                clients * requests, clients, static_cast<unsigned long long>(stats.batches), seen.allocations, seen.throws, seen.locks);
}

} // namespace

int main() {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line as it is printed, even into a pipe
    if (!hooks_count()) return failures ? 1 : 0;

    // The pool as ember-run sets it up for --threads 2 (examples/common/cli.hpp, which also gives
    // it a spin budget): its parallel_for posts jobs through atomics and parks idle threads on a
    // futex, so over it run() takes no pthread lock either.
    ember::thread_pool pool(2, std::chrono::microseconds(200));
    spin_jobs spin;
    const ember::executor spin_exec = spin.as_executor();
    const executors exec{&spin_exec, &pool};

    const small_graph graphs[] = {{"mlp", mlp()},       {"convnet", convnet()}, {"attention", attention()},
                                  {"shapes", shapes()}, {"gather", gather()},   {"elementwise", elementwise()}};
    for (const small_graph& sg : graphs) {
        if (!sg.g) {
            fail(sg.name, "graph_builder: " + sg.g.error().message);
            continue;
        }
        ember::result<ember::plan> p = ember::compile(*sg.g);
        if (!p) {
            fail(sg.name, "compile: " + p.error().message);
            continue;
        }
        const ember::io_info& in = p->input(0);
        const ember::tensor x = in.type == dtype::float32 ? random_f32(in.dims, 99) : ember::tensor();
        check_plan(sg.name, *p, in.type == dtype::float32 ? &x : nullptr, exec, 0);
    }

    std::string why;
    if (!ember::test::have_zoo(why)) {
        std::printf("skipped: the anchor zoo: %s\n", why.c_str());
    } else {
        const char* const zoo[] = {"resnet18",        "resnet50",      "mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x1_0",
                                   "efficientnet_b0", "encoder_small", "mlp_tiny",     "resnet50_b8",   "mobilenet_v2_b8"};
        for (const char* name : zoo) {
            if (!ember::test::file_exists(ember::test::zoo_dir() + "/" + name + ".onnx")) {
                std::printf("skipped: %s is not in the zoo (%s)\n", name, ember::test::zoo_dir().c_str());
                continue;
            }
            ember::result<ember::test::zoo_model> m = ember::test::load_zoo_model(name);
            if (!m) {
                fail(name, "load: " + m.error().message);
                continue;
            }
            ember::result<ember::plan> p = ember::compile(m->g);
            if (!p) {
                fail(name, "compile: " + p.error().message);
                continue;
            }
            check_plan(name, *p, &m->input, exec, 2);  // run_for() in frames of 2 ms
        }
    }
    const ember::executor pool_exec = pool.as_executor();
    check_batcher(&pool_exec);
    check_conformance_models();
    std::printf("%s\n", failures ? "alloc test: FAILED" : "alloc test: ok");
    return failures ? 1 : 0;
}
