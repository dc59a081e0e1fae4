// SPDX-License-Identifier: Apache-2.0
// NumPy's .npy format: read (versions 1.0, 2.0 and 3.0) into an ember::tensor, write (version 1.0,
// byte for byte what numpy.save writes) from one. For tools, tests and examples: the library's
// run path never touches files.
//
//   ember::result<ember::tensor> x = ember::npy::load_file("input.npy");
//   if (!x) { /* x.error().message: "ember::npy: 'input.npy': ..." */ }
//   ember::result<std::size_t> n = ember::npy::save_file("output.npy", *x);
//
// Element types: <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1 (big-endian '>' ones are
// byte-swapped on load; bool bytes other than 0 are read as 1). C order only. Every header
// field and size is checked against the byte count: a truncated or corrupt file gives
// status::invalid_model (status::io_error when the file cannot be read or written) with one line
// that names the file and what is wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/allocator.hpp"
#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/format.hpp"
#include "ember/detail/read_file.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace npy {

/// Headers longer than this are refused (numpy's own default limit is 10000 bytes).
inline constexpr std::size_t max_header_bytes = std::size_t{1} << 20;

namespace detail {

inline constexpr char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

inline bool host_is_little_endian() noexcept {
    const std::uint16_t one = 1;
    unsigned char first;
    std::memcpy(&first, &one, 1);
    return first == 1;
}

/// The dtype of a descr's kind and item size ('f', 4 -> float32), undefined when ember lacks it.
inline dtype dtype_of_descr(char kind, std::size_t size) noexcept {
    switch (kind) {
        case 'f': return size == 2 ? dtype::float16 : size == 4 ? dtype::float32 : size == 8 ? dtype::float64 : dtype::undefined;
        case 'i':
            return size == 1 ? dtype::int8 : size == 2 ? dtype::int16 : size == 4 ? dtype::int32 : size == 8 ? dtype::int64 : dtype::undefined;
        case 'u':
            return size == 1 ? dtype::uint8 : size == 2 ? dtype::uint16 : size == 4 ? dtype::uint32 : size == 8 ? dtype::uint64 : dtype::undefined;
        case 'b': return size == 1 ? dtype::boolean : dtype::undefined;
        default: return dtype::undefined;
    }
}

/// numpy's descr for a dtype ("<f4"), empty for dtypes .npy has no code for (bfloat16).
inline std::string_view descr_of(dtype t) noexcept {
    switch (t) {
        case dtype::float16: return "<f2";
        case dtype::float32: return "<f4";
        case dtype::float64: return "<f8";
        case dtype::int8: return "|i1";
        case dtype::int16: return "<i2";
        case dtype::int32: return "<i4";
        case dtype::int64: return "<i8";
        case dtype::uint8: return "|u1";
        case dtype::uint16: return "<u2";
        case dtype::uint32: return "<u4";
        case dtype::uint64: return "<u8";
        case dtype::boolean: return "|b1";
        default: return {};
    }
}

/// What the header dictionary says.
struct header {
    dtype type = dtype::undefined;
    bool swap = false;  // the file's byte order differs from the host's
    shape dims;
};

/// A parser for the one Python dict literal numpy writes:
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class header_parser {
public:
    header_parser(std::string_view text, std::string& error) : s_(text), error_(error) {}

    bool parse(header& h) {
        bool have_descr = false, have_order = false, have_shape = false;
        skip_space();
        if (!eat('{')) return fail("the header is not a Python dict (it does not start with '{')");
        for (;;) {
            skip_space();
            if (eat('}')) break;
            std::string_view key;
            if (!string_literal(key, "a key")) return false;
            skip_space();
            if (!eat(':')) return fail(ember::detail::format("expected ':' after the key '{}' in the header", key));
            skip_space();
            if (key == "descr") {
                if (have_descr) return fail("the header has 'descr' twice");
                have_descr = true;
                if (!descr(h)) return false;
            } else if (key == "fortran_order") {
                if (have_order) return fail("the header has 'fortran_order' twice");
                have_order = true;
                bool fortran = false;
                if (!boolean(fortran)) return false;
                if (fortran)
                    return fail("the array is in Fortran (column-major) order; only C order is supported (save it with "
                                "numpy.ascontiguousarray)");
            } else if (key == "shape") {
                if (have_shape) return fail("the header has 'shape' twice");
                have_shape = true;
                if (!dims(h.dims)) return false;
            } else {
                return fail(ember::detail::format("the header has an unknown key '{}'", key));
            }
            skip_space();
            if (eat(',')) continue;
            skip_space();
            if (eat('}')) break;
            return fail(ember::detail::format("expected ',' or '}' at byte {} of the header", at_));
        }
        skip_space();
        if (at_ != s_.size()) return fail(ember::detail::format("unexpected text after the header dict at byte {}", at_));
        if (!have_descr) return fail("the header has no 'descr'");
        if (!have_order) return fail("the header has no 'fortran_order'");
        if (!have_shape) return fail("the header has no 'shape'");
        return true;
    }

private:
    bool fail(std::string message) {
        error_ = std::move(message);
        return false;
    }
    void skip_space() noexcept {
        while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
    }
    bool eat(char c) noexcept {
        if (at_ < s_.size() && s_[at_] == c) {
            ++at_;
            return true;
        }
        return false;
    }
    bool word(std::string_view w) noexcept {
        if (s_.substr(at_, w.size()) != w) return false;
        at_ += w.size();
        return true;
    }

    bool string_literal(std::string_view& out, std::string_view what) {
        if (at_ >= s_.size() || (s_[at_] != '\'' && s_[at_] != '"'))
            return fail(ember::detail::format("expected {} (a quoted string) at byte {} of the header", what, at_));
        const char quote = s_[at_++];
        const std::size_t begin = at_;
        while (at_ < s_.size() && s_[at_] != quote) {
            if (s_[at_] == '\\') return fail("the header has an escaped character in a string, which numpy never writes");
            ++at_;
        }
        if (at_ >= s_.size()) return fail("the header has an unterminated string");
        out = s_.substr(begin, at_ - begin);
        ++at_;
        return true;
    }

    bool boolean(bool& out) {
        if (word("True")) {
            out = true;
            return true;
        }
        if (word("False")) {
            out = false;
            return true;
        }
        return fail(ember::detail::format("'fortran_order' must be True or False (byte {} of the header)", at_));
    }

    bool descr(header& h) {
        if (at_ < s_.size() && s_[at_] == '[')
            return fail("the array has a structured dtype (a record of fields), which is not supported");
        std::string_view d;
        if (!string_literal(d, "'descr'")) return false;
        const std::string text(d);
        if (d.size() < 3) return fail(ember::detail::format("unsupported dtype '{}'", text));
        const char order = d[0];
        if (order != '<' && order != '>' && order != '|' && order != '=')
            return fail(ember::detail::format("dtype '{}' has no byte order ('<', '>', '|' or '=')", text));
        std::size_t size = 0;
        for (std::size_t i = 2; i < d.size(); ++i) {
            if (d[i] < '0' || d[i] > '9' || size > 1000) return fail(ember::detail::format("unsupported dtype '{}'", text));
            size = size * 10 + static_cast<std::size_t>(d[i] - '0');
        }
        h.type = dtype_of_descr(d[1], size);
        if (h.type == dtype::undefined)
            return fail(ember::detail::format("unsupported dtype '{}' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)", text));
        if (order == '|' && size != 1)
            return fail(ember::detail::format("dtype '{}' has no byte order but is {} bytes wide", text, size));
        const bool little = host_is_little_endian();
        h.swap = size > 1 && ((order == '<' && !little) || (order == '>' && little));
        return true;
    }

    bool dims(shape& out) {
        if (!eat('(')) return fail(ember::detail::format("'shape' must be a tuple (byte {} of the header)", at_));
        std::vector<std::int64_t> d;
        skip_space();
        if (eat(')')) {
            out = shape();
            return true;
        }
        for (;;) {
            skip_space();
            if (at_ >= s_.size() || s_[at_] < '0' || s_[at_] > '9')
                return fail(ember::detail::format("'shape' must hold non-negative integers (byte {} of the header)", at_));
            std::int64_t v = 0;
            while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') {
                if (!ember::detail::checked_mul(v, 10, v) || v > INT64_MAX - (s_[at_] - '0'))
                    return fail("a dimension in 'shape' does not fit in 64 bits");
                v += s_[at_++] - '0';
            }
            eat('L');  // Python 2 long literal
            d.push_back(v);
            skip_space();
            const bool comma = eat(',');
            skip_space();
            if (eat(')')) break;
            if (!comma) return fail(ember::detail::format("expected ',' or ')' in 'shape' (byte {} of the header)", at_));
        }
        if (!shape::valid_rank(d.size()))
            return fail(ember::detail::format("the array has rank {}, more than ember's maximum rank {}", d.size(), max_rank));
        out = shape(span<const std::int64_t>(d.data(), d.size()));
        return true;
    }

