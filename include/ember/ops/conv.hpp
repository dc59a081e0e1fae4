// SPDX-License-Identifier: Apache-2.0
// Conv (ONNX opset 1+), float32, 1 to 3 spatial dimensions: Y[n, m] = B[m] + sum over the
// channels c of m's group and the kernel positions k of X[n, c, out * stride - pad_begin +
// k * dilation] * W[m, c, k], positions in the padding contributing zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/kernels/conv_direct_f32.hpp"
#include "ember/kernels/winograd_f32.hpp"
#include "ember/ops/fast_gemm.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/window.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct conv {
    static constexpr std::string_view onnx_name = "Conv";
    static constexpr op_flags flags = op_flags::none;

    struct attributes {
        std::string auto_pad = "NOTSET";
        std::vector<std::int64_t> dilations;     // empty: 1 per spatial dimension
        std::int64_t group = 1;
        std::vector<std::int64_t> kernel_shape;  // empty: taken from W
        std::vector<std::int64_t> pads;          // [x1_begin, x2_begin, ..., x1_end, x2_end]; empty: 0
        std::vector<std::int64_t> strides;       // empty: 1 per spatial dimension
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(attr("auto_pad", &attributes::auto_pad), attr("dilations", &attributes::dilations), attr("group", &attributes::group),
                        attr("kernel_shape", &attributes::kernel_shape), attr("pads", &attributes::pads),
                        attr("strides", &attributes::strides));

    struct args {
        operand x, w, b, y;
        bool has_b = false;
        std::int64_t batch = 0;
        std::int64_t in_channels = 0;   // per group
        std::int64_t out_channels = 0;  // all groups together (M)
        std::int64_t group = 1;
        window_geometry geo;
    };

    /// Checks the inputs and computes the geometry; shared by infer() and bind().
    /// FusedConv passes max_inputs = 4 (its residual Z comes last).
    static status plan(const attributes& a, infer_context& ctx, args& g, std::size_t max_inputs = 3) {
        if (status s = ctx.expect_inputs(2, max_inputs); s != status::ok) return s;
        for (std::size_t i = 0; i < ctx.input_count(); ++i)
            if (ctx.has_input(i))
                if (status s = ctx.expect_type(i, {dtype::float32}); s != status::ok) return s;
        const shape& x = ctx.input_shape(0);
        const shape& w = ctx.input_shape(1);
        const shape* b = ctx.has_input(2) ? &ctx.input_shape(2) : nullptr;
        const window_spec spec{a.auto_pad, a.pads, a.strides, a.dilations, false};
        if (status s = plan_conv_window(ctx, x, w, b, a.group, a.kernel_shape, spec, "X", "W", g.geo); s != status::ok) return s;
        g.batch = x[0];
        g.in_channels = w[1];
        g.out_channels = w[0];
        g.group = a.group;
        return status::ok;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        ctx.set_output(0, dtype::float32, window_output_shape(ctx.input_shape(0), g.out_channels, g.geo));
        return status::ok;
    }

    // The definition: a direct loop per output element over the group's input channels and the
    // kernel window, skipping positions in the padding; the bias is added to the finished sum.
    // Output planes (n, m) are split over the executor. b may be null.
    static void reference(const args& g, const float* x, const float* w, const float* b, float* y, const executor* ex) noexcept {
        const window_geometry& G = g.geo;
        const std::int64_t in_size = G.in_size(), out_size = G.out_size(), k_size = G.kernel_size();
        const std::int64_t M = g.out_channels, C = g.in_channels, per_group = M / g.group;
        parallel_for(ex, static_cast<std::size_t>(g.batch * M), [&](std::size_t begin, std::size_t end) {
            for (auto plane = static_cast<std::int64_t>(begin); plane < static_cast<std::int64_t>(end); ++plane) {
                const std::int64_t n = plane / M, m = plane % M, grp = m / per_group;
                const float* xg = x + (n * g.group + grp) * C * in_size;  // first channel of m's group
                const float* wm = w + m * C * k_size;
                float* yp = y + plane * out_size;
                for_each_window_output(G, [&](std::int64_t o0, std::int64_t o1, std::int64_t o2) {
                    float acc = 0.0f;
                    for (std::int64_t c = 0; c < C; ++c)
                        for_each_window_tap(G, o0, o1, o2, [&](auto i0, auto i1, auto i2, auto k0, auto k1, auto k2) {
                            acc += xg[c * in_size + (i0 * G.in[1] + i1) * G.in[2] + i2] *
                                   wm[c * k_size + (k0 * G.kernel[1] + k1) * G.kernel[2] + k2];
                        });
                    yp[(o0 * G.out[1] + o1) * G.out[2] + o2] = b ? acc + b[m] : acc;
                });
            }
        });
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        reference(g, ctx.at<const float>(g.x), ctx.at<const float>(g.w), g.has_b ? ctx.at<const float>(g.b) : nullptr, ctx.at<float>(g.y),
                  ctx.exec);
    }

    // -- the fast path: per image and group, a packed GEMM of the weights [M/group, C*kh*kw]
    // (packed once at compile) against the input's implicit im2col matrix [C*kh*kw, OH*OW],
    // which the GEMM packs straight from the NCHW input; the output tile is NCHW already.

    struct fast_args {
        const simd::kernel_table* table = nullptr;
        operand x, w, y, workspace;
        const float* packed_w = nullptr;  // null: W is an input, packed per block at run time
        fast_epilogue post;
        std::int64_t batch = 0, group = 1, in_channels = 0, out_per_group = 0, out_size = 0;
        kernels::conv_source src;  // geometry; x is set per image and group at run time
        bool pointwise = false;    // 1x1, stride 1, no padding: B is the input itself
        bool depthwise = false;    // one input and one output channel per group: dwconv_f32
        kernels::dwconv_f32_problem depthwise_geometry;
        std::int64_t slots = 1;
        bool winograd = false;  // 3x3, stride 1: kernels/winograd_f32.hpp, packed_w holds the 36 transformed matrices
        kernels::winograd_f32_problem winograd_geometry;
        bool transposed = false;  // the GEMM swapped (use_transposed): packed_w holds W^T packed as a B operand
        bool direct = false;      // kernels/conv_direct_f32.hpp (use_direct): packed_w holds its weight panels
        kernels::conv_direct_f32_problem direct_geometry;
    };

    /// Whether the fast path runs a convolution of geometry g (from plan()): float32 with 1 or 2
    /// spatial dims. Shared with FusedConv.
    static bool fast_plan(const args& g, const infer_context& ctx, fast_args* f = nullptr) noexcept {
        const kernel_context* k = ctx.kernels();
        if (!k || g.geo.rank > 2 || g.geo.rank == 0) return false;
        if (f) {
            const window_geometry& G = g.geo;
            f->table = k->table;
            f->batch = g.batch;
            f->group = g.group;
            f->in_channels = g.in_channels;
            f->out_per_group = g.out_channels / g.group;
            f->out_size = G.out[1] * G.out[2];
            f->depthwise = g.group > 1 && g.in_channels == 1 && g.out_channels == g.group;
            if (f->depthwise) f->depthwise_geometry = plane_geometry(G, g.batch * g.group, g.group);
            f->pointwise = set_conv_window(G, f->src);
            f->slots = static_cast<std::int64_t>(k->slots);
            if (!f->depthwise) {
                f->direct_geometry.channels = g.in_channels;
                f->direct_geometry.out_channels = g.out_channels;
                f->direct_geometry.window = plane_geometry(G, 1, 1);
            }
            f->direct = !f->depthwise && use_direct(g, ctx, *k, f->direct_geometry);
            f->winograd = !f->direct && use_winograd(g, ctx, *k);
            f->transposed = !f->winograd && !f->direct && !f->depthwise && use_transposed(g, ctx, *k);
            if (f->winograd) {
                kernels::winograd_f32_problem& w = f->winograd_geometry;
                w.channels = g.in_channels;
                w.out_channels = g.out_channels;
                w.in_h = G.in[1];
                w.in_w = G.in[2];
                w.out_h = G.out[1];
                w.out_w = G.out[2];
                w.pad_h = G.pad_begin[1];
                w.pad_w = G.pad_begin[2];
            }
        }
        return true;
    }

    /// Whether a convolution runs as Winograd F(4x4, 3x3): a 3x3 kernel, stride 1, no dilation, one
    /// group, constant weights, enough channels to pay for the transforms, and fewer multiplications
    /// than the direct GEMM by at least 1.5x once the tiles are rounded up to the GEMM's column tile
    /// (a 7x7 output has 4 tiles, which one 16- or 32-column tile computes at a fraction of its rate),
    /// and a workspace under 32 MiB. compile_options::winograd (or EMBER_WINOGRAD=0) turns it off.
    static bool use_winograd(const args& g, const infer_context& ctx, const kernel_context& k) noexcept {
        const window_geometry& G = g.geo;
        if (!k.winograd || g.geo.rank != 2 || g.group != 1 || G.kernel[1] != 3 || G.kernel[2] != 3 || G.stride[1] != 1 || G.stride[2] != 1 ||
            G.dilation[1] != 1 || G.dilation[2] != 1 || ctx.input_constant(1) == nullptr)
            return false;
        if (g.in_channels < 8 || g.out_channels < 8) return false;
        const std::int64_t nr = k.table->packed_b_floats(1, 1);
        const std::int64_t tiles = kernels::winograd_tiles(G.out[1], G.out[2]);
        const std::int64_t winograd_macs = 36 * ((tiles + nr - 1) / nr * nr);
        const std::int64_t direct_macs = 9 * ((G.out[1] * G.out[2] + nr - 1) / nr * nr);
        if (2 * direct_macs < 3 * winograd_macs) return false;
        const std::int64_t floats = k.table->winograd_workspace_floats(g.in_channels, g.out_channels, G.out[1], G.out[2],
                                                                       static_cast<std::int64_t>(k.slots));
        return floats <= (std::int64_t{32} << 20) / static_cast<std::int64_t>(sizeof(float));
    }

    /// Whether a convolution runs as the direct kernel (kernels/conv_direct_f32.hpp): the GEMM with
    /// its B vectors loaded straight from a padded copy of the input, no im2col packing, the whole
    /// depth summed in registers. One group, constant weights, a window the depthwise layout holds
    /// (up to 8x8, strides up to 4), not 1x1 (its im2col is the input itself, or one tap of it), a
    /// workspace under 32 MiB, and a depth (channels * taps) of at most 640: the B rows a tile
    /// reads then stay in L1 (ResNet's 14x14 and 7x7 layers, 1152 to 4608 deep, ran 1.1-1.2x
    /// slower than the packed GEMM). Among those it is taken where Winograd is not, and over
    /// Winograd where the transforms dominate (16 input channels or fewer) or its 4x4 tiles cover
    /// the output poorly (under 70%: SqueezeNet's 13x13 layers, 66%). Measured per layer on
    /// resnet18 and squeezenet1_1 (1 thread): stems 0.71x and 0.82x the packed GEMM's time,
    /// ResNet's 3x3 stride-2 64-channel layer 0.85x, SqueezeNet's 3x3 layers of 16 and 48 channels
    /// 0.84-0.90x Winograd's; the 32-channel 27x27 one was 1.11x Winograd's and stays there.
    /// compile_options::direct_conv (or EMBER_DIRECT_CONV=0) turns it off.
    static bool use_direct(const args& g, const infer_context& ctx, const kernel_context& k, const kernels::conv_direct_f32_problem& d) noexcept {
        const window_geometry& G = g.geo;
        if (!k.direct_conv || g.group != 1 || ctx.input_constant(1) == nullptr || G.out[1] < 1 || G.out[2] < 1) return false;
        if (G.kernel[1] * G.kernel[2] == 1 || g.in_channels * G.kernel[1] * G.kernel[2] > 640) return false;
        const std::int64_t floats = k.table->conv_direct_workspace_floats(d);
        if (floats == 0 || floats > (std::int64_t{32} << 20) / static_cast<std::int64_t>(sizeof(float))) return false;
        if (!use_winograd(g, ctx, k)) return true;
        const std::int64_t covered = kernels::winograd_tiles(G.out[1], G.out[2]) * 16;
        return g.in_channels <= 16 || 10 * G.out[1] * G.out[2] < 7 * covered;
    }

    /// Whether the GEMM runs swapped, Y^T [OH*OW, M] = im2col^T * W^T, the output channels across
    /// the vector lanes: when the work, padded to whole NR-wide tiles, falls by more than a ninth
    /// that way round (ResNet's 14x14 and 7x7 layers: 196 and 49 positions fill 224 and 64 columns
    /// of 32-wide tiles; their 256 to 2048 channels fill every tile). It needs constant weights
    /// (W^T is packed once, as a B operand), one group, and fewer than 2^24 channels (the
    /// transposed write gathers with int32 offsets of channels).
    static bool use_transposed(const args& g, const infer_context& ctx, const kernel_context& k) noexcept {
        if (!k.transposed_gemm || g.group != 1 || ctx.input_constant(1) == nullptr || g.out_channels >= (std::int64_t{1} << 24)) return false;
        const std::int64_t nr = k.table->packed_b_floats(1, 1);
        const std::int64_t positions = g.geo.out[1] * g.geo.out[2], channels = g.out_channels;
        const std::int64_t direct = channels * ((positions + nr - 1) / nr * nr);
        const std::int64_t swapped = positions * ((channels + nr - 1) / nr * nr);
        return 9 * swapped < 8 * direct;
    }

    /// A transposed conv's scratch C (one image): out_size rows of transposed_ldc floats, the rows
    /// a cache line more than the channels apart (a multiple of 4 KiB apart, the transposed
    /// write's column would fall in one L1 set), the whole rounded up to keep the GEMM's workspace
    /// after it aligned.
    static std::int64_t transposed_ldc(const fast_args& f) noexcept { return f.out_per_group + 16; }
    static std::int64_t transposed_scratch_floats(const fast_args& f) noexcept { return (f.out_size * transposed_ldc(f) + 15) / 16 * 16; }

    static std::size_t fast_workspace(const args& g, const infer_context& ctx) noexcept {
        fast_args f;
        if (!fast_plan(g, ctx, &f)) return 0;
        if (f.depthwise) return plane_workspace(*ctx.kernels(), f.depthwise_geometry);
        if (f.direct) return static_cast<std::size_t>(ctx.kernels()->table->conv_direct_workspace_floats(f.direct_geometry)) * sizeof(float);
        if (f.winograd) {
            const kernels::winograd_f32_problem& w = f.winograd_geometry;
            return static_cast<std::size_t>(
                       ctx.kernels()->table->winograd_workspace_floats(w.channels, w.out_channels, w.out_h, w.out_w, f.slots)) *
                   sizeof(float);
        }
        if (f.transposed)
            return static_cast<std::size_t>(transposed_scratch_floats(f)) * sizeof(float) + fast_gemm_workspace(*ctx.kernels(), true, false);
        return fast_gemm_workspace(*ctx.kernels(), ctx.input_constant(1) == nullptr, true);
    }

    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        args g;
        if (plan(a, const_cast<infer_context&>(ctx), g) != status::ok) return 0;
        return fast_workspace(g, ctx);
    }

    static void depthwise_kernel(const void* p, const run_context& ctx) noexcept {
        const auto& f = *static_cast<const fast_args*>(p);
        kernels::dwconv_f32_problem d = f.depthwise_geometry;
        d.x = ctx.at<const float>(f.x);
        d.w = ctx.at<const float>(f.w);
        d.y = ctx.at<float>(f.y);
        const kernels::gemm_epilogue post = resolve_epilogue(f.post, ctx, 0, 0);
        d.bias = post.bias;
        d.residual = post.residual;
        d.act = post.act;
        f.table->dwconv_f32(d, ctx.at<float>(f.workspace), f.slots, ctx.exec);
    }

    // Runs a per-image kernel (Winograd's, the direct one) over the batch: problem d (geometry
    // and packed weights set) with its x, y, epilogue and residual moved to each image in turn.
    template <class Problem, class Run>
    static void over_images(const fast_args& f, const run_context& ctx, Problem d, std::int64_t in_image, std::int64_t out_image, Run run) noexcept {
        const kernels::gemm_epilogue post = resolve_epilogue(f.post, ctx, 0, 0);
        for (std::int64_t n = 0; n < f.batch; ++n) {
            d.x = ctx.at<const float>(f.x) + n * in_image;
            d.y = ctx.at<float>(f.y) + n * out_image;
            d.post = post;
            if (post.residual) d.post.residual = post.residual + n * out_image;
            run(d, ctx.at<float>(f.workspace), f.slots, ctx.exec);
        }
    }

    static void winograd_kernel(const void* p, const run_context& ctx) noexcept {
        const auto& f = *static_cast<const fast_args*>(p);
        kernels::winograd_f32_problem w = f.winograd_geometry;
        w.packed_u = f.packed_w;
        over_images(f, ctx, w, w.channels * w.in_h * w.in_w, w.out_channels * w.out_h * w.out_w, f.table->winograd_f32);
    }

    static void direct_kernel(const void* p, const run_context& ctx) noexcept {
        const auto& f = *static_cast<const fast_args*>(p);
        kernels::conv_direct_f32_problem d = f.direct_geometry;
        d.packed_w = f.packed_w;
        over_images(f, ctx, d, d.channels * d.window.in_h * d.window.in_w, d.out_channels * d.window.out_h * d.window.out_w,
                    f.table->conv_direct_f32);
    }

    /// The 36 transformed weight matrices U_xi = (G g G^T)[xi] of Winograd F(4x4, 3x3), each
    /// [M, C] and packed for the GEMM, into one plan-owned buffer (transformed in double).
    static const float* pack_winograd_weights(bind_context& ctx, const float* w, std::int64_t M, std::int64_t C) {
        static constexpr double G[6][3] = {{1.0 / 4, 0, 0},
                                           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                           {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                           {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                           {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                           {0, 0, 1}};
        const kernel_context& k = *ctx.kernels();
        aligned_buffer transformed;  // [M][C][36]: U_xi is the strided matrix at xi, rows C * 36 apart
        if (!transformed.allocate(static_cast<std::size_t>(36 * M * C) * sizeof(float), k.alloc, false)) {
            ctx.fail(status::out_of_memory, "allocator returned null for {} bytes of Winograd weights", 36 * M * C * sizeof(float));
            return nullptr;  // (packed_buffer below says so itself)
        }
        float* u = reinterpret_cast<float*>(transformed.data());
        for (std::int64_t mc = 0; mc < M * C; ++mc) {
            const float* g = w + mc * 9;
            double gt[6][3];  // G g
            for (int i = 0; i < 6; ++i)
                for (int j = 0; j < 3; ++j) gt[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
            for (int i = 0; i < 6; ++i)
                for (int j = 0; j < 6; ++j) u[mc * 36 + i * 6 + j] = static_cast<float>(gt[i][0] * G[j][0] + gt[i][1] * G[j][1] + gt[i][2] * G[j][2]);
        }
        float* packed = ctx.packed_buffer(static_cast<std::size_t>(36 * kernels::packed_a_floats(M, C)));
        if (!packed) return nullptr;
        for (std::int64_t xi = 0; xi < 36; ++xi)
            k.table->pack_gemm_a(kernels::strided_matrix{u + xi, C * 36, 36}, M, C, packed + xi * kernels::packed_a_floats(M, C));
        return packed;
    }

    static void fast_kernel(const void* p, const run_context& ctx) noexcept {
        const auto& f = *static_cast<const fast_args*>(p);
        const float* x = ctx.at<const float>(f.x);
        float* y = ctx.at<float>(f.y);
        const float* w = f.packed_w ? nullptr : ctx.at<const float>(f.w);
        float* ws = ctx.at<float>(f.workspace);
        const std::int64_t in_size = f.src.in_h * f.src.in_w, depth = f.in_channels * f.src.kh * f.src.kw;
        const std::int64_t M = f.out_per_group * f.group;
        // transposed (one group): the GEMM's scratch C first in the workspace, its own after it
        float* scratch = f.transposed ? ws : nullptr;
        if (f.transposed) ws += transposed_scratch_floats(f);
        for (std::int64_t n = 0; n < f.batch; ++n)
            for (std::int64_t grp = 0; grp < f.group; ++grp) {
                kernels::conv_source src = f.src;
                src.x = x + (n * f.group + grp) * f.in_channels * in_size;
                kernels::gemm_f32_problem pr;
                if (f.transposed) {
                    // Y^T [positions, M] = im2col^T * W^T, written back transposed into the image's Y
                    pr.m = f.out_size;
                    pr.n = M;
                    pr.k = depth;
                    pr.packed_b = f.packed_w;
                    if (f.pointwise)
                        pr.a = kernels::strided_matrix{src.x, 1, in_size};
                    else
                        pr.conv_a = &src;
                    pr.c = scratch;
                    pr.ldc = transposed_ldc(f);
                    pr.out = y + n * M * f.out_size;
                    pr.ld_out = f.out_size;
                    pr.post = resolve_epilogue(f.post, ctx, f.out_size, n * M * f.out_size);
                    f.table->gemm_f32(pr, ws, f.slots, ctx.exec);
                    continue;
                }
                pr.m = f.out_per_group;
                pr.n = f.out_size;
                pr.k = depth;
                if (f.packed_w)
                    pr.packed_a = f.packed_w + grp * kernels::packed_a_floats(f.out_per_group, depth);
                else
                    pr.a = kernels::strided_matrix{w + grp * f.out_per_group * depth, depth, 1};
                if (f.pointwise)
                    pr.b = kernels::strided_matrix{src.x, in_size, 1};
                else
                    pr.conv = &src;
                const std::int64_t first_row = n * M + grp * f.out_per_group;
                pr.c = y + first_row * f.out_size;
                pr.ldc = f.out_size;
                pr.post = resolve_epilogue(f.post, ctx, f.out_size, first_row * f.out_size);
                if (pr.post.bias) pr.post.bias += grp * f.out_per_group;
                f.table->gemm_f32(pr, ws, f.slots, ctx.exec);
            }
    }

    /// Binds the fast path with this epilogue (FusedConv passes its own); `bound` stays false when
    /// it does not apply (the caller then binds the reference kernel).
    static status bind_fast(const args& g, bind_context& ctx, fast_epilogue post, bool& bound) {
        bound = false;
        fast_args f;
        if (!fast_plan(g, ctx, &f)) return status::ok;
        f.x = ctx.input(0);
        f.y = ctx.output(0);
        f.workspace = ctx.workspace();
        f.post = post;
        f.w = ctx.input(1);
        if (f.depthwise) {
            ctx.emit(&depthwise_kernel, f);
            bound = true;
            return status::ok;
        }
        const tensor* weights = ctx.input_constant(1);
        if (!weights) {
            ctx.emit(&fast_kernel, f);
            bound = true;
            return status::ok;
        }
        const float* w = weights->data<float>();
        if (f.winograd) {
            f.packed_w = pack_winograd_weights(ctx, w, f.out_per_group, f.in_channels);
            if (!f.packed_w) return status::out_of_memory;
            ctx.emit(&winograd_kernel, f);
            bound = true;
            return status::ok;
        }
        const std::int64_t depth = f.in_channels * f.src.kh * f.src.kw;
        if (f.direct) {
            float* packed = ctx.packed_buffer(static_cast<std::size_t>(kernels::packed_a_floats(f.out_per_group, depth)));
            if (!packed) return status::out_of_memory;
            ctx.kernels()->table->pack_conv_direct_weights(w, f.out_per_group, depth, packed);
            f.packed_w = packed;
            ctx.emit(&direct_kernel, f);
            bound = true;
            return status::ok;
        }
        if (f.transposed) {
            // W^T [depth, M]: W's rows are its columns
            const kernel_context& k = *ctx.kernels();
            float* packed = ctx.packed_buffer(static_cast<std::size_t>(k.table->packed_b_floats(depth, f.out_per_group)));
            if (!packed) return status::out_of_memory;
            k.table->pack_gemm_b(kernels::strided_matrix{w, 1, depth}, depth, f.out_per_group, packed);
            f.packed_w = packed;
            ctx.emit(&fast_kernel, f);
            bound = true;
            return status::ok;
        }
        float* packed = ctx.packed_buffer(static_cast<std::size_t>(kernels::packed_a_floats(f.out_per_group, depth) * f.group));
        if (!packed) return status::out_of_memory;
        for (std::int64_t grp = 0; grp < f.group; ++grp)
            ctx.kernels()->table->pack_gemm_a(kernels::strided_matrix{w + grp * f.out_per_group * depth, depth, 1}, f.out_per_group, depth,
                                              packed + grp * kernels::packed_a_floats(f.out_per_group, depth));
        f.packed_w = packed;
        ctx.emit(&fast_kernel, f);
        bound = true;
        return status::ok;
    }

    static status bind(const attributes& a, bind_context& ctx) {
        fast_epilogue post;
        post.has_bias = ctx.has_input(2);
        post.bias_per_row = true;
        if (post.has_bias) post.bias = ctx.input(2);
        args g;
        if (status s = plan(a, ctx, g); s != status::ok) return s;
        bool bound = false;
        if (status s = bind_fast(g, ctx, post, bound); s != status::ok || bound) return s;
        g.x = ctx.input(0);
        g.w = ctx.input(1);
        g.has_b = ctx.has_input(2);
        if (g.has_b) g.b = ctx.input(2);
        g.y = ctx.output(0);
        ctx.emit(&kernel, g);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
