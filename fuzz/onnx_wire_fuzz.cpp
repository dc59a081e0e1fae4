// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the protobuf wire reader and ONNX message parser alone (onnx/wire.hpp,
// onnx/model.hpp), without import or compile: the fastest target, for the parser's corners.
// Any bytes must give true or false with a message, never a crash or a sanitizer report.
#include <cstddef>
#include <cstdint>

#include <ember/onnx/model.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    ember::onnx::wire_state state;
    state.max_nodes = 4096;  // the fuzzer's memory budget, not a model's
    ember::onnx::model_proto model;
    const bool parsed = ember::onnx::parse_model(data, size, model, state);
    if (!parsed && state.error.empty()) __builtin_trap();  // a failure must say why
    return 0;
}
