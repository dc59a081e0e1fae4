// SPDX-License-Identifier: Apache-2.0
// The ONNX messages ember reads, as plain structs, and their parsers over wire_reader. Field
// numbers are onnx.proto's. Unknown fields are skipped; fields ember does not use (doc strings,
// metadata, functions, training info, sparse initializers) are skipped too. Tensor raw_data is
// kept as a pointer into the model's bytes, which must outlive the parsed structs. The step to
// ember::graph is import.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/config.hpp"
#include "ember/onnx/wire.hpp"

EMBER_NAMESPACE_BEGIN
namespace onnx {

struct graph_proto;

struct string_entry_proto {
    std::string key;
    std::string value;
};

struct tensor_proto {
    std::vector<std::int64_t> dims;
    std::int32_t data_type = 0;
    std::vector<float> float_data;
    std::vector<std::int32_t> int32_data;
    std::size_t string_count = 0;  ///< string_data entries (strings are not supported: only counted)
    std::vector<std::int64_t> int64_data;
    std::string name;
    bool has_raw_data = false;
    const std::uint8_t* raw_data = nullptr;  ///< into the model's bytes
    std::size_t raw_size = 0;
    std::vector<double> double_data;
    std::vector<std::uint64_t> uint64_data;
    std::vector<string_entry_proto> external_data;
    std::int32_t data_location = 0;  ///< 0 DEFAULT, 1 EXTERNAL
    bool has_segment = false;
    std::size_t offset = 0;  ///< byte offset of the message, for errors
};

struct dimension_proto {
    bool has_value = false;
    std::int64_t value = -1;
    std::string param;
};

/// ValueInfoProto with its TypeProto.tensor_type flattened in.
struct value_info_proto {
    std::string name;
    bool has_type = false;
    bool is_tensor = false;  ///< the type is tensor_type (not sequence, map, optional, sparse)
    std::int32_t elem_type = 0;
    bool has_shape = false;
    std::vector<dimension_proto> dims;
};

struct attribute_proto {
    std::string name;
    std::string ref_attr_name;
    std::int32_t type = 0;  ///< AttributeProto.AttributeType
    float f = 0.0f;
    std::int64_t i = 0;
    std::string s;
    std::vector<tensor_proto> t;   ///< zero or one
    std::vector<graph_proto> g;    ///< zero or one
    std::vector<float> floats;
    std::vector<std::int64_t> ints;
    std::vector<std::string> strings;
    std::vector<tensor_proto> tensors;
    std::vector<graph_proto> graphs;
    bool has_sparse_or_type_proto = false;  ///< sparse_tensor(s) or type_proto(s): not supported
};

struct node_proto {
    std::vector<std::string> input;
    std::vector<std::string> output;
    std::string name;
    std::string op_type;
    std::string domain;
    std::vector<attribute_proto> attribute;
};

struct graph_proto {
    std::vector<node_proto> node;
    std::string name;
    std::vector<tensor_proto> initializer;
    std::size_t sparse_initializer_count = 0;
    std::vector<value_info_proto> input;
    std::vector<value_info_proto> output;
    std::vector<value_info_proto> value_info;
};

struct opset_proto {
    std::string domain;
    std::int64_t version = 0;
};

struct model_proto {
    std::int64_t ir_version = 0;
    std::vector<opset_proto> opset_import;
    bool has_graph = false;
    graph_proto graph;
};

/// AttributeProto.AttributeType values.
namespace attribute_type {
inline constexpr std::int32_t undefined = 0, floating = 1, integer = 2, string = 3, tensor = 4, graph = 5, floats = 6, ints = 7,
                              strings = 8, tensors = 9, graphs = 10, sparse_tensor = 11, sparse_tensors = 12, type_proto = 13,
                              type_protos = 14;
}

namespace detail {

inline bool parse_graph(wire_reader& r, graph_proto& out);

inline bool parse_string_entry(wire_reader& r, string_entry_proto& out) {
    wire_field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: r.read_string(f, out.key, "key"); break;
            case 2: r.read_string(f, out.value, "value"); break;
            default: r.skip(f); break;
        }
    }
    return r.ok();
}

