// SPDX-License-Identifier: Apache-2.0
// ember_conformance: runs ONNX's own backend test data (Debian package libonnx-testdata:
// data/{node,pytorch-converted,pytorch-operator,simple}/<case>/model.onnx + test_data_set_N/*.pb)
// through the ONNX importer, compile() and a session, and compares every output with the
// reference (rtol 1e-3, atol 1e-7, as ONNX's backend test runner does).
//
//     ember_conformance [--data DIR] [--expected FILE] [--filter TEXT] [--verbose] [--emit-expected]
//
// Every case runs in a forked child with a time limit, so a crash or a hang is a reported
// failure of that case, never the end of the run. Cases listed in the expected-failure file (one
// line each: `category/case  reason`) may fail; the run exits non-zero on any other failure, on
// any listed case that passes (so the list stays true) and on any crash or timeout, listed or not.
//
// Inputs an op needs at compile time (a Reshape target, Slice bounds, a TopK k: the error says
// "must be known at compile time") are retried fixed by value through compile_options::
// input_values, first the integer inputs, then all of them; the summary counts those cases.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>

#include "../support/onnx_cases.hpp"
#include "../support/read_file.hpp"

namespace fs = std::filesystem;

namespace {

constexpr double rtol = 1e-3, atol = 1e-7;
constexpr unsigned case_seconds = 120;

using ember::test::compile_onnx_case;
using ember::test::load_pbs;
using ember::test::read_file;

struct outcome {
    bool passed = false;
    int frozen = 0;  // 0: nothing fixed, 1: integer inputs fixed by value, 2: all inputs fixed
    std::string reason;
    std::set<std::string> ops;  // op types of the model's nodes, for the per-op table
};

template <class T>
double as_double(const std::byte* p, std::size_t i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return static_cast<double>(static_cast<float>(v));
}
template <>
double as_double<double>(const std::byte* p, std::size_t i) {
    double v;
    std::memcpy(&v, p + i * sizeof(double), sizeof(double));
    return v;
}

/// Element i of any tensor as a double, for comparing floats and for messages (integers and
/// booleans are compared bit for bit).
double element(const ember::tensor& t, std::size_t i) {
    const std::byte* p = t.bytes();
    switch (t.type()) {
        case ember::dtype::float32: return as_double<float>(p, i);
        case ember::dtype::float16: return as_double<ember::float16>(p, i);
        case ember::dtype::bfloat16: return as_double<ember::bfloat16>(p, i);
        case ember::dtype::float64: return as_double<double>(p, i);
        case ember::dtype::int8: return static_cast<double>(reinterpret_cast<const std::int8_t*>(p)[i]);
        case ember::dtype::uint8: return static_cast<double>(reinterpret_cast<const std::uint8_t*>(p)[i]);
        case ember::dtype::int16: return static_cast<double>(reinterpret_cast<const std::int16_t*>(p)[i]);
        case ember::dtype::int32: return static_cast<double>(reinterpret_cast<const std::int32_t*>(p)[i]);
        case ember::dtype::int64: return static_cast<double>(reinterpret_cast<const std::int64_t*>(p)[i]);
        case ember::dtype::uint16: return static_cast<double>(reinterpret_cast<const std::uint16_t*>(p)[i]);
        case ember::dtype::uint32: return static_cast<double>(reinterpret_cast<const std::uint32_t*>(p)[i]);
        case ember::dtype::uint64: return static_cast<double>(reinterpret_cast<const std::uint64_t*>(p)[i]);
        case ember::dtype::boolean: return reinterpret_cast<const std::uint8_t*>(p)[i] != 0 ? 1.0 : 0.0;
        case ember::dtype::undefined: break;
    }
    return 0.0;
}

bool is_float(ember::dtype t) {
    return t == ember::dtype::float32 || t == ember::dtype::float16 || t == ember::dtype::bfloat16 || t == ember::dtype::float64;
}

/// Empty when got matches want; else what differs.
std::string compare(const std::string& name, const ember::tensor& got, const ember::tensor& want) {
    // ONNX 1.12's test data stores bfloat16 reference outputs as uint16 tensors of the same bits.
    const bool bfloat16_as_bits = got.type() == ember::dtype::bfloat16 && want.type() == ember::dtype::uint16;
    if (got.type() != want.type() && !bfloat16_as_bits)
        return ember::detail::format("output '{}' is {}, expected {}", name, got.type(), want.type());
    if (got.dims() != want.dims()) return ember::detail::format("output '{}' has shape {}, expected {}", name, got.dims(), want.dims());
    const std::size_t n = got.size();
    if (bfloat16_as_bits) {
        for (std::size_t i = 0; i < n; ++i) {
            const double g = element(got, i), w = as_double<ember::bfloat16>(want.bytes(), i);
            if (!(g == w || (std::isnan(g) && std::isnan(w))))
                return ember::detail::format("output '{}' element {} is {}, expected {} (bfloat16)", name, i, g, w);
        }
        return {};
    }
    if (!is_float(got.type())) {
        const std::size_t width = ember::size_of(got.type());
        for (std::size_t i = 0; i < n; ++i)
            if (std::memcmp(got.bytes() + i * width, want.bytes() + i * width, width) != 0)
                return ember::detail::format("output '{}' element {} is {}, expected {}", name, i, element(got, i), element(want, i));
        return {};
    }
    std::size_t bad = 0, first = n;
    for (std::size_t i = 0; i < n; ++i) {
        const double g = element(got, i), w = element(want, i);
        const bool same = (std::isnan(g) && std::isnan(w)) || g == w || std::fabs(g - w) <= atol + rtol * std::fabs(w);
        if (!same && bad++ == 0) first = i;
    }
    if (bad == 0) return {};
    return ember::detail::format("output '{}': {} of {} elements differ; element {} is {}, expected {}", name, bad, n, first, element(got, first),
                                 element(want, first));
}

/// Runs one data set of a case. Fills out.reason on failure.
outcome run_data_set(const ember::graph& g, const fs::path& set) {
    outcome out;
    std::vector<ember::tensor> inputs, wanted;
    if (!load_pbs(set, "input", g.inputs.size(), inputs, out.reason) || !load_pbs(set, "output", g.outputs.size(), wanted, out.reason))
        return out;
    auto p = compile_onnx_case(g, inputs, out.frozen);
    if (!p) {
        out.reason = "compile: " + p.error().message;
        return out;
    }
    ember::session s(*p);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string& name = g.values[g.inputs[i]].name;
        if (p->input_index(name) == ember::plan::npos) continue;  // fixed by value
        if (ember::status st = s.bind_input(name, inputs[i].bytes(), inputs[i].size_bytes()); st != ember::status::ok) {
            out.reason = "bind input '" + name + "': " + std::string(ember::to_string(st));
            return out;
        }
    }
    std::vector<ember::tensor> got;
    for (std::size_t j = 0; j < p->output_count(); ++j) {
        auto t = ember::tensor::create(p->output(j).type, p->output(j).dims);
        if (!t) {
            out.reason = "output tensor: " + t.error().message;
            return out;
        }
        if (ember::status st = s.bind_output(j, t->bytes(), t->size_bytes()); st != ember::status::ok) {
            out.reason = "bind output: " + std::string(ember::to_string(st));
            return out;
        }
        got.push_back(std::move(*t));
    }
    if (ember::status st = s.run(); st != ember::status::ok) {
        out.reason = "run: " + std::string(ember::to_string(st));
        return out;
    }
    for (std::size_t j = 0; j < got.size(); ++j) {
        const std::string why = compare(p->output(j).name, got[j], wanted[j]);
        if (!why.empty()) {
            out.reason = why;
            return out;
        }
    }
    out.passed = true;
    out.reason.clear();
    return out;
}

