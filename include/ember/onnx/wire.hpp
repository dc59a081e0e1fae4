// SPDX-License-Identifier: Apache-2.0
// A protobuf wire-format reader, just enough for ONNX: varints (10-byte limit, overflow check),
// zigzag, fixed32/fixed64, length-delimited fields, packed and unpacked repeated scalars, and
// skipping of unknown fields of every wire type. Groups (wire types 3 and 4) are rejected, as are
// wire types 6 and 7. Every length and offset is checked against the buffer and nesting is bounded.
// No exceptions, no libprotobuf: the first error is kept, as a sentence naming the message, the
// field and the absolute byte offset ("TensorProto.dims: truncated varint at byte 1234").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ember/config.hpp"
#include "ember/detail/format.hpp"

EMBER_NAMESPACE_BEGIN
namespace onnx {

/// Protobuf wire types. start_group/end_group are legal protobuf but never used by ONNX.
enum class wire_type : std::uint8_t { varint = 0, fixed64 = 1, length_delimited = 2, start_group = 3, end_group = 4, fixed32 = 5 };

/// Decodes a zigzag-encoded sint32/sint64.
[[nodiscard]] constexpr std::int64_t zigzag_decode(std::uint64_t v) noexcept {
    return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1u);
}
[[nodiscard]] constexpr std::int32_t zigzag_decode32(std::uint32_t v) noexcept {
    return static_cast<std::int32_t>(v >> 1) ^ -static_cast<std::int32_t>(v & 1u);
}

/// The state shared by a reader and the readers of its nested messages: the first error and the
/// depth limit.
struct wire_state {
    std::string error;         ///< empty while all is well
    std::size_t max_depth = 64;
    /// NodeProtos allowed in the whole model, subgraphs included, and how many were read so far:
    /// a node takes ~200 bytes in memory and as few as 2 on the wire, so this bounds what a small
    /// crafted file can make the parser allocate.
    std::size_t max_nodes = std::size_t{1} << 20;
    std::size_t nodes = 0;
    bool failed() const noexcept { return !error.empty(); }
};

/// One field's header, as read by wire_reader::next().
struct wire_field {
    std::uint32_t number = 0;
    wire_type type = wire_type::varint;
    std::size_t offset = 0;  ///< absolute offset of the tag
};

/// Reads one message's bytes. `message` names the message type for errors ("TensorProto");
/// `base` is the absolute offset of data[0] in the whole model.
class wire_reader {
public:
    wire_reader(const std::uint8_t* data, std::size_t size, std::size_t base, const char* message, wire_state& state,
                std::size_t depth = 0) noexcept
        : data_(data), size_(size), base_(base), message_(message), state_(&state), depth_(depth) {
        if (depth_ > state_->max_depth)
            fail(nullptr, ember::detail::format("message nested deeper than {} levels at byte {}", state_->max_depth, base_));
    }

    bool ok() const noexcept { return !state_->failed(); }
    bool at_end() const noexcept { return pos_ >= size_ || !ok(); }
    std::size_t offset() const noexcept { return base_ + pos_; }
    std::size_t depth() const noexcept { return depth_; }
    wire_state& state() const noexcept { return *state_; }
    const char* message() const noexcept { return message_; }

    /// Reads the next field's tag. False at the end or on error (check ok()).
    bool next(wire_field& f) {
        if (at_end()) return false;
        f.offset = offset();
        std::uint64_t tag = 0;
        if (!varint(tag, nullptr)) return false;
        const std::uint64_t number = tag >> 3;
        const auto type = static_cast<std::uint32_t>(tag & 7u);
        if (number == 0 || number > 0x1fffffffu)
            return fail(nullptr, ember::detail::format("invalid field number {} at byte {}", number, f.offset));
        f.number = static_cast<std::uint32_t>(number);
        if (type == 3 || type == 4)
            return fail(nullptr, ember::detail::format("field {}: groups (wire type {}) are not supported, at byte {}", number, type, f.offset));
        if (type > 5) return fail(nullptr, ember::detail::format("field {}: unknown wire type {} at byte {}", number, type, f.offset));
        f.type = static_cast<wire_type>(type);
        return true;
    }

