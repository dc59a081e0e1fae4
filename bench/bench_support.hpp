// SPDX-License-Identifier: Apache-2.0
// Shared by the benchmarks: seeded random tensors.
#pragma once

#include <random>
#include <vector>

#include <ember/ember.hpp>

namespace ember::bench {

inline tensor random_tensor(const shape& dims, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(dims.elements()));
    for (float& x : v) x = dist(rng);
    return *tensor::copy_of<float>(dims, span<const float>(v.data(), v.size()));
}

} // namespace ember::bench
