// SPDX-License-Identifier: Apache-2.0
// The built-in ops: one include and one line each, kept alphabetical. The compiler's op lookup,
// the name table and the test sweeps walk this list; nothing else is kept in sync by hand.
#pragma once

#include "ember/ops/add.hpp"
#include "ember/ops/average_pool.hpp"
#include "ember/ops/batch_normalization.hpp"
#include "ember/ops/concat.hpp"
#include "ember/ops/constant.hpp"
#include "ember/ops/conv.hpp"
#include "ember/ops/div.hpp"
#include "ember/ops/flatten.hpp"
#include "ember/ops/gemm.hpp"
#include "ember/ops/global_average_pool.hpp"
#include "ember/ops/identity.hpp"
#include "ember/ops/matmul.hpp"
#include "ember/ops/max_pool.hpp"
#include "ember/ops/mul.hpp"
#include "ember/ops/registry.hpp"
#include "ember/ops/relu.hpp"
#include "ember/ops/reshape.hpp"
#include "ember/ops/sigmoid.hpp"
#include "ember/ops/softmax.hpp"
#include "ember/ops/sub.hpp"
#include "ember/ops/tanh.hpp"
#include "ember/ops/transpose.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

using builtin = type_list<
    add,
    average_pool,
    batch_normalization,
    concat,
    constant,
    conv,
    div,
    flatten,
    gemm,
    global_average_pool,
    identity,
    matmul,
    max_pool,
    mul,
    relu,
    reshape,
    sigmoid,
    softmax,
    sub,
    tanh,
    transpose
>;

/// The built-in op for an ONNX name and domain, or null.
inline const op_entry* find_builtin(std::string_view name, std::string_view domain) noexcept {
    using table = op_table_of<builtin>::type;
    if (domain == "ai.onnx") domain = "";
    for (std::size_t i = 0; i < table::size; ++i)
        if (table::entries[i].onnx_name == name && table::entries[i].domain == domain) return &table::entries[i];
    return nullptr;
}

} // namespace ops
EMBER_NAMESPACE_END