outcome run_case(const fs::path& dir) {
    outcome out;
    auto g = ember::onnx::load_file((dir / "model.onnx").string());
    if (!g) {
        out.reason = "load: " + g.error().message;
        return out;
    }
    for (const ember::node& n : g->nodes) out.ops.insert(n.domain.empty() ? n.op_type : n.domain + "." + n.op_type);
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) {
        out.reason = "no test_data_set_N directory";
        return out;
    }
    for (const fs::path& set : sets) {
        outcome o = run_data_set(*g, set);
        if (!o.passed) {
            if (sets.size() > 1) o.reason = set.filename().string() + ": " + o.reason;
            o.ops = std::move(out.ops);
            return o;
        }
        out.frozen = std::max(out.frozen, o.frozen);
    }
    out.passed = true;
    return out;
}

/// Runs run_case in a child process; a crash or a timeout becomes the reason.
outcome run_isolated(const fs::path& dir, bool& crashed) {
    crashed = false;
    int fds[2];
    if (pipe(fds) != 0) return run_case(dir);
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return run_case(dir);
    }
    if (pid == 0) {
        close(fds[0]);
        alarm(case_seconds);
        const outcome o = run_case(dir);
        // "P|F", the freeze level, the op types joined by ',', '\x1f', the reason
        std::string msg = std::string(o.passed ? "P" : "F") + static_cast<char>('0' + o.frozen);
        for (const std::string& op : o.ops) msg += op + ",";
        msg += '\x1f' + o.reason;
        std::size_t done = 0;
        while (done < msg.size()) {
            const ssize_t w = write(fds[1], msg.data() + done, msg.size() - done);
            if (w <= 0) break;
            done += static_cast<std::size_t>(w);
        }
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    std::string msg;
    char buf[4096];
    ssize_t r;
    while ((r = read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<std::size_t>(r));
    close(fds[0]);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    outcome o;
    if (WIFSIGNALED(wstatus) || msg.size() < 2) {
        crashed = true;
        const int sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
        o.reason = sig == SIGALRM ? ember::detail::format("timed out after {} s", case_seconds)
                                  : ember::detail::format("crashed (signal {}: {})", sig, sig ? strsignal(sig) : "no result");
        return o;
    }
    o.passed = msg[0] == 'P';
    o.frozen = msg[1] - '0';
    const std::size_t sep = msg.find('\x1f', 2);
    const std::string ops = msg.substr(2, sep == std::string::npos ? std::string::npos : sep - 2);
    for (std::size_t at = 0, comma; (comma = ops.find(',', at)) != std::string::npos; at = comma + 1) o.ops.insert(ops.substr(at, comma - at));
    o.reason = sep == std::string::npos ? std::string() : msg.substr(sep + 1);
    return o;
}

std::map<std::string, std::string> read_expected(const std::string& path, bool& ok) {
    std::map<std::string, std::string> expected;
    std::string text;
    ok = read_file(path, text);
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(pos, end - pos);
        pos = end + 1;
        if (line.empty() || line[0] == '#') continue;
        const std::size_t space = line.find_first_of(" \t");
        const std::string name = line.substr(0, space);
        std::string reason = space == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", space));
        expected[name] = reason;
    }
    return expected;
}

} // namespace

