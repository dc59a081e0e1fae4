// SPDX-License-Identifier: Apache-2.0
// ember/image decode and encode: round trips through PNG, BMP and JPEG, Pillow's pixels for
// the fixture, reuse without allocation, and every kind of bad input giving a status.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <ember/image/decode.hpp>
#include <ember/image/encode.hpp>

#include "support/counting_allocator.hpp"
#include "support/read_file.hpp"

namespace {

namespace img = ember::image;

const std::string fixtures = std::string(EMBER_SOURCE_DIR) + "/tests/image/fixtures/";

/// A w x h x c picture with a pattern that differs in every pixel and channel.
img::image pattern(int w, int h, int c) {
    img::image out;
    REQUIRE(out.reshape(w, h, c));
    for (std::size_t i = 0; i < out.size_bytes(); ++i) out.data()[i] = static_cast<std::uint8_t>((i * 37 + i / 7) & 0xff);
    return out;
}

std::vector<std::uint8_t> bytes_of(const img::image& a) { return {a.data(), a.data() + a.size_bytes()}; }


} // namespace

TEST_CASE("image: PNG round trip, every channel count") {
    for (int c = 1; c <= 4; ++c) {
        const img::image a = pattern(17, 5, c);
        std::vector<std::uint8_t> png;
        REQUIRE(img::encode_png(a.view(), png));
        ember::result<img::image> b = img::decode_memory(png.data(), png.size());
        REQUIRE(b);
        CHECK(b->width() == 17);
        CHECK(b->height() == 5);
        CHECK(b->channels() == c);
        CHECK(bytes_of(*b) == bytes_of(a));
    }
}

TEST_CASE("image: BMP round trip and JPEG within a few levels") {
    const img::image a = pattern(33, 21, 3);
    std::vector<std::uint8_t> bmp;
    REQUIRE(stbi_write_bmp_to_func(&img::detail::append_bytes, &bmp, 33, 21, 3, a.data()));
    ember::result<img::image> b = img::decode_memory(bmp.data(), bmp.size());
    REQUIRE(b);
    CHECK(bytes_of(*b) == bytes_of(a));

    // A smooth picture survives JPEG at quality 100 within a few levels.
    img::image smooth;
    REQUIRE(smooth.reshape(64, 48, 3));
    for (int y = 0; y < 48; ++y)
        for (int x = 0; x < 64; ++x)
            for (int c = 0; c < 3; ++c) smooth.data()[(y * 64 + x) * 3 + c] = static_cast<std::uint8_t>(x * 3 + y * 2 + c * 20);
    std::vector<std::uint8_t> jpg;
    REQUIRE(img::encode_jpeg(smooth.view(), jpg, 100));
    ember::result<img::image> j = img::decode_memory(jpg.data(), jpg.size());
    REQUIRE(j);
    REQUIRE(j->size_bytes() == smooth.size_bytes());
    int worst = 0;
    for (std::size_t i = 0; i < smooth.size_bytes(); ++i) worst = std::max(worst, std::abs(j->data()[i] - smooth.data()[i]));
    CHECK(worst <= 8);
    CHECK(!img::encode_jpeg(smooth.view(), jpg, 0));
}

TEST_CASE("image: the fixture decodes to the pixels Pillow wrote, and channels convert") {
    ember::result<img::image> rgb = img::decode_file(fixtures + "source_53x37.png");
    REQUIRE(rgb);
    CHECK(rgb->view().dims() == ember::shape{37, 53, 3});
    // The first pixel of the seeded picture (tools/make_image_fixtures.py) is noise around (0, 0, 200).
    ember::result<img::image> rgba = img::decode_file(fixtures + "source_53x37.png", {4});
    REQUIRE(rgba);
    CHECK(rgba->channels() == 4);
    for (int i = 0; i < 53 * 37; ++i) {
        CHECK(rgba->data()[i * 4 + 3] == 255);
        if (rgba->data()[i * 4] != rgb->data()[i * 3]) FAIL("pixel ", i, " differs between the RGB and RGBA decodes");
    }
    ember::result<img::image> gray = img::decode_file(fixtures + "gray_53x37.png");
    REQUIRE(gray);
    CHECK(gray->channels() == 1);
    ember::result<img::image_info> probe = img::decoder().probe_memory(nullptr, 0);
    CHECK(probe.code() == ember::status::invalid_model);
}

