// SPDX-License-Identifier: Apache-2.0
// shape: the concrete dimensions of a tensor, stored inline (no allocation, trivially copyable);
// partial_shape: declared dimensions that may be unknown or symbolic ("batch"), as in ONNX.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/span.hpp"
#include "ember/detail/format.hpp"

EMBER_NAMESPACE_BEGIN

inline constexpr std::size_t max_rank = EMBER_MAX_RANK;

namespace detail {
/// a * b, or false when the product overflows (or either is negative).
inline bool checked_mul(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
    if (a < 0 || b < 0) return false;
    if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a) return false;
    out = a * b;
    return true;
}
} // namespace detail

/// Concrete dimensions, rank <= max_rank. Every dimension is >= 0 once a plan is compiled.
class shape {
public:
    constexpr shape() noexcept = default;
    shape(std::initializer_list<std::int64_t> dims) noexcept : shape(span<const std::int64_t>(dims.begin(), dims.size())) {}
    /// Dimensions beyond max_rank are dropped (and the assert fires); use valid_rank() to check first.
    explicit shape(span<const std::int64_t> dims) noexcept {
        EMBER_ASSERT(dims.size() <= max_rank, "shape rank exceeds EMBER_MAX_RANK");
        rank_ = static_cast<std::uint32_t>(dims.size() <= max_rank ? dims.size() : max_rank);
        for (std::size_t i = 0; i < rank_; ++i) dims_[i] = dims[i];
    }
    static constexpr bool valid_rank(std::size_t rank) noexcept { return rank <= max_rank; }

    constexpr std::size_t rank() const noexcept { return rank_; }
    constexpr std::size_t size() const noexcept { return rank_; }
    constexpr bool empty() const noexcept { return rank_ == 0; }
    std::int64_t& operator[](std::size_t i) noexcept { return EMBER_ASSERT(i < rank_, "shape index"), dims_[i]; }
    std::int64_t operator[](std::size_t i) const noexcept { return EMBER_ASSERT(i < rank_, "shape index"), dims_[i]; }
    const std::int64_t* begin() const noexcept { return dims_; }
    const std::int64_t* end() const noexcept { return dims_ + rank_; }
    const std::int64_t* data() const noexcept { return dims_; }
    std::int64_t back() const noexcept { return (*this)[rank_ - 1]; }

    void push_back(std::int64_t d) noexcept {
        EMBER_ASSERT(rank_ < max_rank, "shape rank exceeds EMBER_MAX_RANK");
        if (rank_ < max_rank) dims_[rank_++] = d;
    }
    void resize(std::size_t rank, std::int64_t fill = 0) noexcept {
        EMBER_ASSERT(rank <= max_rank, "shape rank exceeds EMBER_MAX_RANK");
        if (rank > max_rank) rank = max_rank;
        for (std::size_t i = rank_; i < rank; ++i) dims_[i] = fill;
        rank_ = static_cast<std::uint32_t>(rank);
    }

    /// Product of the dimensions (1 for a scalar). Assumes no overflow: compile() checks with
    /// checked_elements() first.
    std::int64_t elements() const noexcept {
        std::int64_t n = 1;
        for (std::size_t i = 0; i < rank_; ++i) n *= dims_[i];
        return n;
    }
    /// Product of the dimensions, or -1 when a dimension is negative or the product overflows.
    std::int64_t checked_elements() const noexcept {
        std::int64_t n = 1;
        for (std::size_t i = 0; i < rank_; ++i)
            if (!detail::checked_mul(n, dims_[i], n)) return -1;
        return n;
    }

    friend bool operator==(const shape& a, const shape& b) noexcept {
        if (a.rank_ != b.rank_) return false;
        for (std::size_t i = 0; i < a.rank_; ++i)
            if (a.dims_[i] != b.dims_[i]) return false;
        return true;
    }
    friend bool operator!=(const shape& a, const shape& b) noexcept { return !(a == b); }

private:
    std::int64_t dims_[max_rank] = {};
    std::uint32_t rank_ = 0;
};

inline void format_append(std::string& out, const shape& s) {
    out.push_back('[');
    for (std::size_t i = 0; i < s.rank(); ++i) {
        if (i) out.append(", ");
        detail::format_append(out, s[i]);
    }
    out.push_back(']');
}

/// One declared dimension: a known size (>= 0), or unknown (-1) with an optional symbol name.
struct dim {
    std::int64_t value = -1;
    std::string symbol;

    dim() = default;
    dim(std::int64_t v) : value(v) {}
    dim(std::string name) : symbol(std::move(name)) {}
    dim(const char* name) : symbol(name) {}
    bool known() const noexcept { return value >= 0; }
};

/// Declared shape of a graph input or value: rank may be unknown, dimensions may be symbolic.
struct partial_shape {
    bool rank_known = false;
    std::vector<dim> dims;

    partial_shape() = default;
    partial_shape(std::initializer_list<dim> d) : rank_known(true), dims(d) {}
    partial_shape(const shape& s) : rank_known(true), dims(s.begin(), s.end()) {}

    bool fully_known() const noexcept {
        if (!rank_known) return false;
        for (const dim& d : dims)
            if (!d.known()) return false;
        return true;
    }
    std::size_t rank() const noexcept { return dims.size(); }
};

inline void format_append(std::string& out, const partial_shape& s) {
    if (!s.rank_known) {
        out.append("[?]");
        return;
    }
    out.push_back('[');
    for (std::size_t i = 0; i < s.dims.size(); ++i) {
        if (i) out.append(", ");
        if (s.dims[i].known())
            detail::format_append(out, s.dims[i].value);
        else
            out.append(s.dims[i].symbol.empty() ? std::string("?") : s.dims[i].symbol);
    }
    out.push_back(']');
}

EMBER_NAMESPACE_END
