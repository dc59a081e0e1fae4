// SPDX-License-Identifier: Apache-2.0
// The recurrent ops RNN, GRU and LSTM (ONNX opsets 7..14 semantics), float32, float64 and
// float16 (float16 computes in float32). One shared reference kernel walks each direction and
// each batch row through its sequence:
//
//     RNN:  H = f(X W^T + H R^T + Wb + Rb)                                          (gates: -)
//     GRU:  z = f(X Wz^T + H Rz^T + Wbz + Rbz), r = f(X Wr^T + H Rr^T + Wbr + Rbr)    (gates: z r h)
//           h~ = g(X Wh^T + (r . H) Rh^T + Rbh + Wbh)          linear_before_reset = 0
//           h~ = g(X Wh^T + r . (H Rh^T + Rbh) + Wbh)          linear_before_reset != 0
//           H = (1 - z) . h~ + z . H
//     LSTM: i = f(.. + Pi . C), f = f(.. + Pf . C) (1 - i with input_forget), c~ = g(..),
//           C = f . C + i . c~, o = f(.. + Po . C), H = o . h(C)                   (gates: i o f c)
//
// Inputs X, W, R, B, sequence_lens, initial_h (and initial_c, P for LSTM), all of them data (run
// time) inputs; every output (Y, Y_h, Y_c) is optional. `layout` (opset 14) 1 puts the batch
// first in X, Y, initial_h/c and Y_h/c. `clip` bounds every activation's input to [-clip, clip].
// `activations` names f (and g, h) per direction, case-insensitively: Relu, Tanh, Sigmoid, Affine,
// LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus; a bidirectional
// op lists the forward ones then the reverse ones (or just one set, used by both).
// activation_alpha / activation_beta are consumed in order by the activations that take them
// (absent ones get ONNX's defaults: LeakyRelu 0.01, ThresholdedRelu 1, ScaledTanh 1 1,
// HardSigmoid 0.2 0.5, Elu 1, Affine 1 0).
// sequence_lens (int32, [batch]) gives each batch row its length L in [0, seq_length] (checked at
// compile time when it is a constant, else at run time: outside it run() fails with
// invalid_argument); Y is zero at t >= L, Y_h / Y_c hold the
// state after the row's last step (after none: initial_h / initial_c, or zero). A reverse
// direction reads steps L-1 .. 0.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {
namespace recurrent {

enum class cell : std::uint8_t { rnn, gru, lstm };

constexpr std::size_t gate_count(cell c) noexcept { return c == cell::rnn ? 1 : c == cell::gru ? 3 : 4; }
constexpr std::size_t activations_per_direction(cell c) noexcept { return c == cell::rnn ? 1 : c == cell::gru ? 2 : 3; }

enum class act_kind : std::uint8_t {
    relu,
    tanh,
    sigmoid,
    affine,
    leaky_relu,
    thresholded_relu,
    scaled_tanh,
    hard_sigmoid,
    elu,
    softsign,
    softplus
};

/// One activation function with its parameters.
struct activation {
    act_kind kind = act_kind::tanh;
    float alpha = 0.0f;
    float beta = 0.0f;

