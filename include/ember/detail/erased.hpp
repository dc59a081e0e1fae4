// SPDX-License-Identifier: Apache-2.0
// erased: an owned object of any type behind a void pointer and a deleter. Holds op attributes
// and kernel argument blocks in the plan without virtual functions. Built at compile time only.
#pragma once

#include <utility>

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

class erased {
public:
    erased() noexcept = default;
    template <class T>
    static erased make(T value) {
        erased e;
        e.ptr_ = new T(std::move(value));
        e.destroy_ = [](void* p) noexcept { delete static_cast<T*>(p); };
        return e;
    }
    erased(erased&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), destroy_(std::exchange(o.destroy_, nullptr)) {}
    erased& operator=(erased&& o) noexcept {
        if (this != &o) {
            reset();
            ptr_ = std::exchange(o.ptr_, nullptr);
            destroy_ = std::exchange(o.destroy_, nullptr);
        }
        return *this;
    }
    erased(const erased&) = delete;
    erased& operator=(const erased&) = delete;
    ~erased() { reset(); }

    void* get() const noexcept { return ptr_; }
    template <class T>
    T& as() const noexcept { return *static_cast<T*>(ptr_); }

private:
    void reset() noexcept {
        if (ptr_) destroy_(ptr_);
        ptr_ = nullptr;
    }
    void* ptr_ = nullptr;
    void (*destroy_)(void*) noexcept = nullptr;
};

} // namespace detail
EMBER_NAMESPACE_END
