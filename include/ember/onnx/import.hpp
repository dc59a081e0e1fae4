// SPDX-License-Identifier: Apache-2.0
// Parsed ONNX messages (model.hpp) -> ember::graph. Initializers become constants (also when an
// old model, IR < 4, lists them as graph inputs too); empty input names become no_value; tensors
// are converted from raw_data, the typed fields or external data; subgraph attributes (If/Loop
// bodies) become graphs in attribute::graphs.
//
// Subgraphs may use names of the enclosing graphs (ONNX's outer-scope references). Such a name
// becomes a value of kind `input` in the subgraph that is NOT listed in graph::inputs: a
// "captured" value, which whoever runs the subgraph binds by name from the outer scope. A name
// found in no enclosing scope is an error, as in the main graph.
#pragma once

#include <cstddef>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/allocator.hpp"
#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/onnx_dtype.hpp"
#include "ember/graph/graph.hpp"
#include "ember/onnx/model.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace onnx {

/// How a model is loaded. The defaults suit trusted and untrusted files alike.
/// A decrypt-in-place hook (load_options::decrypt). apply(ctx, source, offset, data, bytes) turns
/// `bytes` stored bytes into plain ones where they lie, in ember's own buffer; they sit at `offset`
/// of the stream `source`: "" for the model itself (load_file(), load(), load_memory()), an
/// external-data file's location for the weight bytes read from it (straight into the weight
/// tensor). The model stream is passed in chunks, in order; a stream cipher keyed on the offset
/// (XOR with a keyed sequence, AES-CTR, ChaCha20) fits. Return false to refuse (the load fails with
/// status::invalid_model naming the stream and the range). It keeps a model's bytes from being read
/// off the disk as they are: obfuscation, not DRM, since the key is inside the program.
struct byte_transform {
    bool (*apply)(void* ctx, const char* source, std::uint64_t offset, std::uint8_t* data, std::size_t bytes) noexcept = nullptr;
    void* ctx = nullptr;
    explicit operator bool() const noexcept { return apply != nullptr; }
};

struct load_options {
    /// Models larger than this are refused before they are read (protobuf's own limit is 2 GiB).
    std::size_t max_model_bytes = std::size_t{2} << 30;
    /// Deepest nesting of messages (subgraphs nest 4 levels per If/Loop body).
    std::size_t max_depth = 64;
    /// Most nodes in the model, subgraphs included (the largest real models have ~100k).
    std::size_t max_nodes = std::size_t{1} << 20;
    /// Folder that external-data locations are relative to. load_file() uses the model's own
    /// folder when this is empty; load_memory() and load() need it for models with external data.
    std::string base_directory;
    /// Where tensor bytes (the graph's constants) come from.
    allocator alloc = default_allocator();
    /// Turns stored bytes into plain ones, in place, before they are parsed or used: see
    /// byte_transform. Obfuscation, not DRM: the key ships inside the program.
    byte_transform decrypt;
};

/// The ember dtype of an ONNX TensorProto.DataType, dtype::undefined for types ember lacks.
[[nodiscard]] constexpr dtype to_dtype(std::int32_t onnx_type) noexcept { return ember::detail::dtype_of_onnx_type(onnx_type); }

/// ONNX's name of a TensorProto.DataType ("FLOAT", "UINT16", ...).
[[nodiscard]] constexpr std::string_view data_type_name(std::int32_t onnx_type) noexcept {
    constexpr std::string_view names[] = {"UNDEFINED",  "FLOAT",         "UINT8",          "INT8",       "UINT16",
                                          "INT16",      "INT32",         "INT64",          "STRING",     "BOOL",
                                          "FLOAT16",    "DOUBLE",        "UINT32",         "UINT64",     "COMPLEX64",
                                          "COMPLEX128", "BFLOAT16",      "FLOAT8E4M3FN",   "FLOAT8E4M3FNUZ",
                                          "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",         "INT4",       "FLOAT4E2M1"};
    if (onnx_type < 0 || static_cast<std::size_t>(onnx_type) >= sizeof(names) / sizeof(names[0])) return "unknown";
    return names[onnx_type];
}

