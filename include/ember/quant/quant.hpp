// SPDX-License-Identifier: Apache-2.0
// INT8 post-training quantization (namespace ember::quant), opt-in: ember.hpp does not include it.
//
//   quant/calibrate.hpp  run samples through the FP32 graph; activation ranges by minmax,
//                        percentile or entropy (KL, as TensorRT)
//   quant/qdq.hpp        the QDQ rewrite: QuantizeLinear/DequantizeLinear around the inputs of
//                        Conv, MatMul and Gemm (uint8 activations, int8 weights, int32 biases)
//   quant/sensitivity.hpp  choose_keep_fp32: the nodes to leave in FP32 for an error target
//   quant/evaluate.hpp   top1_accuracy: a classifier's accuracy on labelled samples (FP32 or QDQ)
//
//   auto ranges = ember::quant::calibrate(g, samples, {/*method*/ ember::quant::range_method::entropy});
//   auto q = ember::quant::quantize_qdq(g, *ranges, {/*per_channel*/ true});
//   ember::onnx::save_file("model.int8.onnx", *q);   // <ember/onnx.hpp>
#pragma once

#include "ember/quant/calibrate.hpp"
#include "ember/quant/evaluate.hpp"
#include "ember/quant/qdq.hpp"
#include "ember/quant/sensitivity.hpp"
