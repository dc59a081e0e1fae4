// SPDX-License-Identifier: Apache-2.0
// op_entry: the handful of function pointers compile() needs from an op, generated from the op
// struct (no virtual functions, no static registrars); op_registry: the user's own ops, passed in
// compile_options::custom_ops.
#pragma once

#include <cstddef>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN

template <class... Ts>
struct type_list {};

struct op_entry {
    std::string_view onnx_name;
    std::string_view domain;  ///< "" for the standard ai.onnx ops
    op_flags flags = op_flags::none;
    status (*parse)(const node&, detail::erased& attrs, diagnostics&) = nullptr;
    status (*infer)(const void* attrs, infer_context&) = nullptr;
    std::size_t (*workspace_bytes)(const void* attrs, const infer_context&) = nullptr;
    status (*bind)(const void* attrs, bind_context&) = nullptr;
};

namespace detail {

template <class Op, class = void>
struct has_workspace : std::false_type {};
template <class Op>
struct has_workspace<Op, std::void_t<decltype(Op::workspace_bytes(std::declval<const typename Op::attributes&>(),
                                                                   std::declval<const infer_context&>()))>> : std::true_type {};
template <class Op, class = void>
struct op_domain {
    static constexpr std::string_view value = "";
};
template <class Op>
struct op_domain<Op, std::void_t<decltype(Op::onnx_domain)>> {
    static constexpr std::string_view value = Op::onnx_domain;
};

template <class Op>
struct op_thunks {
    using attrs_t = typename Op::attributes;
    static status parse(const node& n, erased& out, diagnostics& diag) {
        attrs_t a{};
        if (status s = bind_attributes<Op>(n, a, diag); s != status::ok) return s;
        out = erased::make<attrs_t>(std::move(a));
        return status::ok;
    }
    static status infer(const void* a, infer_context& ctx) { return Op::infer(*static_cast<const attrs_t*>(a), ctx); }
    static std::size_t workspace(const void* a, const infer_context& ctx) {
        if constexpr (has_workspace<Op>::value)
            return Op::workspace_bytes(*static_cast<const attrs_t*>(a), ctx);
        else
            return 0;
    }
    static status bind(const void* a, bind_context& ctx) { return Op::bind(*static_cast<const attrs_t*>(a), ctx); }
};

} // namespace detail

/// The entry of an op struct (see op_support.hpp for what an op provides).
template <class Op>
constexpr op_entry make_op_entry() noexcept {
    return op_entry{Op::onnx_name, detail::op_domain<Op>::value, Op::flags, &detail::op_thunks<Op>::parse,
                    &detail::op_thunks<Op>::infer, &detail::op_thunks<Op>::workspace, &detail::op_thunks<Op>::bind};
}

template <class... Ops>
struct op_table {
    static constexpr op_entry entries[sizeof...(Ops) == 0 ? 1 : sizeof...(Ops)] = {make_op_entry<Ops>()...};
    static constexpr std::size_t size = sizeof...(Ops);
};
/// The entry of Table (an op_table) with this ONNX name and domain ("ai.onnx" is ""), or null.
template <class Table>
const op_entry* find_in_table(std::string_view name, std::string_view domain) noexcept {
    if (domain == "ai.onnx") domain = "";
    for (std::size_t i = 0; i < Table::size; ++i)
        if (Table::entries[i].onnx_name == name && Table::entries[i].domain == domain) return &Table::entries[i];
    return nullptr;
}

template <class List>
struct op_table_of;
template <class... Ops>
struct op_table_of<type_list<Ops...>> {
    using type = op_table<Ops...>;
};

/// The user's own ops (or replacements of built-in ones: they are looked up first).
class op_registry {
public:
    template <class Op>
    void add() {
        entries_.push_back(make_op_entry<Op>());
    }
    void add(const op_entry& entry) { entries_.push_back(entry); }

    const op_entry* find(std::string_view name, std::string_view domain) const noexcept {
        for (const op_entry& e : entries_)
            if (e.onnx_name == name && e.domain == domain) return &e;
        return nullptr;
    }
    const std::vector<op_entry>& entries() const noexcept { return entries_; }

private:
    std::vector<op_entry> entries_;
};

EMBER_NAMESPACE_END
