// SPDX-License-Identifier: Apache-2.0
// ember's CUDA extension: run a compiled graph on an NVIDIA GPU. Opt-in: include this header from
// a .cu file (nvcc) and link CUDA::cudart, CUDA::cublas and cuDNN; ember.hpp never includes it.
//
//   device.cuh   call_result (which library failed, named), RAII stream / event / device_buffer
//   kernels.cuh  ember's own kernels: element-wise, epilogues, strided copies, pooling, softmax,
//                reductions, LayerNorm
//   lower.cuh    cuda::lower(): the graph mapped to CUDA steps over the CPU's memory plan (host only)
//   plan.cuh     cuda::compile() -> cuda::plan (weights on the device, cuDNN descriptors) and
//                cuda::session (arena, handles, run / capture / replay on the caller's stream)
//
// GEMMs run through cuBLAS (cublasGemmStridedBatchedEx), convolutions through cuDNN, each with
// ember's epilogue kernel for bias, residual and activation; options::math picks FP32, TF32 or
// FP16 tensor cores for them.
#pragma once

#include "ember/ember.hpp"
#include "ember/cuda/device.cuh"
#include "ember/cuda/kernels.cuh"
#include "ember/cuda/lower.cuh"
#include "ember/cuda/plan.cuh"
