// SPDX-License-Identifier: Apache-2.0
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

// The test binary compiles the built-in op table here only (EMBER_OP_TABLE_IN_ONE_TU is set for
// the whole target in tests/CMakeLists.txt): the other test files just call compile().
#define EMBER_OP_TABLE_IMPLEMENTATION
#include <ember/ember.hpp>
