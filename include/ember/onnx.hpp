// SPDX-License-Identifier: Apache-2.0
// The ONNX importer: ONNX bytes -> ember::graph. Include it only in the translation unit that
// loads models; ember.hpp never includes it.
//
//   ember::result<ember::graph> g = ember::onnx::load_file("model.onnx");
//   if (!g) { /* g.error().code, g.error().message */ }
//
// load_file() reads a file (external data relative to its folder), load_memory() parses bytes
// the caller holds, load() pulls bytes through the caller's read callback (an archive, a pack
// file, a game's asset system). load_options::decrypt decrypts all of them in place, external
// weight files included (obfuscation, not DRM). Corrupt or truncated bytes give status::invalid_model with the
// message, the field and the byte offset; ops, types and features ember lacks give
// status::unsupported_op; files that cannot be read give status::io_error naming the path.
//
// Parts: onnx/wire.hpp (protobuf wire format), onnx/model.hpp (ONNX messages and their
// parsers), onnx/import.hpp (messages -> graph, load_options), onnx/write.hpp (graph -> ONNX
// bytes: save_memory, save_file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/read_file.hpp"
#include "ember/graph/graph.hpp"
#include "ember/onnx/import.hpp"
#include "ember/onnx/model.hpp"
#include "ember/onnx/wire.hpp"
#include "ember/onnx/write.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace onnx {

/// A source of model bytes: read(ctx, offset, dst, bytes) copies `bytes` bytes starting at
/// `offset` into dst and returns how many it copied (fewer means an error). size is the total.
struct byte_reader {
    std::uint64_t size = 0;
    std::size_t (*read)(void* ctx, std::uint64_t offset, void* dst, std::size_t bytes) = nullptr;
    void* ctx = nullptr;
};

namespace detail {
/// Runs load_options::decrypt over model bytes [offset, offset + bytes), in place.
[[nodiscard]] inline result<void> decrypt_model(const load_options& options, std::uint64_t offset, std::uint8_t* data, std::size_t bytes) {
    if (!options.decrypt || bytes == 0 || options.decrypt.apply(options.decrypt.ctx, "", offset, data, bytes)) return {};
    return error_info{status::invalid_model, -1,
                      ember::detail::format("load_options::decrypt refused the model's bytes [{}, +{})", offset, bytes)};
}

/// Parses plain (already decrypted) model bytes.
[[nodiscard]] inline result<graph> parse_model_bytes(const void* data, std::size_t size, const load_options& options) {
    wire_state state;
    state.max_depth = options.max_depth;
    state.max_nodes = options.max_nodes;
    model_proto m;
    if (!parse_model(data, size, m, state))
        return error_info{status::invalid_model, -1,
                          options.decrypt ? state.error + " (after load_options::decrypt: a wrong key, or bytes that were not encrypted?)"
                                          : state.error};
    return import_model(m, options);
}

[[nodiscard]] inline result<void> check_model_size(std::uint64_t size, const load_options& options) {
    if (size <= options.max_model_bytes) return {};
    return error_info{status::invalid_model, -1,
                      ember::detail::format("the model is {} bytes, more than load_options::max_model_bytes ({})", size, options.max_model_bytes)};
}
} // namespace detail

/// Parses a model held in memory. The bytes are needed only during the call. With
/// options.decrypt set, they are copied first and decrypted in the copy (the caller's stay as
/// they are).
[[nodiscard]] inline result<graph> load_memory(const void* data, std::size_t size, const load_options& options = {}) {
    if (result<void> r = detail::check_model_size(size, options); !r) return r.error();
    if (size != 0 && data == nullptr) return error_info{status::invalid_argument, -1, "load_memory: data is null"};
    if (!options.decrypt) return detail::parse_model_bytes(data, size, options);
    std::vector<std::uint8_t> plain(static_cast<const std::uint8_t*>(data), static_cast<const std::uint8_t*>(data) + size);
    if (result<void> r = detail::decrypt_model(options, 0, plain.data(), plain.size()); !r) return r.error();
    return detail::parse_model_bytes(plain.data(), plain.size(), options);
}

