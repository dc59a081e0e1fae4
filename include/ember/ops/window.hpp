// SPDX-License-Identifier: Apache-2.0
// Sliding-window geometry shared by Conv, MaxPool and AveragePool: reads auto_pad, pads,
// strides, dilations (and ceil_mode for pooling) the way the ONNX spec defines them, checks
// them against the input, and gives the output's spatial size and the effective pads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

/// Spatial ranks the window ops support (1-D, 2-D and 3-D: what real models use).
inline constexpr std::size_t max_window_rank = 3;

/// The geometry of one window op, always as three spatial dimensions: an op of spatial rank S
/// uses the last S entries and the leading 3 - S are unit dimensions (size 1, kernel 1, stride 1,
/// no padding), so every kernel is a 3-D loop nest.
struct window_geometry {
    std::size_t rank = 0;  ///< spatial rank S of the op
    std::int64_t in[max_window_rank] = {1, 1, 1};
    std::int64_t out[max_window_rank] = {1, 1, 1};
    std::int64_t kernel[max_window_rank] = {1, 1, 1};
    std::int64_t stride[max_window_rank] = {1, 1, 1};
    std::int64_t dilation[max_window_rank] = {1, 1, 1};
    std::int64_t pad_begin[max_window_rank] = {0, 0, 0};
    std::int64_t pad_end[max_window_rank] = {0, 0, 0};

    EMBER_HOST_DEVICE std::int64_t in_size() const noexcept { return in[0] * in[1] * in[2]; }
    EMBER_HOST_DEVICE std::int64_t out_size() const noexcept { return out[0] * out[1] * out[2]; }
    EMBER_HOST_DEVICE std::int64_t kernel_size() const noexcept { return kernel[0] * kernel[1] * kernel[2]; }
};

/// Copies the 2-D window of G (its last two dimensions) into a convolution packer's source
/// (kernels::conv_source, kernels::qconv_source); returns whether it is a 1x1, stride-1,
/// unpadded window (the input is then the packed operand itself).
template <class Source>
bool set_conv_window(const window_geometry& G, Source& s) noexcept {
    s.in_h = G.in[1];
    s.in_w = G.in[2];
    s.out_w = G.out[2];
    s.kh = G.kernel[1];
    s.kw = G.kernel[2];
    s.stride_h = G.stride[1];
    s.stride_w = G.stride[2];
    s.pad_h = G.pad_begin[1];
    s.pad_w = G.pad_begin[2];
    s.dil_h = G.dilation[1];
    s.dil_w = G.dilation[2];
    return G.kernel_size() == 1 && G.stride[1] == 1 && G.stride[2] == 1 && G.pad_begin[1] == 0 && G.pad_begin[2] == 0 && G.pad_end[1] == 0 &&
           G.pad_end[2] == 0;
}

/// The window attributes as the ONNX ops name them (empty lists mean the ONNX defaults).
struct window_spec {
    const std::string& auto_pad;
    const std::vector<std::int64_t>& pads;
    const std::vector<std::int64_t>& strides;
    const std::vector<std::int64_t>& dilations;
    bool ceil_mode = false;
};

/// auto_pad as the ONNX window ops spell it.
enum class window_pad_mode { notset, same_upper, same_lower, valid };

/// Reads auto_pad ("NOTSET" or empty, "SAME_UPPER", "SAME_LOWER", "VALID") into mode.
inline status parse_auto_pad(infer_context& ctx, const std::string& auto_pad, window_pad_mode& mode) {
    if (auto_pad == "NOTSET" || auto_pad.empty()) mode = window_pad_mode::notset;
    else if (auto_pad == "SAME_UPPER") mode = window_pad_mode::same_upper;
    else if (auto_pad == "SAME_LOWER") mode = window_pad_mode::same_lower;
    else if (auto_pad == "VALID") mode = window_pad_mode::valid;
    else return ctx.fail(status::invalid_model, "auto_pad is '{}', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID", auto_pad);
    return status::ok;
}

/// Checks that pads has no negative value, and no non-zero one unless auto_pad is NOTSET.
inline status check_pads(infer_context& ctx, const std::vector<std::int64_t>& pads, const std::string& auto_pad, window_pad_mode mode) {
    bool any_pad = false;
    for (std::int64_t p : pads) {
        if (p < 0) return ctx.fail(status::invalid_model, "pads {} has a negative value", pads);
        any_pad = any_pad || p != 0;
    }
    if (any_pad && mode != window_pad_mode::notset)
        return ctx.fail(status::invalid_model, "pads {} cannot be used together with auto_pad '{}'", pads, auto_pad);
    return status::ok;
}

