// SPDX-License-Identifier: Apache-2.0
// ember::post: what runs after session::run() to turn output tensors into answers. Opt-in,
// like <ember/onnx.hpp>: ember.hpp does not include it.
//
//   #include <ember/post.hpp>
//   ember::post::softmax(logits, probs);                         // classification
//   ember::post::top_k(probs, best);
//   ember::result<std::size_t> n = ember::post::decode_yolov8(output, found);   // detection
//   ember::result<std::size_t> kept = ember::post::nms(ember::span(found, *n));
//
// @dir post/ Post-processing over plain floats and caller-owned spans, using only ember's core
// headers: classify.hpp (softmax, top_k, labels), boxes.hpp (box, iou, detection,
// unletterbox), decode.hpp (YOLOv8/YOLO11, YOLOv5 and anchor+delta heads), nms.hpp. The
// per-frame calls allocate nothing. Drawing boxes and text on pictures is ember/image/draw.hpp;
// tasks that need a model-specific graph (segmentation masks, pose) do not belong here.
#pragma once

#include "ember/post/boxes.hpp"
#include "ember/post/classify.hpp"
#include "ember/post/decode.hpp"
#include "ember/post/nms.hpp"
