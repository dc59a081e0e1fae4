// SPDX-License-Identifier: Apache-2.0
// ember-run: runs (and optionally times) any ONNX model on inputs given as .npy files, and writes
// every output as DIR/<name>.npy.
//
//   ember-run MODEL.onnx --input NAME=FILE.npy ... [--fix NAME=FILE.npy ...] [--output-dir DIR]
//             [--threads N] [--spin US] [--repeat N] [--warmup N] [--profile FILE.json] [--dot FILE.dot]
//
// The input shapes of the compiled plan are the shapes of the given .npy files. --fix gives an
// input whose value some op needs at compile time (a Reshape target, a TopK k): it is folded in
// and is no longer an input of the plan. Output names are sanitised to [A-Za-z0-9._-] (others
// become '_'). --repeat N times N runs after --warmup runs (default 1 with --repeat) and prints
// latency min/p50/p90/p99/max in ms (6 decimals when the fastest run took under 1 ms, else 3;
// p50 is the median) and the throughput in runs/s, and in items/s when the first input's leading
// dimension (the batch) is above 1. --profile records every step of the timed runs (one with no
// --repeat) with ember::trace_recorder, writes the Chrome trace (Perfetto, chrome://tracing) and
// prints the time per op type. --dot writes the graph compile() compiles (ember::optimize: fused
// nodes filled, "Conv+Relu") for Graphviz. The last line gives the arena and weight bytes and the
// process's peak resident memory. On any failure it prints one line, "ember-run: <what>: <why>",
// on stderr and exits with 2 (bad command line) or 1 (anything else).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ember/ember.hpp>
#include <ember/io/npy.hpp>
#include <ember/onnx.hpp>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/resource.h>
#endif

#include "../common/cli.hpp"
#include "graph_dot.hpp"

namespace {

using example::exit_failure;
using example::exit_usage;
using example::fail;

constexpr std::string_view usage =
    "usage: ember-run MODEL.onnx --input NAME=FILE.npy ... [--fix NAME=FILE.npy ...] [--output-dir DIR]\n"
    "                 [--threads N] [--spin US] [--repeat N] [--warmup N] [--profile FILE.json] [--dot FILE.dot]\n"
    "  --input NAME=FILE.npy  a graph input (its shape is the file's); repeat for each input\n"
    "  --fix NAME=FILE.npy    a graph input fixed at compile time (shape tensors, axes, k, ...)\n"
    "  --output-dir DIR       write each output as DIR/<name>.npy (created if missing)\n"
    "  --threads N            run on N threads (ember::thread_pool; default 1)\n"
    "  --spin US              with --threads: microseconds idle threads spin before parking\n"
    "                         (default 200; 0 parks at once, as thread_pool does by default)\n"
    "  --repeat N             time N runs; print latency min/p50/p90/p99/max in ms (6 decimals\n"
    "                         when under 1 ms; p50 is the median) and throughput in runs/s\n"
    "                         (and items/s when the first input's leading dimension is > 1)\n"
    "  --warmup N             untimed runs before the timed ones (default 1 with --repeat)\n"
    "  --profile FILE.json    record each step of the timed runs: write a Chrome trace (open it in\n"
    "                         ui.perfetto.dev or chrome://tracing) and print the time per op type\n"
    "  --dot FILE.dot         write the optimized graph (fused nodes filled) for Graphviz:\n"
    "                         dot -Tsvg FILE.dot -o graph.svg\n"
    "Also printed: the arena and weight bytes of the compiled model and the peak resident memory.\n";

std::string sanitise(std::string_view name) {
    std::string out(name);
    for (char& c : out) {
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok) c = '_';
    }
    if (out.empty() || out == "." || out == "..") out = "_" + out;  // never a name that escapes DIR
    return out;
}

struct named_file {
    std::string name, path;
};

struct options {
    std::string model;
    std::vector<named_file> inputs, fixed;
    std::string output_dir;
    std::string profile, dot;  // --profile, --dot files
    std::size_t threads = 1;
    std::size_t spin_us = static_cast<std::size_t>(example::session_threads::default_spin.count());
    std::size_t repeat = 0;
    std::size_t warmup = 0;
    bool warmup_given = false;
};

std::size_t parse_count(std::string_view flag, std::string_view text, std::size_t min) {
    std::size_t v = 0;
    if (text.empty() || text.size() > 9) fail(std::string(flag), "expected a whole number, got '" + std::string(text) + "'", exit_usage);
    for (char c : text) {
        if (c < '0' || c > '9') fail(std::string(flag), "expected a whole number, got '" + std::string(text) + "'", exit_usage);
        v = v * 10 + static_cast<std::size_t>(c - '0');
    }
    if (v < min) fail(std::string(flag), "must be at least " + std::to_string(min) + ", got " + std::string(text), exit_usage);
    return v;
}