/// Fills g for an input of shape x = [N, C, spatial...] and a kernel of `kernel` (S values).
/// Output size per ONNX:
///   NOTSET:  floor((in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride) + 1, or
///            ceil(...) + 1 with ceil_mode, dropping a last window that would start in the end
///            padding ("sliding windows that would start in the right padded region are ignored",
///            as PyTorch and ONNX Runtime do);
///   VALID:   as NOTSET with no padding (ceil_mode gives the same size there);
///   SAME_*:  ceil(in / stride), total padding max(0, (out - 1) * stride + dilation * (kernel - 1)
///            + 1 - in), split evenly with the odd one at the end (UPPER) or the beginning (LOWER).
inline status make_window_geometry(infer_context& ctx, const shape& x, const std::int64_t* kernel, const window_spec& spec,
                                   window_geometry& g) {
    const std::size_t S = x.rank() - 2;
    g = window_geometry{};
    g.rank = S;
    using mode = window_pad_mode;
    mode pad_mode = mode::notset;
    if (status s = parse_auto_pad(ctx, spec.auto_pad, pad_mode); s != status::ok) return s;

    if (!spec.strides.empty() && spec.strides.size() != S)
        return ctx.fail(status::invalid_model, "strides {} has {} values, expected {} (one per spatial dimension of input {})", spec.strides,
                        spec.strides.size(), S, x);
    if (!spec.dilations.empty() && spec.dilations.size() != S)
        return ctx.fail(status::invalid_model, "dilations {} has {} values, expected {} (one per spatial dimension of input {})", spec.dilations,
                        spec.dilations.size(), S, x);
    if (!spec.pads.empty() && spec.pads.size() != 2 * S)
        return ctx.fail(status::invalid_model, "pads {} has {} values, expected {} (begin and end of each spatial dimension of input {})",
                        spec.pads, spec.pads.size(), 2 * S, x);
    if (status s = check_pads(ctx, spec.pads, spec.auto_pad, pad_mode); s != status::ok) return s;

    const std::size_t lead = max_window_rank - S;
    for (std::size_t i = 0; i < S; ++i) {
        const std::size_t d = lead + i;
        const std::int64_t in = x[2 + i];
        const std::int64_t k = kernel[i];
        const std::int64_t s = spec.strides.empty() ? 1 : spec.strides[i];
        const std::int64_t dil = spec.dilations.empty() ? 1 : spec.dilations[i];
        if (k < 1) return ctx.fail(status::invalid_model, "kernel dimension {} is {}, expected >= 1", i, k);
        if (s < 1) return ctx.fail(status::invalid_model, "strides {} has a value below 1", spec.strides);
        if (dil < 1) return ctx.fail(status::invalid_model, "dilations {} has a value below 1", spec.dilations);
        const std::int64_t extent = dil * (k - 1) + 1;  // the span of the dilated kernel
        std::int64_t pb = spec.pads.empty() ? 0 : spec.pads[i];
        std::int64_t pe = spec.pads.empty() ? 0 : spec.pads[S + i];
        std::int64_t out = 0;
        if (pad_mode == mode::same_upper || pad_mode == mode::same_lower) {
            out = (in + s - 1) / s;
            const std::int64_t needed = (out - 1) * s + extent - in;
            const std::int64_t total = needed > 0 ? needed : 0;
            pb = pad_mode == mode::same_upper ? total / 2 : total - total / 2;
            pe = total - pb;
        } else {
            const std::int64_t span = in + pb + pe - extent;
            if (span < 0)
                return ctx.fail(status::shape_mismatch,
                                "spatial dimension {} of input {} is {} with pads {} + {}, smaller than the kernel's extent {} (kernel {}, dilation {})",
                                i, x, in, pb, pe, extent, k, dil);
            if (spec.ceil_mode) {
                out = (span + s - 1) / s + 1;
                if ((out - 1) * s >= in + pb) --out;  // the last window would start in the end padding
            } else {
                out = span / s + 1;
            }
        }
        g.in[d] = in;
        g.out[d] = out;
        g.kernel[d] = k;
        g.stride[d] = s;
        g.dilation[d] = dil;
        g.pad_begin[d] = pb;
        g.pad_end[d] = pe;
    }
    return status::ok;
}