    std::string_view s_;
    std::size_t at_ = 0;
    std::string& error_;
};

inline error_info bad(std::string_view name, std::string_view what) {
    return error_info{status::invalid_model, -1, ember::detail::format("ember::npy: '{}': {}", name, what)};
}

inline std::uint32_t read_le(const unsigned char* p, std::size_t bytes) noexcept {
    std::uint32_t v = 0;
    for (std::size_t i = bytes; i-- > 0;) v = v << 8 | p[i];
    return v;
}

} // namespace detail

/// Parses .npy bytes held in memory into a new tensor (a copy: data is needed only during the
/// call). name is used in messages (a file name). Fails with invalid_model naming what is wrong.
[[nodiscard]] inline result<tensor> load_memory(const void* data, std::size_t size, std::string_view name = "<memory>",
                                                const allocator& alloc = default_allocator()) {
    if (size != 0 && data == nullptr) return error_info{status::invalid_argument, -1, "ember::npy: load_memory: data is null"};
    const auto* p = static_cast<const unsigned char*>(data);
    if (size < 8)
        return detail::bad(name, ember::detail::format("the file is {} bytes, too short for the 8-byte .npy magic and version", size));
    if (std::memcmp(p, detail::magic, 6) != 0) return detail::bad(name, "not a .npy file (the magic string \\x93NUMPY is missing)");
    const unsigned major = p[6], minor = p[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return detail::bad(name, ember::detail::format("unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", major, minor));
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    const std::size_t prefix = 6 + 2 + length_bytes;
    if (size < prefix)
        return detail::bad(name, ember::detail::format("the file is {} bytes, too short for a version {}.0 header length field ({} bytes)",
                                                       size, major, prefix));
    const std::size_t header_len = detail::read_le(p + 8, length_bytes);
    if (header_len > max_header_bytes)
        return detail::bad(name, ember::detail::format("the header claims {} bytes, more than the limit of {}", header_len, max_header_bytes));
    if (size - prefix < header_len)
        return detail::bad(name, ember::detail::format("truncated: the header claims {} bytes but only {} follow the length field",
                                                       header_len, size - prefix));
    const std::string_view text(reinterpret_cast<const char*>(p + prefix), header_len);
    for (char c : text)
        if (static_cast<unsigned char>(c) >= 0x80 || c == '\0')
            return detail::bad(name, "the header has a byte that is not printable ASCII");
    std::string error;
    detail::header h;
    if (!detail::header_parser(text, error).parse(h)) return detail::bad(name, error);

    const std::int64_t n = h.dims.checked_elements();
    std::int64_t nbytes = 0;
    if (n < 0 || !ember::detail::checked_mul(n, static_cast<std::int64_t>(size_of(h.type)), nbytes))
        return detail::bad(name, ember::detail::format("shape {} is too large", h.dims));
    const std::size_t have = size - prefix - header_len;
    if (static_cast<std::uint64_t>(nbytes) != have)
        return detail::bad(name, ember::detail::format("{}: {} of {} {} needs {} data bytes but the file has {}",
                                                       have < static_cast<std::uint64_t>(nbytes) ? "truncated" : "corrupt", h.dims,
                                                       to_string(h.type), "elements", nbytes, have));
    result<tensor> t = tensor::create(h.type, h.dims, alloc);
    if (!t) return t;
    std::byte* out = t->bytes();
    const unsigned char* in = p + prefix + header_len;
    if (have != 0) std::memcpy(out, in, have);
    const std::size_t item = size_of(h.type);
    if (h.swap) {
        for (std::size_t i = 0; i < have; i += item)
            for (std::size_t a = i, b = i + item - 1; a < b; ++a, --b) std::swap(out[a], out[b]);
    }
    if (h.type == dtype::boolean)
        for (std::size_t i = 0; i < have; ++i) out[i] = static_cast<std::byte>(out[i] != std::byte{0} ? 1 : 0);
    return t;
}

/// Reads a .npy file. io_error when it cannot be opened or read, invalid_model when it is not a
/// valid .npy; both messages name the path.
[[nodiscard]] inline result<tensor> load_file(const std::string& path, const allocator& alloc = default_allocator()) {
    std::vector<unsigned char> bytes;
    const ember::detail::read_file_status rs = ember::detail::read_whole_file(path, bytes);
    if (rs == ember::detail::read_file_status::cannot_open)
        return error_info{status::io_error, -1, ember::detail::format("ember::npy: '{}': cannot open the file", path)};
    if (rs != ember::detail::read_file_status::ok)
        return error_info{status::io_error, -1, ember::detail::format("ember::npy: '{}': cannot read the file (a folder?)", path)};
    return load_memory(bytes.data(), bytes.size(), path, alloc);
}

/// The .npy (version 1.0) bytes of t, identical to what numpy.save writes for the same array.
/// invalid_argument for dtypes .npy has no code for (bfloat16, undefined).
[[nodiscard]] inline result<std::vector<unsigned char>> save_memory(const tensor& t) {
    const std::string_view descr = detail::descr_of(t.type());
    if (descr.empty())
        return error_info{status::invalid_argument, -1, ember::detail::format("ember::npy: cannot write a tensor of {} as .npy", t.type())};
    std::string shape_repr = "(";
    for (std::size_t i = 0; i < t.rank(); ++i) {
        if (i) shape_repr += ", ";
        ember::detail::format_append(shape_repr, t.dims()[i]);
    }
    if (t.rank() == 1) shape_repr += ",";
    shape_repr += ")";
    std::string dict = ember::detail::format("{'descr': '{}', 'fortran_order': False, 'shape': {}, }", descr, shape_repr);
    if (t.rank() > 0) {  // numpy's room for growing the first axis in place (GROWTH_AXIS_MAX_DIGITS = 21)
        std::string first;
        ember::detail::format_append(first, t.dims()[0]);
        if (first.size() < 21) dict.append(21 - first.size(), ' ');
    }
    constexpr std::size_t align = 64, prefix = 10;
    const std::size_t pad = align - (prefix + dict.size() + 1) % align;
    dict.append(pad, ' ');
    dict.push_back('\n');
    if (dict.size() > 0xffffu)
        return error_info{status::invalid_argument, -1, "ember::npy: the header does not fit in a version 1.0 file"};
    std::vector<unsigned char> out(prefix + dict.size() + t.size_bytes());
    std::memcpy(out.data(), detail::magic, 6);
    out[6] = 1;
    out[7] = 0;
    out[8] = static_cast<unsigned char>(dict.size() & 0xffu);
    out[9] = static_cast<unsigned char>(dict.size() >> 8);
    std::memcpy(out.data() + prefix, dict.data(), dict.size());
    unsigned char* data = out.data() + prefix + dict.size();
    if (t.size_bytes() != 0) std::memcpy(data, t.bytes(), t.size_bytes());
    const std::size_t item = size_of(t.type());
    if (item > 1 && !detail::host_is_little_endian())
        for (std::size_t i = 0; i < t.size_bytes(); i += item)
            for (std::size_t a = i, b = i + item - 1; a < b; ++a, --b) std::swap(data[a], data[b]);
    return out;
}

/// Writes t to path as .npy (version 1.0); returns the bytes written. io_error names the path
/// when it cannot be created or written.
[[nodiscard]] inline result<std::size_t> save_file(const std::string& path, const tensor& t) {
    result<std::vector<unsigned char>> bytes = save_memory(t);
    if (!bytes) return bytes.error();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return error_info{status::io_error, -1, ember::detail::format("ember::npy: '{}': cannot create the file", path)};
    const bool wrote = bytes->empty() || std::fwrite(bytes->data(), 1, bytes->size(), f) == bytes->size();
    const bool closed = std::fclose(f) == 0;
    if (!wrote || !closed) return error_info{status::io_error, -1, ember::detail::format("ember::npy: '{}': cannot write the file", path)};
    return bytes->size();
}

} // namespace npy
EMBER_NAMESPACE_END