named_file parse_named(std::string_view flag, std::string_view text) {
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
        fail(std::string(flag), "expected NAME=FILE.npy, got '" + std::string(text) + "'", exit_usage);
    return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

options parse_args(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage.data(), stdout);
            std::exit(0);
        }
        if (arg.size() > 1 && arg[0] == '-' && arg.substr(0, 2) != "--") fail(std::string(arg), "unknown flag (see ember-run --help)", exit_usage);
        if (arg.size() < 2 || arg.substr(0, 2) != "--") {
            if (!o.model.empty()) fail("command line", "more than one model given ('" + o.model + "' and '" + std::string(arg) + "')", exit_usage);
            o.model = std::string(arg);
            continue;
        }
        std::string_view flag = arg, value;
        bool has_value = false;
        if (const std::size_t eq = arg.find('='); eq != std::string_view::npos) {  // --flag=value
            flag = arg.substr(0, eq);
            value = arg.substr(eq + 1);
            has_value = true;
        }
        const bool known = flag == "--input" || flag == "--fix" || flag == "--output-dir" || flag == "--threads" || flag == "--repeat" ||
                           flag == "--warmup" || flag == "--spin" || flag == "--profile" || flag == "--dot";
        if (!known) fail(std::string(flag), "unknown flag (see ember-run --help)", exit_usage);
        if (!has_value) {
            if (i + 1 >= argc) fail(std::string(flag), "needs a value", exit_usage);
            value = argv[++i];
        }
        if (flag == "--input") o.inputs.push_back(parse_named(flag, value));
        else if (flag == "--fix") o.fixed.push_back(parse_named(flag, value));
        else if (flag == "--output-dir") {
            if (value.empty()) fail("--output-dir", "needs a folder name", exit_usage);
            o.output_dir = std::string(value);
        } else if (flag == "--profile" || flag == "--dot") {
            if (value.empty()) fail(std::string(flag), "needs a file name", exit_usage);
            (flag == "--profile" ? o.profile : o.dot) = std::string(value);
        } else if (flag == "--threads") o.threads = parse_count(flag, value, 1);
        else if (flag == "--repeat") o.repeat = parse_count(flag, value, 1);
        else if (flag == "--spin") o.spin_us = parse_count(flag, value, 0);
        else {
            o.warmup = parse_count(flag, value, 0);
            o.warmup_given = true;
        }
    }
    if (o.model.empty()) fail("command line", "no model given (see ember-run --help)", exit_usage);
    if (!o.warmup_given && o.repeat > 0) o.warmup = 1;
    if (o.warmup_given && o.repeat == 0) fail("--warmup", "only makes sense with --repeat", exit_usage);
    std::vector<std::string> seen;
    for (const std::vector<named_file>* list : {&o.inputs, &o.fixed})
        for (const named_file& f : *list) {
            if (std::find(seen.begin(), seen.end(), f.name) != seen.end())
                fail("input '" + f.name + "'", "given more than once", exit_usage);
            seen.push_back(f.name);
        }
    return o;
}

/// Makes DIR (and its parents) if needed and proves a file can be created in it, before any
/// time is spent on the model.
void prepare_output_dir(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(dir, ec);
    if (fs::exists(st)) {
        if (!fs::is_directory(st)) fail("--output-dir '" + dir + "'", "exists and is not a folder");
    } else if (!fs::create_directories(dir, ec) || ec) {
        fail("--output-dir '" + dir + "'", "cannot create it" + (ec ? " (" + ec.message() + ")" : std::string()));
    }
    const std::string probe = (fs::path(dir) / ".ember-run-write-test").string();
    std::FILE* f = std::fopen(probe.c_str(), "wb");
    if (!f) fail("--output-dir '" + dir + "'", "cannot create files in it");
    std::fclose(f);
    fs::remove(probe, ec);
}

/// Proves the file of --profile or --dot can be written, before any time is spent on the model.
void prepare_file(std::string_view flag, const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) fail(std::string(flag) + " '" + path + "'", "cannot create the file");
    std::fclose(f);
}

void write_file(std::string_view flag, const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const bool wrote = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (!f || std::fclose(f) != 0 || !wrote) fail(std::string(flag) + " '" + path + "'", "cannot write the file");
}

/// The process's peak resident memory in MiB, or a negative number where getrusage is missing.
double peak_rss_mib() {
#if defined(__unix__) || defined(__APPLE__)
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) == 0) {
#if defined(__APPLE__)
        return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);  // bytes on macOS
#else
        return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux and the BSDs
#endif
    }
#endif
    return -1.0;
}