    /// Skips the value of a field whose header next() just read.
    bool skip(const wire_field& f) {
        switch (f.type) {
            case wire_type::varint: {
                std::uint64_t v;
                return varint(v, "unknown field");
            }
            case wire_type::fixed64: return advance(8, "unknown field", "fixed64");
            case wire_type::fixed32: return advance(4, "unknown field", "fixed32");
            case wire_type::length_delimited: {
                const std::uint8_t* p;
                std::size_t n;
                return bytes(p, n, "unknown field");
            }
            case wire_type::start_group:
            case wire_type::end_group: break;
        }
        return fail("unknown field", ember::detail::format("group at byte {}", f.offset));
    }

    /// Checks that field `f` has wire type `t`.
    bool expect(const wire_field& f, wire_type t, const char* field) {
        if (f.type == t) return true;
        return fail(field, ember::detail::format("wire type {} where {} was expected, at byte {}", static_cast<int>(f.type),
                                          static_cast<int>(t), f.offset));
    }

    bool varint(std::uint64_t& out, const char* field) {
        const std::size_t start = offset();
        std::uint64_t v = 0;
        for (unsigned i = 0; i < 10; ++i) {
            if (pos_ >= size_) return fail(field, ember::detail::format("truncated varint at byte {}", start));
            const std::uint8_t b = data_[pos_++];
            if (i == 9 && (b & 0x80u)) break;
            if (i == 9 && b > 1) return fail(field, ember::detail::format("varint overflows 64 bits at byte {}", start));
            v |= static_cast<std::uint64_t>(b & 0x7fu) << (7 * i);
            if (!(b & 0x80u)) {
                out = v;
                return true;
            }
        }
        return fail(field, ember::detail::format("varint longer than 10 bytes at byte {}", start));
    }
    bool fixed32(std::uint32_t& out, const char* field) {
        if (!need(4, field, "fixed32")) return false;
        out = static_cast<std::uint32_t>(data_[pos_]) | static_cast<std::uint32_t>(data_[pos_ + 1]) << 8 |
              static_cast<std::uint32_t>(data_[pos_ + 2]) << 16 | static_cast<std::uint32_t>(data_[pos_ + 3]) << 24;
        pos_ += 4;
        return true;
    }
    bool fixed64(std::uint64_t& out, const char* field) {
        std::uint32_t lo = 0, hi = 0;
        if (!need(8, field, "fixed64")) return false;
        (void)fixed32(lo, field);
        (void)fixed32(hi, field);
        out = static_cast<std::uint64_t>(hi) << 32 | lo;
        return true;
    }
    /// A length-delimited field's bytes (pointer into the buffer, no copy).
    bool bytes(const std::uint8_t*& p, std::size_t& n, const char* field) {
        const std::size_t start = offset();
        std::uint64_t len = 0;
        if (!varint(len, field)) return false;
        if (len > size_ - pos_)
            return fail(field, ember::detail::format("length {} at byte {} runs past the end of its message ({} bytes left)", len, start,
                                              size_ - pos_));
        p = data_ + pos_;
        n = static_cast<std::size_t>(len);
        pos_ += n;
        return true;
    }

    // Typed field readers: each checks the wire type of the field next() read.
    bool read_uint64(const wire_field& f, std::uint64_t& out, const char* field) {
        return expect(f, wire_type::varint, field) && varint(out, field);
    }
    bool read_int64(const wire_field& f, std::int64_t& out, const char* field) {
        std::uint64_t v = 0;
        if (!read_uint64(f, v, field)) return false;
        out = static_cast<std::int64_t>(v);
        return true;
    }
    bool read_int32(const wire_field& f, std::int32_t& out, const char* field) {
        std::uint64_t v = 0;
        if (!read_uint64(f, v, field)) return false;
        out = static_cast<std::int32_t>(static_cast<std::uint32_t>(v));  // int32 is sign-extended to 64 bits on the wire
        return true;
    }
    bool read_float(const wire_field& f, float& out, const char* field) {
        std::uint32_t bits = 0;
        if (!expect(f, wire_type::fixed32, field) || !fixed32(bits, field)) return false;
        std::memcpy(&out, &bits, 4);
        return true;
    }
    bool read_string(const wire_field& f, std::string& out, const char* field) {
        const std::uint8_t* p = nullptr;
        std::size_t n = 0;
        if (!expect(f, wire_type::length_delimited, field) || !bytes(p, n, field)) return false;
        out.assign(reinterpret_cast<const char*>(p), n);
        return true;
    }
    /// A nested message: a reader over its bytes, one level deeper. Check ok() after.
    wire_reader read_message(const wire_field& f, const char* field, const char* message) {
        const std::uint8_t* p = data_;
        std::size_t n = 0;
        if (expect(f, wire_type::length_delimited, field)) (void)bytes(p, n, field);
        if (!ok()) return wire_reader(data_, 0, offset(), message, *state_, depth_);
        return wire_reader(p, n, base_ + static_cast<std::size_t>(p - data_), message, *state_, depth_ + 1);
    }

