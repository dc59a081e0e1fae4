// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <ember/ember.hpp>
#include <ember/io/npy.hpp>

#include "support/check.hpp"

namespace {

using bytes = std::vector<unsigned char>;

/// A .npy file from its parts: the header dict is padded as numpy pads it unless raw is set.
bytes npy_file(std::string dict, const bytes& data, unsigned major = 1, unsigned minor = 0) {
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    const std::size_t prefix = 8 + length_bytes;
    dict.append(64 - (prefix + dict.size() + 1) % 64, ' ');
    dict.push_back('\n');
    bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<unsigned char>(major), static_cast<unsigned char>(minor)};
    for (std::size_t i = 0; i < length_bytes; ++i) out.push_back(static_cast<unsigned char>(dict.size() >> (8 * i)));
    out.insert(out.end(), dict.begin(), dict.end());
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

template <class T>
bytes raw(const std::vector<T>& v) {
    bytes out(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

ember::result<ember::tensor> load(const bytes& b, std::string_view name = "t.npy") {
    return ember::npy::load_memory(b.data(), b.size(), name);
}

std::string error_of(const bytes& b) {
    ember::result<ember::tensor> t = load(b);
    REQUIRE_FALSE(t);
    CHECK(t.error().code == ember::status::invalid_model);
    CHECK(t.error().message.find("'t.npy'") != std::string::npos);
    CHECK(t.error().message.find('\n') == std::string::npos);
    return t.error().message;
}

std::string dict(std::string_view descr, std::string_view shape, std::string_view order = "False") {
    return "{'descr': '" + std::string(descr) + "', 'fortran_order': " + std::string(order) + ", 'shape': " + std::string(shape) + ", }";
}

/// A bool tensor (std::vector<bool> has no data(), so make<bool> cannot take one).
ember::tensor bools(const ember::shape& dims, const std::vector<int>& v) {
    ember::result<ember::tensor> t = ember::tensor::create(ember::dtype::boolean, dims);
    REQUIRE(t);
    REQUIRE(t->size() == v.size());
    for (std::size_t i = 0; i < v.size(); ++i) t->data<bool>()[i] = v[i] != 0;
    return *std::move(t);
}

std::filesystem::path temp_dir(const char* tag) {
    std::random_device rd;
    const auto dir = std::filesystem::temp_directory_path() / ("ember_" + std::string(tag) + "_" + std::to_string(rd()));
    std::filesystem::create_directories(dir);
    return dir;
}

bytes read_all(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

} // namespace

TEST_CASE("npy: reads float32 C-order arrays of every rank, versions 1.0, 2.0 and 3.0") {
    const std::vector<float> v = {1.5f, -2.0f, 0.0f, 3.25f, 1e-7f, -1e30f};
    for (unsigned major : {1u, 2u, 3u}) {
        CAPTURE(major);
        ember::result<ember::tensor> t = load(npy_file(dict("<f4", "(2, 3)"), raw(v), major));
        REQUIRE_MESSAGE(t, t.error().message);
        CHECK(t->type() == ember::dtype::float32);
        CHECK(t->dims() == ember::shape{2, 3});
        CHECK(ember::test::values_of<float>(*t) == v);
    }
    ember::result<ember::tensor> scalar = load(npy_file(dict("<f4", "()"), raw(std::vector<float>{7.0f})));
    REQUIRE(scalar);
    CHECK(scalar->rank() == 0);
    CHECK(scalar->data<float>()[0] == 7.0f);
    ember::result<ember::tensor> one = load(npy_file(dict("<f4", "(3,)"), raw(std::vector<float>{1, 2, 3})));
    REQUIRE(one);
    CHECK(one->dims() == ember::shape{3});
    ember::result<ember::tensor> empty = load(npy_file(dict("<f4", "(0, 5)"), {}));
    REQUIRE(empty);
    CHECK(empty->dims() == ember::shape{0, 5});
    CHECK(empty->size() == 0);
    // Keys in any order, double quotes, no trailing comma, Python 2's long suffix.
    ember::result<ember::tensor> odd = load(npy_file("{\"shape\": (1L, 2L), 'fortran_order': False, 'descr': '<f4'}", raw(std::vector<float>{4, 5})));
    REQUIRE_MESSAGE(odd, odd.error().message);
    CHECK(odd->dims() == ember::shape{1, 2});
}

TEST_CASE("npy: reads every supported dtype, byte-swapping big-endian files") {
    CHECK(ember::test::values_of<double>(*load(npy_file(dict("<f8", "(2,)"), raw(std::vector<double>{0.1, -3.0})))) ==
          std::vector<double>{0.1, -3.0});
    CHECK(ember::test::values_of<std::int8_t>(*load(npy_file(dict("|i1", "(2,)"), raw(std::vector<std::int8_t>{-128, 127})))) ==
          std::vector<std::int8_t>{-128, 127});
    CHECK(ember::test::values_of<std::uint8_t>(*load(npy_file(dict("|u1", "(1,)"), raw(std::vector<std::uint8_t>{255})))) ==
          std::vector<std::uint8_t>{255});
    CHECK(ember::test::values_of<std::int16_t>(*load(npy_file(dict("<i2", "(1,)"), raw(std::vector<std::int16_t>{-300})))) ==
          std::vector<std::int16_t>{-300});
    CHECK(ember::test::values_of<std::int32_t>(*load(npy_file(dict("<i4", "(1,)"), raw(std::vector<std::int32_t>{-70000})))) ==
          std::vector<std::int32_t>{-70000});
    CHECK(ember::test::values_of<std::int64_t>(*load(npy_file(dict("<i8", "(1,)"), raw(std::vector<std::int64_t>{-(std::int64_t{1} << 40)})))) ==
          std::vector<std::int64_t>{-(std::int64_t{1} << 40)});
    CHECK(ember::test::values_of<std::uint16_t>(*load(npy_file(dict("<u2", "(1,)"), raw(std::vector<std::uint16_t>{65535})))) ==
          std::vector<std::uint16_t>{65535});
    CHECK(ember::test::values_of<std::uint32_t>(*load(npy_file(dict("<u4", "(1,)"), raw(std::vector<std::uint32_t>{4000000000u})))) ==
          std::vector<std::uint32_t>{4000000000u});
    CHECK(ember::test::values_of<std::uint64_t>(*load(npy_file(dict("<u8", "(1,)"), raw(std::vector<std::uint64_t>{~0ull})))) ==
          std::vector<std::uint64_t>{~0ull});
    ember::result<ember::tensor> half = load(npy_file(dict("<f2", "(2,)"), raw(std::vector<std::uint16_t>{0x3c00, 0xc000})));
    REQUIRE(half);
    CHECK(half->type() == ember::dtype::float16);
    CHECK(float(half->data<ember::float16>()[0]) == 1.0f);
    CHECK(float(half->data<ember::float16>()[1]) == -2.0f);
}

TEST_CASE("npy: bool bytes and big-endian data") {
    // bool: one byte each; any non-zero byte reads as true (1), so the tensor only holds 0 and 1.
    ember::result<ember::tensor> b = load(npy_file(dict("|b1", "(3,)"), bytes{0, 1, 7}));
    REQUIRE(b);
    CHECK(b->type() == ember::dtype::boolean);
    const auto* p = reinterpret_cast<const unsigned char*>(b->bytes());
    CHECK(p[0] == 0);
    CHECK(p[1] == 1);
    CHECK(p[2] == 1);
    ember::result<ember::tensor> be = load(npy_file(dict(">i4", "(2,)"), bytes{0, 0, 1, 2, 0xff, 0xff, 0xff, 0xfe}));
    REQUIRE(be);
    CHECK(ember::test::values_of<std::int32_t>(*be) == std::vector<std::int32_t>{0x0102, -2});
    ember::result<ember::tensor> bef = load(npy_file(dict(">f4", "(1,)"), bytes{0x3f, 0xc0, 0, 0}));
    REQUIRE(bef);
    CHECK(bef->data<float>()[0] == 1.5f);
    ember::result<ember::tensor> native = load(npy_file(dict("=i2", "(1,)"), raw(std::vector<std::int16_t>{-5})));
    REQUIRE(native);
    CHECK(native->data<std::int16_t>()[0] == -5);
}

TEST_CASE("npy: a corrupt header gives invalid_model with a one-line message that names the file and the problem") {
    const bytes f4 = raw(std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(error_of(bytes{'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0}).find("magic") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "(2, 3)"), f4, 4)).find("version 4.0") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "(2, 3)"), f4, 1, 1)).find("version 1.1") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "(2, 3)", "True"), f4)).find("Fortran") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "(2, 3)", "0"), f4)).find("True or False") != std::string::npos);
    CHECK(error_of(npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", f4)).find("structured") != std::string::npos);
    CHECK(error_of(npy_file(dict("<c8", "(3,)"), f4)).find("unsupported dtype '<c8'") != std::string::npos);
    CHECK(error_of(npy_file(dict("|O", "(3,)"), f4)).find("unsupported dtype") != std::string::npos);
    CHECK(error_of(npy_file(dict("<U4", "(3,)"), f4)).find("unsupported dtype") != std::string::npos);
    CHECK(error_of(npy_file(dict("f4", "(3,)"), f4)).find("unsupported dtype") != std::string::npos);
    CHECK(error_of(npy_file(dict("|f4", "(6,)"), f4)).find("no byte order") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "(-2, 3)"), f4)).find("non-negative") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "[2, 3]"), f4)).find("tuple") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "(2 3)"), f4)).find("expected ',' or ')'") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "(99999999999999999999,)"), f4)).find("64 bits") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "(4294967296, 4294967296)"), f4)).find("too large") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)"), f4)).find("rank 17") != std::string::npos);
    CHECK(error_of(npy_file("{'descr': '<f4', 'shape': (6,), }", f4)).find("no 'fortran_order'") != std::string::npos);
    CHECK(error_of(npy_file("{'fortran_order': False, 'shape': (6,), }", f4)).find("no 'descr'") != std::string::npos);
    CHECK(error_of(npy_file("{'descr': '<f4', 'fortran_order': False, }", f4)).find("no 'shape'") != std::string::npos);
    CHECK(error_of(npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", f4)).find("twice") != std::string::npos);
    CHECK(error_of(npy_file(dict("<f4", "(6,)") + "{", f4)).find("after the header dict") != std::string::npos);
    CHECK(error_of(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", f4)).find("unknown key 'x'") != std::string::npos);
    CHECK(error_of(npy_file("{'descr: '<f4'}", f4)).find("expected ':'") != std::string::npos);
    CHECK(error_of(npy_file("{'descr", f4)).find("unterminated") != std::string::npos);
    CHECK(error_of(npy_file("descr", f4)).find("not a Python dict") != std::string::npos);
    CHECK(error_of(npy_file("{'descr': '<f4\xc3\xa9'}", f4)).find("ASCII") != std::string::npos);
    // Data bytes must match the shape exactly: both short and long files are refused.
    CHECK(error_of(npy_file(dict("<f4", "(2, 3)"), bytes(f4.begin(), f4.end() - 1))).find("truncated: [2, 3] of float32 elements needs 24 data bytes but the file has 23") != std::string::npos);
    bytes longer = f4;
    longer.push_back(0);
    CHECK(error_of(npy_file(dict("<f4", "(2, 3)"), longer)).find("needs 24 data bytes but the file has 25") != std::string::npos);
    // A header length beyond the end of the file, and beyond the limit.
    bytes b = npy_file(dict("<f4", "(2, 3)"), f4);
    b[8] = 0xff;
    b[9] = 0xff;
    CHECK(error_of(b).find("the header claims 65535 bytes") != std::string::npos);
    bytes v2 = npy_file(dict("<f4", "(2, 3)"), f4, 2);
    v2[11] = 0x7f;
    CHECK(error_of(v2).find("more than the limit") != std::string::npos);
}

TEST_CASE("npy: truncation at every byte and corruption of every header byte never crash") {
    for (unsigned major : {1u, 2u, 3u}) {
        const bytes good = npy_file(dict("<i8", "(2, 2)"), raw(std::vector<std::int64_t>{1, 2, 3, 4}), major);
        REQUIRE(load(good));
        for (std::size_t n = 0; n < good.size(); ++n) {
            CAPTURE(n);
            const bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
            const std::string message = error_of(cut);
            CHECK(!message.empty());
        }
        const std::size_t header_end = good.size() - 32;
        for (std::size_t i = 0; i < header_end; ++i)
            for (unsigned char value : {0x00, 0x20, 0x27, 0x29, 0x2c, 0x30, 0x39, 0x7d, 0x80, 0xff}) {
                bytes bad = good;
                bad[i] = value;
                ember::result<ember::tensor> t = load(bad);
                if (t) CHECK(t->size_bytes() <= 32);
                else CHECK(t.error().message.find("'t.npy'") != std::string::npos);
            }
    }
}

TEST_CASE("npy: save_memory writes numpy's version 1.0 layout and reads back for every dtype") {
    const ember::tensor t = ember::test::make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    ember::result<bytes> b = ember::npy::save_memory(t);
    REQUIRE(b);
    REQUIRE(b->size() == 128 + 24);
    const std::string header(b->begin() + 10, b->begin() + 128);
    // numpy: the dict, 20 spaces of room to grow axis 0 ("2" is 1 of 21 digits), padding, '\n'.
    CHECK(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(20, ' '), 0) == 0);
    CHECK(header.back() == '\n');
    CHECK((*b)[8] == 118);
    CHECK((*b)[9] == 0);
    CHECK(std::memcmp(b->data() + 128, t.bytes(), 24) == 0);

    auto round_trip = [](const ember::tensor& in) {
        ember::result<bytes> bytes_ = ember::npy::save_memory(in);
        REQUIRE_MESSAGE(bytes_, bytes_.error().message);
        CHECK((bytes_->size() - in.size_bytes()) % 64 == 0);
        ember::result<ember::tensor> out = ember::npy::load_memory(bytes_->data(), bytes_->size());
        REQUIRE_MESSAGE(out, out.error().message);
        CHECK(out->type() == in.type());
        CHECK(out->dims() == in.dims());
        REQUIRE(out->size_bytes() == in.size_bytes());
        if (in.size_bytes() != 0) CHECK(std::memcmp(out->bytes(), in.bytes(), in.size_bytes()) == 0);
    };
    round_trip(ember::test::make<double>({1, 1, 2}, {0.5, -1.0}));
    round_trip(ember::test::make<std::int8_t>({3}, {-1, 0, 1}));
    round_trip(ember::test::make<std::uint8_t>({}, {200}));
    round_trip(ember::test::make<std::int16_t>({2}, {-2, 2}));
    round_trip(ember::test::make<std::int32_t>({2}, {-2, 2}));
    round_trip(ember::test::make<std::int64_t>({2}, {-2, 2}));
    round_trip(ember::test::make<std::uint16_t>({1}, {9}));
    round_trip(ember::test::make<std::uint32_t>({1}, {9}));
    round_trip(ember::test::make<std::uint64_t>({1}, {9}));
    round_trip(bools({2}, {1, 0}));
    round_trip(ember::test::make<ember::float16>({1}, {ember::float16(0.25f)}));
    round_trip(*ember::tensor::create(ember::dtype::float32, {0, 7}));
    round_trip(*ember::tensor::create(ember::dtype::float32, {1, 2, 3, 4, 5, 6, 7, 8}));

    ember::result<bytes> bf = ember::npy::save_memory(*ember::tensor::create(ember::dtype::bfloat16, {1}));
    REQUIRE_FALSE(bf);
    CHECK(bf.error().message.find("bfloat16") != std::string::npos);
}

TEST_CASE("npy: save_file and load_file name the path when the file cannot be used") {
    const auto dir = temp_dir("npy");
    const ember::tensor t = ember::test::make<std::int32_t>({2, 2}, {1, 2, 3, 4});
    const std::string path = (dir / "x.npy").string();
    ember::result<std::size_t> n = ember::npy::save_file(path, t);
    REQUIRE_MESSAGE(n, n.error().message);
    CHECK(*n == 128 + 16);
    ember::result<ember::tensor> back = ember::npy::load_file(path);
    REQUIRE(back);
    CHECK(ember::test::values_of<std::int32_t>(*back) == std::vector<std::int32_t>{1, 2, 3, 4});

    ember::result<ember::tensor> missing = ember::npy::load_file((dir / "nope.npy").string());
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ember::status::io_error);
    CHECK(missing.error().message.find("nope.npy") != std::string::npos);
    ember::result<ember::tensor> folder = ember::npy::load_file(dir.string());
    REQUIRE_FALSE(folder);
    CHECK(folder.error().message.find(dir.string()) != std::string::npos);
    ember::result<std::size_t> nowhere = ember::npy::save_file((dir / "no" / "such" / "dir.npy").string(), t);
    REQUIRE_FALSE(nowhere);
    CHECK(nowhere.error().code == ember::status::io_error);
    CHECK(nowhere.error().message.find("dir.npy") != std::string::npos);
    {
        std::ofstream cut(dir / "cut.npy", std::ios::binary);
        const bytes b = *ember::npy::save_memory(t);
        cut.write(reinterpret_cast<const char*>(b.data()), 100);
    }
    ember::result<ember::tensor> cut = ember::npy::load_file((dir / "cut.npy").string());
    REQUIRE_FALSE(cut);
    CHECK(cut.error().code == ember::status::invalid_model);
    CHECK(cut.error().message.find("cut.npy") != std::string::npos);
    std::filesystem::remove_all(dir);
}

namespace {

/// A Python interpreter with numpy: $EMBER_PYTHON, Debian's /usr/bin/python3 or python3 on PATH.
std::string python_with_numpy() {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("EMBER_PYTHON")) candidates.emplace_back(env);
    candidates.emplace_back("/usr/bin/python3");
    candidates.emplace_back("python3");
    for (const std::string& py : candidates)
        if (std::system(("\"" + py + "\" -c \"import numpy\" >/dev/null 2>&1").c_str()) == 0) return py;
    return {};
}

/// arange(n) converted to T, as numpy's astype does for these small values.
template <class T>
ember::tensor arange(const ember::shape& dims) {
    std::vector<T> v(static_cast<std::size_t>(dims.elements()));
    for (std::size_t i = 0; i < v.size(); ++i) {
        if constexpr (std::is_same_v<T, ember::float16>) v[i] = ember::float16(static_cast<float>(i));
        else v[i] = static_cast<T>(i);
    }
    return ember::test::make<T>(dims, v);
}

} // namespace

