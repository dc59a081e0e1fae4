// SPDX-License-Identifier: Apache-2.0
// An ember::allocator that counts its calls and can be told to fail: for "allocates nothing
// after the first call" and "allocation failure becomes a status" tests.
#pragma once

#include <cstddef>

#include <ember/core/allocator.hpp>

namespace ember::test {

struct counting_allocator {
    int allocs = 0, frees = 0;
    bool fail = false;  ///< from now on, every allocation returns null
    int fail_after = -1;  ///< >= 0: the allocation after this many good ones fails, and every later one

    ember::allocator get() noexcept { return {this, &allocate, &release}; }

private:
    static void* allocate(void* ctx, std::size_t bytes, std::size_t alignment) noexcept {
        auto* c = static_cast<counting_allocator*>(ctx);
        if (c->fail || (c->fail_after >= 0 && c->allocs >= c->fail_after)) return nullptr;
        ++c->allocs;
        return ember::default_allocator().allocate(bytes, alignment);
    }
    static void release(void* ctx, void* p, std::size_t bytes, std::size_t alignment) noexcept {
        ++static_cast<counting_allocator*>(ctx)->frees;
        ember::default_allocator().deallocate(p, bytes, alignment);
    }
};

} // namespace ember::test