    /// Appends a repeated varint field, packed (one length-delimited run) or not (one value).
    /// Convert is applied to each raw 64-bit value.
    template <class T, class Convert>
    bool read_repeated_varint(const wire_field& f, std::vector<T>& out, const char* field, Convert convert) {
        if (f.type == wire_type::varint) {
            std::uint64_t v = 0;
            if (!varint(v, field)) return false;
            out.push_back(convert(v));
            return true;
        }
        const std::uint8_t* p = nullptr;
        std::size_t n = 0;
        if (!expect(f, wire_type::length_delimited, field) || !bytes(p, n, field)) return false;
        wire_reader packed(p, n, base_ + static_cast<std::size_t>(p - data_), message_, *state_, depth_);
        while (!packed.at_end()) {
            std::uint64_t v = 0;
            if (!packed.varint(v, field)) return false;
            out.push_back(convert(v));
        }
        return ok();
    }
    bool read_repeated_int64(const wire_field& f, std::vector<std::int64_t>& out, const char* field) {
        return read_repeated_varint(f, out, field, [](std::uint64_t v) { return static_cast<std::int64_t>(v); });
    }
    bool read_repeated_int32(const wire_field& f, std::vector<std::int32_t>& out, const char* field) {
        return read_repeated_varint(f, out, field, [](std::uint64_t v) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); });
    }
    bool read_repeated_uint64(const wire_field& f, std::vector<std::uint64_t>& out, const char* field) {
        return read_repeated_varint(f, out, field, [](std::uint64_t v) { return v; });
    }

    /// Appends a repeated fixed-width field (4 or 8 bytes: float, double), packed or not.
    template <class T>
    bool read_repeated_fixed(const wire_field& f, std::vector<T>& out, const char* field) {
        static_assert(sizeof(T) == 4 || sizeof(T) == 8, "fixed32 or fixed64 element");
        constexpr wire_type single = sizeof(T) == 4 ? wire_type::fixed32 : wire_type::fixed64;
        if (f.type == single) {
            if (!need(sizeof(T), field, sizeof(T) == 4 ? "fixed32" : "fixed64")) return false;
            T v;
            std::memcpy(&v, data_ + pos_, sizeof(T));  // little-endian host assumed (x86-64, AArch64)
            pos_ += sizeof(T);
            out.push_back(v);
            return true;
        }
        const std::uint8_t* p = nullptr;
        std::size_t n = 0;
        if (!expect(f, wire_type::length_delimited, field) || !bytes(p, n, field)) return false;
        if (n % sizeof(T) != 0)
            return fail(field, ember::detail::format("packed run of {} bytes at byte {} is not a multiple of {}", n, f.offset, sizeof(T)));
        const std::size_t old = out.size();
        out.resize(old + n / sizeof(T));
        if (n) std::memcpy(out.data() + old, p, n);
        return true;
    }

    /// Records an error "Message.field: what" (first error wins). Always returns false.
    bool fail(const char* field, const std::string& what) {
        if (state_->failed()) return false;
        std::string& e = state_->error;
        e.append(message_);
        if (field) {
            e.push_back('.');
            e.append(field);
        }
        e.append(": ");
        e.append(what);
        return false;
    }

private:
    bool need(std::size_t n, const char* field, const char* what) {
        if (n <= size_ - pos_) return true;
        return fail(field, ember::detail::format("truncated {} at byte {}", what, offset()));
    }
    bool advance(std::size_t n, const char* field, const char* what) {
        if (!need(n, field, what)) return false;
        pos_ += n;
        return true;
    }

    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
    std::size_t base_;
    const char* message_;
    wire_state* state_;
    std::size_t depth_;
};

} // namespace onnx
EMBER_NAMESPACE_END