    template <class A>
    A operator()(A x) const noexcept {
        const A a = static_cast<A>(alpha), b = static_cast<A>(beta);
        switch (kind) {
            case act_kind::relu: return x < A(0) ? A(0) : x;
            case act_kind::tanh: return std::tanh(x);
            case act_kind::sigmoid: return A(1) / (A(1) + std::exp(-x));
            case act_kind::affine: return a * x + b;
            case act_kind::leaky_relu: return x < A(0) ? a * x : x;
            case act_kind::thresholded_relu: return x > a ? x : A(0);
            case act_kind::scaled_tanh: return a * std::tanh(b * x);
            case act_kind::hard_sigmoid: {
                const A v = a * x + b;
                return v < A(0) ? A(0) : v > A(1) ? A(1) : v;
            }
            case act_kind::elu: return x < A(0) ? a * (std::exp(x) - A(1)) : x;
            case act_kind::softsign: return x / (A(1) + std::fabs(x));
            case act_kind::softplus: return x > A(30) ? x : std::log1p(std::exp(x));
        }
        return x;
    }
};

/// Parses an ONNX activation name (any case); false when unknown. uses_alpha/uses_beta say which
/// parameters it takes, and `out` gets ONNX's defaults for them.
inline bool parse_activation(const std::string& name, activation& out, bool& uses_alpha, bool& uses_beta) {
    std::string lower;
    for (char ch : name) lower += (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
    struct entry {
        const char* name;
        act_kind kind;
        bool alpha, beta;
        float da, db;
    };
    static const entry table[] = {
        {"relu", act_kind::relu, false, false, 0.0f, 0.0f},
        {"tanh", act_kind::tanh, false, false, 0.0f, 0.0f},
        {"sigmoid", act_kind::sigmoid, false, false, 0.0f, 0.0f},
        {"affine", act_kind::affine, true, true, 1.0f, 0.0f},
        {"leakyrelu", act_kind::leaky_relu, true, false, 0.01f, 0.0f},
        {"thresholdedrelu", act_kind::thresholded_relu, true, false, 1.0f, 0.0f},
        {"scaledtanh", act_kind::scaled_tanh, true, true, 1.0f, 1.0f},
        {"hardsigmoid", act_kind::hard_sigmoid, true, true, 0.2f, 0.5f},
        {"elu", act_kind::elu, true, false, 1.0f, 0.0f},
        {"softsign", act_kind::softsign, false, false, 0.0f, 0.0f},
        {"softplus", act_kind::softplus, false, false, 0.0f, 0.0f},
    };
    for (const entry& e : table)
        if (lower == e.name) {
            out = activation{e.kind, e.da, e.db};
            uses_alpha = e.alpha;
            uses_beta = e.beta;
            return true;
        }
    return false;
}

/// The attributes of all three ops; each op lists the ones ONNX gives it.
struct attributes {
    std::vector<float> activation_alpha;
    std::vector<float> activation_beta;
    std::vector<std::string> activations;
    std::optional<float> clip;
    std::string direction = "forward";
    std::optional<std::int64_t> hidden_size;
    std::int64_t layout = 0;
    std::int64_t linear_before_reset = 0;  // GRU
    std::int64_t input_forget = 0;         // LSTM
};

/// Everything the kernel needs, fixed at bind time. Strides are in elements.
struct args {
    cell kind = cell::rnn;
    operand x, w, r, b, seq_lens, init_h, init_c, p, y, y_h, y_c, ws;
    bool has_b = false, has_seq = false, has_h0 = false, has_c0 = false, has_p = false;
    bool has_y = false, has_yh = false, has_yc = false;
    std::size_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
    bool reverse = false;  // single direction, reverse
    std::size_t x_t = 0, x_b = 0;         // X[t, b, :]
    std::size_t y_t = 0, y_d = 0, y_b = 0;  // Y[t, d, b, :]
    std::size_t s_d = 0, s_b = 0;         // initial_h / Y_h [d, b, :]
    activation acts[6];
    bool has_clip = false;
    float clip = 0.0f;
    bool linear_before_reset = false;
    bool input_forget = false;
};

template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
inline acc_t<T> load(const T* p, std::size_t i) noexcept {
    return static_cast<acc_t<T>>(p[i]);
}
template <class T>
inline void store(T* p, std::size_t i, acc_t<T> v) noexcept {
    p[i] = T(v);
}

/// Workspace in bytes: the gates, H, C and one more hidden row, in the compute type.
inline std::size_t workspace_bytes(cell c, dtype t, std::size_t hidden) noexcept {
    const std::size_t elem = t == dtype::float64 ? sizeof(double) : sizeof(float);
    return (gate_count(c) + 3) * hidden * elem;
}

// The definition: each direction, each batch row, its steps in order.
template <class T>
void reference(const args& g, const T* X, const T* W, const T* R, const T* B, const std::int32_t* lens, const T* H0, const T* C0,
               const T* P, T* Y, T* Yh, T* Yc, acc_t<T>* ws) noexcept {
    using A = acc_t<T>;
    const std::size_t G = gate_count(g.kind), H = g.hidden, I = g.input, napd = activations_per_direction(g.kind);
    const A clip = static_cast<A>(g.clip);
    auto clamp = [&](A v) noexcept { return g.has_clip ? (v < -clip ? -clip : v > clip ? clip : v) : v; };
    if (Y)
        for (std::size_t t = 0; t < g.seq; ++t)
            for (std::size_t d = 0; d < g.dirs; ++d)
                for (std::size_t b = 0; b < g.batch; ++b)
                    for (std::size_t j = 0; j < H; ++j) store(Y, t * g.y_t + d * g.y_d + b * g.y_b + j, A(0));
    A* h = ws;
    A* c = h + H;
    A* tmp = c + H;
    A* gates = tmp + H;
    for (std::size_t d = 0; d < g.dirs; ++d) {
        const bool reverse = g.reverse || d == 1;
        const T* Wd = W + d * G * H * I;
        const T* Rd = R + d * G * H * H;
        const T* Wb = B ? B + d * 2 * G * H : nullptr;
        const T* Rb = B ? Wb + G * H : nullptr;
        const T* Pd = P ? P + d * 3 * H : nullptr;
        const activation* act = g.acts + d * napd;
        for (std::size_t b = 0; b < g.batch; ++b) {
            const std::size_t state = d * g.s_d + b * g.s_b;
            for (std::size_t j = 0; j < H; ++j) {
                h[j] = H0 ? load(H0, state + j) : A(0);
                c[j] = C0 ? load(C0, state + j) : A(0);
            }
            const std::size_t len = lens ? static_cast<std::size_t>(lens[b]) : g.seq;
            for (std::size_t step = 0; step < len; ++step) {
                const std::size_t t = reverse ? len - 1 - step : step;
                const T* x = X + t * g.x_t + b * g.x_b;
                // input part of every gate, plus both biases (GRU: the h gate's Rb joins later)
                for (std::size_t k = 0; k < G * H; ++k) {
                    A s = Wb ? load(Wb, k) : A(0);
                    const T* wrow = Wd + k * I;
                    for (std::size_t i = 0; i < I; ++i) s += load(x, i) * load(wrow, i);
                    gates[k] = s;
                }
                // recurrent part: every gate but GRU's h gate
                const std::size_t recurrent_gates = g.kind == cell::gru ? 2 : G;
                for (std::size_t k = 0; k < recurrent_gates * H; ++k) {
                    A s = Rb ? load(Rb, k) : A(0);
                    const T* rrow = Rd + k * H;
                    for (std::size_t i = 0; i < H; ++i) s += h[i] * load(rrow, i);
                    gates[k] += s;
                }
                if (g.kind == cell::rnn) {
                    for (std::size_t j = 0; j < H; ++j) h[j] = act[0](clamp(gates[j]));
                } else if (g.kind == cell::gru) {
                    A* z = gates;
                    A* r = gates + H;
                    A* hh = gates + 2 * H;
                    for (std::size_t j = 0; j < H; ++j) {
                        z[j] = act[0](clamp(z[j]));
                        r[j] = act[0](clamp(r[j]));
                    }
                    const T* Rh = Rd + 2 * H * H;
                    const T* Rbh = Rb ? Rb + 2 * H : nullptr;
                    if (g.linear_before_reset) {
                        for (std::size_t j = 0; j < H; ++j) {
                            A s = Rbh ? load(Rbh, j) : A(0);
                            for (std::size_t i = 0; i < H; ++i) s += h[i] * load(Rh + j * H, i);
                            tmp[j] = r[j] * s;
                        }
                    } else {
                        for (std::size_t i = 0; i < H; ++i) c[i] = r[i] * h[i];  // c is free in a GRU
                        for (std::size_t j = 0; j < H; ++j) {
                            A s = Rbh ? load(Rbh, j) : A(0);
                            for (std::size_t i = 0; i < H; ++i) s += c[i] * load(Rh + j * H, i);
                            tmp[j] = s;
                        }
                    }
                    for (std::size_t j = 0; j < H; ++j) {
                        const A ht = act[1](clamp(hh[j] + tmp[j]));
                        h[j] = (A(1) - z[j]) * ht + z[j] * h[j];
                    }
                } else {
                    const A* gi = gates;
                    const A* go = gates + H;
                    const A* gf = gates + 2 * H;
                    const A* gc = gates + 3 * H;
                    for (std::size_t j = 0; j < H; ++j) {
                        const A pi = Pd ? load(Pd, j) : A(0), po = Pd ? load(Pd, H + j) : A(0), pf = Pd ? load(Pd, 2 * H + j) : A(0);
                        const A i_gate = act[0](clamp(gi[j] + pi * c[j]));
                        const A f_gate = g.input_forget ? A(1) - i_gate : act[0](clamp(gf[j] + pf * c[j]));
                        const A c_new = f_gate * c[j] + i_gate * act[1](clamp(gc[j]));
                        const A o_gate = act[0](clamp(go[j] + po * c_new));
                        c[j] = c_new;
                        h[j] = o_gate * act[2](c_new);
                    }
                }
                if (Y)
                    for (std::size_t j = 0; j < H; ++j) store(Y, t * g.y_t + d * g.y_d + b * g.y_b + j, h[j]);
            }
            if (Yh)
                for (std::size_t j = 0; j < H; ++j) store(Yh, state + j, h[j]);
            if (Yc)
                for (std::size_t j = 0; j < H; ++j) store(Yc, state + j, c[j]);
        }
    }
}

template <class T>
void kernel(const void* p, const run_context& ctx) noexcept {
    const auto& g = *static_cast<const args*>(p);
    const std::int32_t* lens = g.has_seq ? ctx.at<const std::int32_t>(g.seq_lens) : nullptr;
    if (lens)
        for (std::size_t b = 0; b < g.batch; ++b)
            if (lens[b] < 0 || static_cast<std::size_t>(lens[b]) > g.seq) {
                ctx.fail(static_cast<std::uint8_t>(status::invalid_argument));
                return;
            }
    reference<T>(g, ctx.at<const T>(g.x), ctx.at<const T>(g.w), ctx.at<const T>(g.r), g.has_b ? ctx.at<const T>(g.b) : nullptr, lens,
                 g.has_h0 ? ctx.at<const T>(g.init_h) : nullptr, g.has_c0 ? ctx.at<const T>(g.init_c) : nullptr,
                 g.has_p ? ctx.at<const T>(g.p) : nullptr, g.has_y ? ctx.at<T>(g.y) : nullptr, g.has_yh ? ctx.at<T>(g.y_h) : nullptr,
                 g.has_yc ? ctx.at<T>(g.y_c) : nullptr, ctx.at<acc_t<T>>(g.ws));
}

// Input positions: X W R B sequence_lens initial_h [initial_c P]
inline constexpr std::size_t in_b = 3, in_seq = 4, in_h0 = 5, in_c0 = 6, in_p = 7;

/// The activations of each direction, from the attributes or ONNX's defaults.
inline status resolve_activations(cell kind, const attributes& a, std::size_t dirs, activation* out, infer_context& ctx) {
    const std::size_t per = activations_per_direction(kind);
    std::vector<std::string> names = a.activations;
    if (names.empty()) {
        if (kind == cell::rnn) names = {"Tanh"};
        else if (kind == cell::gru) names = {"Sigmoid", "Tanh"};
        else names = {"Sigmoid", "Tanh", "Tanh"};
    }
    if (names.size() != per && names.size() != per * dirs)
        return ctx.fail(status::invalid_model, "attribute 'activations' lists {} functions, expected {} ({} per direction, {} direction{})",
                        names.size(), per * dirs, per, dirs, dirs == 1 ? "" : "s");
    std::size_t next_alpha = 0, next_beta = 0;
    for (std::size_t k = 0; k < names.size(); ++k) {
        bool uses_alpha = false, uses_beta = false;
        if (!parse_activation(names[k], out[k], uses_alpha, uses_beta))
            return ctx.fail(status::unsupported_op,
                            "activation '{}' is not supported (supported: Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                            "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)",
                            names[k]);
        if (uses_alpha && next_alpha < a.activation_alpha.size()) out[k].alpha = a.activation_alpha[next_alpha++];
        if (uses_beta && next_beta < a.activation_beta.size()) out[k].beta = a.activation_beta[next_beta++];
    }
    if (names.size() == per && dirs == 2)
        for (std::size_t k = 0; k < per; ++k) out[per + k] = out[k];
    return status::ok;
}

/// The number of directions, or 0 for an unknown direction string.
inline std::size_t direction_count(const std::string& direction) noexcept {
    return direction == "forward" || direction == "reverse" ? 1 : direction == "bidirectional" ? 2 : 0;
}

inline status check_shape(infer_context& ctx, std::size_t i, const char* what, const shape& expected) {
    if (ctx.input_shape(i) != expected)
        return ctx.fail(status::shape_mismatch, "input {} ({}) has shape {}, expected {}", i, what, ctx.input_shape(i), expected);
    return status::ok;
}

inline status infer(cell kind, const attributes& a, infer_context& ctx) {
    const std::size_t max_inputs = kind == cell::lstm ? 8 : 6;
    if (status s = ctx.expect_inputs(3, max_inputs); s != status::ok) return s;
    if (status s = ctx.expect_type(0, {dtype::float32, dtype::float64, dtype::float16}); s != status::ok) return s;
    const dtype t = ctx.input_type(0);
    for (std::size_t i = 1; i < ctx.input_count(); ++i) {
        if (!ctx.has_input(i) || i == in_seq) continue;
        if (ctx.input_type(i) != t) return ctx.fail(status::shape_mismatch, "input {} has dtype {}, input 0 (X) has {}", i, ctx.input_type(i), t);
    }
    const std::size_t dirs = direction_count(a.direction);
    if (dirs == 0)
        return ctx.fail(status::invalid_model, "attribute 'direction' is '{}', expected 'forward', 'reverse' or 'bidirectional'", a.direction);
    if (a.layout != 0 && a.layout != 1) return ctx.fail(status::invalid_model, "attribute 'layout' is {}, expected 0 or 1", a.layout);
    if (a.layout != 0 && ctx.opset() < 14)
        return ctx.fail(status::invalid_model, "attribute 'layout' needs opset 14 or later, the model has opset {}", ctx.opset());
    if (a.clip && !(*a.clip > 0.0f)) return ctx.fail(status::invalid_model, "attribute 'clip' is {}, expected a positive threshold", *a.clip);
    activation acts[6];
    if (status s = resolve_activations(kind, a, dirs, acts, ctx); s != status::ok) return s;

    const shape& x = ctx.input_shape(0);
    if (x.rank() != 3) return ctx.fail(status::shape_mismatch, "input 0 (X) has shape {}, expected rank 3", x);
    const std::int64_t seq = a.layout == 0 ? x[0] : x[1], batch = a.layout == 0 ? x[1] : x[0], input = x[2];
    const shape& r = ctx.input_shape(2);
    const auto G = static_cast<std::int64_t>(gate_count(kind));
    const auto D = static_cast<std::int64_t>(dirs);
    if (r.rank() != 3) return ctx.fail(status::shape_mismatch, "input 2 (R) has shape {}, expected rank 3", r);
    const std::int64_t hidden = a.hidden_size.value_or(r[2]);
    if (hidden <= 0) return ctx.fail(status::invalid_model, "attribute 'hidden_size' is {}, expected a positive size", hidden);
    if (status s = check_shape(ctx, 1, "W", shape{D, G * hidden, input}); s != status::ok) return s;
    if (status s = check_shape(ctx, 2, "R", shape{D, G * hidden, hidden}); s != status::ok) return s;
    if (ctx.has_input(in_b))
        if (status s = check_shape(ctx, in_b, "B", shape{D, 2 * G * hidden}); s != status::ok) return s;
    if (ctx.has_input(in_seq)) {
        if (ctx.input_type(in_seq) != dtype::int32)
            return ctx.fail(status::unsupported_op, "input 4 (sequence_lens) has dtype {}, expected int32", ctx.input_type(in_seq));
        if (status s = check_shape(ctx, in_seq, "sequence_lens", shape{batch}); s != status::ok) return s;
        if (const tensor* lens = ctx.input_constant(in_seq))
            for (std::int64_t b = 0; b < batch; ++b)
                if (const std::int32_t len = lens->data<std::int32_t>()[b]; len < 0 || len > seq)
                    return ctx.fail(status::invalid_model, "sequence_lens[{}] is {}, expected 0 to seq_length {}", b, len, seq);
    }
    const shape state = a.layout == 0 ? shape{D, batch, hidden} : shape{batch, D, hidden};
    if (ctx.has_input(in_h0))
        if (status s = check_shape(ctx, in_h0, "initial_h", state); s != status::ok) return s;
    if (kind == cell::lstm && ctx.has_input(in_c0))
        if (status s = check_shape(ctx, in_c0, "initial_c", state); s != status::ok) return s;
    if (kind == cell::lstm && ctx.has_input(in_p))
        if (status s = check_shape(ctx, in_p, "P", shape{D, 3 * hidden}); s != status::ok) return s;
    const std::size_t max_outputs = kind == cell::lstm ? 3 : 2;
    if (ctx.output_count() > max_outputs) return ctx.fail(status::invalid_model, "expected at most {} outputs, got {}", max_outputs, ctx.output_count());
    ctx.set_output(0, t, a.layout == 0 ? shape{seq, D, batch, hidden} : shape{batch, seq, D, hidden});
    ctx.set_output(1, t, state);
    ctx.set_output(2, t, state);
    return status::ok;
}

inline std::size_t workspace(cell kind, const attributes& a, const infer_context& ctx) {
    const shape& r = ctx.input_shape(2);
    const auto hidden = static_cast<std::size_t>(a.hidden_size.value_or(r.rank() == 3 ? r[2] : 0));
    return workspace_bytes(kind, ctx.input_type(0), hidden);
}

inline status bind(cell kind, const attributes& a, bind_context& ctx) {
    args g;
    g.kind = kind;
    const shape& x = ctx.input_shape(0);
    g.dirs = direction_count(a.direction);
    g.reverse = a.direction == "reverse";
    g.seq = static_cast<std::size_t>(a.layout == 0 ? x[0] : x[1]);
    g.batch = static_cast<std::size_t>(a.layout == 0 ? x[1] : x[0]);
    g.input = static_cast<std::size_t>(x[2]);
    g.hidden = static_cast<std::size_t>(a.hidden_size.value_or(ctx.input_shape(2)[2]));
    const std::size_t H = g.hidden, D = g.dirs;
    if (a.layout == 0) {
        g.x_t = g.batch * g.input, g.x_b = g.input;
        g.y_t = D * g.batch * H, g.y_d = g.batch * H, g.y_b = H;
        g.s_d = g.batch * H, g.s_b = H;
    } else {
        g.x_t = g.input, g.x_b = g.seq * g.input;
        g.y_t = D * H, g.y_d = H, g.y_b = g.seq * D * H;
        g.s_d = H, g.s_b = D * H;
    }
    resolve_activations(kind, a, D, g.acts, ctx);
    g.has_clip = a.clip.has_value();
    g.clip = a.clip.value_or(0.0f);
    g.linear_before_reset = a.linear_before_reset != 0;
    g.input_forget = a.input_forget != 0;
    g.x = ctx.input(0);
    g.w = ctx.input(1);
    g.r = ctx.input(2);
    g.has_b = ctx.has_input(in_b);
    if (g.has_b) g.b = ctx.input(in_b);
    g.has_seq = ctx.has_input(in_seq);
    if (g.has_seq) g.seq_lens = ctx.input(in_seq);
    g.has_h0 = ctx.has_input(in_h0);
    if (g.has_h0) g.init_h = ctx.input(in_h0);
    if (kind == cell::lstm) {
        g.has_c0 = ctx.has_input(in_c0);
        if (g.has_c0) g.init_c = ctx.input(in_c0);
        g.has_p = ctx.has_input(in_p);
        if (g.has_p) g.p = ctx.input(in_p);
    }
    g.has_y = ctx.has_output(0);
    if (g.has_y) g.y = ctx.output(0);
    g.has_yh = ctx.has_output(1);
    if (g.has_yh) g.y_h = ctx.output(1);
    g.has_yc = kind == cell::lstm && ctx.has_output(2);
    if (g.has_yc) g.y_c = ctx.output(2);
    g.ws = ctx.workspace();
    switch (ctx.input_type(0)) {
        case dtype::float64: ctx.emit(&kernel<double>, g); break;
        case dtype::float16: ctx.emit(&kernel<float16>, g); break;
        default: ctx.emit(&kernel<float>, g); break;
    }
    return status::ok;
}

} // namespace recurrent

