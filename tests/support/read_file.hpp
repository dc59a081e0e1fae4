// SPDX-License-Identifier: Apache-2.0
// Test helper without doctest (the conformance runner uses it too): a whole file into a string.
#pragma once

#include <cstdio>
#include <string>

namespace ember::test {

/// Appends the bytes of the file at `path` to `out`, read in chunks to EOF; false if it cannot be opened.
inline bool read_file(const std::string& path, std::string& out) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
    return true;
}

} // namespace ember::test
