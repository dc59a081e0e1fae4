// SPDX-License-Identifier: Apache-2.0
// The op table (every op's kernels) of ember's own executables: the examples, tools, tests and
// benchmarks link the static library ember_op_table built from this file (and, with
// EMBER_DISPATCH_ALL, one kernel table per ISA) and compile with EMBER_OP_TABLE_IN_ONE_TU, so
// the tree compiles the kernels once instead of once per executable. An application with
// several executables can do the same (config.hpp); one with a single .cpp needs nothing.
#define EMBER_OP_TABLE_IMPLEMENTATION
#include <ember/ember.hpp>
