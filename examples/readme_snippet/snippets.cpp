// SPDX-License-Identifier: Apache-2.0
// The README's other snippets, verbatim (the readme.snippets test keeps them the same), and a
// main() that runs each of them on the quick-start model and checks what comes out.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <stdlib.h>  // mkstemp
#include <unistd.h>  // close

#include <ember/ember.hpp>
#include <ember/onnx.hpp>

static_assert(EMBER_MAX_RANK == 6, "ember_user_config.hpp beside this file was not picked up");

// Four threads in all (this one and three workers), started at load time so that run() does
// not allocate. The pool must outlive every session that uses its executor.
ember::status run_on_pool(const ember::plan& plan, std::vector<std::byte>& arena) {
    ember::thread_pool pool(4);
    pool.start();
    const ember::executor exec = pool.as_executor();
    ember::session session(plan, arena, &exec);
    return session.run();
}

// Once per frame: about 2 ms of inference, resumed where the last frame stopped. outputs_ready
// turns true on the frame that finishes the run; the next call starts a new one over the inputs
// as they are then.
ember::status frame_slice(ember::session& session, bool& outputs_ready) {
    const ember::run_progress progress = session.run_for(ember::run_budget::time(std::chrono::milliseconds(2)));
    outputs_ready = progress.done();
    return progress.code;  // not ok: the run stopped, as run() would have (bad input)
}

// Your own job system behind ember's one parallel interface. This one runs the chunks in order
// on the calling thread; yours hands them to its workers and returns when all are done.
struct my_job_system {
    std::size_t workers = 4;
    void run_chunks(std::size_t n, ember::range_fn fn, void* fn_ctx) noexcept {
        const std::size_t chunk = (n + workers - 1) / workers;
        for (std::size_t begin = 0; begin < n; begin += chunk) fn(fn_ctx, begin, std::min(n, begin + chunk));
    }
};

ember::executor executor_for(my_job_system& jobs) {
    ember::executor exec;
    exec.ctx = &jobs;
    exec.parallel_for = [](void* ctx, std::size_t n, ember::range_fn fn, void* fn_ctx) noexcept {
        static_cast<my_job_system*>(ctx)->run_chunks(n, fn, fn_ctx);
    };
    exec.concurrency = jobs.workers;
    return exec;
}

// No buffers of your own: the session allocates its arena through the plan's allocator, and
// the input and the output are used where they live in it (no bind_*, no copy by ember).
ember::status run_in_arena(const ember::plan& plan, const std::vector<float>& x, std::vector<float>& y) {
    ember::session session(plan);
    if (session.state() != ember::status::ok) return session.state();  // out_of_memory
    ember::tensor_view<float> in = session.input<float>(0);
    if (in.size() != x.size()) return ember::status::invalid_argument;
    std::copy(x.begin(), x.end(), in.begin());
    if (ember::status s = session.run(); s != ember::status::ok) return s;
    ember::tensor_view<const float> out = session.output<float>(0);
    y.assign(out.begin(), out.end());
    return ember::status::ok;
}

// ember's own allocations (the plan's weights, compile()'s temporaries, a session-owned arena)
// go to your heap. Return null on failure: compile() then fails with status::out_of_memory.
struct counting_heap {
    std::size_t live_bytes = 0;
};

ember::allocator allocator_for(counting_heap& heap) {
    ember::allocator a;
    a.ctx = &heap;
    a.alloc = [](void* ctx, std::size_t bytes, std::size_t alignment) noexcept -> void* {
        static_cast<counting_heap*>(ctx)->live_bytes += bytes;
        return ::operator new(bytes ? bytes : 1, std::align_val_t(alignment), std::nothrow);
    };
    a.free = [](void* ctx, void* p, std::size_t bytes, std::size_t alignment) noexcept {
        static_cast<counting_heap*>(ctx)->live_bytes -= bytes;
        ::operator delete(p, std::align_val_t(alignment));
    };
    return a;
}

// Turn one graph pass off (all are on by default), or every one with ember::pass_options::none().
ember::result<ember::plan> compile_without_fusion(const ember::graph& graph) {
    ember::compile_options options;
    options.input_shapes = {{"x", {2, 3}}};
    options.passes.epilogue_fusion = false;  // Gemm and Relu stay two steps
    return ember::compile(graph, options);
}

// What the passes made of a graph: the graph compile() compiles, fused nodes of domain "ember".
std::size_t fused_nodes(const ember::graph& graph) {
    ember::compile_options options;
    options.input_shapes = {{"x", {2, 3}}};
    ember::result<ember::graph> optimized = ember::optimize(graph, options);
    std::size_t fused = 0;
    if (optimized)
        for (const ember::node& n : optimized->nodes) fused += n.domain == "ember" ? 1 : 0;
    return fused;
}