int main(int argc, char** argv) {
    std::string data = ember::test::onnx_testdata_dir, expected_path, filter;
    bool verbose = false, emit = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "ember_conformance: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--data") data = value();
        else if (a == "--expected") expected_path = value();
        else if (a == "--filter") filter = value();
        else if (a == "--verbose") verbose = true;
        else if (a == "--emit-expected") emit = true;
        else {
            std::fprintf(stderr, "usage: ember_conformance [--data DIR] [--expected FILE] [--filter TEXT] [--verbose] [--emit-expected]\n");
            return 2;
        }
    }
    if (!fs::is_directory(fs::path(data) / "node")) {
        std::fprintf(stderr, "ember_conformance: no ONNX test data under %s (apt-get install -y libonnx-testdata)\n", data.c_str());
        return 2;
    }
    bool have_expected = true;
    std::map<std::string, std::string> expected;
    if (!expected_path.empty()) {
        expected = read_expected(expected_path, have_expected);
        if (!have_expected) {
            std::fprintf(stderr, "ember_conformance: cannot read %s\n", expected_path.c_str());
            return 2;
        }
    }

    struct op_row {
        int cases = 0, passed = 0;
    };
    std::map<std::string, op_row> per_op;
    std::map<std::string, op_row> per_category;
    std::vector<std::string> unexpected;
    std::set<std::string> seen;
    int passed = 0, failed = 0, frozen = 0;
    for (const ember::test::onnx_case& c : ember::test::list_onnx_cases(data)) {
        const std::string& name = c.name;
        const std::string category = name.substr(0, name.find('/'));
        const fs::path& dir = c.dir;
        if (!filter.empty() && name.find(filter) == std::string::npos) continue;
        seen.insert(name);
        bool crashed = false;
        const outcome o = run_isolated(dir, crashed);
        const auto listed = expected.find(name);
        const bool is_expected = listed != expected.end();
        (o.passed ? passed : failed) += 1;
        frozen += o.passed && o.frozen > 0 ? 1 : 0;
        per_category[category].cases += 1;
        per_category[category].passed += o.passed ? 1 : 0;
        for (const std::string& op : o.ops) {
            per_op[op].cases += 1;
            per_op[op].passed += o.passed ? 1 : 0;
        }
        if (crashed) unexpected.push_back(name + ": " + o.reason);
        else if (!o.passed && !is_expected) unexpected.push_back(name + ": unexpected failure: " + o.reason);
        else if (o.passed && is_expected) unexpected.push_back(name + ": unexpected pass (remove it from the expected-failure list)");
        if (verbose) std::printf("%s %s%s%s\n", o.passed ? "PASS" : "FAIL", name.c_str(), o.passed ? "" : ": ", o.reason.c_str());
        if (emit && !o.passed) std::printf("EXPECT %s  %s\n", name.c_str(), o.reason.c_str());
    }
    for (const auto& [name, reason] : expected)
        if (!seen.count(name) && filter.empty()) unexpected.push_back(name + ": listed as expected to fail but no such case");

    std::printf("\n%-36s %6s %6s %6s\n", "op", "cases", "passed", "failed");
    for (const auto& [op, row] : per_op) std::printf("%-36s %6d %6d %6d\n", op.c_str(), row.cases, row.passed, row.cases - row.passed);
    std::printf("\n%-36s %6s %6s %6s\n", "category", "cases", "passed", "failed");
    for (const auto& [cat, row] : per_category) std::printf("%-36s %6d %6d %6d\n", cat.c_str(), row.cases, row.passed, row.cases - row.passed);
    std::printf("\n%d of the passes had inputs fixed by value at compile time (compile_options::input_values)\n", frozen);
    for (const std::string& u : unexpected) std::printf("UNEXPECTED %s\n", u.c_str());
    std::printf("%d passed, %d failed\n", passed, failed);
    return unexpected.empty() ? 0 : 1;
}