struct rnn {
    static constexpr std::string_view onnx_name = "RNN";
    static constexpr op_flags flags = op_flags::none;
    using attributes = recurrent::attributes;
    static constexpr auto onnx_attributes = std::make_tuple(
        attr("activation_alpha", &attributes::activation_alpha), attr("activation_beta", &attributes::activation_beta),
        attr("activations", &attributes::activations), attr("clip", &attributes::clip), attr("direction", &attributes::direction),
        attr("hidden_size", &attributes::hidden_size), attr("layout", &attributes::layout));
    static status infer(const attributes& a, infer_context& ctx) { return recurrent::infer(recurrent::cell::rnn, a, ctx); }
    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        return recurrent::workspace(recurrent::cell::rnn, a, ctx);
    }
    static status bind(const attributes& a, bind_context& ctx) { return recurrent::bind(recurrent::cell::rnn, a, ctx); }
};

struct gru {
    static constexpr std::string_view onnx_name = "GRU";
    static constexpr op_flags flags = op_flags::none;
    using attributes = recurrent::attributes;
    static constexpr auto onnx_attributes = std::make_tuple(
        attr("activation_alpha", &attributes::activation_alpha), attr("activation_beta", &attributes::activation_beta),
        attr("activations", &attributes::activations), attr("clip", &attributes::clip), attr("direction", &attributes::direction),
        attr("hidden_size", &attributes::hidden_size), attr("layout", &attributes::layout),
        attr("linear_before_reset", &attributes::linear_before_reset));
    static status infer(const attributes& a, infer_context& ctx) { return recurrent::infer(recurrent::cell::gru, a, ctx); }
    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        return recurrent::workspace(recurrent::cell::gru, a, ctx);
    }
    static status bind(const attributes& a, bind_context& ctx) { return recurrent::bind(recurrent::cell::gru, a, ctx); }
};

struct lstm {
    static constexpr std::string_view onnx_name = "LSTM";
    static constexpr op_flags flags = op_flags::none;
    using attributes = recurrent::attributes;
    static constexpr auto onnx_attributes = std::make_tuple(
        attr("activation_alpha", &attributes::activation_alpha), attr("activation_beta", &attributes::activation_beta),
        attr("activations", &attributes::activations), attr("clip", &attributes::clip), attr("direction", &attributes::direction),
        attr("hidden_size", &attributes::hidden_size), attr("input_forget", &attributes::input_forget), attr("layout", &attributes::layout));
    static status infer(const attributes& a, infer_context& ctx) { return recurrent::infer(recurrent::cell::lstm, a, ctx); }
    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        return recurrent::workspace(recurrent::cell::lstm, a, ctx);
    }
    static status bind(const attributes& a, bind_context& ctx) { return recurrent::bind(recurrent::cell::lstm, a, ctx); }
};

} // namespace ops
EMBER_NAMESPACE_END