// Every step of `runs` runs into a buffer sized once (recording allocates nothing), then a Chrome
// trace (open it in ui.perfetto.dev or chrome://tracing) and the time per op type as a table.
ember::result<void> profile_runs(ember::session& session, std::size_t runs, const std::string& trace_path, std::string& table) {
    ember::trace_recorder recorder(session.compiled_plan().steps().size() * runs);
    session.set_profile_hook(recorder.hook());
    for (std::size_t i = 0; i < runs; ++i)
        if (ember::status s = session.run(); s != ember::status::ok) return ember::error_info{s, -1, "run failed"};
    session.set_profile_hook({});  // the recorder goes out of scope: unhook it first
    table = recorder.summary_table();
    return recorder.save_chrome_trace(trace_path);
}

// Or a hook of your own: a plain function and a pointer, called after each step on the thread
// that runs it. This one keeps the slowest step; yours might feed the game's own profiler.
struct slowest_step {
    std::string_view name;  // the plan's string: valid while the plan lives
    std::int64_t ns = 0;
};

void keep_slowest(void* user, const ember::step_event& step) noexcept {
    slowest_step& slowest = *static_cast<slowest_step*>(user);
    if (step.end_ns - step.begin_ns > slowest.ns) slowest = {step.name, step.end_ns - step.begin_ns};
}

// compile() tells a logger what it did, if you give it one; the library never prints.
void log_to_stderr(void*, ember::log_level, std::string_view message) {
    std::fprintf(stderr, "ember: %.*s\n", static_cast<int>(message.size()), message.data());
}

#if EMBER_HAS_EXCEPTIONS
// Where exceptions are on, the throwing style is one call away.
ember::plan compile_or_throw(const ember::graph& graph) {
    ember::compile_options options;
    options.input_shapes = {{"x", {2, 3}}};
    options.log = {&log_to_stderr, nullptr};
    return ember::value_or_throw(ember::compile(graph, options));  // throws ember::exception
}
#endif

// ---- not in the README: run every snippet above and check the numbers --------------------

namespace {

int fail(const char* what) {
    std::fprintf(stderr, "readme snippets: %s\n", what);
    return 1;
}

// Loading an ONNX model: parse, then compile with the input shapes the model leaves open.
ember::result<ember::plan> load_plan(const char* path, std::int64_t batch) {
    ember::result<ember::graph> graph = ember::onnx::load_file(path);  // io_error, invalid_model, ...
    if (!graph) return graph.error();
    ember::compile_options options;
    options.dim_values = {{"batch", batch}};  // symbolic dimensions by name
    return ember::compile(*graph, options);
}

// A model shipped obfuscated (XOR with a 32-byte key; obfuscation, not DRM): ember decrypts it in
// its own buffer as it reads it, and each external weight file straight into its tensor.
bool xor_stream(void* key, const char* /*source*/, std::uint64_t offset, std::uint8_t* data, std::size_t bytes) noexcept {
    const std::uint8_t* k = static_cast<const std::uint8_t*>(key);
    for (std::size_t i = 0; i < bytes; ++i) data[i] ^= k[(offset + i) % 32];
    return true;
}

ember::result<ember::graph> load_obfuscated(const char* path, std::uint8_t (&key)[32]) {
    ember::onnx::load_options options;
    options.decrypt = {xor_stream, key};
    return ember::onnx::load_file(path, options);
}

ember::graph quick_start_graph() {
    ember::graph_builder builder("quick_start");
    ember::value_id x = builder.input("x", ember::dtype::float32, {"batch", 3});
    ember::value_id w = builder.constant<float>("w", {3, 2}, {1, -1, 2, -2, 3, -3});
    ember::value_id b = builder.constant<float>("b", {2}, {0.5f, 0.25f});
    builder.output(builder.node("Relu", {builder.node("Gemm", {x, w, b})}), "y");
    return *std::move(builder).build();
}

} // namespace