TEST_CASE("npy: files written by numpy read back, and ember writes the same bytes as numpy.save") {
    const std::string py = python_with_numpy();
    if (py.empty()) {
        MESSAGE("skipped: no python3 with numpy (set EMBER_PYTHON); the hand-built cases above cover the format");
        return;
    }
    const auto dir = temp_dir("npy_numpy");
    {
        std::ofstream script(dir / "make.py");
        script << "import sys, numpy as np\n"
                  "from numpy.lib import format as fmt\n"
                  "d = sys.argv[1]\n"
                  "cases = {'f4': ('<f4', (2, 3)), 'f8': ('<f8', (4,)), 'f2': ('<f2', (3, 1)), 'i1': ('|i1', (5,)),\n"
                  "         'u1': ('|u1', (2, 2)), 'i2': ('<i2', (3,)), 'i4': ('<i4', (1, 2, 3)), 'i8': ('<i8', (2, 1)),\n"
                  "         'u2': ('<u2', (2,)), 'u4': ('<u4', (2,)), 'u8': ('<u8', (2,)), 'b1': ('|b1', (4,)),\n"
                  "         'scalar': ('<f4', ()), 'empty': ('<f4', (0, 3)), 'big': ('<f4', (12345678901, 0)),\n"
                  "         'r5': ('<i4', (1, 2, 1, 2, 1))}\n"
                  "for name, (dt, shape) in cases.items():\n"
                  "    n = int(np.prod(shape))\n"
                  "    a = (np.arange(n) % 2 == 1) if dt == '|b1' else np.arange(n).astype(dt)\n"
                  "    np.save(d + '/' + name + '.npy', a.reshape(shape))\n"
                  "np.save(d + '/be_i4.npy', np.arange(6).astype('>i4').reshape(2, 3))\n"
                  "np.save(d + '/be_f8.npy', np.arange(3).astype('>f8'))\n"
                  "np.save(d + '/fortran.npy', np.asfortranarray(np.arange(6, dtype='<f4').reshape(2, 3)))\n"
                  "np.save(d + '/strided.npy', np.arange(12, dtype='<f4').reshape(3, 4)[:, ::2])\n"
                  "for v in [(2, 0), (3, 0)]:\n"
                  "    with open(d + '/v%d.npy' % v[0], 'wb') as f:\n"
                  "        fmt.write_array(f, np.arange(6, dtype='<f4').reshape(3, 2), version=v)\n";
    }
    REQUIRE(std::system(("\"" + py + "\" " + (dir / "make.py").string() + " " + dir.string()).c_str()) == 0);

    auto same_as_numpy = [&](const char* name, const ember::tensor& expected) {
        CAPTURE(name);
        const std::string path = (dir / (std::string(name) + ".npy")).string();
        ember::result<ember::tensor> t = ember::npy::load_file(path);
        REQUIRE_MESSAGE(t, t.error().message);
        CHECK(t->type() == expected.type());
        CHECK(t->dims() == expected.dims());
        REQUIRE(t->size_bytes() == expected.size_bytes());
        if (expected.size_bytes() != 0) CHECK(std::memcmp(t->bytes(), expected.bytes(), expected.size_bytes()) == 0);
        ember::result<bytes> mine = ember::npy::save_memory(expected);
        REQUIRE(mine);
        CHECK(*mine == read_all(path));  // byte for byte what numpy.save wrote
    };
    same_as_numpy("f4", arange<float>({2, 3}));
    same_as_numpy("f8", arange<double>({4}));
    same_as_numpy("f2", arange<ember::float16>({3, 1}));
    same_as_numpy("i1", arange<std::int8_t>({5}));
    same_as_numpy("u1", arange<std::uint8_t>({2, 2}));
    same_as_numpy("i2", arange<std::int16_t>({3}));
    same_as_numpy("i4", arange<std::int32_t>({1, 2, 3}));
    same_as_numpy("i8", arange<std::int64_t>({2, 1}));
    same_as_numpy("u2", arange<std::uint16_t>({2}));
    same_as_numpy("u4", arange<std::uint32_t>({2}));
    same_as_numpy("u8", arange<std::uint64_t>({2}));
    same_as_numpy("b1", bools({4}, {0, 1, 0, 1}));
    same_as_numpy("scalar", arange<float>({}));
    same_as_numpy("empty", arange<float>({0, 3}));
    same_as_numpy("big", arange<float>({12345678901, 0}));
    same_as_numpy("r5", arange<std::int32_t>({1, 2, 1, 2, 1}));

    ember::result<ember::tensor> be = ember::npy::load_file((dir / "be_i4.npy").string());
    REQUIRE(be);
    CHECK(ember::test::values_of<std::int32_t>(*be) == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5});
    ember::result<ember::tensor> be8 = ember::npy::load_file((dir / "be_f8.npy").string());
    REQUIRE(be8);
    CHECK(ember::test::values_of<double>(*be8) == std::vector<double>{0, 1, 2});
    ember::result<ember::tensor> strided = ember::npy::load_file((dir / "strided.npy").string());
    REQUIRE(strided);  // numpy.save writes a copy in C order
    CHECK(ember::test::values_of<float>(*strided) == std::vector<float>{0, 2, 4, 6, 8, 10});
    for (const char* v : {"v2", "v3"}) {
        ember::result<ember::tensor> t = ember::npy::load_file((dir / (std::string(v) + ".npy")).string());
        REQUIRE_MESSAGE(t, t.error().message);
        CHECK(t->dims() == ember::shape{3, 2});
        CHECK(ember::test::values_of<float>(*t) == std::vector<float>{0, 1, 2, 3, 4, 5});
    }
    ember::result<ember::tensor> fortran = ember::npy::load_file((dir / "fortran.npy").string());
    REQUIRE_FALSE(fortran);
    CHECK(fortran.error().message.find("Fortran") != std::string::npos);
    CHECK(fortran.error().message.find("fortran.npy") != std::string::npos);
    std::filesystem::remove_all(dir);
}