namespace detail {

/// Whether an external-data location stays inside the base folder: relative, no '..' component,
/// no drive letter, no NUL.
[[nodiscard]] inline bool is_contained_path(std::string_view p) noexcept {
    if (p.empty() || p.front() == '/' || p.front() == '\\') return false;
    if (p.find(':') != std::string_view::npos || p.find('\0') != std::string_view::npos) return false;
    std::size_t start = 0;
    while (start <= p.size()) {
        std::size_t end = p.find_first_of("/\\", start);
        if (end == std::string_view::npos) end = p.size();
        if (p.substr(start, end - start) == "..") return false;
        start = end + 1;
    }
    return true;
}

/// A decimal non-negative integer (external_data offset/length), or false.
[[nodiscard]] inline bool parse_size(std::string_view s, std::uint64_t& out) noexcept {
    if (s.empty() || s.size() > 19) return false;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    out = v;
    return true;
}

[[nodiscard]] inline std::string join_path(const std::string& dir, const std::string& rel) {
    if (dir.empty()) return rel;
    const char last = dir.back();
    return last == '/' || last == '\\' ? dir + rel : dir + "/" + rel;
}

class importer {
public:
    explicit importer(const load_options& options) : options_(options) {}

    result<graph> run(const model_proto& m) {
        if (!m.has_graph) return error_info{status::invalid_model, -1, "ModelProto has no graph"};
        for (const opset_proto& o : m.opset_import) opsets_.push_back(opset{o.domain, o.version});
        graph g;
        if (convert_graph(m.graph, g) != status::ok) return std::move(error_);
        return g;
    }

    result<tensor> run(const tensor_proto& p, const std::string& what) {
        tensor t;
        if (convert_tensor(p, what, t) != status::ok) return std::move(error_);
        return t;
    }

private:
    using scope = std::unordered_map<std::string, value_id>;

    template <class... Args>
    status fail(status code, std::int32_t node, std::string_view fmt, const Args&... args) {
        error_.code = code;
        error_.node = node;
        error_.message = prefix_ + ember::detail::format(fmt, args...);
        return code;
    }

    status convert_tensor(const tensor_proto& p, const std::string& what, tensor& out) {
        if (p.data_type == 8 || p.string_count != 0) return fail(status::unsupported_op, -1, "{}: string tensors are not supported", what);
        const dtype type = to_dtype(p.data_type);
        if (p.data_type == 0) return fail(status::invalid_model, -1, "{}: TensorProto has no data_type", what);
        if (type == dtype::undefined)
            return fail(status::unsupported_op, -1, "{}: element type {} ({}) is not supported", what, data_type_name(p.data_type),
                        p.data_type);
        if (p.has_segment) return fail(status::unsupported_op, -1, "{}: segmented tensors are not supported", what);
        if (!shape::valid_rank(p.dims.size()))
            return fail(status::unsupported_op, -1, "{}: rank {} exceeds EMBER_MAX_RANK ({})", what, p.dims.size(), max_rank);
        for (std::int64_t d : p.dims)
            if (d < 0) return fail(status::invalid_model, -1, "{}: negative dimension in dims {}", what, p.dims);
        const shape dims(span<const std::int64_t>(p.dims.data(), p.dims.size()));
        const std::int64_t n = dims.checked_elements();
        std::int64_t bytes = 0;
        if (n < 0 || !ember::detail::checked_mul(n, static_cast<std::int64_t>(size_of(type)), bytes) ||
            static_cast<std::uint64_t>(bytes) > std::uint64_t{SIZE_MAX} / 2)
            return fail(status::invalid_model, -1, "{}: shape {} is too large", what, dims);
        const std::size_t nbytes = static_cast<std::size_t>(bytes);
        // Two passes: check that the data is there (in the model or the external file) before
        // allocating, so a few corrupt bytes cannot ask for gigabytes; then copy it.
        for (int pass = 0; pass < 2; ++pass) {
            std::byte* dst = nullptr;
            result<tensor> t = tensor();
            if (pass == 1) {
                t = tensor::create(type, dims, options_.alloc);
                if (!t) {
                    error_ = t.error();
                    error_.message = prefix_ + what + ": " + error_.message;
                    return error_.code;
                }
                dst = t->bytes();
            }
            if (p.data_location == 1) {
                if (status s = read_external(p, what, dst, nbytes); s != status::ok) return s;
            } else if (p.data_location != 0) {
                return fail(status::invalid_model, -1, "{}: unknown data_location {}", what, p.data_location);
            } else if (p.has_raw_data) {
                if (p.raw_size != nbytes)
                    return fail(status::invalid_model, -1, "{}: raw_data has {} bytes, expected {} for {} {}", what, p.raw_size, nbytes,
                                type, dims);
                if (dst && nbytes) std::memcpy(dst, p.raw_data, nbytes);
            } else if (status s = copy_typed(p, what, type, static_cast<std::size_t>(n), dst); s != status::ok) {
                return s;
            }
            if (pass == 1) out = std::move(*t);
        }
        std::byte* dst = out.bytes();
        if (type == dtype::boolean)
            for (std::size_t i = 0; i < nbytes; ++i) dst[i] = dst[i] != std::byte{0} ? std::byte{1} : std::byte{0};
        return status::ok;
    }

