// SPDX-License-Identifier: Apache-2.0
// ONNX's backend test data (Debian package libonnx-testdata), as the conformance runner and the
// allocation test read it: data/{node,pytorch-converted,pytorch-operator,simple}/<case>/model.onnx
// with test_data_set_N/{input,output}_K.pb. Test helper without doctest.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>

#include "read_file.hpp"

namespace ember::test {

inline constexpr const char* onnx_testdata_dir = "/usr/share/libonnx-testdata/data";
inline constexpr const char* onnx_case_categories[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

struct onnx_case {
    std::string name;  ///< "category/case"
    std::filesystem::path dir;
};

/// Every case of the test data under `data`, sorted by name within each category.
inline std::vector<onnx_case> list_onnx_cases(const std::filesystem::path& data) {
    std::vector<onnx_case> all;
    for (const char* category : onnx_case_categories) {
        std::vector<std::filesystem::path> dirs;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(data / category, ec))
            if (e.is_directory() && std::filesystem::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
        std::sort(dirs.begin(), dirs.end());
        for (const auto& d : dirs) all.push_back({std::string(category) + "/" + d.filename().string(), d});
    }
    return all;
}

/// Reads one serialized TensorProto; false with `why` set when it cannot.
inline bool load_pb(const std::filesystem::path& path, ember::tensor& out, std::string& why) {
    std::string bytes;
    if (!read_file(path.string(), bytes)) {
        why = "cannot read " + path.filename().string();
        return false;
    }
    auto t = ember::onnx::load_tensor_memory(bytes.data(), bytes.size());
    if (!t) {
        why = path.filename().string() + ": " + t.error().message;
        return false;
    }
    out = std::move(*t);
    return true;
}

/// Reads `count` files `prefix`_0.pb ... of a data set.
inline bool load_pbs(const std::filesystem::path& set, const char* prefix, std::size_t count, std::vector<ember::tensor>& out,
                     std::string& why) {
    out.resize(count);
    for (std::size_t i = 0; i < count; ++i)
        if (!load_pb(set / (std::string(prefix) + "_" + std::to_string(i) + ".pb"), out[i], why)) return false;
    return true;
}

/// Compiles g for these inputs' shapes. Inputs an op needs at compile time (a Reshape target,
/// Slice bounds, a TopK k: the error says "must be known at compile time") are fixed by value
/// through compile_options::input_values, first the integer inputs, then all of them; `frozen`
/// says which level compiled (0: none fixed, 1: the integer inputs, 2: all).
inline ember::result<ember::plan> compile_onnx_case(const ember::graph& g, const std::vector<ember::tensor>& inputs, int& frozen) {
    ember::result<ember::plan> p = ember::error_info{ember::status::invalid_argument, -1, "no compile attempted"};
    for (int level = 0; level <= 2; ++level) {
        ember::compile_options options;
        for (std::size_t i = 0; i < inputs.size() && i < g.inputs.size(); ++i) {
            const std::string& name = g.values[g.inputs[i]].name;
            const bool integer = inputs[i].type() == ember::dtype::int64 || inputs[i].type() == ember::dtype::int32;
            if (level == 2 || (level == 1 && integer)) options.input_values.push_back({name, inputs[i]});
            else options.input_shapes.push_back({name, inputs[i].dims()});
        }
        frozen = level;
        p = ember::compile(g, options);
        if (p || p.error().message.find("must be known at compile time") == std::string::npos) return p;
    }
    return p;
}

} // namespace ember::test
