// SPDX-License-Identifier: Apache-2.0
// tiny::conv1d<Channels_in, Channels_out, Length, Kernel, Stride, Pad, Act>: ONNX Conv over one
// spatial axis (group 1, dilation 1, the same padding at both ends), data [C][L] row-major as
// ONNX's NCL with N = 1. In ONNX: Conv, then the activation's node unless Act is identity.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/span.hpp"
#include "ember/detail/format.hpp"
#include "ember/status.hpp"
#include "ember/tiny/activation.hpp"
#include "ember/tiny/graph_walk.hpp"
#include "ember/tiny/kernels.hpp"

EMBER_NAMESPACE_BEGIN
namespace tiny {

template <std::size_t Channels_in, std::size_t Channels_out, std::size_t Length, std::size_t Kernel, std::size_t Stride = 1,
          std::size_t Pad = 0, class Act = identity>
class conv1d {
    static_assert(Channels_in > 0 && Channels_out > 0 && Kernel > 0 && Stride > 0, "tiny::conv1d: sizes must be positive");
    static_assert(Length + 2 * Pad >= Kernel, "tiny::conv1d: the kernel is longer than the padded input");

public:
    /// Output positions: (Length + 2 Pad - Kernel) / Stride + 1, as ONNX Conv.
    static constexpr std::size_t out_length = (Length + 2 * Pad - Kernel) / Stride + 1;
    static constexpr std::size_t in_size = Channels_in * Length;
    static constexpr std::size_t out_size = Channels_out * out_length;
    static constexpr std::size_t state_size = 0;
    using activation_type = Act;

    static std::string describe() {
        return ember::detail::format("conv1d<{}, {}, {}, {}, {}, {}, {}>", Channels_in, Channels_out, Length, Kernel, Stride, Pad, Act::name);
    }

    /// y[co][t] = act(b[co] + sum_ci,k W[co][ci][k] x[ci][t Stride + k - Pad]), x outside
    /// [0, Length) read as 0. Per output position: the window's Channels_in * Kernel values
    /// gathered into one row, times the weights stored [Channels_in * Kernel][Channels_out]
    /// (the dense kernel), written back channel-major. Allocates nothing.
    void run(const float* x, float* y) const noexcept {
        constexpr std::size_t window = Channels_in * Kernel;
        float column[window];
        float out[Channels_out];
        for (std::size_t t = 0; t < out_length; ++t) {
            for (std::size_t ci = 0; ci < Channels_in; ++ci)
                for (std::size_t k = 0; k < Kernel; ++k) {
                    const std::size_t at = t * Stride + k;  // position in the padded input
                    column[ci * Kernel + k] = at >= Pad && at - Pad < Length ? x[ci * Length + at - Pad] : 0.0f;
                }
            detail::affine<window, Channels_out>(w_, b_, column, out, act_);
            for (std::size_t co = 0; co < Channels_out; ++co) y[co * out_length + t] = out[co];
        }
    }
    void run(const float* x, float* y, float*) const noexcept { run(x, y); }

