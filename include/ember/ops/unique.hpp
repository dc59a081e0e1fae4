// SPDX-License-Identifier: Apache-2.0
// Unique (ONNX opset 11), any dtype: the distinct elements of X (no axis: X flattened) or the
// distinct slices of X along `axis`, sorted ascending (sorted=1, the default; slices compare
// lexicographically) or in order of first occurrence (sorted=0). Outputs, all but Y optional:
// Y, indices (int64: where each first occurs in X), inverse_indices (int64: for each element or
// slice of X, its position in Y) and counts (int64). The outputs' shapes depend on the values,
// so X must be known at compile time; compile() then evaluates the node.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/ops/indexing.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct unique {
    static constexpr std::string_view onnx_name = "Unique";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::optional<std::int64_t> axis;  // absent: X flattened
        bool sorted = true;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("axis", &attributes::axis), attr("sorted", &attributes::sorted));

    /// What Unique finds: first[u] is the X slice of unique entry u, inverse and counts as in ONNX.
    struct found {
        std::vector<std::int64_t> first, inverse, counts;
    };

    /// a < b with NaN after every number and equal to NaN: a strict weak order, as sorting needs.
    template <class T>
    static bool ordered_less(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            return a < b;
        } else {
            return !is_nan(a) && (is_nan(b) || indexing::less(a, b));
        }
    }
    template <class T>
    static bool is_nan(T v) noexcept {
        if constexpr (indexing::is_half_float_v<T>) return std::isnan(static_cast<float>(v));
        else return std::isnan(v);
    }

    /// X seen as [outer, n, inner]: the n slices along the axis, of outer * inner elements each.
    template <class T>
    static found find(const T* x, std::int64_t outer, std::int64_t n, std::int64_t inner, bool sorted) {
        // -1, 0, 1 as slice a is less than, equal to or greater than slice b
        auto compare = [&](std::int64_t a, std::int64_t b) {
            for (std::int64_t o = 0; o < outer; ++o)
                for (std::int64_t i = 0; i < inner; ++i) {
                    const T va = x[(o * n + a) * inner + i], vb = x[(o * n + b) * inner + i];
                    if (ordered_less(va, vb)) return -1;
                    if (ordered_less(vb, va)) return 1;
                }
            return 0;
        };
        std::vector<std::int64_t> order(static_cast<std::size_t>(n));
        for (std::int64_t j = 0; j < n; ++j) order[static_cast<std::size_t>(j)] = j;
        // stable, so each run of equal slices starts with its first occurrence
        std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return compare(a, b) < 0; });
        found f;
        f.inverse.assign(static_cast<std::size_t>(n), 0);
        std::vector<std::int64_t> group_of(static_cast<std::size_t>(n), 0);  // sorted group of each slice
        std::vector<std::int64_t> group_first;
        for (std::size_t k = 0; k < order.size(); ++k) {
            if (k == 0 || compare(order[k - 1], order[k]) != 0) group_first.push_back(order[k]);
            group_of[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(group_first.size()) - 1;
        }
        // position of each group in the output: sorted order, or order of first occurrence
        std::vector<std::int64_t> position(group_first.size(), 0);
        if (sorted) {
            for (std::size_t u = 0; u < group_first.size(); ++u) position[u] = static_cast<std::int64_t>(u);
            f.first = group_first;
        } else {
            std::vector<std::int64_t> groups(group_first.size());
            for (std::size_t u = 0; u < groups.size(); ++u) groups[u] = static_cast<std::int64_t>(u);
            std::sort(groups.begin(), groups.end(), [&](std::int64_t a, std::int64_t b) {
                return group_first[static_cast<std::size_t>(a)] < group_first[static_cast<std::size_t>(b)];
            });
            for (std::size_t p = 0; p < groups.size(); ++p) {
                position[static_cast<std::size_t>(groups[p])] = static_cast<std::int64_t>(p);
                f.first.push_back(group_first[static_cast<std::size_t>(groups[p])]);
            }
        }
        f.counts.assign(group_first.size(), 0);
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t u = position[static_cast<std::size_t>(group_of[static_cast<std::size_t>(j)])];
            f.inverse[static_cast<std::size_t>(j)] = u;
            ++f.counts[static_cast<std::size_t>(u)];
        }
        return f;
    }

    static result<tensor> int64_vector(const std::vector<std::int64_t>& v) {
        return tensor::copy_of<std::int64_t>(shape{static_cast<std::int64_t>(v.size())}, span<const std::int64_t>(v.data(), v.size()));
    }

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        if (ctx.output_count() < 1 || ctx.output_count() > 4)
            return ctx.fail(status::invalid_model, "expected 1 to 4 outputs, got {}", ctx.output_count());
        const dtype type = ctx.input_type(0);
        if (size_of(type) == 0) return ctx.fail(status::unsupported_op, "dtype {} is not supported", type);
        const shape& in = ctx.input_shape(0);
        std::size_t axis = 0;
        std::int64_t outer = 1, n = in.elements(), inner = 1;
        if (a.axis) {
            if (!normalize_axis(*a.axis, in.rank(), axis))
                return ctx.fail(status::invalid_model, "axis {} is out of range for input of shape {} (rank {})", *a.axis, in, in.rank());
            outer = indexing::product(in, 0, axis);
            n = in[axis];
            inner = indexing::product(in, axis + 1, in.rank());
        }
        const tensor* t = ctx.require_constant(0, "the outputs' shapes depend on its values");
        if (!t) return status::unsupported_op;
        found f;
        visit_dtype(type, [&](auto tag) {
            using T = decltype(tag);
            f = find<T>(reinterpret_cast<const T*>(t->bytes()), outer, n, inner, a.sorted);
        });
        const auto u = static_cast<std::int64_t>(f.first.size());
        shape ydims = a.axis ? in : shape{u};
        if (a.axis) ydims[axis] = u;
        result<tensor> y = tensor::create(type, ydims);
        if (!y) return ctx.fail(y.error().code, "{}", y.error().message);
        const std::size_t block = static_cast<std::size_t>(inner) * size_of(type);
        for (std::int64_t o = 0; o < outer && block != 0; ++o)
            for (std::int64_t k = 0; k < u; ++k)
                std::memcpy(y->bytes() + static_cast<std::size_t>(o * u + k) * block,
                            t->bytes() + static_cast<std::size_t>(o * n + f.first[static_cast<std::size_t>(k)]) * block, block);
        result<tensor> first = int64_vector(f.first), inverse = int64_vector(f.inverse), counts = int64_vector(f.counts);
        if (!first || !inverse || !counts) return ctx.fail(status::out_of_memory, "allocating Unique's outputs failed");
        ctx.set_output_constant(0, std::move(*y));
        ctx.set_output_constant(1, std::move(*first));
        ctx.set_output_constant(2, std::move(*inverse));
        ctx.set_output_constant(3, std::move(*counts));
        return status::ok;
    }

    // infer() makes the outputs compile-time constants, so compile() never binds this op.
    static status bind(const attributes&, bind_context& ctx) {
        return ctx.fail(status::invalid_model, "Unique has no step: its values are known at compile time");
    }
};

} // namespace ops
EMBER_NAMESPACE_END
