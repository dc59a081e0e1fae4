// SPDX-License-Identifier: Apache-2.0
// ember_user_config.hpp, anywhere on your include path: <ember/config.hpp> reads it first.
#pragma once
#define EMBER_MAX_RANK 6  // shapes hold at most 6 dimensions inline (default 8)
