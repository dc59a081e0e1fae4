// SPDX-License-Identifier: Apache-2.0
// README.md's "Supported ops" section names every built-in op, so the list users read is the
// list the compiler has (ember::ops::builtin), never behind it.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <ember/ember.hpp>

#ifndef EMBER_README_PATH
#error "EMBER_README_PATH must name README.md"
#endif

namespace {
// The names alone: taking the op_table's entries would instantiate every kernel in this file.
template <class... Ops>
std::vector<std::string_view> names_of(ember::type_list<Ops...>) {
    return {Ops::onnx_name...};
}
} // namespace

TEST_CASE("readme: the Supported ops section names every built-in op") {
    std::string text;
    std::FILE* f = std::fopen(EMBER_README_PATH, "rb");
    REQUIRE_MESSAGE(f, "cannot open " << EMBER_README_PATH);
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
    const std::size_t begin = text.find("\n## Supported ops");
    REQUIRE(begin != std::string::npos);
    const std::size_t end = text.find("\n## ", begin + 1);
    const std::string section = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);

    std::vector<std::string_view> names = names_of(ember::ops::builtin{});
    CHECK(names.size() > 100);
    for (std::string_view control_flow : {"If", "Loop", "Scan"}) names.push_back(control_flow);  // ops/control_flow.hpp
    for (std::string_view op : names) {
        const std::string name(op);
        // the name as a whole word: "Max" must not be found inside "MaxPool"
        bool found = false;
        for (std::size_t at = section.find(name); at != std::string::npos && !found; at = section.find(name, at + 1)) {
            const auto word = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
            const bool left = at == 0 || !word(section[at - 1]);
            const bool right = at + name.size() >= section.size() || !word(section[at + name.size()]);
            found = left && right;
        }
        CHECK_MESSAGE(found, "README.md's Supported ops section does not name " << name);
    }
}
