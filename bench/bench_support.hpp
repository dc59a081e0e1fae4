// SPDX-License-Identifier: Apache-2.0
// Shared by the benchmarks: seeded random tensors, and one graph compiled for a single thread.
#pragma once

#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include <ember/ember.hpp>

namespace ember::bench {

inline tensor random_tensor(const shape& dims, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(dims.elements()));
    for (float& x : v) x = dist(rng);
    return *tensor::copy_of<float>(dims, span<const float>(v.data(), v.size()));
}

/// Compiles g single-threaded (max_threads 1: one core, to compare with its peak); on any error
/// marks the benchmark skipped with the message and returns nothing.
inline std::optional<plan> compile_single_thread(benchmark::State& state, result<graph> g) {
    if (!g) {
        state.SkipWithError(g.error().message.c_str());
        return std::nullopt;
    }
    compile_options options;
    options.max_threads = 1;
    result<plan> p = compile(*g, options);
    if (!p) {
        state.SkipWithError(p.error().message.c_str());
        return std::nullopt;
    }
    return std::move(*p);
}

/// Binds input 0 to `in`, which the session reads in place: it must outlive the runs. False
/// (benchmark skipped) when the plan does not take it.
inline bool bind_first_input(benchmark::State& state, session& s, const tensor& in) {
    if (s.bind_input(0, in.bytes(), in.size_bytes()) == status::ok) return true;
    state.SkipWithError("bind_input failed");
    return false;
}
bool bind_first_input(benchmark::State&, session&, tensor&&) = delete;  // a temporary would dangle

} // namespace ember::bench
