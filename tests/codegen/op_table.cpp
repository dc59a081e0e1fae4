// SPDX-License-Identifier: Apache-2.0
// The op table of the codegen round-trip binaries (EMBER_OP_TABLE_IN_ONE_TU): compiled once here,
// so that the driver and the generated TUs compile without it.
#define EMBER_OP_TABLE_IMPLEMENTATION
#include <ember/ember.hpp>
