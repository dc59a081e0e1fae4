// SPDX-License-Identifier: Apache-2.0
// ember::allocator: the hook through which the library takes its bulk memory (tensor data,
// weights, an owned arena). Games route it to their own heaps. Returning null means failure,
// which ember turns into status::out_of_memory.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <utility>

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN

struct allocator {
    using alloc_fn = void* (*)(void* ctx, std::size_t bytes, std::size_t alignment) noexcept;
    using free_fn = void (*)(void* ctx, void* p, std::size_t bytes, std::size_t alignment) noexcept;

    void* ctx = nullptr;
    alloc_fn alloc = nullptr;  ///< returns null on failure; alignment is a power of two
    free_fn free = nullptr;

    void* allocate(std::size_t bytes, std::size_t alignment) const noexcept { return alloc(ctx, bytes, alignment); }
    void deallocate(void* p, std::size_t bytes, std::size_t alignment) const noexcept {
        if (p) free(ctx, p, bytes, alignment);
    }
};

namespace detail {
inline void* default_alloc(void*, std::size_t bytes, std::size_t alignment) noexcept {
    return ::operator new(bytes == 0 ? 1 : bytes, std::align_val_t(alignment), std::nothrow);
}
inline void default_free(void*, void* p, std::size_t, std::size_t alignment) noexcept {
    ::operator delete(p, std::align_val_t(alignment));
}
} // namespace detail

/// Aligned global operator new / delete (nothrow).
inline allocator default_allocator() noexcept { return allocator{nullptr, &detail::default_alloc, &detail::default_free}; }

/// An owned, aligned block of bytes from an ember::allocator. Move-only.
class aligned_buffer {
public:
    aligned_buffer() noexcept = default;
    aligned_buffer(aligned_buffer&& o) noexcept
        : alloc_(o.alloc_), data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    aligned_buffer& operator=(aligned_buffer&& o) noexcept {
        if (this != &o) {
            release();
            alloc_ = o.alloc_;
            data_ = std::exchange(o.data_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }
    aligned_buffer(const aligned_buffer&) = delete;
    aligned_buffer& operator=(const aligned_buffer&) = delete;
    ~aligned_buffer() { release(); }

    /// Allocates bytes (zero-filled when zero is true). Returns false when the allocator fails.
    [[nodiscard]] bool allocate(std::size_t bytes, const allocator& alloc = default_allocator(), bool zero = true) noexcept {
        release();
        alloc_ = alloc;
        if (bytes == 0) return true;
        data_ = static_cast<std::byte*>(alloc_.allocate(bytes, EMBER_ALIGNMENT));
        if (!data_) return false;
        bytes_ = bytes;
        if (zero) std::memset(data_, 0, bytes);
        return true;
    }

    std::byte* data() noexcept { return data_; }
    const std::byte* data() const noexcept { return data_; }
    std::size_t size_bytes() const noexcept { return bytes_; }
    const allocator& alloc() const noexcept { return alloc_; }

private:
    void release() noexcept {
        if (data_) alloc_.deallocate(data_, bytes_, EMBER_ALIGNMENT);
        data_ = nullptr;
        bytes_ = 0;
    }

    allocator alloc_ = default_allocator();
    std::byte* data_ = nullptr;
    std::size_t bytes_ = 0;
};

EMBER_NAMESPACE_END