TEST_CASE("image: a decoder and an image reused for same-sized pictures allocate nothing after the first") {
    ember::test::counting_allocator count;
    img::decoder dec(count.get());
    img::image out(count.get());
    std::string png;
    REQUIRE(ember::test::read_file(fixtures + "source_53x37.png", png));
    REQUIRE(dec.decode_memory(png.data(), png.size(), out));
    CHECK(count.allocs > 0);
    const int first = count.allocs;
    for (int i = 0; i < 3; ++i) REQUIRE(dec.decode_memory(png.data(), png.size(), out));
    CHECK(count.allocs == first);
    // A smaller picture fits too.
    const img::image small = pattern(8, 8, 3);
    std::vector<std::uint8_t> small_png;
    REQUIRE(img::encode_png(small.view(), small_png));
    REQUIRE(dec.decode_memory(small_png.data(), small_png.size(), out));
    CHECK(count.allocs == first);
    CHECK(bytes_of(out) == bytes_of(small));
}

TEST_CASE("image: bad input gives a status that names the file") {
    ember::result<img::image> missing = img::decode_file("/nonexistent/cat.jpg");
    CHECK(missing.code() == ember::status::io_error);
    CHECK(missing.error().message.find("/nonexistent/cat.jpg") != std::string::npos);

    const std::string text = "this is not a picture";
    ember::result<img::image> garbage = img::decode_memory(text.data(), text.size());
    CHECK(garbage.code() == ember::status::invalid_model);
    CHECK(garbage.error().message.find("not a JPEG, PNG or BMP") != std::string::npos);

    ember::result<img::image> bomb = img::decode_file(fixtures + "source_53x37.png", {0, 100});
    CHECK(bomb.code() == ember::status::invalid_model);
    CHECK(bomb.error().message.find("max_pixels") != std::string::npos);

    ember::result<img::image> five = img::decode_file(fixtures + "source_53x37.png", {5});
    CHECK(five.code() == ember::status::invalid_argument);
}

