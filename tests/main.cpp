// SPDX-License-Identifier: Apache-2.0
// doctest's main. The op table (every op's kernels) is not compiled here: the test binary links
// ember_op_table and compiles with EMBER_OP_TABLE_IN_ONE_TU (tests/CMakeLists.txt).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
