// SPDX-License-Identifier: Apache-2.0
// tiny::gru<In, Hidden, LinearBeforeReset>: one ONNX GRU cell (forward, default activations,
// gates z r h), run one time step per call over a hidden state the caller holds. In ONNX: GRU
// with W [1, 3 Hidden, In], R [1, 3 Hidden, Hidden], optional B [1, 6 Hidden], initial_h absent
// or a graph input, no sequence_lens; the chain goes on from Y or Y_h (one step: the same).
#pragma once

#include <cstddef>
#include <cstring>
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

template <std::size_t In, std::size_t Hidden, bool LinearBeforeReset = false>
class gru {
    static_assert(In > 0 && Hidden > 0, "tiny::gru: sizes must be positive");
    static constexpr std::size_t H = Hidden;

public:
    static constexpr std::size_t in_size = In;
    static constexpr std::size_t out_size = Hidden;
    static constexpr std::size_t state_size = Hidden;  ///< h, which the caller holds
    static constexpr bool linear_before_reset = LinearBeforeReset;

    static std::string describe() { return ember::detail::format("gru<{}, {}, {}>", In, Hidden, LinearBeforeReset); }

    /// One time step, ONNX's GRU:
    ///
    ///     z = sigmoid(x Wz + Wbz + h Rz + Rbz)        r = sigmoid(x Wr + Wbr + h Rr + Rbr)
    ///     h~ = tanh(x Wh + Wbh + (r . h) Rh + Rbh)      LinearBeforeReset = false
    ///     h~ = tanh(x Wh + Wbh + r . (h Rh + Rbh))      LinearBeforeReset = true
    ///     h = (1 - z) . h~ + z . h
    ///
    /// x: In values; h: Hidden values, read and replaced (zeros: ONNX's absent initial_h).
    /// Allocates nothing.
    void step(const float* x, float* h) const noexcept {
        float gx[3 * H];   // x W + Wb (+ Rb for z and r, and for h~ when not linear before reset)
        float zr[2 * H];   // z, r
        float hh[H];       // h~
        detail::affine<In, 3 * H>(wx_, bx_, x, gx, identity{});
        detail::affine<H, 2 * H>(rzr_, gx, h, zr, sigmoid{});
        if constexpr (LinearBeforeReset) {
            float gh[H];
            detail::affine<H, H>(rh_, rbh_, h, gh, identity{});
            detail::for_each_lane<H>([&](auto v, std::size_t i) {
                using V = decltype(v);
                detail::store(hh + i, tiny::tanh{}(detail::load<V>(gx + 2 * H + i) + detail::load<V>(zr + H + i) * detail::load<V>(gh + i)));
            });
        } else {
            float rh[H];
            detail::for_each_lane<H>([&](auto v, std::size_t i) {
                using V = decltype(v);
                detail::store(rh + i, detail::load<V>(zr + H + i) * detail::load<V>(h + i));
            });
            detail::affine<H, H>(rh_, gx + 2 * H, rh, hh, tiny::tanh{});
        }
        detail::for_each_lane<H>([&](auto v, std::size_t i) {
            using V = decltype(v);
            const V t = detail::load<V>(hh + i);
            detail::store(h + i, t + detail::load<V>(zr + i) * (detail::load<V>(h + i) - t));
        });
    }

    /// The network's form: one step over state (Hidden values), y = the new h.
    void run(const float* x, float* y, float* state) const noexcept {
        step(x, state);
        std::memcpy(y, state, sizeof(float) * H);
    }

    /// `steps` time steps: x is [steps][In], h is updated as by step(); y (nullptr: not wanted)
    /// gets each step's h, [steps][Hidden] (ONNX's Y for one direction and batch 1).
    void run_sequence(const float* x, std::size_t steps, float* h, float* y) const noexcept {
        for (std::size_t t = 0; t < steps; ++t) {
            step(x + t * In, h);
            if (y != nullptr) std::memcpy(y + t * H, h, sizeof(float) * H);
        }
    }