int main() {
    const ember::graph graph = quick_start_graph();
    const std::vector<float> x = {1, 2, 3, -1, -2, -3};
    const std::vector<float> expected = {14.5f, 0.0f, 0.0f, 14.25f};

    counting_heap heap;
    {
        ember::compile_options options;
        options.input_shapes = {{"x", {2, 3}}};
        options.alloc = allocator_for(heap);
        ember::result<ember::plan> plan = ember::compile(graph, options);
        if (!plan) return fail(plan.error().message.c_str());
        if (heap.live_bytes < plan->weights_bytes()) return fail("the plan's weights did not come from the heap");

        std::vector<std::byte> arena(plan->arena_bytes());
        if (run_on_pool(*plan, arena) != ember::status::ok) return fail("run_on_pool");

        std::vector<float> y;
        if (run_in_arena(*plan, x, y) != ember::status::ok || y != expected) return fail("run_in_arena");

        my_job_system jobs;
        const ember::executor exec = executor_for(jobs);
        ember::session session(*plan, arena, &exec);
        float out[4] = {};
        if (session.bind_input("x", x) != ember::status::ok || session.bind_output("y", out) != ember::status::ok ||
            session.run() != ember::status::ok)
            return fail("session on my_job_system");
        if (!std::equal(expected.begin(), expected.end(), out)) return fail("wrong numbers on my_job_system");

        // The same run spread over frames: the same numbers once outputs_ready.
        ember::session sliced(*plan, arena);
        float sliced_out[4] = {};
        if (sliced.bind_input("x", x) != ember::status::ok || sliced.bind_output("y", sliced_out) != ember::status::ok)
            return fail("frame_slice: bind");
        bool ready = false;
        for (int frame = 0; frame < 100 && !ready; ++frame)
            if (frame_slice(sliced, ready) != ember::status::ok) return fail("frame_slice");
        if (!ready || !std::equal(expected.begin(), expected.end(), sliced_out)) return fail("frame_slice: wrong numbers");

        // Profiling: a trace of three runs (a JSON array of one event per step each), the table,
        // and a hook of our own.
        char trace_path[] = "/tmp/ember_snippet_trace_XXXXXX";
        const int trace_fd = mkstemp(trace_path);
        if (trace_fd < 0) return fail("profile_runs: no temporary file");
        close(trace_fd);
        std::string table;
        const ember::result<void> traced = profile_runs(session, 3, trace_path, table);
        std::FILE* trace = std::fopen(trace_path, "rb");
        std::string json;
        for (int c; trace && (c = std::fgetc(trace)) != EOF;) json += static_cast<char>(c);
        if (trace) std::fclose(trace);
        std::remove(trace_path);
        std::size_t events = 0;
        for (std::size_t at = json.find("\"ph\":\"X\""); at != std::string::npos; at = json.find("\"ph\":\"X\"", at + 1)) ++events;
        if (!traced || json.rfind("{\"traceEvents\":[", 0) != 0 || events != 3 * plan->steps().size() ||
            table.find(std::string(plan->step_op(0))) == std::string::npos)
            return fail("profile_runs");
        slowest_step slowest;
        session.set_profile_hook(&keep_slowest, &slowest);
        if (session.run() != ember::status::ok || slowest.name.empty()) return fail("keep_slowest");
        session.set_profile_hook({});
    }
    if (heap.live_bytes != 0) return fail("the heap did not get every byte back");

    // The graph passes: Gemm + Relu is one fused step, two with fusion off; same numbers.
    if (fused_nodes(graph) != 1) return fail("fused_nodes: Gemm + Relu did not fuse");
    {
        ember::result<ember::plan> unfused = compile_without_fusion(graph);
        if (!unfused || unfused->steps().size() != 2) return fail("compile_without_fusion");
        std::vector<float> y;
        if (run_in_arena(*unfused, x, y) != ember::status::ok || y != expected) return fail("compile_without_fusion: wrong numbers");
    }

#if EMBER_HAS_EXCEPTIONS
    const ember::plan plan = compile_or_throw(graph);
    bool threw = false;
    try {
        ember::graph_builder bad("bad");
        bad.output(bad.node("NoSuchOp", {bad.input("x", ember::dtype::float32, {2, 3})}));
        (void)compile_or_throw(*std::move(bad).build());
    } catch (const ember::exception& e) {
        threw = e.info().code == ember::status::unsupported_op;
    }
    if (!threw) return fail("compile_or_throw did not throw unsupported_op");
#endif
    // A missing file is an error value naming the path, not a crash.
    ember::result<ember::plan> missing = load_plan("no/such/model.onnx", 1);
    if (missing || missing.error().code != ember::status::io_error ||
        missing.error().message.find("no/such/model.onnx") == std::string::npos)
        return fail("load_plan of a missing file");
    // The bundled model, obfuscated into a temporary file, loads back to the same graph.
    {
        const std::string model = std::string(EMBER_BUNDLED_MODEL_DIR) + "/model.onnx";
        std::FILE* in = std::fopen(model.c_str(), "rb");
        if (!in) return fail("cannot open the bundled model");
        std::vector<std::uint8_t> bytes;
        for (int c; (c = std::fgetc(in)) != EOF;) bytes.push_back(static_cast<std::uint8_t>(c));
        std::fclose(in);
        std::uint8_t key[32];
        for (std::size_t i = 0; i < 32; ++i) key[i] = static_cast<std::uint8_t>(i * 37 + 11);
        (void)xor_stream(key, "", 0, bytes.data(), bytes.size());
        char path[] = "/tmp/ember_snippet_XXXXXX";
        const int fd = mkstemp(path);
        std::FILE* out = fd >= 0 ? fdopen(fd, "wb") : nullptr;
        if (!out || std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size()) return fail("cannot write the obfuscated model");
        std::fclose(out);
        ember::result<ember::graph> plain = ember::onnx::load_file(model);
        ember::result<ember::graph> hidden = load_obfuscated(path, key);
        ember::result<ember::graph> raw = ember::onnx::load_file(path);  // without the key: not a model
        std::remove(path);
        if (!plain || !hidden || hidden->nodes.size() != plain->nodes.size() || raw) return fail("load_obfuscated");
    }
    std::printf("readme snippets: ok\n");
    return 0;
}