    template <class From>
    status check_count(const std::vector<From>& v, const char* field, const std::string& what, std::size_t n) {
        if (v.size() == n) return status::ok;
        if (v.empty())
            return fail(status::invalid_model, -1, "{}: no data (neither raw_data nor {} holds its {} elements)", what, field, n);
        return fail(status::invalid_model, -1, "{}: {} has {} values, expected {}", what, field, v.size(), n);
    }

    status copy_typed(const tensor_proto& p, const std::string& what, dtype type, std::size_t n, std::byte* dst) {
        if (n == 0) return status::ok;
        auto narrow = [&](auto tag) {
            using T = decltype(tag);
            if (status s = check_count(p.int32_data, "int32_data", what, n); s != status::ok || !dst) return s;
            for (std::size_t i = 0; i < n; ++i) {
                const T v = static_cast<T>(p.int32_data[i]);
                std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
            }
            return status::ok;
        };
        switch (type) {
            case dtype::float32:
                if (status s = check_count(p.float_data, "float_data", what, n); s != status::ok || !dst) return s;
                std::memcpy(dst, p.float_data.data(), n * 4);
                return status::ok;
            case dtype::float64:
                if (status s = check_count(p.double_data, "double_data", what, n); s != status::ok || !dst) return s;
                std::memcpy(dst, p.double_data.data(), n * 8);
                return status::ok;
            case dtype::int64:
                if (status s = check_count(p.int64_data, "int64_data", what, n); s != status::ok || !dst) return s;
                std::memcpy(dst, p.int64_data.data(), n * 8);
                return status::ok;
            case dtype::int32: return narrow(std::int32_t{});
            case dtype::int16: return narrow(std::int16_t{});
            case dtype::int8: return narrow(std::int8_t{});
            case dtype::uint8:
            case dtype::boolean: return narrow(std::uint8_t{});
            case dtype::uint16:
            case dtype::float16:
            case dtype::bfloat16: return narrow(std::uint16_t{});  // int32_data holds the 16 bits
            case dtype::uint32:
            case dtype::uint64: {
                if (status s = check_count(p.uint64_data, "uint64_data", what, n); s != status::ok || !dst) return s;
                for (std::size_t i = 0; i < n; ++i) {
                    if (type == dtype::uint64) {
                        std::memcpy(dst + i * 8, &p.uint64_data[i], 8);
                    } else {
                        const auto v = static_cast<std::uint32_t>(p.uint64_data[i]);
                        std::memcpy(dst + i * 4, &v, 4);
                    }
                }
                return status::ok;
            }
            case dtype::undefined: break;
        }
        return fail(status::unsupported_op, -1, "{}: element type {} is not supported", what, type);
    }