    /// Copies ONNX GRU's W [3 Hidden][In], R [3 Hidden][Hidden] (gates z, r, h) and B
    /// [6 Hidden] (Wb then Rb; none: zeros). Fails with invalid_argument, changing nothing, when
    /// a size is wrong.
    [[nodiscard]] result<void> set_weights(span<const float> w, span<const float> r, span<const float> b = {}) {
        const auto fail = [&](const char* what, std::size_t got, std::size_t want) {
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("{}: {} {} values given, expected {}", describe(), got, what, want)};
        };
        if (w.size() != 3 * H * In) return fail("W", w.size(), 3 * H * In);
        if (r.size() != 3 * H * H) return fail("R", r.size(), 3 * H * H);
        if (!b.empty() && b.size() != 6 * H) return fail("B", b.size(), 6 * H);
        for (std::size_t g = 0; g < 3 * H; ++g)
            for (std::size_t i = 0; i < In; ++i) wx_[i * 3 * H + g] = w[g * In + i];
        for (std::size_t g = 0; g < 2 * H; ++g)
            for (std::size_t i = 0; i < H; ++i) rzr_[i * 2 * H + g] = r[g * H + i];
        for (std::size_t g = 0; g < H; ++g)
            for (std::size_t i = 0; i < H; ++i) rh_[i * H + g] = r[(2 * H + g) * H + i];
        // Rb joins x's bias for z and r always, and for h~ when the reset multiplies after it.
        for (std::size_t g = 0; g < 3 * H; ++g) {
            const float wb = b.empty() ? 0.0f : b[g], rb = b.empty() ? 0.0f : b[3 * H + g];
            const bool joins = g < 2 * H || !LinearBeforeReset;
            bx_[g] = joins ? wb + rb : wb;
            if (g >= 2 * H) rbh_[g - 2 * H] = joins ? 0.0f : rb;
        }
        return {};
    }

    /// Whether the graph input `s` can feed this layer first: [T, N, In] (layout 0).
    static bool accepts_input(const partial_shape& s, std::string& expected) {
        expected = ember::detail::format("[T, N, {}]", In);
        return !s.rank_known || (s.rank() == 3 && detail::dim_is(s, 2, In));
    }

    /// Matches a GRU node at walk's current value; with commit, copies W, R and B.
    result<void> load(detail::graph_walk& walk, bool commit) {
        result<detail::graph_walk::step> s = walk.next("GRU");
        if (!s) return s.error();
        const std::int32_t n = s->node;
        const node& nd = walk.at(n);
        if (nd.op_type != "GRU") return walk.fail(status::unsupported_op, n, "expected GRU");
        if (nd.inputs.empty() || nd.inputs[0] != s->value)
            return walk.fail(status::unsupported_op, n, ember::detail::format("reads '{}' other than as X", walk.value_name(s->value)));
        if (result<void> r = check_attributes(walk, n); !r) return r;
        result<const tensor*> w = walk.weight(n, 1, "W");
        if (!w) return w.error();
        if (!detail::has_dims(**w, {1, static_cast<std::int64_t>(3 * H), static_cast<std::int64_t>(In)}))
            return walk.fail(status::shape_mismatch, n, ember::detail::format("W has shape {}; expected [1, {}, {}]", (*w)->dims(), 3 * H, In));
        result<const tensor*> r = walk.weight(n, 2, "R");
        if (!r) return r.error();
        if (!detail::has_dims(**r, {1, static_cast<std::int64_t>(3 * H), static_cast<std::int64_t>(H)}))
            return walk.fail(status::shape_mismatch, n, ember::detail::format("R has shape {}; expected [1, {}, {}]", (*r)->dims(), 3 * H, H));
        const tensor* b = nullptr;
        if (nd.inputs.size() > 3 && nd.inputs[3] != no_value) {
            result<const tensor*> bt = walk.weight(n, 3, "B");
            if (!bt) return bt.error();
            b = *bt;
            if (!detail::has_dims(*b, {1, static_cast<std::int64_t>(6 * H)}))
                return walk.fail(status::shape_mismatch, n, ember::detail::format("B has shape {}; expected [1, {}]", b->dims(), 6 * H));
        }
        if (nd.inputs.size() > 4 && nd.inputs[4] != no_value)
            return walk.fail(status::unsupported_op, n, "has sequence_lens; a tiny gru runs one step per call");
        if (nd.inputs.size() > 5 && nd.inputs[5] != no_value) {
            const value_id h0 = nd.inputs[5];
            if (walk.g().values[h0].kind != value_kind::input)
                return walk.fail(status::unsupported_op, n,
                                 ember::detail::format("initial_h '{}' is not a graph input; the caller holds the state", walk.value_name(h0)));
            walk.add_state_input(h0);
        }
        if (commit) {
            const float* bias = b != nullptr ? b->data<float>() : nullptr;
            (void)set_weights({(*w)->data<float>(), (*w)->size()}, {(*r)->data<float>(), (*r)->size()},
                              {bias, bias != nullptr ? 6 * H : std::size_t{0}});
        }
        // The chain goes on from Y or Y_h, whichever is read (or is the graph's output); the
        // other may only be a graph output (the new state).
        const value_id y = !nd.outputs.empty() ? nd.outputs[0] : no_value;
        const value_id y_h = nd.outputs.size() > 1 ? nd.outputs[1] : no_value;
        const bool y_read = y != no_value && walk.read(y), y_h_read = y_h != no_value && walk.read(y_h);
        if (y_read && y_h_read) return walk.fail(status::unsupported_op, n, "both Y and Y_h are read; a tiny network is a chain");
        const bool go_on_from_y = y_read || (!y_h_read && y != no_value && !walk.g().outputs.empty() && walk.g().outputs[0] == y) ||
                                  y_h == no_value;
        walk.advance(go_on_from_y ? y : y_h);
        const value_id other = go_on_from_y ? y_h : y;
        if (other != no_value) walk.add_state_output(other);
        return {};
    }

