// SPDX-License-Identifier: Apache-2.0
// The ONNX writer: ember::graph -> ModelProto bytes or an .onnx file, the inverse of the
// importer (onnx/import.hpp). Written: the opset imports (plus one, version 1, for each other
// domain a node uses and the graph does not list), the ir_version that goes with the standard
// opset, nodes in topological order with every attribute kind the importer reads (subgraphs of
// If/Loop/Scan included), constants as initializers with raw_data, graph inputs and outputs
// with dtype and declared shape, and value_info for the node outputs whose dtype or shape is
// declared. A graph loaded by the importer, written and loaded again is the same graph (same
// value ids, nodes, attributes, constant bytes). No libprotobuf, no exceptions.
//
//   ember::result<std::vector<std::uint8_t>> bytes = ember::onnx::save_memory(g);
//   ember::result<void> ok = ember::onnx::save_file("out.onnx", g);
//
// Not written: doc strings and metadata (the graph has none), external data (protobuf's 2 GiB
// limit applies: larger models fail with invalid_argument), node outputs no node produces and no
// node reads (dead values graph passes leave behind).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/tensor.hpp"
#include "ember/graph/graph.hpp"
#include "ember/graph/validate.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace onnx {

/// What save_memory() / save_file() write besides the graph.
struct save_options {
    /// ModelProto.ir_version; 0 chooses the one ONNX pairs with the graph's standard opset
    /// (opset 13 -> IR 7, 17 -> IR 8, ...), and at least 4 (initializers need not be inputs).
    std::int64_t ir_version = 0;
    std::string producer_name = "ember";
    std::string producer_version = "0.1";
    /// The standard opset written when graph::opsets is empty (the importer's fallback too).
    std::int64_t default_opset = 17;
};

namespace detail {

/// The ONNX TensorProto.DataType number of a dtype (0 for undefined).
[[nodiscard]] constexpr std::int32_t onnx_type_of(dtype t) noexcept {
    switch (t) {
        case dtype::float32: return 1;
        case dtype::uint8: return 2;
        case dtype::int8: return 3;
        case dtype::uint16: return 4;
        case dtype::int16: return 5;
        case dtype::int32: return 6;
        case dtype::int64: return 7;
        case dtype::boolean: return 9;
        case dtype::float16: return 10;
        case dtype::float64: return 11;
        case dtype::uint32: return 12;
        case dtype::uint64: return 13;
        case dtype::bfloat16: return 16;
        case dtype::undefined: break;
    }
    return 0;
}

/// The IR version ONNX releases paired with a standard opset (onnx/helper.py's VERSION_TABLE).
[[nodiscard]] constexpr std::int64_t ir_version_for_opset(std::int64_t opset) noexcept {
    if (opset <= 9) return 4;
    if (opset == 10) return 5;
    if (opset == 11) return 6;
    if (opset <= 14) return 7;
    if (opset <= 18) return 8;
    if (opset <= 20) return 9;
    return 10;
}

/// One message's bytes in protobuf wire format; fields are appended in call order.
class pb_writer {
public:
    std::vector<std::uint8_t> bytes;

    void raw_varint(std::uint64_t v) {
        do {
            std::uint8_t b = static_cast<std::uint8_t>(v & 0x7fu);
            v >>= 7;
            if (v) b = static_cast<std::uint8_t>(b | 0x80u);
            bytes.push_back(b);
        } while (v);
    }
    void tag(std::uint32_t field, std::uint32_t wire) { raw_varint(static_cast<std::uint64_t>(field) << 3 | wire); }
    void varint(std::uint32_t field, std::uint64_t v) {
        tag(field, 0);
        raw_varint(v);
    }
    void int64(std::uint32_t field, std::int64_t v) { varint(field, static_cast<std::uint64_t>(v)); }
    void float32(std::uint32_t field, float v) {
        tag(field, 5);
        std::uint8_t b[4];
        std::memcpy(b, &v, 4);
        bytes.insert(bytes.end(), b, b + 4);
    }
    void length_delimited(std::uint32_t field, const void* data, std::size_t n) {
        tag(field, 2);
        raw_varint(n);
        const auto* p = static_cast<const std::uint8_t*>(data);
        bytes.insert(bytes.end(), p, p + n);
    }
    void string(std::uint32_t field, std::string_view s) { length_delimited(field, s.data(), s.size()); }
    void message(std::uint32_t field, const pb_writer& m) { length_delimited(field, m.bytes.data(), m.bytes.size()); }
    void packed_int64(std::uint32_t field, const std::vector<std::int64_t>& v) {
        pb_writer body;
        for (std::int64_t x : v) body.raw_varint(static_cast<std::uint64_t>(x));
        message(field, body);
    }
    void packed_float(std::uint32_t field, const std::vector<float>& v) { length_delimited(field, v.data(), v.size() * sizeof(float)); }
};

class writer {
public:
    explicit writer(const save_options& o) : options_(o) {}