    status read_external(const tensor_proto& p, const std::string& what, std::byte* dst, std::size_t nbytes) {
        std::string location;
        std::uint64_t offset = 0, length = nbytes;
        bool has_length = false;
        for (const string_entry_proto& e : p.external_data) {
            if (e.key == "location") {
                location = e.value;
            } else if (e.key == "offset") {
                if (!parse_size(e.value, offset)) return fail(status::invalid_model, -1, "{}: external_data offset '{}' is not a number", what, e.value);
            } else if (e.key == "length") {
                if (!parse_size(e.value, length)) return fail(status::invalid_model, -1, "{}: external_data length '{}' is not a number", what, e.value);
                has_length = true;
            }
        }
        if (location.empty()) return fail(status::invalid_model, -1, "{}: external data without a location", what);
        if (!is_contained_path(location))
            return fail(status::invalid_model, -1, "{}: external data location '{}' must be a relative path inside the model's folder", what,
                        location);
        if (has_length && length != nbytes)
            return fail(status::invalid_model, -1, "{}: external data length {} differs from the {} bytes of its shape", what, length, nbytes);
        if (options_.base_directory.empty())
            return fail(status::invalid_argument, -1,
                        "{}: data is in external file '{}', but no base directory is known (set load_options::base_directory)", what,
                        location);
        const std::string path = join_path(options_.base_directory, location);
        std::FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) return fail(status::io_error, -1, "{}: cannot open external data file '{}'", what, path);
        std::uint64_t file_size = 0;
        bool ok = std::fseek(f, 0, SEEK_END) == 0;
        if (ok) {
            const long end = std::ftell(f);
            ok = end >= 0;
            file_size = static_cast<std::uint64_t>(end);
        }
        if (ok && (offset > file_size || nbytes > file_size - offset)) {
            std::fclose(f);
            return fail(status::invalid_model, -1, "{}: external data [{}, +{}) runs past the end of '{}' ({} bytes)", what, offset, nbytes,
                        path, file_size);
        }
        if (ok && !dst) {  // checking pass: the bytes are there
            std::fclose(f);
            return status::ok;
        }
        ok = ok && offset <= static_cast<std::uint64_t>(LONG_MAX) && std::fseek(f, static_cast<long>(offset), SEEK_SET) == 0 && (nbytes == 0 || std::fread(dst, 1, nbytes, f) == nbytes);
        std::fclose(f);
        if (!ok) return fail(status::io_error, -1, "{}: cannot read {} bytes at offset {} of '{}'", what, nbytes, offset, path);
        if (options_.decrypt && nbytes != 0 &&
            !options_.decrypt.apply(options_.decrypt.ctx, location.c_str(), offset, reinterpret_cast<std::uint8_t*>(dst), nbytes))
            return fail(status::invalid_model, -1, "{}: load_options::decrypt refused bytes [{}, +{}) of external data '{}'", what, offset, nbytes,
                        location);
        return status::ok;
    }

    status declare(const value_info_proto& vi, const std::string& what, bool required, value& v) {
        if (!vi.has_type) {
            if (required) return fail(status::invalid_model, -1, "{} '{}' has no type", what, vi.name);
            return status::ok;
        }
        if (!vi.is_tensor)
            return fail(status::unsupported_op, -1, "{} '{}' is not a tensor (sequence, map, optional and sparse types are not supported)",
                        what, vi.name);
        if (vi.elem_type != 0) {
            v.type = to_dtype(vi.elem_type);
            if (v.type == dtype::undefined)
                return fail(status::unsupported_op, -1, "{} '{}' has element type {} ({}), which is not supported", what, vi.name,
                            data_type_name(vi.elem_type), vi.elem_type);
        } else if (required) {
            return fail(status::invalid_model, -1, "{} '{}' has no element type", what, vi.name);
        }
        if (vi.has_shape) {
            v.declared.rank_known = true;
            v.declared.dims.clear();
            for (const dimension_proto& d : vi.dims) {
                if (d.has_value && d.value >= 0)
                    v.declared.dims.emplace_back(d.value);
                else if (!d.param.empty())
                    v.declared.dims.emplace_back(d.param);
                else
                    v.declared.dims.emplace_back();
            }
        }
        return status::ok;
    }

    /// The id of `name` in graph g (adding a captured value for an outer-scope name), or no_value.
    value_id lookup(graph& g, scope& names, const std::string& name) {
        if (auto it = names.find(name); it != names.end()) return it->second;
        for (std::size_t k = outer_.size(); k-- > 0;)
            if (outer_[k]->count(name)) {
                value v;
                v.name = name;
                v.kind = value_kind::input;  // captured: not listed in g.inputs
                const auto id = static_cast<value_id>(g.values.size());
                g.values.push_back(std::move(v));
                names.emplace(name, id);
                return id;
            }
        return no_value;
    }