inline bool parse_tensor(wire_reader& r, tensor_proto& out) {
    out.offset = r.offset();
    wire_field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: r.read_repeated_int64(f, out.dims, "dims"); break;
            case 2: r.read_int32(f, out.data_type, "data_type"); break;
            case 3: out.has_segment = true; r.skip(f); break;
            case 4: r.read_repeated_fixed(f, out.float_data, "float_data"); break;
            case 5: r.read_repeated_int32(f, out.int32_data, "int32_data"); break;
            case 6: out.string_count += r.expect(f, wire_type::length_delimited, "string_data") && r.skip(f) ? 1 : 0; break;
            case 7: r.read_repeated_int64(f, out.int64_data, "int64_data"); break;
            case 8: r.read_string(f, out.name, "name"); break;
            case 9:
                if (r.expect(f, wire_type::length_delimited, "raw_data") && r.bytes(out.raw_data, out.raw_size, "raw_data"))
                    out.has_raw_data = true;
                break;
            case 10: r.read_repeated_fixed(f, out.double_data, "double_data"); break;
            case 11: r.read_repeated_uint64(f, out.uint64_data, "uint64_data"); break;
            case 13: {
                wire_reader m = r.read_message(f, "external_data", "StringStringEntryProto");
                out.external_data.emplace_back();
                parse_string_entry(m, out.external_data.back());
                break;
            }
            case 14: r.read_int32(f, out.data_location, "data_location"); break;
            default: r.skip(f); break;
        }
    }
    return r.ok();
}

inline bool parse_dimension(wire_reader& r, dimension_proto& out) {
    wire_field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1:
                if (r.read_int64(f, out.value, "dim_value")) out.has_value = true;
                break;
            case 2: r.read_string(f, out.param, "dim_param"); break;
            default: r.skip(f); break;
        }
    }
    return r.ok();
}

inline bool parse_tensor_type(wire_reader& r, value_info_proto& out) {
    wire_field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: r.read_int32(f, out.elem_type, "elem_type"); break;
            case 2: {
                out.has_shape = true;
                wire_reader shape = r.read_message(f, "shape", "TensorShapeProto");
                wire_field d;
                while (shape.next(d)) {
                    if (d.number != 1) {
                        shape.skip(d);
                        continue;
                    }
                    wire_reader dim = shape.read_message(d, "dim", "TensorShapeProto.Dimension");
                    out.dims.emplace_back();
                    parse_dimension(dim, out.dims.back());
                }
                break;
            }
            default: r.skip(f); break;
        }
    }
    return r.ok();
}

inline bool parse_value_info(wire_reader& r, value_info_proto& out) {
    wire_field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: r.read_string(f, out.name, "name"); break;
            case 2: {
                out.has_type = true;
                wire_reader type = r.read_message(f, "type", "TypeProto");
                wire_field t;
                while (type.next(t)) {
                    if (t.number == 1) {
                        out.is_tensor = true;
                        wire_reader tensor_type = type.read_message(t, "tensor_type", "TypeProto.Tensor");
                        parse_tensor_type(tensor_type, out);
                    } else {
                        type.skip(t);
                    }
                }
                break;
            }
            default: r.skip(f); break;
        }
    }
    return r.ok();
}

inline bool parse_attribute(wire_reader& r, attribute_proto& out) {
    wire_field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: r.read_string(f, out.name, "name"); break;
            case 2: r.read_float(f, out.f, "f"); break;
            case 3: r.read_int64(f, out.i, "i"); break;
            case 4: r.read_string(f, out.s, "s"); break;
            case 5: {
                wire_reader m = r.read_message(f, "t", "TensorProto");
                out.t.assign(1, tensor_proto{});
                parse_tensor(m, out.t.back());
                break;
            }
            case 6: {
                wire_reader m = r.read_message(f, "g", "GraphProto");
                out.g.assign(1, graph_proto{});
                parse_graph(m, out.g.back());
                break;
            }
            case 7: r.read_repeated_fixed(f, out.floats, "floats"); break;
            case 8: r.read_repeated_int64(f, out.ints, "ints"); break;
            case 9: out.strings.emplace_back(); r.read_string(f, out.strings.back(), "strings"); break;
            case 10: {
                wire_reader m = r.read_message(f, "tensors", "TensorProto");
                out.tensors.emplace_back();
                parse_tensor(m, out.tensors.back());
                break;
            }
            case 11: {
                wire_reader m = r.read_message(f, "graphs", "GraphProto");
                out.graphs.emplace_back();
                parse_graph(m, out.graphs.back());
                break;
            }
            case 14: case 15: case 22: case 23: out.has_sparse_or_type_proto = true; r.skip(f); break;
            case 20: r.read_int32(f, out.type, "type"); break;
            case 21: r.read_string(f, out.ref_attr_name, "ref_attr_name"); break;
            default: r.skip(f); break;
        }
    }
    return r.ok();
}

