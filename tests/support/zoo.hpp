// SPDX-License-Identifier: Apache-2.0
// The anchor model zoo (torch exports made by ../shared/anchors/setup.sh into
// ~/.cache/ember-anchors, or $EMBER_ANCHORS): where it is, and one model with its seeded input.
// Nothing of it is committed; tests that use it say they are skipped, and why, when it is absent.
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

#include <ember/ember.hpp>
#include <ember/io/npy.hpp>
#include <ember/onnx.hpp>

namespace ember::test {

inline bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

/// The zoo's models folder ("" when neither $EMBER_ANCHORS nor $HOME is set).
inline std::string zoo_dir() {
    if (const char* env = std::getenv("EMBER_ANCHORS")) return std::string(env) + "/models";
    if (const char* home = std::getenv("HOME")) return std::string(home) + "/.cache/ember-anchors/models";
    return std::string();
}

/// Whether the zoo is there; when not, `why` says so in words for a MESSAGE.
inline bool have_zoo(std::string& why) {
    const std::string dir = zoo_dir();
    if (!dir.empty() && file_exists(dir + "/models.json")) return true;
    why = "no anchor model zoo in '" + dir + "' (run ../shared/anchors/setup.sh, or set EMBER_ANCHORS)";
    return false;
}

/// A zoo model and its seeded input: NAME.onnx and NAME.in.npy.
struct zoo_model {
    graph g;
    tensor input;
};

/// Loads zoo model `name`; an error when a file is missing or does not load.
inline result<zoo_model> load_zoo_model(const std::string& name) {
    const std::string base = zoo_dir() + "/" + name;
    result<graph> g = onnx::load_file(base + ".onnx");
    if (!g) return g.error();
    result<tensor> x = npy::load_file((base + ".in.npy").c_str());
    if (!x) return x.error();
    return zoo_model{std::move(*g), std::move(*x)};
}

} // namespace ember::test
