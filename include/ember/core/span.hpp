// SPDX-License-Identifier: Apache-2.0
// ember::span: a minimal non-owning view of contiguous elements (C++17 has no std::span).
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN

template <class T>
class span {
public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;

    constexpr span() noexcept = default;
    constexpr span(T* data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <std::size_t N>
    constexpr span(T (&array)[N]) noexcept : data_(array), size_(N) {}
    template <class U, std::size_t N, std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>, int> = 0>
    constexpr span(std::array<U, N>& a) noexcept : data_(a.data()), size_(N) {}
    template <class U, std::size_t N, std::enable_if_t<std::is_convertible_v<const U (*)[], T (*)[]>, int> = 0>
    constexpr span(const std::array<U, N>& a) noexcept : data_(a.data()), size_(N) {}
    /// From any contiguous container with data() and size(): std::vector, std::string, ...
    template <class C,
              std::enable_if_t<!std::is_array_v<std::remove_reference_t<C>> &&
                                   std::is_convertible_v<std::remove_pointer_t<decltype(std::declval<C&>().data())> (*)[], T (*)[]>,
                               int> = 0>
    constexpr span(C&& c) noexcept : data_(c.data()), size_(c.size()) {}
    template <class U, std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>, int> = 0>
    constexpr span(span<U> other) noexcept : data_(other.data()), size_(other.size()) {}

    constexpr T* data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr T& operator[](std::size_t i) const noexcept { return data_[i]; }
    constexpr T* begin() const noexcept { return data_; }
    constexpr T* end() const noexcept { return data_ + size_; }
    constexpr span subspan(std::size_t offset, std::size_t count) const noexcept { return {data_ + offset, count}; }

private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

template <class T, std::size_t N>
span(T (&)[N]) -> span<T>;
template <class C>
span(C&) -> span<std::remove_pointer_t<decltype(std::declval<C&>().data())>>;

EMBER_NAMESPACE_END