/// Parses one serialized TensorProto (as in ONNX's test_data_set_*/input_0.pb files).
[[nodiscard]] inline result<tensor> load_tensor_memory(const void* data, std::size_t size, const load_options& options = {}) {
    if (size > options.max_model_bytes)
        return error_info{status::invalid_model, -1,
                          ember::detail::format("the tensor is {} bytes, more than load_options::max_model_bytes ({})", size,
                                                options.max_model_bytes)};
    if (size != 0 && data == nullptr) return error_info{status::invalid_argument, -1, "load_tensor_memory: data is null"};
    wire_state state;
    state.max_depth = options.max_depth;
    state.max_nodes = options.max_nodes;
    tensor_proto t;
    wire_reader r(static_cast<const std::uint8_t*>(data), size, 0, "TensorProto", state);
    if (!detail::parse_tensor(r, t) || state.failed()) return error_info{status::invalid_model, -1, state.error};
    return import_tensor(t, options);
}

/// Reads the whole model through `reader` (and options.decrypt, chunk by chunk), then parses it.
[[nodiscard]] inline result<graph> load(const byte_reader& reader, const load_options& options = {}) {
    if (!reader.read) return error_info{status::invalid_argument, -1, "load: byte_reader::read is null"};
    if (result<void> r = detail::check_model_size(reader.size, options); !r) return r.error();
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(reader.size));
    constexpr std::size_t chunk = std::size_t{1} << 24;
    for (std::size_t at = 0; at < bytes.size();) {
        const std::size_t n = bytes.size() - at < chunk ? bytes.size() - at : chunk;
        const std::size_t got = reader.read(reader.ctx, at, bytes.data() + at, n);
        if (got != n)
            return error_info{status::io_error, -1,
                              ember::detail::format("load: the reader returned {} of {} bytes at offset {}", got, n, at)};
        if (result<void> r = detail::decrypt_model(options, at, bytes.data() + at, n); !r) return r.error();
        at += n;
    }
    return detail::parse_model_bytes(bytes.data(), bytes.size(), options);
}

/// Reads and parses a model file. External data is read relative to the file's folder unless
/// options.base_directory says otherwise.
[[nodiscard]] inline result<graph> load_file(const std::string& path, const load_options& options = {}) {
    std::vector<unsigned char> bytes;
    const ember::detail::read_file_status rs = ember::detail::read_whole_file(path, bytes, options.max_model_bytes);
    if (rs == ember::detail::read_file_status::cannot_open)
        return error_info{status::io_error, -1, ember::detail::format("cannot open model file '{}'", path)};
    if (rs != ember::detail::read_file_status::ok)
        return error_info{status::io_error, -1, ember::detail::format("cannot read '{}' (is it a folder?)", path)};
    if (bytes.size() > options.max_model_bytes)
        return error_info{status::invalid_model, -1,
                          ember::detail::format("'{}' is more than load_options::max_model_bytes ({}) bytes", path, options.max_model_bytes)};
    load_options with_dir = options;
    if (with_dir.base_directory.empty()) {
        const std::size_t slash = path.find_last_of("/\\");
        with_dir.base_directory = slash == std::string::npos ? std::string(".") : path.substr(0, slash + 1);
    }
    if (result<void> r = detail::decrypt_model(options, 0, bytes.data(), bytes.size()); !r) {
        error_info e = r.error();
        e.message = path + ": " + e.message;
        return e;
    }
    result<graph> g = detail::parse_model_bytes(bytes.data(), bytes.size(), with_dir);
    if (!g && g.error().code == status::invalid_model) {
        error_info e = g.error();
        e.message = path + ": " + e.message;
        return e;
    }
    return g;
}

} // namespace onnx
EMBER_NAMESPACE_END