    result<std::vector<std::uint8_t>> run(const graph& g) {
        std::vector<opset> opsets = g.opsets;
        if (opsets.empty()) opsets.push_back(opset{"", options_.default_opset});
        add_domains(g, opsets);
        pb_writer model;
        const std::int64_t ir = options_.ir_version > 0 ? options_.ir_version : ir_version_for_opset(g.opset_version("", options_.default_opset));
        model.int64(1, ir);
        model.string(2, options_.producer_name);
        model.string(3, options_.producer_version);
        pb_writer body;
        if (status s = write_graph(g, body); s != status::ok) return error_;
        model.message(7, body);
        for (const opset& o : opsets) {
            pb_writer m;
            if (!o.domain.empty()) m.string(1, o.domain);
            m.int64(2, o.version);
            model.message(8, m);
        }
        if (model.bytes.size() > (std::size_t{2} << 30) - 1)
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("the model is {} bytes, over protobuf's 2 GiB limit (external data is not written)",
                                                    model.bytes.size())};
        return std::move(model.bytes);
    }

private:
    template <class... Args>
    status fail(status code, std::int32_t node, std::string_view fmt, const Args&... args) {
        error_ = error_info{code, node, prefix_ + ember::detail::format(fmt, args...)};
        return code;
    }

    /// Every domain a node uses (subgraphs too) gets an opset import.
    static void add_domains(const graph& g, std::vector<opset>& opsets) {
        for (const node& n : g.nodes) {
            const bool standard = n.domain.empty() || n.domain == "ai.onnx";
            bool listed = false;
            for (const opset& o : opsets) listed = listed || o.domain == n.domain || (standard && (o.domain.empty() || o.domain == "ai.onnx"));
            if (!listed) opsets.push_back(opset{n.domain, 1});
            for (const attribute& a : n.attributes)
                for (const graph& sub : a.graphs) add_domains(sub, opsets);
        }
    }

    status write_tensor(const tensor& t, const std::string& name, const std::string& what, pb_writer& out) {
        const std::int32_t type = onnx_type_of(t.type());
        if (type == 0) return fail(status::invalid_argument, -1, "{}: the tensor has no dtype", what);
        for (std::int64_t d : t.dims()) out.int64(1, d);  // unpacked dims, as onnx's Python writer does
        out.int64(2, type);
        if (!name.empty()) out.string(8, name);
        out.length_delimited(9, t.bytes(), t.size_bytes());
        return status::ok;
    }

    static void write_value_info(const value& v, pb_writer& out) {
        out.string(1, v.name);
        if (v.type == dtype::undefined && !v.declared.rank_known) return;
        pb_writer tensor_type;
        if (v.type != dtype::undefined) tensor_type.int64(1, onnx_type_of(v.type));
        if (v.declared.rank_known) {
            pb_writer shape_proto;
            for (const dim& d : v.declared.dims) {
                pb_writer dm;
                if (d.known())
                    dm.int64(1, d.value);
                else if (!d.symbol.empty())
                    dm.string(2, d.symbol);
                shape_proto.message(1, dm);
            }
            tensor_type.message(2, shape_proto);
        }
        pb_writer type_proto;
        type_proto.message(1, tensor_type);
        out.message(2, type_proto);
    }

    status write_attribute(const graph& g, std::size_t node_index, const attribute& a, pb_writer& out) {
        const std::string where = ember::detail::format("{}: attribute '{}'", describe_node(g, node_index), a.name);
        const auto ni = static_cast<std::int32_t>(node_index);
        if (a.name.empty()) return fail(status::invalid_argument, ni, "{}: an attribute has no name", describe_node(g, node_index));
        out.string(1, a.name);
        switch (a.kind) {
            case attribute_kind::floating: out.float32(2, a.f); out.int64(20, 1); return status::ok;
            case attribute_kind::integer: out.int64(3, a.i); out.int64(20, 2); return status::ok;
            case attribute_kind::string: out.string(4, a.s); out.int64(20, 3); return status::ok;
            case attribute_kind::tensor: {
                pb_writer t;
                if (status s = write_tensor(a.t, {}, where, t); s != status::ok) return s;
                out.message(5, t);
                out.int64(20, 4);
                return status::ok;
            }
            case attribute_kind::graph:
            case attribute_kind::graphs: {
                const bool single = a.kind == attribute_kind::graph;
                if (single && a.graphs.size() != 1)
                    return fail(status::invalid_argument, ni, "{} of kind graph holds {} graphs, not 1", where, a.graphs.size());
                for (std::size_t k = 0; k < a.graphs.size(); ++k) {
                    const std::string saved = prefix_;
                    prefix_ = ember::detail::format("{}{} subgraph {}: ", prefix_, where, k);
                    pb_writer body;
                    if (status s = write_graph(a.graphs[k], body); s != status::ok) return s;
                    prefix_ = saved;
                    out.message(single ? 6 : 11, body);
                }
                out.int64(20, single ? 5 : 10);
                return status::ok;
            }
            case attribute_kind::floats: if (!a.floats.empty()) out.packed_float(7, a.floats); out.int64(20, 6); return status::ok;
            case attribute_kind::ints: if (!a.ints.empty()) out.packed_int64(8, a.ints); out.int64(20, 7); return status::ok;
            case attribute_kind::strings:
                for (const std::string& s : a.strings) out.string(9, s);
                out.int64(20, 8);
                return status::ok;
            case attribute_kind::tensors:
                for (std::size_t k = 0; k < a.tensors.size(); ++k) {
                    pb_writer t;
                    if (status s = write_tensor(a.tensors[k], {}, ember::detail::format("{} tensor {}", where, k), t); s != status::ok) return s;
                    out.message(10, t);
                }
                out.int64(20, 9);
                return status::ok;
            case attribute_kind::undefined: break;
        }
        return fail(status::invalid_argument, ni, "{} has no kind", where);
    }

