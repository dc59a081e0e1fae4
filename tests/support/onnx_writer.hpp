// SPDX-License-Identifier: Apache-2.0
// A tiny protobuf writer for crafting ONNX models in tests: pb::message appends fields in wire
// format, and the onnx_* helpers build the ONNX messages from them (field numbers of onnx.proto).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace ember::test::pb {

/// One message's serialized bytes; fields are appended in call order.
struct message {
    std::string bytes;

    message& raw_varint(std::uint64_t v) {
        do {
            std::uint8_t b = v & 0x7fu;
            v >>= 7;
            if (v) b |= 0x80u;
            bytes.push_back(static_cast<char>(b));
        } while (v);
        return *this;
    }
    message& tag(std::uint32_t field, std::uint32_t wire) { return raw_varint(static_cast<std::uint64_t>(field) << 3 | wire); }
    message& varint(std::uint32_t field, std::uint64_t v) { return tag(field, 0).raw_varint(v); }
    message& i64(std::uint32_t field, std::int64_t v) { return varint(field, static_cast<std::uint64_t>(v)); }
    message& f32(std::uint32_t field, float v) {
        tag(field, 5);
        char b[4];
        std::memcpy(b, &v, 4);
        bytes.append(b, 4);
        return *this;
    }
    message& fixed64(std::uint32_t field, std::uint64_t v) {
        tag(field, 1);
        char b[8];
        std::memcpy(b, &v, 8);
        bytes.append(b, 8);
        return *this;
    }
    message& str(std::uint32_t field, std::string_view s) {
        tag(field, 2).raw_varint(s.size());
        bytes.append(s.data(), s.size());
        return *this;
    }
    message& msg(std::uint32_t field, const message& m) { return str(field, m.bytes); }
    message& packed_varints(std::uint32_t field, const std::vector<std::int64_t>& v) {
        message body;
        for (std::int64_t x : v) body.raw_varint(static_cast<std::uint64_t>(x));
        return msg(field, body);
    }
    template <class T>
    message& packed_fixed(std::uint32_t field, const std::vector<T>& v) {
        return str(field, std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
    }
};

} // namespace ember::test::pb

namespace ember::test::onnx_writer {

using pb::message;

// TensorProto.DataType
enum : std::int32_t { FLOAT = 1, UINT8 = 2, INT8 = 3, UINT16 = 4, INT16 = 5, INT32 = 6, INT64 = 7, STRING = 8, BOOL = 9,
                      FLOAT16 = 10, DOUBLE = 11, UINT32 = 12, UINT64 = 13, BFLOAT16 = 16 };

inline message tensor_header(const std::string& name, std::int32_t type, const std::vector<std::int64_t>& dims) {
    message t;
    for (std::int64_t d : dims) t.i64(1, d);  // unpacked dims, as onnx's Python writer does
    t.varint(2, static_cast<std::uint64_t>(type));
    if (!name.empty()) t.str(8, name);
    return t;
}

/// A tensor whose bytes are in raw_data.
inline message tensor_raw(const std::string& name, std::int32_t type, const std::vector<std::int64_t>& dims, const void* data,
                          std::size_t size) {
    return tensor_header(name, type, dims).str(9, std::string_view(static_cast<const char*>(data), size));
}
template <class T>
message tensor_raw(const std::string& name, std::int32_t type, const std::vector<std::int64_t>& dims, const std::vector<T>& v) {
    return tensor_raw(name, type, dims, v.data(), v.size() * sizeof(T));
}
/// A float tensor in float_data (packed).
inline message tensor_f32(const std::string& name, const std::vector<std::int64_t>& dims, const std::vector<float>& v) {
    return tensor_header(name, FLOAT, dims).packed_fixed(4, v);
}

/// ValueInfoProto of a tensor; negative dims become dim_param "d<index>", a dim of -100 is left
/// unknown (neither field).
inline message value_info(const std::string& name, std::int32_t elem_type, const std::vector<std::int64_t>& dims) {
    message shape;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        message d;
        if (dims[i] >= 0)
            d.i64(1, dims[i]);
        else if (dims[i] != -100)
            d.str(2, "d" + std::to_string(i));
        shape.msg(1, d);
    }
    message tensor_type;
    tensor_type.varint(1, static_cast<std::uint64_t>(elem_type)).msg(2, shape);
    message type;
    type.msg(1, tensor_type);
    message vi;
    vi.str(1, name).msg(2, type);
    return vi;
}

// AttributeProto of each kind (type field 20).
inline message attr_f(const std::string& n, float v) { message a; a.str(1, n).varint(20, 1).f32(2, v); return a; }
inline message attr_i(const std::string& n, std::int64_t v) { message a; a.str(1, n).varint(20, 2).i64(3, v); return a; }
inline message attr_s(const std::string& n, const std::string& v) { message a; a.str(1, n).varint(20, 3).str(4, v); return a; }
inline message attr_t(const std::string& n, const message& t) { message a; a.str(1, n).varint(20, 4).msg(5, t); return a; }
inline message attr_g(const std::string& n, const message& g) { message a; a.str(1, n).varint(20, 5).msg(6, g); return a; }
inline message attr_floats(const std::string& n, const std::vector<float>& v) { message a; a.str(1, n).varint(20, 6).packed_fixed(7, v); return a; }
inline message attr_ints(const std::string& n, const std::vector<std::int64_t>& v) { message a; a.str(1, n).varint(20, 7).packed_varints(8, v); return a; }
inline message attr_strings(const std::string& n, const std::vector<std::string>& v) {
    message a;
    a.str(1, n).varint(20, 8);
    for (const std::string& s : v) a.str(9, s);
    return a;
}
inline message attr_tensors(const std::string& n, const std::vector<message>& v) {
    message a;
    a.str(1, n).varint(20, 9);
    for (const message& t : v) a.msg(10, t);
    return a;
}
inline message attr_graphs(const std::string& n, const std::vector<message>& v) {
    message a;
    a.str(1, n).varint(20, 10);
    for (const message& g : v) a.msg(11, g);
    return a;
}

inline message node(const std::string& op, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                    const std::string& name = "", const std::vector<message>& attributes = {}, const std::string& domain = "") {
    message n;
    for (const std::string& i : inputs) n.str(1, i);
    for (const std::string& o : outputs) n.str(2, o);
    if (!name.empty()) n.str(3, name);
    n.str(4, op);
    for (const message& a : attributes) n.msg(5, a);
    if (!domain.empty()) n.str(7, domain);
    return n;
}

struct graph_parts {
    std::string name = "g";
    std::vector<message> nodes;
    std::vector<message> initializers;
    std::vector<message> inputs;
    std::vector<message> outputs;
    std::vector<message> value_infos;
};

inline message graph(const graph_parts& p) {
    message g;
    for (const message& n : p.nodes) g.msg(1, n);
    g.str(2, p.name);
    for (const message& t : p.initializers) g.msg(5, t);
    for (const message& i : p.inputs) g.msg(11, i);
    for (const message& o : p.outputs) g.msg(12, o);
    for (const message& v : p.value_infos) g.msg(13, v);
    return g;
}

/// ModelProto with the graph as its last field (so every strict prefix is a broken model).
inline message model(const message& g, std::int64_t opset = 13, std::int64_t ir_version = 8) {
    message m;
    m.i64(1, ir_version);
    m.str(2, "ember-tests");  // producer_name: an unknown-to-ember field, skipped
    message o;
    o.str(1, "").i64(2, opset);
    m.msg(8, o);
    m.msg(7, g);
    return m;
}

} // namespace ember::test::onnx_writer
