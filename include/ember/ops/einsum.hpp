// SPDX-License-Identifier: Apache-2.0
// Einsum (ONNX opset 12+), any numeric dtype, 1 to 16 operands of one dtype: the sum over every
// index the output does not keep of the product of the operands, as the equation says
// ("ij,jk->ik", "bij,bjk->bik", "ii->i", "...ii->...i", "i,i"). Labels are letters; a label
// repeated within an operand takes its diagonal; "..." stands for the leading dimensions, which
// broadcast across operands (numpy rules). Without "->" the output is implicit: the "..."
// dimensions, then the labels used exactly once, in alphabetical order. Spaces are ignored.
//
// The equation is parsed at compile time into sizes and per-operand strides over one index
// space; the reference kernel loops over it directly (outer: output indices, inner: the summed
// ones), accumulating in double (floats) or wrapping 64-bit integers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/ops/op_support.hpp"
#include "ember/ops/reduce.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct einsum {
    static constexpr std::string_view onnx_name = "Einsum";
    static constexpr op_flags flags = op_flags::none;
    static constexpr std::size_t max_operands = 16;
    static constexpr std::size_t max_labels = 52 + max_rank;  // letters, then the '...' dimensions

    struct attributes {
        std::string equation;
    };
    static constexpr auto onnx_attributes = std::make_tuple(required_attr("equation", &attributes::equation));

    /// The index space: labels [0, out_rank) are the output's dimensions in order, the rest are
    /// summed. strides[k * labels + l] is operand k's element stride for label l (0 if unused).
    struct args {
        std::vector<operand> inputs;
        operand y;
        std::size_t labels = 0, out_rank = 0;
        std::vector<std::int64_t> sizes, strides, out_strides;
        std::int64_t out_count = 0;
    };

    static constexpr int ellipsis = -1;
    static int label_of(char c) noexcept {
        if (c >= 'a' && c <= 'z') return c - 'a';
        if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
        return -2;
    }

    /// One term of the equation as label ids, with `ellipsis` for "...". False on a bad character.
    static bool parse_term(const std::string& t, std::vector<int>& out, bool& has_ellipsis) {
        out.clear();
        has_ellipsis = false;
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (t[i] == '.') {
                if (has_ellipsis || t.compare(i, 3, "...") != 0) return false;
                has_ellipsis = true;
                out.push_back(ellipsis);
                i += 2;
                continue;
            }
            const int l = label_of(t[i]);
            if (l < 0) return false;
            out.push_back(l);
        }
        return true;
    }

    static status plan(const attributes& a, infer_context& ctx, args& g, shape& out_shape) {
        const std::size_t n = ctx.input_count();
        if (n == 0) return ctx.fail(status::invalid_model, "expected at least 1 input, got 0");
        if (n > max_operands) return ctx.fail(status::unsupported_op, "{} operands, at most {} are supported", n, max_operands);
        for (std::size_t i = 0; i < n; ++i) {
            if (!ctx.has_input(i)) return ctx.fail(status::invalid_model, "input {} is missing", i);
            if (ctx.input_type(i) != ctx.input_type(0))
                return ctx.fail(status::invalid_model, "input {} has dtype {}, input 0 has {}", i, ctx.input_type(i), ctx.input_type(0));
        }
        if (ctx.input_type(0) == dtype::boolean || ctx.input_type(0) == dtype::undefined)
            return ctx.fail(status::unsupported_op, "input 0 has dtype {}, expected a numeric dtype", ctx.input_type(0));
        std::string eq;
        for (char c : a.equation)
            if (c != ' ' && c != '\t') eq += c;
        std::string lhs = eq, rhs;
        const std::size_t arrow = eq.find("->");
        const bool explicit_out = arrow != std::string::npos;
        if (explicit_out) {
            lhs = eq.substr(0, arrow);
            rhs = eq.substr(arrow + 2);
        }
        std::vector<std::string> terms(1);
        for (char c : lhs)
            if (c == ',') terms.emplace_back();
            else terms.back() += c;
        if (terms.size() != n)
            return ctx.fail(status::invalid_model, "equation '{}' has {} operand terms but the node has {} inputs", a.equation, terms.size(), n);

        // Per operand: its labels, with the ellipsis expanded later.
        std::vector<std::vector<int>> ops(n);
        std::vector<std::size_t> ell_rank(n, 0);
        std::size_t E = 0;
        for (std::size_t k = 0; k < n; ++k) {
            bool has_ell = false;
            if (!parse_term(terms[k], ops[k], has_ell))
                return ctx.fail(status::invalid_model, "equation '{}': term '{}' is not letters and at most one '...'", a.equation, terms[k]);
            const std::size_t letters = ops[k].size() - (has_ell ? 1 : 0);
            const std::size_t rank = ctx.input_shape(k).rank();
            if (has_ell ? rank < letters : rank != letters)
                return ctx.fail(status::shape_mismatch, "equation '{}': term '{}' does not match input {} of shape {} (rank {})", a.equation,
                                terms[k], k, ctx.input_shape(k), rank);
            ell_rank[k] = has_ell ? rank - letters : 0;
            E = ell_rank[k] > E ? ell_rank[k] : E;
        }
        if (E > max_rank) return ctx.fail(status::unsupported_op, "'...' covers {} dimensions, more than {}", E, max_rank);

        // Label ids: letters 0..51, the ellipsis dimensions 52..52+E-1.
        constexpr int letters = 52;
        const std::size_t total = letters + E;
        std::vector<std::int64_t> size(total, -1);
        std::vector<int> count(total, 0);
        for (std::size_t k = 0; k < n; ++k) {
            const shape& s = ctx.input_shape(k);
            std::size_t d = 0;
            for (int l : ops[k]) {
                if (l == ellipsis) {
                    for (std::size_t e = 0; e < ell_rank[k]; ++e, ++d) {
                        const std::size_t id = letters + (E - ell_rank[k]) + e;
                        const std::int64_t v = s[d];
                        if (size[id] == -1 || size[id] == 1) size[id] = v;
                        else if (v != 1 && v != size[id])
                            return ctx.fail(status::shape_mismatch, "equation '{}': the '...' dimensions of the inputs do not broadcast (input {} of shape {})",
                                            a.equation, k, s);
                        count[id] = 1;
                    }
                    continue;
                }
                const auto id = static_cast<std::size_t>(l);
                if (size[id] != -1 && size[id] != s[d])
                    return ctx.fail(status::shape_mismatch, "equation '{}': label '{}' has size {} in input {} of shape {} but {} elsewhere", a.equation,
                                    std::string(1, label_char(l)), s[d], k, s, size[id]);
                size[id] = s[d];
                ++count[id];
                ++d;
            }
        }

        // The output's labels.
        std::vector<std::size_t> out_labels;
        if (explicit_out) {
            std::vector<int> rl;
            bool has_ell = false;
            if (!parse_term(rhs, rl, has_ell))
                return ctx.fail(status::invalid_model, "equation '{}': output '{}' is not letters and at most one '...'", a.equation, rhs);
            std::vector<bool> seen(total, false);
            for (int l : rl) {
                if (l == ellipsis) {
                    for (std::size_t e = 0; e < E; ++e) out_labels.push_back(letters + e);
                    continue;
                }
                const auto id = static_cast<std::size_t>(l);
                if (size[id] == -1)
                    return ctx.fail(status::invalid_model, "equation '{}': output label '{}' is in no input", a.equation, std::string(1, label_char(l)));
                if (seen[id])
                    return ctx.fail(status::invalid_model, "equation '{}': output label '{}' appears twice", a.equation, std::string(1, label_char(l)));
                seen[id] = true;
                out_labels.push_back(id);
            }
        } else {
            for (std::size_t e = 0; e < E; ++e) out_labels.push_back(letters + e);
            // alphabetical: 'A'..'Z' sort before 'a'..'z' in ASCII
            for (int pass = 0; pass < 2; ++pass)
                for (int l = 0; l < 26; ++l) {
                    const auto id = static_cast<std::size_t>(pass == 0 ? 26 + l : l);
                    if (count[id] == 1) out_labels.push_back(id);
                }
        }
        if (out_labels.size() > max_rank)
            return ctx.fail(status::unsupported_op, "the output has rank {}, more than {}", out_labels.size(), max_rank);

        // Index space order: output labels, then every other used label.
        std::vector<std::size_t> order = out_labels;
        std::vector<bool> in_out(total, false);
        for (std::size_t id : out_labels) in_out[id] = true;
        for (std::size_t id = 0; id < total; ++id)
            if (size[id] != -1 && !in_out[id]) order.push_back(id);
        std::vector<std::size_t> pos(total, 0);
        for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;

        g.labels = order.size();
        g.out_rank = out_labels.size();
        g.sizes.assign(g.labels, 0);
        for (std::size_t i = 0; i < g.labels; ++i) g.sizes[i] = size[order[i]];
        g.strides.assign(n * g.labels, 0);
        for (std::size_t k = 0; k < n; ++k) {
            const shape& s = ctx.input_shape(k);
            std::int64_t st[max_rank] = {};
            contiguous_strides(s, st);
            std::size_t d = 0;
            for (int l : ops[k]) {
                if (l == ellipsis) {
                    for (std::size_t e = 0; e < ell_rank[k]; ++e, ++d) {
                        const std::size_t id = letters + (E - ell_rank[k]) + e;
                        if (s[d] != 1) g.strides[k * g.labels + pos[id]] += st[d];
                    }
                    continue;
                }
                g.strides[k * g.labels + pos[static_cast<std::size_t>(l)]] += st[d];  // repeated: the diagonal
                ++d;
            }
        }
        out_shape = shape();
        for (std::size_t i = 0; i < g.out_rank; ++i) out_shape.push_back(g.sizes[i]);
        g.out_strides.assign(g.out_rank, 0);
        contiguous_strides(out_shape, g.out_strides.data());
        g.out_count = out_shape.elements();
        return status::ok;
    }

    static char label_char(int l) noexcept { return static_cast<char>(l < 26 ? 'a' + l : 'A' + (l - 26)); }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    // The definition: for each output element, the sum over the summed labels of the product of
    // the operands (odometer over the index space).
    template <class T>
    static void reference(const args& g, const T* const* xs, T* y) noexcept {
        using namespace reduce_detail;
        using A = std::conditional_t<is_float_like<T>, double, std::uint64_t>;
        const std::size_t n = g.inputs.size(), L = g.labels, R = g.out_rank;
        std::int64_t idx[max_labels] = {};
        for (std::int64_t o = 0; o < g.out_count; ++o) {
            std::int64_t base[max_operands] = {};
            std::int64_t rest = o;
            for (std::size_t i = R; i-- > 0;) {
                const std::int64_t v = rest % g.sizes[i];
                rest /= g.sizes[i];
                for (std::size_t k = 0; k < n; ++k) base[k] += v * g.strides[k * L + i];
            }
            bool empty = false;
            for (std::size_t i = R; i < L; ++i) empty = empty || g.sizes[i] == 0;
            A acc = A(0);
            if (!empty) {
                for (std::size_t i = R; i < L; ++i) idx[i] = 0;
                std::int64_t off[max_operands];
                for (std::size_t k = 0; k < n; ++k) off[k] = base[k];
                for (;;) {
                    A prod = A(1);
                    for (std::size_t k = 0; k < n; ++k) prod *= static_cast<A>(widen(xs[k][off[k]]));
                    acc += prod;
                    bool done = true;  // advance the summed labels' odometer
                    for (std::size_t i = L; i > R;) {
                        --i;
                        for (std::size_t k = 0; k < n; ++k) off[k] += g.strides[k * L + i];
                        if (++idx[i] < g.sizes[i]) {
                            done = false;
                            break;
                        }
                        for (std::size_t k = 0; k < n; ++k) off[k] -= g.strides[k * L + i] * g.sizes[i];
                        idx[i] = 0;
                    }
                    if (done) break;
                }
            }
            if constexpr (is_float_like<T>) y[o] = narrow<T>(acc);
            else y[o] = static_cast<T>(acc);
        }
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        const T* xs[max_operands] = {};
        for (std::size_t k = 0; k < g.inputs.size(); ++k) xs[k] = ctx.at<const T>(g.inputs[k]);
        reference<T>(g, xs, ctx.at<T>(g.y));
    }

    static status bind(const attributes& a, bind_context& ctx) {
        args g;
        shape out;
        if (status s = plan(a, ctx, g, out); s != status::ok) return s;
        for (std::size_t k = 0; k < ctx.input_count(); ++k) g.inputs.push_back(ctx.input(k));
        g.y = ctx.output(0);
        kernel_fn fn = nullptr;
        reduce_detail::visit_numeric(ctx.input_type(0), [&](auto tag) { fn = &kernel<decltype(tag)>; });
        if (!fn) return ctx.fail(status::unsupported_op, "no kernel for dtype {}", ctx.input_type(0));
        ctx.emit(fn, std::move(g));
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
