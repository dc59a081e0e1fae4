// SPDX-License-Identifier: Apache-2.0
// The codegen round trip: the graph and plan of a header made by ember-codegen against those of
// ember::onnx::load_file() on the same model.
//
//     codegen_<model> MODEL.onnx [INPUT.npy] [--time N]
//
// Fails (exit 1, with the first difference) unless build_graph() gives the graph load_file()
// gives, field by field and byte for byte (tests/support/graph_diff.hpp), and the header's
// compile() gives a plan with the same steps (op and node of each), inputs, outputs, arena and
// weight bytes as ember::compile() of the loaded graph, whose run on the same input (INPUT.npy,
// or a seeded pattern for each input, symbolic dimensions 1) gives the same output bits.
// --time N also prints the medians of N runs of load_file(), load_file() + compile(),
// build_graph() and the header's compile(). generated.cpp, which includes the generated header,
// is compiled per model and linked with this file and op_table.cpp.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <ember/ember.hpp>
#include <ember/io/npy.hpp>
#include <ember/onnx.hpp>

#include "codegen/generated.hpp"
#include "support/graph_diff.hpp"

namespace {

ember::result<ember::graph> generated_graph() { return generated.build_graph(); }

/// The header's compile(), or what it does (build_graph(), then ember::compile()) when
/// generated.cpp left it out.
ember::result<ember::plan> generated_compile(const ember::compile_options& options) {
    if (generated.compile) return generated.compile(options);
    ember::result<ember::graph> g = generated.build_graph();
    if (!g) return g.error();
    return ember::compile(*g, options);
}

int fail(const std::string& why) {
    std::fprintf(stderr, "codegen round trip: FAIL: %s\n", why.c_str());
    return 1;
}

template <class T>
bool ok_or_report(const ember::result<T>& r, const char* what) {
    if (r) return true;
    std::fprintf(stderr, "codegen round trip: FAIL: %s: %s\n", what, r.error().message.c_str());
    return false;
}

/// The difference between two plans in what a user can see of them, or "".
std::string plan_diff(const ember::plan& a, const ember::plan& b) {
    if (a.arena_bytes() != b.arena_bytes())
        return "arena " + std::to_string(a.arena_bytes()) + " vs " + std::to_string(b.arena_bytes()) + " bytes";
    if (a.weights_bytes() != b.weights_bytes())
        return "weights " + std::to_string(a.weights_bytes()) + " vs " + std::to_string(b.weights_bytes()) + " bytes";
    if (a.steps().size() != b.steps().size())
        return std::to_string(a.steps().size()) + " vs " + std::to_string(b.steps().size()) + " steps";
    for (std::size_t i = 0; i < a.steps().size(); ++i)
        if (a.step_op(i) != b.step_op(i) || a.step_name(i) != b.step_name(i)) return "step " + std::to_string(i) + " differs";
    if (a.input_count() != b.input_count() || a.output_count() != b.output_count()) return "input or output count differs";
    for (std::size_t i = 0; i < a.input_count() + a.output_count(); ++i) {
        const bool in = i < a.input_count();
        const ember::io_info& x = in ? a.input(i) : a.output(i - a.input_count());
        const ember::io_info& y = in ? b.input(i) : b.output(i - a.input_count());
        if (x.name != y.name || x.type != y.type || x.dims != y.dims || x.bytes != y.bytes || x.arena_offset != y.arena_offset)
            return std::string(in ? "input '" : "output '") + x.name + "' differs";
    }
    return "";
}

/// A seeded pattern of `bytes` bytes: floats in [-1, 1) for float32, small values otherwise.
std::vector<std::byte> pattern(ember::dtype type, std::size_t bytes, std::uint32_t seed) {
    std::vector<std::byte> out(bytes);
    std::uint32_t s = seed * 2654435761u + 1;
    auto next = [&] { return s = s * 1664525u + 1013904223u; };
    if (type == ember::dtype::float32) {
        for (std::size_t i = 0; i + 4 <= bytes; i += 4) {
            const float f = static_cast<float>(next() >> 8) / 8388608.0f - 1.0f;
            std::memcpy(&out[i], &f, 4);
        }
    } else {
        for (std::byte& b : out) b = static_cast<std::byte>((next() >> 24) & 3);
    }
    return out;
}

double median_ms(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    std::string model, input_path;
    std::size_t time_runs = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--time" && i + 1 < argc) time_runs = static_cast<std::size_t>(std::atoi(argv[++i]));
        else if (model.empty()) model = arg;
        else input_path = arg;
    }
    if (model.empty()) return fail("usage: codegen_<model> MODEL.onnx [INPUT.npy] [--time N]");

    // The graph, field by field.
    ember::result<ember::graph> loaded = ember::onnx::load_file(model);
    if (!ok_or_report(loaded, "load_file")) return 1;
    ember::result<ember::graph> generated = generated_graph();
    if (!ok_or_report(generated, "build_graph")) return 1;
    if (std::string d = ember::test::graph_diff(*loaded, *generated); !d.empty()) return fail("graphs differ: " + d);
    std::map<std::string, int> ops;
    for (const ember::node& n : generated->nodes) ++ops[n.op_type];

