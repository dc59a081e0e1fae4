// SPDX-License-Identifier: Apache-2.0
// The ONNX TensorProto.DataType -> ember dtype mapping, shared by the importer (onnx/import.hpp)
// and the ops whose attributes name a dtype (Cast's `to`, EyeLike's `dtype`, ...).
#pragma once

#include <cstdint>

#include "ember/config.hpp"
#include "ember/core/dtype.hpp"

EMBER_NAMESPACE_BEGIN
namespace detail {

/// The ember dtype of an ONNX TensorProto.DataType number, dtype::undefined for types ember
/// lacks (string, complex, float8, 4-bit).
[[nodiscard]] constexpr dtype dtype_of_onnx_type(std::int64_t onnx_type) noexcept {
    switch (onnx_type) {
        case 1: return dtype::float32;
        case 2: return dtype::uint8;
        case 3: return dtype::int8;
        case 4: return dtype::uint16;
        case 5: return dtype::int16;
        case 6: return dtype::int32;
        case 7: return dtype::int64;
        case 9: return dtype::boolean;
        case 10: return dtype::float16;
        case 11: return dtype::float64;
        case 12: return dtype::uint32;
        case 13: return dtype::uint64;
        case 16: return dtype::bfloat16;
        default: return dtype::undefined;
    }
}

} // namespace detail
EMBER_NAMESPACE_END