inline bool parse_node(wire_reader& r, node_proto& out) {
    wire_field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: out.input.emplace_back(); r.read_string(f, out.input.back(), "input"); break;
            case 2: out.output.emplace_back(); r.read_string(f, out.output.back(), "output"); break;
            case 3: r.read_string(f, out.name, "name"); break;
            case 4: r.read_string(f, out.op_type, "op_type"); break;
            case 5: {
                wire_reader m = r.read_message(f, "attribute", "AttributeProto");
                out.attribute.emplace_back();
                parse_attribute(m, out.attribute.back());
                break;
            }
            case 7: r.read_string(f, out.domain, "domain"); break;
            default: r.skip(f); break;
        }
    }
    return r.ok();
}

inline bool parse_graph(wire_reader& r, graph_proto& out) {
    wire_field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: {
                if (++r.state().nodes > r.state().max_nodes)
                    return r.fail("node", ember::detail::format("more than load_options::max_nodes ({}) nodes, at byte {}", r.state().max_nodes,
                                                                f.offset));
                wire_reader m = r.read_message(f, "node", "NodeProto");
                out.node.emplace_back();
                parse_node(m, out.node.back());
                break;
            }
            case 2: r.read_string(f, out.name, "name"); break;
            case 5: {
                wire_reader m = r.read_message(f, "initializer", "TensorProto");
                out.initializer.emplace_back();
                parse_tensor(m, out.initializer.back());
                break;
            }
            case 11: case 12: case 13: {
                const char* field = f.number == 11 ? "input" : f.number == 12 ? "output" : "value_info";
                std::vector<value_info_proto>& list = f.number == 11 ? out.input : f.number == 12 ? out.output : out.value_info;
                wire_reader m = r.read_message(f, field, "ValueInfoProto");
                list.emplace_back();
                parse_value_info(m, list.back());
                break;
            }
            case 15: ++out.sparse_initializer_count; r.skip(f); break;
            default: r.skip(f); break;
        }
    }
    return r.ok();
}

inline bool parse_opset(wire_reader& r, opset_proto& out) {
    wire_field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: r.read_string(f, out.domain, "domain"); break;
            case 2: r.read_int64(f, out.version, "version"); break;
            default: r.skip(f); break;
        }
    }
    return r.ok();
}

inline bool parse_model(wire_reader& r, model_proto& out) {
    wire_field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: r.read_int64(f, out.ir_version, "ir_version"); break;
            case 7: {
                wire_reader m = r.read_message(f, "graph", "GraphProto");
                out.has_graph = true;
                out.graph = graph_proto{};  // a repeated singular message: protobuf merges; the last one wins here
                parse_graph(m, out.graph);
                break;
            }
            case 8: {
                wire_reader m = r.read_message(f, "opset_import", "OperatorSetIdProto");
                out.opset_import.emplace_back();
                parse_opset(m, out.opset_import.back());
                break;
            }
            default: r.skip(f); break;
        }
    }
    return r.ok();
}

} // namespace detail

/// Parses a serialized ModelProto. On failure returns false and state.error says why.
/// The bytes must outlive `out` (tensor raw_data points into them).
[[nodiscard]] inline bool parse_model(const void* data, std::size_t size, model_proto& out, wire_state& state) {
    wire_reader r(static_cast<const std::uint8_t*>(data), size, 0, "ModelProto", state);
    return detail::parse_model(r, out) && !state.failed();
}

} // namespace onnx
EMBER_NAMESPACE_END