    // The plans: the loaded graph through ember::compile(), the header's compile().
    ember::compile_options options;
    ember::tensor given;
    if (!input_path.empty()) {
        ember::result<ember::tensor> x = ember::npy::load_file(input_path);
        if (!ok_or_report(x, "input .npy")) return 1;
        given = std::move(*x);
        if (loaded->inputs.empty()) return fail("the model has no input for " + input_path);
        options.input_shapes = {{loaded->values[loaded->inputs[0]].name, given.dims()}};
    } else {
        for (ember::value_id id : loaded->inputs)
            for (const ember::dim& d : loaded->values[id].declared.dims)
                if (!d.known() && !d.symbol.empty()) options.dim_values.push_back({d.symbol, 1});
    }
    ember::result<ember::plan> expected = ember::compile(*loaded, options);
    if (!ok_or_report(expected, "compile(load_file())")) return 1;
    ember::result<ember::plan> actual = generated_compile(options);
    if (!ok_or_report(actual, "the header's compile()")) return 1;
    if (std::string d = plan_diff(*expected, *actual); !d.empty()) return fail("plans differ: " + d);

    // One run of each on the same input; outputs compared bit for bit.
    ember::session s1(*expected), s2(*actual);
    if (s1.state() != ember::status::ok || s2.state() != ember::status::ok) return fail("session state");
    std::vector<std::vector<std::byte>> inputs;
    for (std::size_t i = 0; i < expected->input_count(); ++i) {
        const ember::io_info& in = expected->input(i);
        if (i == 0 && !given.empty()) {
            if (given.size_bytes() != in.bytes || given.type() != in.type) return fail("the .npy does not match input 0");
            inputs.emplace_back(given.bytes(), given.bytes() + given.size_bytes());
        } else {
            inputs.push_back(pattern(in.type, in.bytes, static_cast<std::uint32_t>(i)));
        }
        if (s1.bind_input(i, inputs.back().data(), in.bytes) != ember::status::ok ||
            s2.bind_input(i, inputs.back().data(), in.bytes) != ember::status::ok)
            return fail("bind_input " + in.name);
    }
    std::vector<std::vector<std::byte>> out1, out2;
    for (std::size_t i = 0; i < expected->output_count(); ++i) {
        const std::size_t bytes = expected->output(i).bytes;
        out1.emplace_back(bytes, std::byte{0x55});
        out2.emplace_back(bytes, std::byte{0xaa});  // a different fill: an output left unwritten differs
        if (s1.bind_output(i, out1.back().data(), bytes) != ember::status::ok ||
            s2.bind_output(i, out2.back().data(), bytes) != ember::status::ok)
            return fail("bind_output " + expected->output(i).name);
    }
    if (s1.run() != ember::status::ok || s2.run() != ember::status::ok) return fail("run");
    std::size_t output_bytes = 0;
    for (std::size_t i = 0; i < expected->output_count(); ++i) {
        if (out1[i] != out2[i]) return fail("output '" + expected->output(i).name + "' differs");
        output_bytes += out1[i].size();
    }

    std::printf("codegen round trip: %s: %zu nodes (", model.c_str(), generated->nodes.size());
    bool first = true;
    for (const auto& [op, count] : ops) {
        std::printf("%s%s %d", first ? "" : ", ", op.c_str(), count);
        first = false;
    }
    std::printf("), %zu constants, %zu steps, arena %zu bytes, %zu output bytes identical\n", generated->constants.size(),
                expected->steps().size(), expected->arena_bytes(), output_bytes);

    if (time_runs > 0) {
        std::vector<double> via_file, via_header, load_only, build_only;
        using clock = std::chrono::steady_clock;
        auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
        // The two ways alternate, each result dropped at once (neither runs with the other's
        // plan alive), and each goes first every other round.
        auto via_load_file = [&] {
            const auto t0 = clock::now();
            ember::result<ember::graph> g = ember::onnx::load_file(model);
            const auto t1 = clock::now();
            const bool ok = g && ember::compile(*g, options);
            load_only.push_back(ms(t1 - t0));
            via_file.push_back(ms(clock::now() - t0));
            return ok;
        };
        auto via_generated = [&] {
            const auto t0 = clock::now();
            const bool built = static_cast<bool>(generated_graph());
            const auto t1 = clock::now();
            const bool ok = built && generated_compile(options);
            build_only.push_back(ms(t1 - t0));
            via_header.push_back(ms(clock::now() - t1));
            return ok;
        };
        for (std::size_t r = 0; r < time_runs; ++r)
            if (r % 2 ? !(via_generated() && via_load_file()) : !(via_load_file() && via_generated()))
                return fail("a timed load or compile failed");
        std::printf("codegen timing (median of %zu): load_file %.3f ms, load_file + compile %.3f ms; build_graph %.3f ms, "
                    "header compile() %.3f ms\n",
                    time_runs, median_ms(load_only), median_ms(via_file), median_ms(build_only), median_ms(via_header));
    }
    return 0;
}
