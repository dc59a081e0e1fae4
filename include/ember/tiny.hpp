// SPDX-License-Identifier: Apache-2.0
// ember::tiny: networks whose sizes are template arguments, for the small policy, audio and
// control nets a game runs thousands of times a frame. Opt-in; ember.hpp does not include it.
//
//     using policy = ember::tiny::network<ember::tiny::dense<32, 64, ember::tiny::relu>,
//                                         ember::tiny::dense<64, 64, ember::tiny::relu>,
//                                         ember::tiny::dense<64, 8>>;
//     policy net;                                    // weights inline: ~27 KB, no heap
//     if (auto r = net.load(*graph); !r) ...         // from an ONNX graph, every shape checked
//     net.run(observation, actions);                 // noexcept, no allocation, no dispatch
//
// Layers (tiny/): dense<In, Out, Act> (Gemm, MatMul + Add), conv1d<Cin, Cout, Length, Kernel,
// Stride, Pad, Act> (Conv), gru<In, Hidden, LinearBeforeReset> (GRU, one step per call over a
// state the caller holds); activations identity, relu, tanh, sigmoid, leaky_relu. Kernels
// (tiny/kernels.hpp) use the widest SIMD the including TU's flags enable: build it with
// -march=native, or for the ISA you ship, and compile every TU that runs one network type with
// the same flags. Sizes as template arguments suit nets of a few thousand weights; larger
// models belong to compile() and session (docs/design.md says why both exist).
#pragma once

#include "ember/tiny/activation.hpp"
#include "ember/tiny/conv1d.hpp"
#include "ember/tiny/dense.hpp"
#include "ember/tiny/gru.hpp"
#include "ember/tiny/kernels.hpp"
#include "ember/tiny/network.hpp"
