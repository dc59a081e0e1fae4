// SPDX-License-Identifier: Apache-2.0
// ember: run trained neural networks inside other programs. The umbrella header: graph, compile
// and session on the CPU. The ONNX importer is <ember/onnx.hpp>; CUDA is <ember/cuda/cuda.hpp>.
//
// The three phases:
//   graph    plain data: from ember::onnx::load_file() or ember::graph_builder   graph/
//   plan     ember::compile(graph, options): shapes, folding, arena, kernels    compile/, ops/
//   session  ember::session(plan, arena): bind inputs/outputs, run() per frame   runtime/
//
// Folders: core/ (dtype, shape, span, tensor, allocator), graph/ (the IR, builder, validate),
// ops/ (one header per operator: attributes, shape inference, reference kernel; op_list.hpp),
// compile/ (passes, memory planning), runtime/ (plan, session, executor, thread_pool, profile),
// detail/ (internals, no stability promise).
#pragma once

#include "ember/config.hpp"
#include "ember/version.hpp"
#include "ember/status.hpp"
#include "ember/core/allocator.hpp"
#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/span.hpp"
#include "ember/core/tensor.hpp"
#include "ember/graph/graph.hpp"
#include "ember/graph/graph_builder.hpp"
#include "ember/graph/validate.hpp"
#include "ember/compile/compile.hpp"
#include "ember/runtime/executor.hpp"
#include "ember/runtime/plan.hpp"
#include "ember/runtime/profile.hpp"
#include "ember/runtime/session.hpp"
#include "ember/runtime/thread_pool.hpp"
