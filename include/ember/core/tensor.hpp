// SPDX-License-Identifier: Apache-2.0
// tensor_view<T>: typed, non-owning view of dense row-major data with a shape.
// tensor: an owning, dtype-erased tensor whose bytes come from an ember::allocator (constants,
// folded values, test data). Neither is used on the run path except as views.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "ember/config.hpp"
#include "ember/core/allocator.hpp"
#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/span.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN

template <class T>
class tensor_view {
public:
    constexpr tensor_view() noexcept = default;
    tensor_view(T* data, const shape& dims) noexcept : data_(data), shape_(dims) {}
    template <class U, std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>, int> = 0>
    tensor_view(const tensor_view<U>& other) noexcept : data_(other.data()), shape_(other.dims()) {}

    T* data() const noexcept { return data_; }
    const shape& dims() const noexcept { return shape_; }
    std::size_t rank() const noexcept { return shape_.rank(); }
    std::size_t size() const noexcept { return static_cast<std::size_t>(shape_.elements()); }
    std::size_t size_bytes() const noexcept { return size() * sizeof(T); }
    T& operator[](std::size_t i) const noexcept { return data_[i]; }
    T* begin() const noexcept { return data_; }
    T* end() const noexcept { return data_ + size(); }
    span<T> values() const noexcept { return {data_, size()}; }
    explicit operator bool() const noexcept { return data_ != nullptr; }

private:
    T* data_ = nullptr;
    shape shape_;
};

/// An owning tensor of any dtype. Copying copies the bytes (through the same allocator).
class tensor {
public:
    tensor() = default;

    /// A zero-filled tensor; fails with out_of_memory when the allocator does, and with
    /// invalid_argument for an undefined dtype or a size that overflows.
    static result<tensor> create(dtype type, const shape& dims, const allocator& alloc = default_allocator()) {
        const std::int64_t n = dims.checked_elements();
        if (type == dtype::undefined || n < 0)
            return error_info{status::invalid_argument, -1,
                              detail::format("cannot create a tensor of {} with shape {}", type, dims)};
        std::int64_t bytes = 0;
        if (!detail::checked_mul(n, static_cast<std::int64_t>(size_of(type)), bytes))
            return error_info{status::invalid_argument, -1, detail::format("tensor of shape {} is too large", dims)};
        tensor t;
        t.type_ = type;
        t.shape_ = dims;
        if (!t.buffer_.allocate(static_cast<std::size_t>(bytes), alloc))
            return error_info{status::out_of_memory, -1,
                              detail::format("allocator returned null for a tensor of {} bytes", bytes)};
        return t;
    }

    /// A tensor holding a copy of values; values.size() must equal the shape's element count.
    template <class T>
    static result<tensor> copy_of(const shape& dims, span<const T> values, const allocator& alloc = default_allocator()) {
        static_assert(dtype_of<T> != dtype::undefined, "copy_of: unsupported element type");
        if (dims.checked_elements() != static_cast<std::int64_t>(values.size()))
            return error_info{status::invalid_argument, -1,
                              detail::format("{} values given for a tensor of shape {}", values.size(), dims)};
        result<tensor> t = create(dtype_of<T>, dims, alloc);
        if (t && !values.empty()) std::memcpy(t->bytes(), values.data(), values.size() * sizeof(T));
        return t;
    }
    template <class T>
    static result<tensor> copy_of(const shape& dims, std::initializer_list<T> values, const allocator& alloc = default_allocator()) {
        return copy_of<T>(dims, span<const T>(values.begin(), values.size()), alloc);
    }

    tensor(tensor&&) noexcept = default;
    tensor& operator=(tensor&&) noexcept = default;
    tensor(const tensor& o) : type_(o.type_), shape_(o.shape_) {
        if (o.buffer_.size_bytes() != 0) {
            if (buffer_.allocate(o.buffer_.size_bytes(), o.buffer_.alloc(), false))
                std::memcpy(buffer_.data(), o.buffer_.data(), o.buffer_.size_bytes());
            else
                *this = tensor();  // out of memory: an empty tensor, which users of copies check
        }
    }
    tensor& operator=(const tensor& o) {
        if (this != &o) *this = tensor(o);
        return *this;
    }

    dtype type() const noexcept { return type_; }
    const shape& dims() const noexcept { return shape_; }
    std::size_t rank() const noexcept { return shape_.rank(); }
    std::size_t size() const noexcept { return static_cast<std::size_t>(shape_.elements()); }
    std::size_t size_bytes() const noexcept { return size() * size_of(type_); }
    bool empty() const noexcept { return type_ == dtype::undefined; }

    std::byte* bytes() noexcept { return buffer_.data(); }
    const std::byte* bytes() const noexcept { return buffer_.data(); }

    template <class T>
    T* data() noexcept {
        EMBER_ASSERT(dtype_of<T> == type_, "tensor::data<T>: T does not match the dtype");
        return reinterpret_cast<T*>(buffer_.data());
    }
    template <class T>
    const T* data() const noexcept {
        EMBER_ASSERT(dtype_of<T> == type_, "tensor::data<T>: T does not match the dtype");
        return reinterpret_cast<const T*>(buffer_.data());
    }
    template <class T>
    tensor_view<T> view() noexcept { return {data<T>(), shape_}; }
    template <class T>
    tensor_view<const T> view() const noexcept { return {data<T>(), shape_}; }

private:
    dtype type_ = dtype::undefined;
    shape shape_;
    aligned_buffer buffer_;
};

EMBER_NAMESPACE_END
