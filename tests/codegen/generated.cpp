// SPDX-License-Identifier: Apache-2.0
// The generated side of the codegen round trip (driver.cpp): includes the header ember-codegen
// made, EMBER_CODEGEN_HEADER, and hands its namespace's build_graph() and compile() to the
// driver. Compiled with the warning flags of ember's own targets, so the header must be
// warning-free.
#include EMBER_CODEGEN_HEADER

#include "generated.hpp"

namespace {
ember::result<ember::graph> graph_of_header() { return EMBER_CODEGEN_NAMESPACE::build_graph(); }
#ifndef EMBER_CODEGEN_GRAPH_ONLY
ember::result<ember::plan> plan_of_header(const ember::compile_options& options) { return EMBER_CODEGEN_NAMESPACE::compile(options); }
#endif
} // namespace

#ifdef EMBER_CODEGEN_GRAPH_ONLY
extern const generated_model generated = {&graph_of_header, nullptr};
#else
extern const generated_model generated = {&graph_of_header, &plan_of_header};
#endif