    status write_graph(const graph& g, pb_writer& out) {
        result<std::vector<std::uint32_t>> order = validate(g);
        if (!order) {
            error_ = order.error();
            error_.message = prefix_ + error_.message;
            return error_.code;
        }
        std::vector<bool> used(g.values.size(), false), is_output(g.values.size(), false);
        for (const node& n : g.nodes)
            for (value_id v : n.inputs)
                if (v != no_value) used[v] = true;
        for (value_id v : g.outputs) used[v] = is_output[v] = true;
        for (std::uint32_t i : *order) {
            const node& n = g.nodes[i];
            pb_writer m;
            for (value_id v : n.inputs) m.string(1, v == no_value ? std::string_view() : std::string_view(g.values[v].name));
            for (value_id v : n.outputs) m.string(2, v == no_value ? std::string_view() : std::string_view(g.values[v].name));
            if (!n.name.empty()) m.string(3, n.name);
            m.string(4, n.op_type);
            for (const attribute& a : n.attributes) {
                pb_writer am;
                if (status s = write_attribute(g, i, a, am); s != status::ok) return s;
                m.message(5, am);
            }
            if (!n.domain.empty()) m.string(7, n.domain);
            out.message(1, m);
        }
        if (!g.name.empty()) out.string(2, g.name);
        // Initializers in value order: the importer numbers them first, in file order.
        for (std::size_t v = 0; v < g.values.size(); ++v) {
            const value& val = g.values[v];
            if (val.kind != value_kind::constant) continue;
            pb_writer t;
            if (status s = write_tensor(g.constants[static_cast<std::size_t>(val.constant)], val.name, "initializer '" + val.name + "'", t);
                s != status::ok)
                return s;
            out.message(5, t);
        }
        for (value_id v : g.inputs) {
            pb_writer m;
            write_value_info(g.values[v], m);
            out.message(11, m);
        }
        for (value_id v : g.outputs) {
            pb_writer m;
            write_value_info(g.values[v], m);
            out.message(12, m);
        }
        for (std::size_t v = 0; v < g.values.size(); ++v) {
            const value& val = g.values[v];
            if (val.kind != value_kind::node_output || is_output[v] || (val.type == dtype::undefined && !val.declared.rank_known)) continue;
            if (val.producer < 0 && !used[v]) continue;
            pb_writer m;
            write_value_info(val, m);
            out.message(13, m);
        }
        return status::ok;
    }

    const save_options& options_;
    std::string prefix_;
    error_info error_;
};

} // namespace detail

/// Serializes g as an ONNX ModelProto. Fails with invalid_model when g does not validate
/// (validate(): a duplicate name, an unnamed value, a cycle), invalid_argument for a constant
/// or attribute without a dtype or kind, or a model over 2 GiB; the message names the node,
/// value or attribute (and the subgraph it is in). Allocates.
[[nodiscard]] inline result<std::vector<std::uint8_t>> save_memory(const graph& g, const save_options& options = {}) {
    return detail::writer(options).run(g);
}

/// Writes g to path as an .onnx file. Errors as save_memory(), and io_error naming the path.
[[nodiscard]] inline result<void> save_file(const std::string& path, const graph& g, const save_options& options = {}) {
    result<std::vector<std::uint8_t>> bytes = save_memory(g, options);
    if (!bytes) return bytes.error();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return error_info{status::io_error, -1, ember::detail::format("cannot create '{}'", path)};
    const bool wrote = bytes->empty() || std::fwrite(bytes->data(), 1, bytes->size(), f) == bytes->size();
    if (std::fclose(f) != 0 || !wrote) return error_info{status::io_error, -1, ember::detail::format("cannot write '{}'", path)};
    return {};
}

} // namespace onnx
EMBER_NAMESPACE_END