private:
    static result<void> check_attributes(const detail::graph_walk& walk, std::int32_t n) {
        const node& nd = walk.at(n);
        if (std::int64_t hs = detail::int_attribute(nd, "hidden_size", static_cast<std::int64_t>(H)); hs != static_cast<std::int64_t>(H))
            return walk.fail(status::shape_mismatch, n, ember::detail::format("hidden_size {}; expected {}", hs, H));
        if (const attribute* a = nd.find_attribute("direction"); a != nullptr && a->s != "forward")
            return walk.fail(status::unsupported_op, n, ember::detail::format("direction {}; expected forward", a->s));
        if (const attribute* a = nd.find_attribute("activations");
            a != nullptr && a->strings != std::vector<std::string>{"Sigmoid", "Tanh"})
            return walk.fail(status::unsupported_op, n, ember::detail::format("activations {}; expected [Sigmoid, Tanh]", a->strings));
        if (nd.find_attribute("clip") != nullptr) return walk.fail(status::unsupported_op, n, "has clip; a tiny gru does not clip");
        if (std::int64_t layout = detail::int_attribute(nd, "layout", 0); layout != 0)
            return walk.fail(status::unsupported_op, n, ember::detail::format("layout {}; expected 0", layout));
        if (bool lbr = detail::int_attribute(nd, "linear_before_reset", 0) != 0; lbr != LinearBeforeReset)
            return walk.fail(status::unsupported_op, n,
                             ember::detail::format("linear_before_reset {}; this layer is gru<{}, {}, {}>", lbr ? 1 : 0, In, H, LinearBeforeReset));
        return {};
    }

    alignas(64) float wx_[In * 3 * H] = {};   // [In][3H]: W transposed, gates z r h
    alignas(64) float bx_[3 * H] = {};        // Wb, with Rb joined (see set_weights)
    alignas(64) float rzr_[H * 2 * H] = {};   // [H][2H]: R's z and r rows transposed
    alignas(64) float rh_[H * H] = {};        // [H][H]: R's h rows transposed
    alignas(64) float rbh_[H] = {};           // Rbh when linear before reset, else zeros
};

} // namespace tiny
EMBER_NAMESPACE_END
