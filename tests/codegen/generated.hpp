// SPDX-License-Identifier: Apache-2.0
// What generated.cpp (compiled over one generated header) hands to driver.cpp.
#pragma once

#include <ember/ember.hpp>

struct generated_model {
    ember::result<ember::graph> (*build_graph)();
    /// The header's compile(); null when generated.cpp was built with EMBER_CODEGEN_GRAPH_ONLY
    /// (the zoo tests: a TU that calls ember::compile() takes ~50 s to compile at -O2, one that
    /// only builds the graph ~12 s; the bundled model's test covers the header's compile()).
    ember::result<ember::plan> (*compile)(const ember::compile_options&);
};

extern const generated_model generated;
