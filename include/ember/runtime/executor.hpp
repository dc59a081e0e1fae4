// SPDX-License-Identifier: Apache-2.0
// executor: the one interface through which ember runs work in parallel. The host implements it
// over its own job system, or uses ember::thread_pool, or passes nothing (everything runs on the
// calling thread). No std::function, no allocation: a function pointer and a context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN

/// Work over the half-open index range [begin, end).
using range_fn = void (*)(void* fn_ctx, std::size_t begin, std::size_t end) noexcept;

struct executor {
    void* ctx = nullptr;
    /// Calls fn(fn_ctx, b, e) for disjoint ranges that together cover [0, n), possibly on several
    /// threads, and returns when every call has returned. Must not allocate or throw.
    void (*parallel_for)(void* ctx, std::size_t n, range_fn fn, void* fn_ctx) noexcept = nullptr;
    /// How many ranges may run at once; kernels use it to size their chunks.
    std::size_t concurrency = 1;
};

/// Runs body(begin, end) over [0, n) on ex, or inline on this thread when ex is null or serial.
/// body must be noexcept-safe; it is called by reference from the worker threads.
template <class Body>
void parallel_for(const executor* ex, std::size_t n, Body&& body) noexcept {
    if (n == 0) return;
    if (!ex || !ex->parallel_for || ex->concurrency <= 1 || n == 1) {
        body(std::size_t{0}, n);
        return;
    }
    using body_t = std::remove_reference_t<Body>;
    ex->parallel_for(
        ex->ctx, n,
        [](void* c, std::size_t b, std::size_t e) noexcept { (*static_cast<body_t*>(c))(b, e); },
        const_cast<void*>(static_cast<const void*>(&body)));
}

/// Runs body(slot) for each of `slots` fixed work slots on ex (inline when there is one): the
/// split the kernels use, each slot its own share of the work and its own workspace.
template <class Body>
void for_each_slot(const executor* ex, std::int64_t slots, Body&& body) noexcept {
    if (slots <= 1) {
        body(std::int64_t{0});
        return;
    }
    parallel_for(ex, static_cast<std::size_t>(slots), [&](std::size_t begin, std::size_t end) noexcept {
        for (std::size_t s = begin; s < end; ++s) body(static_cast<std::int64_t>(s));
    });
}

EMBER_NAMESPACE_END
