// SPDX-License-Identifier: Apache-2.0
// ember-serve's model repository, laid out as Triton's: REPO/<model>/<version>/model.onnx, where
// a version is a positive integer and the newest one is served. scan_repository() finds them; a
// model folder without a version to serve is reported, not fatal.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace serve {

/// One model to serve: its folder's name, the version chosen and its model.onnx.
struct model_source {
    std::string name, version;
    std::filesystem::path file;
};

struct repository_scan {
    std::vector<model_source> models;  ///< sorted by name
    std::vector<std::string> skipped;  ///< why each model folder without a version to serve is skipped
};

/// A positive integer written without leading zeros ("1", "12"; not "0", "01", "v2").
inline bool is_version(std::string_view s) noexcept {
    if (s.empty() || s.size() > 18 || s[0] == '0') return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// The model folders of `repo` (hidden ones, starting with '.', and plain files are ignored), each
/// with its newest version that holds a model.onnx. When repo is not a readable folder, sets why
/// and returns nothing.
inline repository_scan scan_repository(const std::filesystem::path& repo, std::string& why) {
    namespace fs = std::filesystem;
    repository_scan scan;
    std::error_code ec;
    if (!fs::is_directory(repo, ec)) {
        why = fs::exists(repo, ec) ? "is not a folder" : "does not exist";
        return scan;
    }
    std::vector<fs::path> folders;
    for (fs::directory_iterator it(repo, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_directory(ec) && it->path().filename().string()[0] != '.') folders.push_back(it->path());
    if (ec) {
        why = "cannot list it (" + ec.message() + ")";
        return scan;
    }
    std::sort(folders.begin(), folders.end());
    for (const fs::path& folder : folders) {
        const std::string name = folder.filename().string();
        std::string newest;
        std::size_t versions_without_file = 0;
        for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string v = it->path().filename().string();
            if (!it->is_directory(ec) || !is_version(v)) continue;
            if (!fs::is_regular_file(it->path() / "model.onnx", ec)) {
                ++versions_without_file;
                continue;
            }
            if (newest.empty() || v.size() > newest.size() || (v.size() == newest.size() && v > newest)) newest = v;  // numeric order
        }
        if (newest.empty()) {
            scan.skipped.push_back("model folder '" + name + "' has no version to serve (" + name + "/<positive integer>/model.onnx" +
                                   (versions_without_file ? ": its version folders have no model.onnx" : "") + "); skipped");
            continue;
        }
        scan.models.push_back({name, newest, folder / newest / "model.onnx"});
    }
    return scan;
}

} // namespace serve