/// [N, channels, out...] for an input of shape x.
inline shape window_output_shape(const shape& x, std::int64_t channels, const window_geometry& g) {
    shape out{x[0], channels};
    for (std::size_t i = 0; i < g.rank; ++i) out.push_back(g.out[max_window_rank - g.rank + i]);
    return out;
}

/// Calls out(o0, o1, o2) for each output position of g, in row-major order.
template <class Out>
void for_each_window_output(const window_geometry& g, Out&& out) {
    for (std::int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (std::int64_t o1 = 0; o1 < g.out[1]; ++o1)
            for (std::int64_t o2 = 0; o2 < g.out[2]; ++o2) out(o0, o1, o2);
}

/// Calls tap(i0, i1, i2, k0, k1, k2) for each kernel position k of the window at output
/// (o0, o1, o2) whose input position i = o * stride - pad_begin + k * dilation lies inside the
/// input (positions in the padding are skipped), in row-major kernel order.
template <class Tap>
void for_each_window_tap(const window_geometry& g, std::int64_t o0, std::int64_t o1, std::int64_t o2, Tap&& tap) {
    for (std::int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
        const std::int64_t i0 = o0 * g.stride[0] - g.pad_begin[0] + k0 * g.dilation[0];
        if (i0 < 0 || i0 >= g.in[0]) continue;
        for (std::int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
            const std::int64_t i1 = o1 * g.stride[1] - g.pad_begin[1] + k1 * g.dilation[1];
            if (i1 < 0 || i1 >= g.in[1]) continue;
            for (std::int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
                const std::int64_t i2 = o2 * g.stride[2] - g.pad_begin[2] + k2 * g.dilation[2];
                if (i2 < 0 || i2 >= g.in[2]) continue;
                tap(i0, i1, i2, k0, k1, k2);
            }
        }
    }
}

/// Checks that x is [N, C, spatial...] with 1 to 3 spatial dimensions; `what` names the input.
inline status expect_window_input(infer_context& ctx, const shape& x, std::string_view what) {
    if (x.rank() < 3)
        return ctx.fail(status::shape_mismatch, "{} must be [N, C, spatial...] with at least one spatial dimension, got {}", what, x);
    if (x.rank() > 2 + max_window_rank)
        return ctx.fail(status::unsupported_op, "{} of shape {} has {} spatial dimensions, supported: 1 to {}", what, x, x.rank() - 2,
                        max_window_rank);
    return status::ok;
}

/// Conv's checks of x [N, C, spatial...] against w [M, C/group, kernel...] (and of the bias b
/// against [M] where b is not null), then g as make_window_geometry() gives it for w's kernel;
/// x_name and w_name name the two inputs in the errors.
inline status plan_conv_window(infer_context& ctx, const shape& x, const shape& w, const shape* b, std::int64_t group,
                               const std::vector<std::int64_t>& kernel_shape, const window_spec& spec, std::string_view x_name,
                               std::string_view w_name, window_geometry& g) {
    if (status s = expect_window_input(ctx, x, x_name); s != status::ok) return s;
    const std::size_t S = x.rank() - 2;
    if (w.rank() != x.rank())
        return ctx.fail(status::shape_mismatch, "{} must be [M, C/group, kernel...] of rank {} like {} {}, got {}", w_name, x.rank(), x_name, x, w);
    if (group < 1) return ctx.fail(status::invalid_model, "group is {}, expected >= 1", group);
    if (x[1] != w[1] * group)
        return ctx.fail(status::shape_mismatch, "{} {} has {} channels, but {} {} with group {} expects {} x {} = {}", x_name, x, x[1], w_name, w,
                        group, w[1], group, w[1] * group);
    if (w[0] % group != 0)
        return ctx.fail(status::shape_mismatch, "{} {} has {} output channels, not a multiple of group {}", w_name, w, w[0], group);
    if (b && (b->rank() != 1 || (*b)[0] != w[0]))
        return ctx.fail(status::shape_mismatch, "B must be [{}] (one bias per output channel of {} {}), got {}", w[0], w_name, w, *b);
    if (!kernel_shape.empty()) {
        bool same = kernel_shape.size() == S;
        for (std::size_t i = 0; same && i < S; ++i) same = kernel_shape[i] == w[2 + i];
        if (!same) return ctx.fail(status::shape_mismatch, "kernel_shape {} does not match {} {}", kernel_shape, w_name, w);
    }
    return make_window_geometry(ctx, x, w.data() + 2, spec, g);
}

} // namespace ops
EMBER_NAMESPACE_END
