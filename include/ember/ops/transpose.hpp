// SPDX-License-Identifier: Apache-2.0
// Transpose (ONNX opset 1+), any dtype: output dimension i is input dimension perm[i]; perm
// defaults to the reversed dimensions. The kernel moves whole elements of 1, 2, 4 or 8 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct transpose {
    static constexpr std::string_view onnx_name = "Transpose";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::vector<std::int64_t> perm;  // empty: reversed
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("perm", &attributes::perm));

    /// Output dims, and per output dim the input's element stride along it.
    struct args {
        operand x, y;
        std::uint32_t rank = 0;
        std::int64_t dims[max_rank] = {};
        std::int64_t in_strides[max_rank] = {};
        std::int64_t count = 0;
    };

    /// perm as given, or reversed when empty; false when it is not a permutation of
    /// [0, rank), with `bad` set to the offending entry (-1 when the length is wrong).
    static bool resolve_perm(const attributes& a, std::size_t rank, std::size_t* perm, std::int64_t& bad) noexcept {
        if (a.perm.empty()) {
            for (std::size_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
            return true;
        }
        bad = -1;
        if (a.perm.size() != rank) return false;
        bool seen[max_rank] = {};
        for (std::size_t i = 0; i < rank; ++i) {
            const std::int64_t p = a.perm[i];
            if (p < 0 || p >= static_cast<std::int64_t>(rank) || seen[static_cast<std::size_t>(p)]) {
                bad = p;
                return false;
            }
            seen[static_cast<std::size_t>(p)] = true;
            perm[i] = static_cast<std::size_t>(p);
        }
        return true;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        const shape& in = ctx.input_shape(0);
        std::size_t perm[max_rank] = {};
        std::int64_t bad = -1;
        if (!resolve_perm(a, in.rank(), perm, bad)) {
            if (a.perm.size() != in.rank())
                return ctx.fail(status::invalid_model, "perm {} has {} entries but the input {} has rank {}", a.perm, a.perm.size(), in,
                                in.rank());
            return ctx.fail(status::invalid_model, "perm {} is not a permutation of [0, {}): entry {} is out of range or repeated", a.perm,
                            in.rank(), bad);
        }
        shape out;
        for (std::size_t i = 0; i < in.rank(); ++i) out.push_back(in[perm[i]]);
        ctx.set_output(0, ctx.input_type(0), out);
        return status::ok;
    }

    // The definition: walks the output in order with an odometer over its outer dims, reading the
    // input through permuted strides; whole output rows are split over the executor. Elements
    // are moved with memcpy of their size, so any dtype of that size works; a row that is
    // contiguous in the input too moves as one block.
    template <std::size_t Bytes>
    static void reference(const args& g, const std::byte* x, std::byte* y, const executor* ex) noexcept {
        if (g.count == 0) return;
        if (g.rank == 0) {
            std::memcpy(y, x, Bytes);
            return;
        }
        const std::size_t last = g.rank - 1;
        const std::int64_t inner = g.dims[last], step = g.in_strides[last];
        parallel_for(ex, static_cast<std::size_t>(g.count / inner), [&](std::size_t begin, std::size_t end) {
            for (auto row = static_cast<std::int64_t>(begin); row < static_cast<std::int64_t>(end); ++row) {
                std::int64_t offset = 0, rest = row;
                for (std::size_t d = last; d-- > 0;) {
                    offset += (rest % g.dims[d]) * g.in_strides[d];
                    rest /= g.dims[d];
                }
                std::byte* out = y + static_cast<std::size_t>(row * inner) * Bytes;
                if (step == 1) {  // the last dimension stays last (attention's head split): one block
                    std::memcpy(out, x + static_cast<std::size_t>(offset) * Bytes, static_cast<std::size_t>(inner) * Bytes);
                    continue;
                }
                for (std::int64_t j = 0; j < inner; ++j)
                    std::memcpy(out + static_cast<std::size_t>(j) * Bytes, x + static_cast<std::size_t>(offset + j * step) * Bytes, Bytes);
            }
        });
    }

    template <std::size_t Bytes>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference<Bytes>(g, ctx.at<const std::byte>(g.x), ctx.at<std::byte>(g.y), ctx.exec);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        const shape& in = ctx.input_shape(0);
        args g;
        g.x = ctx.input(0);
        g.y = ctx.output(0);
        std::size_t perm[max_rank] = {};
        std::int64_t bad = -1;
        resolve_perm(a, in.rank(), perm, bad);
        std::int64_t strides[max_rank] = {};
        contiguous_strides(in, strides);
        g.rank = static_cast<std::uint32_t>(in.rank());
        for (std::size_t i = 0; i < in.rank(); ++i) {
            g.dims[i] = in[perm[i]];
            g.in_strides[i] = strides[perm[i]];
        }
        g.count = in.elements();
        kernel_fn fn = nullptr;
        switch (size_of(ctx.input_type(0))) {
            case 1: fn = &kernel<1>; break;
            case 2: fn = &kernel<2>; break;
            case 4: fn = &kernel<4>; break;
            case 8: fn = &kernel<8>; break;
            default: return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        }
        ctx.emit(fn, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
