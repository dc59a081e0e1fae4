// SPDX-License-Identifier: Apache-2.0
// What a plan is made of: steps (a kernel function pointer and its argument block) whose
// operands are (region, offset) pairs resolved against the session's region table at run time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ember/config.hpp"
#include "ember/runtime/executor.hpp"

EMBER_NAMESPACE_BEGIN

/// Where a value's bytes live. Regions: 0 = the arena, 1 = the plan's weights, 2 + k = the
/// buffer of graph input/output slot k (caller-bound, or a reserved part of the arena).
struct operand {
    std::uint32_t region = 0;
    std::uint64_t offset = 0;
};

inline constexpr std::uint32_t arena_region = 0;
inline constexpr std::uint32_t weights_region = 1;
inline constexpr std::uint32_t first_io_region = 2;

/// Handed to every kernel: the base pointer of every region, the executor (may be null), and
/// where a kernel reports data it cannot use (an index out of range): run() then stops and
/// returns that code. The value is a status (status.hpp), kept as a byte to stay free of it.
struct run_context {
    std::byte* const* regions = nullptr;
    const executor* exec = nullptr;
    std::atomic<std::uint8_t>* error = nullptr;

    template <class T>
    T* at(operand o) const noexcept {
        return reinterpret_cast<T*>(regions[o.region] + o.offset);
    }
    /// Records a failure code (the first one wins); safe from several pool threads at once.
    void fail(std::uint8_t code) const noexcept {
        std::uint8_t expected = 0;
        if (error) error->compare_exchange_strong(expected, code, std::memory_order_relaxed);
    }
};

using kernel_fn = void (*)(const void* args, const run_context& ctx) noexcept;

struct step {
    kernel_fn fn = nullptr;
    const void* args = nullptr;  ///< owned by the plan
    std::int32_t node = -1;      ///< graph node this step runs (for profiles and messages)
};

EMBER_NAMESPACE_END
