// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ember/onnx/wire.hpp>

#include "support/onnx_writer.hpp"

using ember::onnx::wire_field;
using ember::onnx::wire_reader;
using ember::onnx::wire_state;
using ember::onnx::wire_type;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const std::uint8_t* bytes_of(const std::string& s) { return reinterpret_cast<const std::uint8_t*>(s.data()); }
} // namespace

TEST_CASE("onnx/wire: varints of every length, the 10-byte limit and 64-bit overflow") {
    for (std::uint64_t v : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{127}, std::uint64_t{128}, std::uint64_t{300},
                            std::uint64_t{1} << 35, std::numeric_limits<std::uint64_t>::max()}) {
        ember::test::pb::message m;
        m.raw_varint(v);
        wire_state st;
        wire_reader r(bytes_of(m.bytes), m.bytes.size(), 0, "Test", st);
        std::uint64_t out = 0;
        REQUIRE(r.varint(out, "x"));
        CHECK(out == v);
        CHECK(r.at_end());
    }
    {
        const std::vector<std::uint8_t> b = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
        wire_state st;
        wire_reader r(b.data(), b.size(), 100, "TensorProto", st);
        std::uint64_t out = 0;
        CHECK_FALSE(r.varint(out, "dims"));
        CHECK(st.error == "TensorProto.dims: varint overflows 64 bits at byte 100");
    }
    {
        const std::vector<std::uint8_t> b(11, 0x80);
        wire_state st;
        wire_reader r(b.data(), b.size(), 0, "TensorProto", st);
        std::uint64_t out = 0;
        CHECK_FALSE(r.varint(out, "dims"));
        CHECK(contains(st.error, "varint longer than 10 bytes at byte 0"));
    }
    {
        const std::vector<std::uint8_t> b = {0x01, 0x80, 0x80};
        wire_state st;
        wire_reader r(b.data(), b.size(), 1230, "TensorProto", st);
        std::uint64_t out = 0;
        REQUIRE(r.varint(out, "dims"));
        CHECK_FALSE(r.varint(out, "dims"));
        CHECK(st.error == "TensorProto.dims: truncated varint at byte 1231");
    }
}

TEST_CASE("onnx/wire: zigzag, fixed32 and fixed64") {
    CHECK(ember::onnx::zigzag_decode(0) == 0);
    CHECK(ember::onnx::zigzag_decode(1) == -1);
    CHECK(ember::onnx::zigzag_decode(2) == 1);
    CHECK(ember::onnx::zigzag_decode(3) == -2);
    CHECK(ember::onnx::zigzag_decode(0xfffffffffffffffeull) == std::numeric_limits<std::int64_t>::max());
    CHECK(ember::onnx::zigzag_decode(0xffffffffffffffffull) == std::numeric_limits<std::int64_t>::min());
    CHECK(ember::onnx::zigzag_decode32(0xffffffffu) == std::numeric_limits<std::int32_t>::min());

    ember::test::pb::message m;
    m.f32(1, 1.5f).fixed64(2, 0x0102030405060708ull);
    wire_state st;
    wire_reader r(bytes_of(m.bytes), m.bytes.size(), 0, "Test", st);
    wire_field f;
    REQUIRE(r.next(f));
    CHECK(f.number == 1);
    CHECK(f.type == wire_type::fixed32);
    float x = 0;
    REQUIRE(r.read_float(f, x, "x"));
    CHECK(x == 1.5f);
    REQUIRE(r.next(f));
    CHECK(f.type == wire_type::fixed64);
    std::uint64_t y = 0;
    REQUIRE(r.fixed64(y, "y"));
    CHECK(y == 0x0102030405060708ull);
    CHECK_FALSE(r.next(f));
    CHECK(r.ok());
}

TEST_CASE("onnx/wire: packed and unpacked repeated scalars read the same") {
    ember::test::pb::message m;
    m.packed_varints(1, {1, -2, 300}).i64(1, 4).i64(1, -5);
    m.packed_fixed(2, std::vector<float>{0.5f, -1.0f}).f32(2, 2.0f);
    m.packed_fixed(3, std::vector<double>{3.25});
    wire_state st;
    wire_reader r(bytes_of(m.bytes), m.bytes.size(), 0, "Test", st);
    std::vector<std::int64_t> ints;
    std::vector<float> floats;
    std::vector<double> doubles;
    wire_field f;
    while (r.next(f)) {
        if (f.number == 1) r.read_repeated_int64(f, ints, "ints");
        if (f.number == 2) r.read_repeated_fixed(f, floats, "floats");
        if (f.number == 3) r.read_repeated_fixed(f, doubles, "doubles");
    }
    REQUIRE_MESSAGE(r.ok(), st.error);
    CHECK(ints == std::vector<std::int64_t>{1, -2, 300, 4, -5});
    CHECK(floats == std::vector<float>{0.5f, -1.0f, 2.0f});
    CHECK(doubles == std::vector<double>{3.25});

    ember::test::pb::message bad;
    bad.str(2, "abcde");  // 5 bytes: not a whole number of floats
    wire_state st2;
    wire_reader r2(bytes_of(bad.bytes), bad.bytes.size(), 0, "AttributeProto", st2);
    REQUIRE(r2.next(f));
    CHECK_FALSE(r2.read_repeated_fixed(f, floats, "floats"));
    CHECK(st2.error == "AttributeProto.floats: packed run of 5 bytes at byte 0 is not a multiple of 4");
}

