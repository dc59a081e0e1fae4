// SPDX-License-Identifier: Apache-2.0
// The built-in ops: one include and one line each, kept alphabetical. The compiler's op lookup,
// the name table and the test sweeps walk this list; nothing else is kept in sync by hand.
#pragma once

#include "ember/ops/add.hpp"
#include "ember/ops/div.hpp"
#include "ember/ops/gemm.hpp"
#include "ember/ops/identity.hpp"
#include "ember/ops/mul.hpp"
#include "ember/ops/registry.hpp"
#include "ember/ops/relu.hpp"
#include "ember/ops/sigmoid.hpp"
#include "ember/ops/sub.hpp"
#include "ember/ops/tanh.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

using builtin = type_list<
    add,
    div,
    gemm,
    identity,
    mul,
    relu,
    sigmoid,
    sub,
    tanh
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
