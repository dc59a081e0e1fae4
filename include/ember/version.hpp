// SPDX-License-Identifier: Apache-2.0
// Library version and the versioned inline namespace every public name lives in.
#pragma once

#define EMBER_VERSION_MAJOR 0
#define EMBER_VERSION_MINOR 1
#define EMBER_VERSION_PATCH 0
#define EMBER_VERSION_STRING "0.1.0"

// Two copies of ember of different versions in one program (a game and a plugin, say) do not
// collide: every name is in ember::v0_1, reached as ember:: through the inline namespace.
#define EMBER_NAMESPACE_BEGIN \
    namespace ember {         \
    inline namespace v0_1 {
#define EMBER_NAMESPACE_END \
    }                       \
    }