TEST_CASE("image: every truncation and random corruption of a PNG, a JPEG and a BMP gives a status, never a crash") {
    const img::image a = pattern(24, 16, 3);
    std::vector<std::vector<std::uint8_t>> files(3);
    REQUIRE(img::encode_png(a.view(), files[0]));
    REQUIRE(img::encode_jpeg(a.view(), files[1], 75));
    REQUIRE(stbi_write_bmp_to_func(&img::detail::append_bytes, &files[2], 24, 16, 3, a.data()));
    std::mt19937 rng(11);
    img::decoder dec;
    img::image out;
    for (const std::vector<std::uint8_t>& file : files) {
        int failures = 0;
        for (std::size_t n = 0; n < file.size(); ++n) failures += dec.decode_memory(file.data(), n, out) ? 0 : 1;
        CHECK(failures > 0);  // at least the empty and header-only prefixes fail
        for (int trial = 0; trial < 300; ++trial) {
            std::vector<std::uint8_t> bad = file;
            for (int flips = 0; flips < 4; ++flips) bad[rng() % bad.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
            ember::result<void> r = dec.decode_memory(bad.data(), bad.size(), out);
            if (r) CHECK(out.size_bytes() > 0);
            else CHECK(r.code() == ember::status::invalid_model);
        }
    }
}

TEST_CASE("image: a JPEG Huffman table of more than 256 codes is refused before stb_image reads it") {
    // Debian's stb_image copies the codes into a 256-byte array unchecked (a heap overflow):
    // decode.hpp's jpeg_oversized_huffman_table() stops such files first.
    const img::image a = pattern(24, 16, 3);
    std::vector<std::uint8_t> file;
    REQUIRE(img::encode_jpeg(a.view(), file, 75));
    img::decoder dec;
    img::image out;
    REQUIRE(dec.decode_memory(file.data(), file.size(), out));
    std::size_t dht = 0;
    for (std::size_t i = 2; i + 1 < file.size() && dht == 0; ++i)
        if (file[i] == 0xFF && file[i + 1] == 0xC4) dht = i;
    REQUIRE(dht > 0);
    std::vector<std::uint8_t> bad = file;
    bad[dht + 5 + 15] = 0xFF;  // the table's count of 16-bit codes: 255 more codes than the segment holds
    bad[dht + 5 + 14] = 0x10;
    ember::result<void> r = dec.decode_memory(bad.data(), bad.size(), out, {}, "crafted.jpg");
    REQUIRE(!r);
    CHECK(r.code() == ember::status::invalid_model);
    CHECK(r.error().message.find("'crafted.jpg': corrupt JPEG (a Huffman table of") != std::string::npos);
    CHECK(!dec.probe_memory(bad.data(), bad.size()));  // the header reader parses DHT segments too

    REQUIRE(dec.decode_memory(file.data(), file.size(), out));  // the decoder still works
}

TEST_CASE("image: stb_image's memory comes zeroed, and a scan using Huffman tables no DHT defined gives a status") {
    // Debian's stb_image reads JPEG Huffman tables that the file never defined (upstream 2.28
    // zeroes its state): the decoder's arena hands out zeroed blocks, as calloc.
    img::detail::stb_arena arena(ember::default_allocator());
    for (int round = 0; round < 3; ++round) {
        arena.begin();
        auto* a = static_cast<unsigned char*>(arena.allocate(100));
        REQUIRE(a != nullptr);
        CHECK(std::all_of(a, a + 100, [](unsigned char c) { return c == 0; }));
        std::memset(a, 0xAB, 100);
        arena.release(a);
        auto* b = static_cast<unsigned char*>(arena.allocate(40));  // where a was, once the block holds it
        REQUIRE(b != nullptr);
        CHECK(std::all_of(b, b + 40, [](unsigned char c) { return c == 0; }));
        std::memset(b, 0xCD, 40);
        b = static_cast<unsigned char*>(arena.reallocate(b, 90));  // grows in place: the new bytes zeroed
        REQUIRE(b != nullptr);
        CHECK(std::all_of(b, b + 40, [](unsigned char c) { return c == 0xCD; }));
        CHECK(std::all_of(b + 40, b + 90, [](unsigned char c) { return c == 0; }));
        arena.release(b);
        REQUIRE(arena.end());
    }
    arena.begin(100);  // a call's limit: each allocation at most 100 bytes
    CHECK(arena.allocate(101) == nullptr);
    void* small = arena.allocate(100);
    CHECK(small != nullptr);
    CHECK(arena.reallocate(small, 5000) == nullptr);
    CHECK(arena.refused() == 5000);
    arena.release(small);
    REQUIRE(arena.end());

    const img::image a = pattern(24, 16, 3);
    std::vector<std::uint8_t> file;
    REQUIRE(img::encode_jpeg(a.view(), file, 75));
    std::size_t sos = 0;
    for (std::size_t i = 2; i + 1 < file.size() && sos == 0; ++i)
        if (file[i] == 0xFF && file[i + 1] == 0xDA) sos = i;
    REQUIRE(sos > 0);
    REQUIRE(file[sos + 4] == 3);  // three components, each (id, DC table << 4 | AC table)
    std::vector<std::uint8_t> bad = file;
    for (int c = 0; c < 3; ++c) bad[sos + 6 + 2 * c] = 0x23;  // DC table 2, AC table 3: never defined
    img::decoder dec;
    img::image out;
    for (int round = 0; round < 3; ++round) {
        REQUIRE(dec.decode_memory(file.data(), file.size(), out));  // leaves its tables in the block
        ember::result<void> r = dec.decode_memory(bad.data(), bad.size(), out);
        if (!r) CHECK(r.code() == ember::status::invalid_model);
    }
}

TEST_CASE("image: what fuzz/image_fuzz.cpp found gives a status") {
    // tests/fuzz_findings/image/: each file once made the fuzzer report (under ASan and UBSan),
    // named for what it did; each is corrupt, so each must be refused, by one reused decoder.
    const std::filesystem::path dir = std::filesystem::path(EMBER_SOURCE_DIR) / "tests/fuzz_findings/image";
    img::decoder dec;
    img::image out;
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        CAPTURE(entry.path().string());
        ember::result<void> r = dec.decode_file(entry.path().string(), out);
        REQUIRE(!r);
        CHECK(r.code() == ember::status::invalid_model);
        CHECK(r.error().message.find(entry.path().filename().string()) != std::string::npos);
        if (entry.path().filename().string().find("dht") != std::string::npos)
            CHECK(r.error().message.find("corrupt JPEG (a Huffman table of") != std::string::npos);
        if (entry.path().filename().string().find("claims") != std::string::npos)
            CHECK(r.error().message.find("bytes of scratch, more than a") != std::string::npos);
        ++files;
    }
    CHECK(files >= 2);
}

TEST_CASE("image: write_png writes a file that decodes back, and names an unwritable path") {
    const img::image a = pattern(9, 7, 4);
    const std::string path = (std::filesystem::temp_directory_path() / "ember_image_write_test.png").string();
    REQUIRE(img::write_png(path, a.view()));
    ember::result<img::image> b = img::decode_file(path);
    REQUIRE(b);
    CHECK(bytes_of(*b) == bytes_of(a));
    std::filesystem::remove(path);
    ember::result<void> r = img::write_png("/nonexistent/dir/out.png", a.view());
    CHECK(r.code() == ember::status::io_error);
    CHECK(r.error().message.find("/nonexistent/dir/out.png") != std::string::npos);
    ember::tensor_view<const std::uint8_t> bad(a.data(), ember::shape{7, 9});
    CHECK(img::write_png(path, bad).code() == ember::status::shape_mismatch);
}