std::string join_names(const ember::graph& g, const std::vector<ember::value_id>& ids) {
    std::string s;
    for (ember::value_id v : ids) s += (s.empty() ? "" : ", ") + g.values[v].name;
    return s.empty() ? "none" : s;
}

double percentile(const std::vector<double>& sorted, double p) {
    std::size_t rank = static_cast<std::size_t>(p * static_cast<double>(sorted.size()) + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > sorted.size()) rank = sorted.size();
    return sorted[rank - 1];
}

int run(const options& o) {
    if (!o.output_dir.empty()) prepare_output_dir(o.output_dir);
    if (!o.profile.empty()) prepare_file("--profile", o.profile);
    if (!o.dot.empty()) prepare_file("--dot", o.dot);

    if (std::error_code ec; std::filesystem::is_directory(o.model, ec)) fail("model '" + o.model + "'", "is a folder, not an .onnx file");
    ember::result<ember::graph> g = ember::onnx::load_file(o.model);
    if (!g) fail("model '" + o.model + "'", g.error().message);

    // Every given name must be a graph input of the declared dtype; every graph input must be given.
    ember::compile_options copts;
    std::vector<std::pair<std::string, ember::tensor>> feeds;
    auto load = [&](const named_file& f, bool fixed) {
        const std::string what = std::string(fixed ? "--fix " : "--input ") + f.name;
        const ember::value_id v = g->find_value(f.name);
        if (v == ember::no_value || std::find(g->inputs.begin(), g->inputs.end(), v) == g->inputs.end())
            fail(what, "the model has no input '" + f.name + "' (its inputs: " + join_names(*g, g->inputs) + ")");
        ember::result<ember::tensor> t = ember::npy::load_file(f.path);
        if (!t) fail(what, t.error().message);
        const ember::dtype declared = g->values[v].type;
        if (t->type() != declared)
            fail(what, ember::detail::format("the model's input is {} but '{}' holds {}", declared, f.path, t->type()));
        if (fixed) {
            copts.input_values.push_back({f.name, *std::move(t)});
        } else {
            copts.input_shapes.push_back({f.name, t->dims()});
            feeds.emplace_back(f.name, *std::move(t));
        }
    };
    for (const named_file& f : o.inputs) load(f, false);
    for (const named_file& f : o.fixed) load(f, true);
    for (ember::value_id v : g->inputs) {
        const std::string& name = g->values[v].name;
        const auto given = [&](const named_file& f) { return f.name == name; };
        if (std::none_of(o.inputs.begin(), o.inputs.end(), given) && std::none_of(o.fixed.begin(), o.fixed.end(), given))
            fail("input '" + name + "'", "missing: give it with --input " + name + "=FILE.npy (the model's inputs: " + join_names(*g, g->inputs) + ")");
    }

    ember::result<ember::plan> p = ember::compile(*g, copts);
    if (!p) {
        std::string why = p.error().message;
        if (why.find("known at compile time") != std::string::npos) why += " (give that input with --fix NAME=FILE.npy)";
        fail("compile '" + o.model + "'", why);
    }
    if (!o.dot.empty()) {
        // The graph compile() just compiled: the passes run again, on the same options.
        ember::result<ember::graph> optimized = ember::optimize(*g, copts);
        if (!optimized) fail("--dot", optimized.error().message);
        write_file("--dot", o.dot, example::graph_dot(*optimized));
        const std::size_t fused = static_cast<std::size_t>(
            std::count_if(optimized->nodes.begin(), optimized->nodes.end(), [](const ember::node& n) { return example::is_fused(n); }));
        std::printf("graph: %zu nodes (%zu fused) -> %s\n", optimized->nodes.size(), fused, o.dot.c_str());
    }

    const example::session_threads threads(o.threads, std::chrono::microseconds(static_cast<std::int64_t>(o.spin_us)));
    ember::session s(*p, threads.executor());
    if (s.state() != ember::status::ok)
        fail("session", ember::detail::format("cannot create it ({}; the arena is {} bytes)", ember::to_string(s.state()), p->arena_bytes()));
    for (auto& [name, t] : feeds) {
        const std::size_t i = p->input_index(name);
        if (i >= p->input_count()) continue;  // an input the model never reads
        if (s.bind_input(i, t.bytes(), t.size_bytes()) != ember::status::ok)
            fail("input '" + name + "'", ember::detail::format("the plan expects {} {} ({} bytes) but the file holds {} {}", p->input(i).type,
                                                               p->input(i).dims, p->input(i).bytes, t.type(), t.dims()));
    }
    std::vector<ember::tensor> outputs;
    for (std::size_t i = 0; i < p->output_count(); ++i) {
        const ember::io_info& io = p->output(i);
        ember::result<ember::tensor> t = ember::tensor::create(io.type, io.dims);
        if (!t) fail("output '" + io.name + "'", t.error().message);
        outputs.push_back(*std::move(t));
        if (s.bind_output(i, outputs.back().bytes(), outputs.back().size_bytes()) != ember::status::ok)
            fail("output '" + io.name + "'", "cannot bind its buffer");
    }

    auto run_once = [&] {
        const ember::status st = s.run();
        if (st != ember::status::ok)
            fail("run", ember::detail::format("a kernel failed with {} (for example an index out of range in the input data)", ember::to_string(st)));
    };
    for (std::size_t i = 0; i < o.warmup; ++i) run_once();
    // --profile: the timed runs, step by step, into a buffer allocated here (recording allocates
    // nothing). Its hook adds two clock reads and a call per step to the times below.
    const std::size_t runs = o.repeat ? o.repeat : 1;
    std::unique_ptr<ember::trace_recorder> recorder;
    if (!o.profile.empty()) {
        recorder = std::make_unique<ember::trace_recorder>(p->steps().size() * runs);
        if (recorder->capacity() != p->steps().size() * runs) fail("--profile", "out of memory for the trace");
        s.set_profile_hook(recorder->hook());
    }
    std::vector<double> ms;
    for (std::size_t i = 0; i < runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        run_once();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    s.set_profile_hook({});

    if (!o.output_dir.empty()) {
        std::vector<std::string> files;
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            const std::string file = sanitise(p->output(i).name) + ".npy";
            if (std::find(files.begin(), files.end(), file) != files.end())
                fail("output '" + p->output(i).name + "'", "its file name " + file + " is taken by another output");
            files.push_back(file);
            const std::string path = (std::filesystem::path(o.output_dir) / file).string();
            ember::result<std::size_t> n = ember::npy::save_file(path, outputs[i]);
            if (!n) fail("output '" + p->output(i).name + "'", n.error().message);
            std::printf("%s: %s %s -> %s\n", p->output(i).name.c_str(), std::string(ember::to_string(outputs[i].type())).c_str(),
                        ember::detail::format("{}", outputs[i].dims()).c_str(), path.c_str());
        }
    }
    if (o.output_dir.empty())
        for (std::size_t i = 0; i < outputs.size(); ++i)
            std::printf("%s: %s %s (not written: no --output-dir)\n", p->output(i).name.c_str(),
                        std::string(ember::to_string(outputs[i].type())).c_str(), ember::detail::format("{}", outputs[i].dims()).c_str());
    if (o.repeat) {
        double total_ms = 0.0;
        for (double t : ms) total_ms += t;
        std::sort(ms.begin(), ms.end());
        const std::size_t n = ms.size();
        const double median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
        // 3 decimals (microseconds) for models that take a millisecond or more; 6 (nanoseconds) for
        // faster ones, where 0.002 ms would hide a 2x difference.
        const int digits = ms.front() < 1.0 ? 6 : 3;
        std::printf("latency ms over %zu runs (%zu warmup, %zu thread%s): min %.*f p50 %.*f p90 %.*f p99 %.*f max %.*f\n", n, o.warmup,
                    o.threads, o.threads == 1 ? "" : "s", digits, ms.front(), digits, median, digits, percentile(ms, 0.9), digits,
                    percentile(ms, 0.99), digits, ms.back());
        // Runs one after the other: throughput is runs over their summed time.
        const double runs_per_s = total_ms > 0.0 ? 1000.0 * static_cast<double>(n) / total_ms : 0.0;
        const ember::shape first = p->input_count() ? p->input(0).dims : ember::shape{};
        const std::int64_t batch = first.rank() > 0 ? first[0] : 1;
        if (batch > 1)
            std::printf("throughput: %.1f runs/s, %.1f items/s (batch %lld)\n", runs_per_s, runs_per_s * static_cast<double>(batch),
                        static_cast<long long>(batch));
        else
            std::printf("throughput: %.1f runs/s\n", runs_per_s);
    }
    if (recorder) {
        if (ember::result<void> saved = recorder->save_chrome_trace(o.profile); !saved) fail("--profile", saved.error().message);
        std::printf("profile: %zu events (%zu steps x %zu run%s) -> %s\n%s", recorder->size(), p->steps().size(), runs,
                    runs == 1 ? "" : "s", o.profile.c_str(), recorder->summary_table().c_str());
    }
    char rss[32] = "unknown";
    if (const double mib = peak_rss_mib(); mib >= 0.0) std::snprintf(rss, sizeof rss, "%.1f MiB", mib);
    std::printf("memory: arena %zu bytes, weights %zu bytes, peak RSS %s\n", p->arena_bytes(), p->weights_bytes(), rss);
    std::fflush(stdout);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    return example::run_main("ember-run", [&] { return run(parse_args(argc, argv)); });
}
