// SPDX-License-Identifier: Apache-2.0
// The built-in ops: one include and one line each, kept alphabetical. The compiler's op lookup,
// the name table and the test sweeps walk this list; nothing else is kept in sync by hand.
#pragma once

#include "ember/ops/activation.hpp"
#include "ember/ops/add.hpp"
#include "ember/ops/arg_max.hpp"
#include "ember/ops/average_pool.hpp"
#include "ember/ops/batch_normalization.hpp"
#include "ember/ops/bit_shift.hpp"
#include "ember/ops/cast.hpp"
#include "ember/ops/clip.hpp"
#include "ember/ops/comparison.hpp"
#include "ember/ops/compress.hpp"
#include "ember/ops/concat.hpp"
#include "ember/ops/constant.hpp"
#include "ember/ops/constant_of_shape.hpp"
#include "ember/ops/conv.hpp"
#include "ember/ops/conv_integer.hpp"
#include "ember/ops/conv_transpose.hpp"
#include "ember/ops/cum_sum.hpp"
#include "ember/ops/depth_to_space.hpp"
#include "ember/ops/det.hpp"
#include "ember/ops/div.hpp"
#include "ember/ops/dropout.hpp"
#include "ember/ops/einsum.hpp"
#include "ember/ops/expand.hpp"
#include "ember/ops/eye_like.hpp"
#include "ember/ops/flatten.hpp"
#include "ember/ops/fused.hpp"
#include "ember/ops/gather.hpp"
#include "ember/ops/gather_elements.hpp"
#include "ember/ops/gather_nd.hpp"
#include "ember/ops/gemm.hpp"
#include "ember/ops/global_average_pool.hpp"
#include "ember/ops/global_max_pool.hpp"
#include "ember/ops/grid_sample.hpp"
#include "ember/ops/hardmax.hpp"
#include "ember/ops/identity.hpp"
#include "ember/ops/instance_normalization.hpp"
#include "ember/ops/is_nan_inf.hpp"
#include "ember/ops/layer_normalization.hpp"
#include "ember/ops/log_softmax.hpp"
#include "ember/ops/logical.hpp"
#include "ember/ops/loss.hpp"
#include "ember/ops/lp_normalization.hpp"
#include "ember/ops/lp_pool.hpp"
#include "ember/ops/lrn.hpp"
#include "ember/ops/matmul.hpp"
#include "ember/ops/matmul_integer.hpp"
#include "ember/ops/max_pool.hpp"
#include "ember/ops/max_unpool.hpp"
#include "ember/ops/mean_variance_normalization.hpp"
#include "ember/ops/mod.hpp"
#include "ember/ops/mul.hpp"
#include "ember/ops/non_max_suppression.hpp"
#include "ember/ops/non_zero.hpp"
#include "ember/ops/one_hot.hpp"
#include "ember/ops/pad.hpp"
#include "ember/ops/pow.hpp"
#include "ember/ops/prelu.hpp"
#include "ember/ops/quantize_linear.hpp"
#include "ember/ops/range.hpp"
#include "ember/ops/reduce.hpp"
#include "ember/ops/recurrent.hpp"
#include "ember/ops/registry.hpp"
#include "ember/ops/relu.hpp"
#include "ember/ops/reshape.hpp"
#include "ember/ops/resize.hpp"
#include "ember/ops/reverse_sequence.hpp"
#include "ember/ops/roi_align.hpp"
#include "ember/ops/scatter_elements.hpp"
#include "ember/ops/scatter_nd.hpp"
#include "ember/ops/shape.hpp"
#include "ember/ops/sigmoid.hpp"
#include "ember/ops/signal.hpp"
#include "ember/ops/slice.hpp"
#include "ember/ops/softmax.hpp"
#include "ember/ops/split.hpp"
#include "ember/ops/squeeze.hpp"
#include "ember/ops/sub.hpp"
#include "ember/ops/tanh.hpp"
#include "ember/ops/top_k.hpp"
#include "ember/ops/transpose.hpp"
#include "ember/ops/trig.hpp"
#include "ember/ops/trilu.hpp"
#include "ember/ops/unary_math.hpp"
#include "ember/ops/unique.hpp"
#include "ember/ops/variadic.hpp"
#include "ember/ops/where.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

using builtin = type_list<
    abs,
    acos,
    acosh,
    add,
    arg_max,
    arg_min,
    asin,
    asinh,
    atan,
    atanh,
    average_pool,
    batch_normalization,
    bit_shift,
    blackman_window,
    cast,
    cast_like,
    ceil,
    celu,
    clip,
    compress,
    concat,
    constant,
    constant_of_shape,
    conv,
    conv_integer,
    conv_transpose,
    cos,
    cosh,
    cum_sum,
    depth_to_space,
    dequantize_linear,
    det,
    dft,
    div,
    dropout,
    dynamic_quantize_linear,
    einsum,
    elu,
    equal,
    erf,
    exp,
    expand,
    eye_like,
    flatten,
    floor,
    fused_conv,    // domain "ember": made by epilogue fusion (compile/passes/fuse_epilogue.hpp)
    fused_gemm,
    fused_matmul,
    fused_qlinear_conv,  // domain "ember": made by QDQ folding (compile/passes/fold_qdq.hpp)
    fused_qconv,         // domain "ember": made by QDQ folding, extended by epilogue fusion
    gather,
    gather_elements,
    gather_nd,
    gemm,
    global_average_pool,
    global_lp_pool,
    global_max_pool,
    greater,
    greater_or_equal,
    grid_sample,
    gru,
    hamming_window,
    hann_window,
    hard_sigmoid,
    hard_swish,
    hardmax,
    identity,
    instance_normalization,
    is_inf,
    is_nan,
    layer_normalization,
    leaky_relu,
    less,
    less_or_equal,
    log,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lp_normalization,
    lp_pool,
    lrn,
    lstm,
    matmul,
    matmul_integer,
    max,
    max_pool,
    max_unpool,
    mean,
    mean_variance_normalization,
    mel_weight_matrix,
    min,
    mod,
    mul,
    neg,
    negative_log_likelihood_loss,
    non_max_suppression,
    non_zero,
    one_hot,
    pad,
    pow,
    prelu,
    qlinear_conv,
    qlinear_matmul,
    quantize_linear,
    range,
    reciprocal,
    reduce_l1,
    reduce_l2,
    reduce_log_sum,
    reduce_log_sum_exp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    reduce_sum_square,
    relu,
    reshape,
    resize,
    reverse_sequence,
    rnn,
    roi_align,
    round,
    scatter,
    scatter_elements,
    scatter_nd,
    selu,
    shape_op,
    shrink,
    sigmoid,
    sign,
    sin,
    sinh,
    size_op,
    slice,
    softmax,
    softmax_cross_entropy_loss,
    softplus,
    softsign,
    space_to_depth,
    split,
    sqrt,
    squeeze,
    stft,
    sub,
    sum,
    tan,
    tanh,
    thresholded_relu,
    tile,
    top_k,
    transpose,
    trilu,
    unique,
    unsqueeze,
    upsample,
    where
>;

/// The built-in op for an ONNX name and domain, or null. Inline unless EMBER_OP_TABLE_IN_ONE_TU
/// (config.hpp) moves it into one translation unit.
EMBER_DETAIL_OP_TABLE_LINKAGE const op_entry* find_builtin(std::string_view name, std::string_view domain) noexcept
#if EMBER_DETAIL_OP_TABLE_DECLARE_ONLY
    ;
#else
{
    return find_in_table<op_table_of<builtin>::type>(name, domain);
}
#endif

} // namespace ops
EMBER_NAMESPACE_END
