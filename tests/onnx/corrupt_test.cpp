// SPDX-License-Identifier: Apache-2.0
// Damaged models give a status, never a signal. For every model of ONNX's
// conformance suite (libonnx-testdata), the model's bytes cut at every 1% of its length, and 40
// copies with 1 to 3 random bytes flipped (XOR with a random nonzero mask; seeded: the same
// variants every run),
// are loaded with onnx::load_memory(); each that loads is compiled for the case's inputs, and
// each plan that compiles is run on them (a flipped byte in a Gather's constant indices must be
// reported by the kernel, not read out of bounds). Any crash, abort or sanitizer report fails the
// test (ctest onnx/corrupt); a handler names the variant that was running when a signal came.
// Skipped, with the reason, when libonnx-testdata is absent.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>

#include "support/onnx_cases.hpp"
#include "support/read_file.hpp"

namespace {

// What runs now, for the signal handler (written before each variant; read only by the handler).
char current[512] = "nothing yet";

extern "C" void on_signal(int sig) {
    const char head[] = "\ncorrupt models: signal while running ";
    (void)!write(2, head, sizeof head - 1);
    (void)!write(2, current, std::strlen(current));
    (void)!write(2, "\n", 1);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void set_current(const std::string& what) {
    const std::size_t n = what.size() < sizeof current - 1 ? what.size() : sizeof current - 1;
    std::memcpy(current, what.data(), n);
    current[n] = '\0';
}

struct tally {
    long variants = 0, loaded = 0, compiled = 0, ran = 0, run_errors = 0;
};

/// Loads, compiles and runs one variant of a model's bytes.
void attempt(const std::vector<char>& bytes, const std::vector<ember::tensor>& inputs, tally& t) {
    ++t.variants;
    ember::result<ember::graph> g = ember::onnx::load_memory(bytes.data(), bytes.size());
    if (!g) return;
    ++t.loaded;
    int frozen = 0;
    ember::result<ember::plan> p = ember::test::compile_onnx_case(*g, inputs, frozen);
    if (!p) return;
    ++t.compiled;
    ember::session s(*p);
    if (s.state() != ember::status::ok) return;
    // Bind the case's inputs where the plan still takes them as they are (a flip may have
    // changed a declared dtype or rank: then that input stays in the arena, zeroed).
    for (std::size_t i = 0; i < p->input_count(); ++i)
        for (std::size_t k = 0; k < inputs.size() && k < g->inputs.size(); ++k)
            if (g->values[g->inputs[k]].name == p->input(i).name && inputs[k].type() == p->input(i).type &&
                inputs[k].size_bytes() == p->input(i).bytes)
                (void)s.bind_input(i, inputs[k].bytes(), inputs[k].size_bytes());
    if (s.run() == ember::status::ok) ++t.ran;
    else ++t.run_errors;
}

} // namespace

TEST_CASE("corrupt models: every conformance model cut at each 1% and with bytes flipped gives a status, never a signal") {
    constexpr int flips = 40;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, on_signal);

    const std::vector<ember::test::onnx_case> cases = ember::test::list_onnx_cases(ember::test::onnx_testdata_dir);
    if (cases.empty()) {
        MESSAGE("skipped: no ONNX conformance models in " << ember::test::onnx_testdata_dir << " (install libonnx-testdata)");
        return;
    }
    tally t;
    std::size_t models = 0;
    std::mt19937 rng(20261205);
    for (const ember::test::onnx_case& c : cases) {
        std::string text;
        if (!ember::test::read_file((c.dir / "model.onnx").string(), text)) continue;
        const std::vector<char> original(text.begin(), text.end());
        std::vector<ember::tensor> inputs;
        std::size_t count = 0;
        while (std::filesystem::exists(c.dir / "test_data_set_0" / ("input_" + std::to_string(count) + ".pb"))) ++count;
        std::string why;
        if (!ember::test::load_pbs(c.dir / "test_data_set_0", "input", count, inputs, why)) inputs.clear();
        ++models;

        for (int percent = 0; percent < 100; ++percent) {
            const std::size_t length = original.size() * static_cast<std::size_t>(percent) / 100;
            set_current(c.name + " cut at " + std::to_string(length) + " of " + std::to_string(original.size()) + " bytes");
            attempt(std::vector<char>(original.begin(), original.begin() + static_cast<std::ptrdiff_t>(length)), inputs, t);
        }
        for (int f = 0; f < flips && !original.empty(); ++f) {
            std::vector<char> bytes = original;
            const int n = 1 + static_cast<int>(rng() % 3);
            std::string what = c.name + " with bytes flipped:";
            for (int k = 0; k < n; ++k) {
                const std::size_t at = rng() % bytes.size();
                const unsigned mask = 1 + rng() % 255;
                bytes[at] = static_cast<char>(static_cast<unsigned char>(bytes[at]) ^ mask);
                what += " [" + std::to_string(at) + "]^=" + std::to_string(mask);
            }
            set_current(what);
            attempt(bytes, inputs, t);
        }
    }
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
    MESSAGE(models << " models, " << t.variants << " damaged variants: " << t.loaded << " loaded, " << t.compiled << " compiled, " << t.ran
                   << " ran (" << t.run_errors << " runs reported an error); no signal");
    CHECK(models > 1000);
    CHECK(t.loaded > 0);  // some damage leaves a model that loads: compile and run were exercised
    CHECK(t.ran > 0);
}