    status convert_attribute(const attribute_proto& p, graph& g, std::size_t node_index, attribute& a) {
        const auto ni = static_cast<std::int32_t>(node_index);
        const std::string where = ember::detail::format("{}: attribute '{}'", describe_node(g, node_index), p.name);
        a.name = p.name;
        if (p.name.empty()) return fail(status::invalid_model, ni, "{}: an attribute has no name", describe_node(g, node_index));
        if (!p.ref_attr_name.empty())
            return fail(status::unsupported_op, ni, "{} refers to function attribute '{}' (ref_attr_name), which is not supported", where,
                        p.ref_attr_name);
        switch (p.type) {
            case attribute_type::floating: a.kind = attribute_kind::floating; a.f = p.f; return status::ok;
            case attribute_type::integer: a.kind = attribute_kind::integer; a.i = p.i; return status::ok;
            case attribute_type::string: a.kind = attribute_kind::string; a.s = p.s; return status::ok;
            case attribute_type::floats: a.kind = attribute_kind::floats; a.floats = p.floats; return status::ok;
            case attribute_type::ints: a.kind = attribute_kind::ints; a.ints = p.ints; return status::ok;
            case attribute_type::strings: a.kind = attribute_kind::strings; a.strings = p.strings; return status::ok;
            case attribute_type::tensor:
                a.kind = attribute_kind::tensor;
                if (p.t.empty()) return fail(status::invalid_model, ni, "{} of type TENSOR has no tensor", where);
                return convert_tensor(p.t.front(), where, a.t);
            case attribute_type::tensors:
                a.kind = attribute_kind::tensors;
                a.tensors.resize(p.tensors.size());
                for (std::size_t k = 0; k < p.tensors.size(); ++k)
                    if (status s = convert_tensor(p.tensors[k], ember::detail::format("{} tensor {}", where, k), a.tensors[k]); s != status::ok)
                        return s;
                return status::ok;
            case attribute_type::graph:
            case attribute_type::graphs: {
                const bool single = p.type == attribute_type::graph;
                a.kind = single ? attribute_kind::graph : attribute_kind::graphs;
                const std::vector<graph_proto>& list = single ? p.g : p.graphs;
                if (single && list.empty()) return fail(status::invalid_model, ni, "{} of type GRAPH has no graph", where);
                a.graphs.resize(list.size());
                for (std::size_t k = 0; k < list.size(); ++k) {
                    const std::string saved = prefix_;
                    prefix_ = ember::detail::format("{}{} subgraph {}: ", prefix_, where, k);
                    const status s = convert_graph(list[k], a.graphs[k]);
                    if (s != status::ok) return s;
                    prefix_ = saved;
                }
                return status::ok;
            }
            case attribute_type::sparse_tensor:
            case attribute_type::sparse_tensors:
            case attribute_type::type_proto:
            case attribute_type::type_protos:
                return fail(status::unsupported_op, ni, "{}: sparse tensor and type attributes are not supported", where);
            case attribute_type::undefined: return fail(status::invalid_model, ni, "{} has no type", where);
            default: break;
        }
        return fail(status::invalid_model, ni, "{} has unknown type {}", where, p.type);
    }

