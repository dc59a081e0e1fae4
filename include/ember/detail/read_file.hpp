// SPDX-License-Identifier: Apache-2.0
// Reading a whole file into memory, shared by the .npy reader (io/npy.hpp) and the ONNX loader
// (onnx.hpp). Each caller words its own errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

/// How read_whole_file() ended.
enum class read_file_status { ok, cannot_open, cannot_read };

/// Reads the file at path into bytes, in chunks to the end rather than trusting ftell (a folder
/// opens, and its "size" is garbage; a pipe has none). Stops early, still with ok, once more
/// than max_bytes are read: the caller sees bytes.size() > max_bytes.
inline read_file_status read_whole_file(const std::string& path, std::vector<unsigned char>& bytes,
                                        std::size_t max_bytes = SIZE_MAX) {
    bytes.clear();
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return read_file_status::cannot_open;
    constexpr std::size_t chunk = std::size_t{1} << 20;
    bool ok = true;
    for (;;) {
        const std::size_t at = bytes.size();
        if (at > max_bytes) break;
        bytes.resize(at + chunk);
        const std::size_t got = std::fread(bytes.data() + at, 1, chunk, f);
        bytes.resize(at + got);
        if (got < chunk) {
            ok = std::ferror(f) == 0;
            break;
        }
    }
    std::fclose(f);
    return ok ? read_file_status::ok : read_file_status::cannot_read;
}

} // namespace detail
EMBER_NAMESPACE_END
