// SPDX-License-Identifier: Apache-2.0
// Memory planning: each arena buffer is described by its lifetime (the schedule positions that
// write and last read it) and packed into one arena so that buffers alive at the same time never
// overlap (XNNPACK's usage records and ggml's graph allocator, in our own shape).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/span.hpp"

EMBER_NAMESPACE_BEGIN

struct lifetime {
    std::uint32_t buffer = 0;      ///< id of the buffer (a value, or values sharing memory in place)
    std::uint32_t first_step = 0;  ///< schedule position that writes it first
    std::uint32_t last_step = 0;   ///< last schedule position that reads it (inclusive)
    std::size_t bytes = 0;         ///< already rounded up to the alignment
};

constexpr std::size_t align_up(std::size_t n, std::size_t alignment) noexcept {
    return (n + alignment - 1) / alignment * alignment;
}

inline bool lifetimes_intersect(const lifetime& a, const lifetime& b) noexcept {
    return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

/// Largest first, each at the lowest aligned offset that overlaps no placed buffer whose lifetime
/// intersects its own. Writes one offset per lifetime and returns the arena size in bytes.
/// Quadratic in the number of buffers: fast enough for graphs of a few thousand nodes.
inline std::size_t assign_offsets(span<const lifetime> buffers, span<std::size_t> offsets, std::size_t alignment) {
    std::vector<std::size_t> order(buffers.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return buffers[a].bytes > buffers[b].bytes; });

    struct placed {
        std::size_t offset, bytes;
    };
    std::vector<std::size_t> done;
    std::vector<placed> conflicts;
    std::size_t arena = 0;
    for (std::size_t index : order) {
        const lifetime& l = buffers[index];
        conflicts.clear();
        for (std::size_t other : done)
            if (buffers[other].bytes != 0 && lifetimes_intersect(l, buffers[other]))
                conflicts.push_back({offsets[other], buffers[other].bytes});
        std::sort(conflicts.begin(), conflicts.end(), [](const placed& a, const placed& b) { return a.offset < b.offset; });
        std::size_t offset = 0;
        for (const placed& c : conflicts) {
            if (offset + l.bytes <= c.offset) break;  // fits in the gap before c
            offset = std::max(offset, align_up(c.offset + c.bytes, alignment));
        }
        offsets[index] = offset;
        arena = std::max(arena, offset + l.bytes);
        done.push_back(index);
    }
    return align_up(arena, alignment);
}

EMBER_NAMESPACE_END