    /// One GraphProto; outer_ holds the enclosing graphs' names when this is a subgraph.
    status convert_graph(const graph_proto& gp, graph& g) {
        g.name = gp.name;
        g.opsets = opsets_;
        scope names;
        auto add = [&](const std::string& name, value v) {
            v.name = name;
            const auto id = static_cast<value_id>(g.values.size());
            g.values.push_back(std::move(v));
            names.emplace(name, id);
            return id;
        };
        if (gp.sparse_initializer_count != 0) return fail(status::unsupported_op, -1, "sparse initializers are not supported");
        for (std::size_t k = 0; k < gp.initializer.size(); ++k) {
            const tensor_proto& t = gp.initializer[k];
            if (t.name.empty()) return fail(status::invalid_model, -1, "initializer {} has no name", k);
            if (names.count(t.name)) return fail(status::invalid_model, -1, "two initializers are named '{}'", t.name);
            tensor c;
            if (status s = convert_tensor(t, "initializer '" + t.name + "'", c); s != status::ok) return s;
            value v;
            v.kind = value_kind::constant;
            v.type = c.type();
            v.declared = partial_shape(c.dims());
            v.constant = static_cast<std::int32_t>(g.constants.size());
            g.constants.push_back(std::move(c));
            add(t.name, std::move(v));
        }
        for (const value_info_proto& vi : gp.input) {
            if (vi.name.empty()) return fail(status::invalid_model, -1, "a graph input has no name");
            if (auto it = names.find(vi.name); it != names.end()) {
                if (g.values[it->second].kind == value_kind::constant) continue;  // IR < 4: initializers are listed as inputs
                return fail(status::invalid_model, -1, "graph input '{}' is listed twice", vi.name);
            }
            value v;
            v.kind = value_kind::input;
            if (status s = declare(vi, "graph input", outer_.empty(), v); s != status::ok) return s;
            g.inputs.push_back(add(vi.name, std::move(v)));
        }
        g.nodes.resize(gp.node.size());
        for (std::size_t i = 0; i < gp.node.size(); ++i) {
            const node_proto& np = gp.node[i];
            node& n = g.nodes[i];
            n.name = np.name;
            n.op_type = np.op_type;
            n.domain = np.domain == "ai.onnx" ? std::string() : np.domain;
            if (n.op_type.empty()) return fail(status::invalid_model, static_cast<std::int32_t>(i), "{}: node has no op_type", describe_node(g, i));
            for (std::size_t k = 0; k < np.output.size(); ++k) {
                const std::string& name = np.output[k];
                if (name.empty()) {
                    n.outputs.push_back(no_value);
                    continue;
                }
                if (names.count(name))
                    return fail(status::invalid_model, static_cast<std::int32_t>(i), "{}: output {} '{}' is already defined elsewhere in the graph",
                                describe_node(g, i), k, name);
                value v;
                v.kind = value_kind::node_output;
                v.producer = static_cast<std::int32_t>(i);
                n.outputs.push_back(add(name, std::move(v)));
            }
        }
        for (std::size_t i = 0; i < gp.node.size(); ++i) {
            const node_proto& np = gp.node[i];
            for (std::size_t k = 0; k < np.input.size(); ++k) {
                const std::string& name = np.input[k];
                value_id id = no_value;
                if (!name.empty()) {
                    id = lookup(g, names, name);
                    if (id == no_value)
                        return fail(status::invalid_model, static_cast<std::int32_t>(i),
                                    "{}: input {} '{}' is not a graph input, initializer or node output", describe_node(g, i), k, name);
                }
                g.nodes[i].inputs.push_back(id);
            }
        }
        for (const value_info_proto& vi : gp.value_info) {
            auto it = names.find(vi.name);
            if (it == names.end() || g.values[it->second].kind != value_kind::node_output) continue;
            value& v = g.values[it->second];
            if (status s = declare(vi, "value_info", false, v); s != status::ok) {
                if (s != status::unsupported_op) return s;
                v.type = dtype::undefined;  // a value_info ember cannot use is only a hint: drop it
                v.declared = partial_shape();
                error_ = error_info{};
            }
        }
        for (const value_info_proto& vi : gp.output) {
            const value_id id = vi.name.empty() ? no_value : lookup(g, names, vi.name);
            if (id == no_value) return fail(status::invalid_model, -1, "graph output '{}' is not produced by any node, input or initializer", vi.name);
            value& v = g.values[id];
            if (v.kind == value_kind::node_output && v.type == dtype::undefined)
                if (status s = declare(vi, "graph output", false, v); s != status::ok) return s;
            g.outputs.push_back(id);
        }
        outer_.push_back(&names);
        for (std::size_t i = 0; i < gp.node.size(); ++i) {
            const node_proto& np = gp.node[i];
            g.nodes[i].attributes.resize(np.attribute.size());
            for (std::size_t k = 0; k < np.attribute.size(); ++k)
                if (status s = convert_attribute(np.attribute[k], g, i, g.nodes[i].attributes[k]); s != status::ok) {
                    outer_.pop_back();
                    return s;
                }
        }
        outer_.pop_back();
        return status::ok;
    }

    const load_options& options_;
    std::vector<opset> opsets_;
    std::vector<const scope*> outer_;  ///< enclosing graphs' names, innermost last
    std::string prefix_;               ///< "node 2 'if' (If): attribute 'then_branch' subgraph 0: " inside subgraphs
    error_info error_;
};

} // namespace detail

/// Converts a parsed model to an ember graph. Reads external data relative to
/// options.base_directory.
[[nodiscard]] inline result<graph> import_model(const model_proto& m, const load_options& options = {}) {
    return detail::importer(options).run(m);
}

/// Converts one parsed TensorProto (an ONNX test-data .pb file, say) to a tensor.
[[nodiscard]] inline result<tensor> import_tensor(const tensor_proto& t, const load_options& options = {}) {
    return detail::importer(options).run(t, t.name.empty() ? std::string("TensorProto") : "tensor '" + t.name + "'");
}

} // namespace onnx
EMBER_NAMESPACE_END