    /// Copies ONNX Conv's W, [Channels_out][Channels_in][Kernel], and B, Channels_out values (or
    /// none: zeros). Fails with invalid_argument, changing nothing, when a size is wrong.
    [[nodiscard]] result<void> set_weights(span<const float> weight, span<const float> bias = {}) {
        if (weight.size() != Channels_out * Channels_in * Kernel)
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("{}: {} weights given, expected {}", describe(), weight.size(),
                                                    Channels_out * Channels_in * Kernel)};
        if (!bias.empty() && bias.size() != Channels_out)
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("{}: {} biases given, expected {} (or none)", describe(), bias.size(), Channels_out)};
        for (std::size_t co = 0; co < Channels_out; ++co)
            for (std::size_t r = 0; r < Channels_in * Kernel; ++r) w_[r * Channels_out + co] = weight[co * Channels_in * Kernel + r];
        for (std::size_t co = 0; co < Channels_out; ++co) b_[co] = bias.empty() ? 0.0f : bias[co];
        return {};
    }

    Act& activation() noexcept { return act_; }
    const Act& activation() const noexcept { return act_; }

    /// Whether the graph input `s` can feed this layer first: [N, Channels_in, Length].
    static bool accepts_input(const partial_shape& s, std::string& expected) {
        expected = ember::detail::format("[N, {}, {}]", Channels_in, Length);
        return !s.rank_known || (s.rank() == 3 && detail::dim_is(s, 1, Channels_in) && detail::dim_is(s, 2, Length));
    }

    /// Matches a Conv (and the activation) at walk's current value; with commit, copies W and B.
    result<void> load(detail::graph_walk& walk, bool commit) {
        result<detail::graph_walk::step> s = walk.next("Conv");
        if (!s) return s.error();
        const std::int32_t n = s->node;
        const node& nd = walk.at(n);
        if (nd.op_type != "Conv") return walk.fail(status::unsupported_op, n, "expected Conv");
        if (nd.inputs.empty() || nd.inputs[0] != s->value)
            return walk.fail(status::unsupported_op, n, ember::detail::format("reads '{}' as W or B; the layer's input must be X", walk.value_name(s->value)));
        if (result<void> r = check_attributes(walk, n); !r) return r;
        result<const tensor*> w = walk.weight(n, 1, "W");
        if (!w) return w.error();
        if (!detail::has_dims(**w, {static_cast<std::int64_t>(Channels_out), static_cast<std::int64_t>(Channels_in), static_cast<std::int64_t>(Kernel)}))
            return walk.fail(status::shape_mismatch, n,
                             ember::detail::format("W has shape {}; expected [{}, {}, {}]", (*w)->dims(), Channels_out, Channels_in, Kernel));
        const tensor* b = nullptr;
        if (nd.inputs.size() > 2 && nd.inputs[2] != no_value) {
            result<const tensor*> bt = walk.weight(n, 2, "B");
            if (!bt) return bt.error();
            b = *bt;
            if (!detail::has_dims(*b, {static_cast<std::int64_t>(Channels_out)}))
                return walk.fail(status::shape_mismatch, n, ember::detail::format("B has shape {}; expected [{}]", b->dims(), Channels_out));
        }
        if (commit) {
            const float* bias = b != nullptr ? b->data<float>() : nullptr;
            (void)set_weights({(*w)->data<float>(), (*w)->size()}, {bias, bias != nullptr ? std::size_t{Channels_out} : 0});
        }
        walk.advance(nd.outputs[0]);
        return detail::load_activation(walk, act_, commit);
    }

private:
    // Conv's attributes must say what the template does: one spatial axis, this kernel, stride
    // and padding, no dilation, no groups.
    static result<void> check_attributes(const detail::graph_walk& walk, std::int32_t n) {
        const node& nd = walk.at(n);
        const auto ints = [&](std::string_view name, std::vector<std::int64_t> fallback) {
            const attribute* a = nd.find_attribute(name);
            return a != nullptr && a->kind == attribute_kind::ints ? a->ints : fallback;
        };
        const auto fail = [&](std::string_view name, const std::vector<std::int64_t>& got, const std::vector<std::int64_t>& want) {
            return walk.fail(status::shape_mismatch, n, ember::detail::format("{} is {}; expected {}", name, got, want));
        };
        const std::int64_t pad = static_cast<std::int64_t>(Pad);
        if (const attribute* a = nd.find_attribute("auto_pad"); a != nullptr && a->s != "NOTSET" && !(a->s == "VALID" && Pad == 0))
            return walk.fail(status::unsupported_op, n, ember::detail::format("auto_pad {}; expected NOTSET (explicit pads)", a->s));
        if (std::int64_t group = detail::int_attribute(nd, "group", 1); group != 1)
            return walk.fail(status::unsupported_op, n, ember::detail::format("group {}; expected 1", group));
        if (auto k = ints("kernel_shape", {static_cast<std::int64_t>(Kernel)}); k != std::vector<std::int64_t>{static_cast<std::int64_t>(Kernel)})
            return fail("kernel_shape", k, {static_cast<std::int64_t>(Kernel)});
        if (auto st = ints("strides", {1}); st != std::vector<std::int64_t>{static_cast<std::int64_t>(Stride)})
            return fail("strides", st, {static_cast<std::int64_t>(Stride)});
        if (auto p = ints("pads", {0, 0}); p != std::vector<std::int64_t>{pad, pad}) return fail("pads", p, {pad, pad});
        if (auto d = ints("dilations", {1}); d != std::vector<std::int64_t>{1}) return fail("dilations", d, {1});
        return {};
    }

    alignas(64) float w_[Channels_in * Kernel * Channels_out] = {};  // [Channels_in * Kernel][Channels_out]
    alignas(64) float b_[Channels_out] = {};
    Act act_{};
};

} // namespace tiny
EMBER_NAMESPACE_END
