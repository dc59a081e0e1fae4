// SPDX-License-Identifier: Apache-2.0
// EMBER_STB_WARNINGS_OFF / EMBER_STB_WARNINGS_ON around an stb include (image/decode.hpp,
// image/encode.hpp, image/draw.hpp): stb is C written for C compilers, and a user's
// -Wall -Wextra -Werror must not fail on it when it is not a system header.
#pragma once

#if defined(__GNUC__)
#define EMBER_STB_WARNINGS_OFF                                          \
    _Pragma("GCC diagnostic push")                                      \
    _Pragma("GCC diagnostic ignored \"-Wunused-function\"")             \
    _Pragma("GCC diagnostic ignored \"-Wsign-compare\"")                \
    _Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"")  \
    _Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")            \
    _Pragma("GCC diagnostic ignored \"-Wimplicit-fallthrough\"")        \
    _Pragma("GCC diagnostic ignored \"-Wcast-qual\"")                   \
    _Pragma("GCC diagnostic ignored \"-Wcast-align\"")                  \
    _Pragma("GCC diagnostic ignored \"-Wdouble-promotion\"")            \
    _Pragma("GCC diagnostic ignored \"-Wold-style-cast\"")              \
    _Pragma("GCC diagnostic ignored \"-Wshadow\"")                      \
    _Pragma("GCC diagnostic ignored \"-Wconversion\"")                  \
    _Pragma("GCC diagnostic ignored \"-Wsign-conversion\"")
#define EMBER_STB_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define EMBER_STB_WARNINGS_OFF
#define EMBER_STB_WARNINGS_ON
#endif