TEST_CASE("onnx/wire: unknown fields of every wire type are skipped; groups and wire types 6, 7 are rejected") {
    ember::test::pb::message m;
    m.varint(9, 12345).fixed64(10, 7).str(11, "skip me").f32(12, 1.0f).varint(1, 42);
    wire_state st;
    wire_reader r(bytes_of(m.bytes), m.bytes.size(), 0, "Test", st);
    wire_field f;
    std::uint64_t found = 0;
    while (r.next(f)) {
        if (f.number == 1)
            r.read_uint64(f, found, "x");
        else
            r.skip(f);
    }
    CHECK(r.ok());
    CHECK(found == 42);

    for (std::uint32_t wt : {3u, 4u, 6u, 7u}) {
        ember::test::pb::message g;
        g.varint(1, 1).tag(5, wt).raw_varint(0);
        wire_state s;
        wire_reader rr(bytes_of(g.bytes), g.bytes.size(), 0, "NodeProto", s);
        while (rr.next(f)) rr.skip(f);
        CHECK_FALSE(rr.ok());
        CHECK(contains(s.error, wt < 5 ? "groups (wire type" : "unknown wire type"));
        CHECK(contains(s.error, "at byte 2"));
    }

    ember::test::pb::message zero;
    zero.tag(0, 0).raw_varint(1);
    wire_state sz;
    wire_reader rz(bytes_of(zero.bytes), zero.bytes.size(), 0, "Test", sz);
    CHECK_FALSE(rz.next(f));
    CHECK(contains(sz.error, "invalid field number 0"));
}

TEST_CASE("onnx/wire: lengths past the end, truncated fixed values and a wrong wire type are errors") {
    std::vector<std::uint8_t> b = {0x12, 0x05, 'a', 'b'};  // field 2, length 5, 2 bytes follow
    wire_state st;
    wire_reader r(b.data(), b.size(), 40, "GraphProto", st);
    wire_field f;
    REQUIRE(r.next(f));
    std::string s;
    CHECK_FALSE(r.read_string(f, s, "name"));
    CHECK(st.error == "GraphProto.name: length 5 at byte 41 runs past the end of its message (2 bytes left)");

    std::vector<std::uint8_t> t = {0x0d, 0x00, 0x00};  // field 1 fixed32, 2 bytes
    wire_state st2;
    wire_reader r2(t.data(), t.size(), 0, "AttributeProto", st2);
    REQUIRE(r2.next(f));
    float x;
    CHECK_FALSE(r2.read_float(f, x, "f"));
    CHECK(st2.error == "AttributeProto.f: truncated fixed32 at byte 1");

    ember::test::pb::message m;
    m.str(1, "x");
    wire_state st3;
    wire_reader r3(bytes_of(m.bytes), m.bytes.size(), 0, "TensorProto", st3);
    REQUIRE(r3.next(f));
    std::int32_t v;
    CHECK_FALSE(r3.read_int32(f, v, "data_type"));
    CHECK(contains(st3.error, "TensorProto.data_type: wire type 2 where 0 was expected, at byte 0"));
}

TEST_CASE("onnx/wire: nested messages beyond max_depth are refused") {
    ember::test::pb::message m;
    m.varint(2, 1);
    for (int i = 0; i < 10; ++i) {
        ember::test::pb::message outer;
        outer.msg(1, m);
        m = outer;
    }
    wire_state st;
    st.max_depth = 5;
    std::size_t deepest = 0;
    struct walker {
        std::size_t& deepest;
        void walk(wire_reader& r) {
            if (r.depth() > deepest) deepest = r.depth();
            wire_field f;
            while (r.next(f)) {
                if (f.number == 1) {
                    wire_reader sub = r.read_message(f, "child", "Test");
                    walk(sub);
                } else {
                    r.skip(f);
                }
            }
        }
    } w{deepest};
    wire_reader r(bytes_of(m.bytes), m.bytes.size(), 0, "Test", st);
    w.walk(r);
    CHECK_FALSE(r.ok());
    CHECK(contains(st.error, "nested deeper than 5 levels"));
    CHECK(deepest <= 6);
}
