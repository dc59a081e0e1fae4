// SPDX-License-Identifier: Apache-2.0
// What every op header uses: op_flags, attribute binding (attr), the infer and bind contexts
// that compile() hands to an op, and shared shape helpers (broadcasting, axes).
//
// An op is a struct with:
//     static constexpr std::string_view onnx_name;        // "Relu"
//     static constexpr op_flags flags;                    // in_place, elementwise, ...
//     struct attributes { ... };                          // ONNX defaults as initialisers
//     static constexpr auto onnx_attributes = std::make_tuple(attr("alpha", &attributes::alpha), ...);
//     static status infer(const attributes&, infer_context&);   // output dtypes and shapes
//     static status bind(const attributes&, bind_context&);     // emits the step(s) that run it
// and optionally
//     static std::size_t workspace_bytes(const attributes&, const infer_context&);  // scratch
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/compile/diagnostics.hpp"
#include "ember/config.hpp"
#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/erased.hpp"
#include "ember/graph/graph.hpp"
#include "ember/runtime/step.hpp"
#include "ember/simd/kernel_table.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN

enum class op_flags : std::uint32_t {
    none = 0,
    elementwise = 1u << 0,  ///< output i depends on input element i only
    in_place = 1u << 1,     ///< output 0 may share input 0's memory when shapes and sizes match
    epilogue = 1u << 2,     ///< can be fused into a GEMM/conv epilogue (issue 4)
    no_fold = 1u << 3,      ///< never evaluated at compile time even with constant inputs
    concatenates = 1u << 4, ///< output 0 is the inputs end to end along attribute "axis" (Concat): where every
                            ///< dimension before the axis is 1, the planner may compute the inputs in place
                            ///< and run no step
};
constexpr op_flags operator|(op_flags a, op_flags b) noexcept {
    return static_cast<op_flags>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr bool has_flag(op_flags set, op_flags f) noexcept {
    return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(f)) != 0;
}

// ---------------------------------------------------------------------------------------------
// Attribute binding: the op lists (name, member) pairs, defaults are the members' initialisers.

template <class C, class M>
struct attr_binding {
    std::string_view name;
    M C::*member;
    bool required = false;
};

/// An optional ONNX attribute bound to a member; absent means the member keeps its default.
template <class C, class M>
constexpr attr_binding<C, M> attr(std::string_view name, M C::*member) noexcept {
    return {name, member, false};
}
/// A required ONNX attribute: absent is an error naming the node and the attribute.
template <class C, class M>
constexpr attr_binding<C, M> required_attr(std::string_view name, M C::*member) noexcept {
    return {name, member, true};
}

namespace detail {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class M>
status read_attribute(const attribute& a, M& out, diagnostics& diag) {
    auto wrong = [&](std::string_view expected) {
        return diag.fail(status::invalid_model, "attribute '{}' is {}, expected {}", a.name, to_string(a.kind), expected);
    };
    if constexpr (is_optional<M>::value) {
        typename M::value_type v{};
        if (status s = read_attribute(a, v, diag); s != status::ok) return s;
        out = std::move(v);
        return status::ok;
    } else if constexpr (std::is_same_v<M, float>) {
        if (a.kind == attribute_kind::floating) out = a.f;
        else if (a.kind == attribute_kind::integer) out = static_cast<float>(a.i);
        else return wrong("float");
    } else if constexpr (std::is_same_v<M, bool>) {
        if (a.kind != attribute_kind::integer) return wrong("int");
        out = a.i != 0;
    } else if constexpr (std::is_integral_v<M>) {
        if (a.kind != attribute_kind::integer) return wrong("int");
        out = static_cast<M>(a.i);
    } else if constexpr (std::is_same_v<M, std::string>) {
        if (a.kind != attribute_kind::string) return wrong("string");
        out = a.s;
    } else if constexpr (std::is_same_v<M, std::vector<std::int64_t>>) {
        if (a.kind == attribute_kind::ints) out = a.ints;
        else if (a.kind == attribute_kind::integer) out = {a.i};
        else return wrong("ints");
    } else if constexpr (std::is_same_v<M, std::vector<float>>) {
        if (a.kind == attribute_kind::floats) out = a.floats;
        else if (a.kind == attribute_kind::floating) out = {a.f};
        else return wrong("floats");
    } else if constexpr (std::is_same_v<M, std::vector<std::string>>) {
        if (a.kind != attribute_kind::strings) return wrong("strings");
        out = a.strings;
    } else if constexpr (std::is_same_v<M, tensor>) {
        if (a.kind != attribute_kind::tensor) return wrong("tensor");
        out = a.t;
    } else if constexpr (std::is_same_v<M, graph>) {
        if (a.kind != attribute_kind::graph || a.graphs.size() != 1) return wrong("graph");
        out = a.graphs[0];
    } else {
        static_assert(sizeof(M) == 0, "unsupported attribute member type");
    }
    return status::ok;
}

} // namespace detail

namespace detail {
template <class Attrs, class Binding>
status bind_one_attribute(const node& n, Attrs& attrs, const Binding& b, diagnostics& diag) {
    if (const attribute* a = n.find_attribute(b.name)) return read_attribute(*a, attrs.*(b.member), diag);
    if (b.required) return diag.fail(status::invalid_model, "required attribute '{}' is missing", b.name);
    return status::ok;
}
template <class Attrs, class Tuple, std::size_t... I>
status bind_all_attributes(const node& n, Attrs& attrs, const Tuple& bindings, diagnostics& diag, std::index_sequence<I...>) {
    status s = status::ok;
    ((s = s == status::ok ? bind_one_attribute(n, attrs, std::get<I>(bindings), diag) : s), ...);
    return s;
}
template <class Tuple, std::size_t... I>
bool knows_attribute([[maybe_unused]] const Tuple& bindings, [[maybe_unused]] std::string_view name, std::index_sequence<I...>) noexcept {
    return ((std::get<I>(bindings).name == name) || ... || false);
}
} // namespace detail

/// Fills attrs from the node's attributes as Op::onnx_attributes describes. Fails on a missing
/// required attribute, a wrong kind, or an attribute the op does not know (ember would otherwise
/// silently compute something else than the model asks for).
template <class Op>
status bind_attributes(const node& n, typename Op::attributes& attrs, diagnostics& diag) {
    using bindings_t = std::remove_cv_t<decltype(Op::onnx_attributes)>;
    constexpr auto indices = std::make_index_sequence<std::tuple_size_v<bindings_t>>{};
    if (status s = detail::bind_all_attributes(n, attrs, Op::onnx_attributes, diag, indices); s != status::ok) return s;
    for (const attribute& a : n.attributes)
        if (!detail::knows_attribute(Op::onnx_attributes, a.name, indices))
            return diag.fail(status::unsupported_op, "attribute '{}' is not supported", a.name);
    return status::ok;
}

// ---------------------------------------------------------------------------------------------
// What compile() knows about each value while it works through the graph.

namespace detail {
struct value_state {
    bool known = false;           ///< dtype and shape inferred
    dtype type = dtype::undefined;
    shape dims;
    const tensor* constant = nullptr;  ///< value known at compile time (initializer or folded)
};
} // namespace detail

/// What compile() gives the ops for their fast paths: the kernel table it chose for this CPU (null:
/// reference kernels only, as when a node is evaluated at compile time), how many work slots a
/// kernel may split into (one per thread it may run on), and where packed weights go.
struct kernel_context {
    const simd::kernel_table* table = nullptr;
    std::size_t slots = 1;
    bool winograd = true;  ///< compile_options::winograd
    bool transposed_gemm = true;  ///< compile_options::transposed_gemm
    bool direct_conv = true;  ///< compile_options::direct_conv
    std::vector<aligned_buffer>* packed = nullptr;  ///< owned by the plan
    allocator alloc = default_allocator();
};

/// Elements below which an element-wise fast kernel is not split over threads (waking a worker
/// costs more than it saves).
inline constexpr std::int64_t elementwise_grain = 16384;

/// How many pieces to split an element-wise run of `count` elements into on `slots` workers.
inline std::int64_t elementwise_pieces(std::int64_t count, std::size_t slots) noexcept {
    return std::max<std::int64_t>(1, std::min<std::int64_t>(static_cast<std::int64_t>(slots), count / elementwise_grain));
}

/// Pieces for `rows` rows of `size` elements: as elementwise_pieces, at most one per row, at least 1.
inline std::int64_t row_pieces(std::int64_t rows, std::int64_t size, std::size_t slots) noexcept {
    return std::max<std::int64_t>(1, std::min(rows, elementwise_pieces(rows * size, slots)));
}

/// Splits [0, count) into `pieces` near-equal parts and calls body(begin, end) for each, over ex.
template <class Body>
void for_each_piece(const executor* ex, std::int64_t count, std::int64_t pieces, Body&& body) noexcept {
    parallel_for(ex, static_cast<std::size_t>(pieces), [&](std::size_t first, std::size_t stop) noexcept {
        body(count * static_cast<std::int64_t>(first) / pieces, count * static_cast<std::int64_t>(stop) / pieces);
    });
}

/// Read-only view of one node's inputs and outputs during shape inference; infer() sets the
/// outputs. Messages passed to fail() are prefixed with the node ("node 3 'fc1' (Gemm): ").
class infer_context {
public:
    infer_context(const graph& g, std::size_t node_index, std::vector<detail::value_state>& values, diagnostics& diag,
                  std::deque<tensor>* folded) noexcept
        : graph_(g), node_(g.nodes[node_index]), node_index_(node_index), values_(values), diag_(diag), folded_(folded) {}

    const ember::node& node() const noexcept { return node_; }
    std::size_t node_index() const noexcept { return node_index_; }
    std::int64_t opset() const noexcept { return graph_.opset_version(node_.domain); }

    /// Number of inputs the node lists, absent optional ones included.
    std::size_t input_count() const noexcept { return node_.inputs.size(); }
    bool has_input(std::size_t i) const noexcept { return i < node_.inputs.size() && node_.inputs[i] != no_value; }
    dtype input_type(std::size_t i) const noexcept { return in(i).type; }
    const shape& input_shape(std::size_t i) const noexcept { return in(i).dims; }
    /// The input's value when it is known at compile time (a constant or a folded value).
    const tensor* input_constant(std::size_t i) const noexcept { return has_input(i) ? in(i).constant : nullptr; }
    /// Input i's value, which the op needs at compile time (a shape, axes, a count). When it is not
    /// known, returns null after failing with "input i (what) must be known at compile time ...";
    /// tools recognise that wording and may retry with the input fixed (compile_options::input_values).
    const tensor* require_constant(std::size_t i, std::string_view what) {
        if (const tensor* t = input_constant(i)) return t;
        fail(status::unsupported_op,
             "input {} ({}) must be known at compile time: a constant, computed from constants, or fixed with "
             "compile_options::input_values",
             i, what);
        return nullptr;
    }
    /// An int32 or int64 compile-time tensor's values as int64 (false for other dtypes).
    static bool ints_of(const tensor& t, std::vector<std::int64_t>& out) {
        out.clear();
        if (t.type() == dtype::int64) out.assign(t.data<std::int64_t>(), t.data<std::int64_t>() + t.size());
        else if (t.type() == dtype::int32) out.assign(t.data<std::int32_t>(), t.data<std::int32_t>() + t.size());
        else return false;
        return true;
    }

    std::size_t output_count() const noexcept { return node_.outputs.size(); }
    bool has_output(std::size_t i) const noexcept { return i < node_.outputs.size() && node_.outputs[i] != no_value; }
    dtype output_type(std::size_t i) const noexcept { return out(i).type; }
    const shape& output_shape(std::size_t i) const noexcept { return out(i).dims; }

    /// Declares output i (ignored for an unused optional output).
    void set_output(std::size_t i, dtype type, const shape& dims) noexcept {
        if (!has_output(i)) return;
        detail::value_state& v = values_[node_.outputs[i]];
        v.known = true;
        v.type = type;
        v.dims = dims;
    }
    /// Declares output i with a value known now (Shape, Size, ...): compile() then emits no step
    /// for this node when every output is known this way.
    void set_output_constant(std::size_t i, tensor value) {
        if (!has_output(i) || !folded_) return;
        set_output(i, value.type(), value.dims());
        folded_->push_back(std::move(value));
        values_[node_.outputs[i]].constant = &folded_->back();
    }

    /// Checks the input count is in [min_inputs, max_inputs] and that inputs [0, min) are present.
    status expect_inputs(std::size_t min_inputs, std::size_t max_inputs) {
        if (input_count() < min_inputs || input_count() > max_inputs)
            return min_inputs == max_inputs ? fail(status::invalid_model, "expected {} inputs, got {}", min_inputs, input_count())
                                            : fail(status::invalid_model, "expected {} to {} inputs, got {}", min_inputs, max_inputs, input_count());
        for (std::size_t i = 0; i < min_inputs; ++i)
            if (!has_input(i)) return fail(status::invalid_model, "input {} is required", i);
        return status::ok;
    }
    /// Checks input i has one of the given dtypes.
    status expect_type(std::size_t i, std::initializer_list<dtype> allowed) {
        for (dtype t : allowed)
            if (input_type(i) == t) return status::ok;
        std::string list;
        for (dtype t : allowed) {
            if (!list.empty()) list += ", ";
            list += to_string(t);
        }
        return fail(status::unsupported_op, "input {} has dtype {}, supported: {}", i, input_type(i), list);
    }

    template <class... Args>
    status fail(status code, std::string_view fmt, const Args&... args) {
        return diag_.fail(code, fmt, args...);
    }
    diagnostics& diag() noexcept { return diag_; }

    /// The fast kernels this compile uses; null when the op must use its reference kernel.
    const kernel_context* kernels() const noexcept { return kernels_ && kernels_->table ? kernels_ : nullptr; }
    void set_kernels(const kernel_context* k) noexcept { kernels_ = k; }

protected:
    const detail::value_state& in(std::size_t i) const noexcept {
        static const detail::value_state absent{};
        return has_input(i) ? values_[node_.inputs[i]] : absent;
    }
    const detail::value_state& out(std::size_t i) const noexcept {
        static const detail::value_state absent{};
        return has_output(i) ? values_[node_.outputs[i]] : absent;
    }

    const graph& graph_;
    const ember::node& node_;
    std::size_t node_index_;
    std::vector<detail::value_state>& values_;
    diagnostics& diag_;
    std::deque<tensor>* folded_;
    const kernel_context* kernels_ = nullptr;
};

/// What bind() sees: shapes and dtypes as in infer(), plus where each input and output lives, and
/// emit() to add the steps that run the node. Args must be copyable or movable; they are owned by
/// the plan and handed to the kernel as `const void*`.
class bind_context : public infer_context {
public:
    struct pending_step {
        kernel_fn fn;
        detail::erased args;
    };

    bind_context(const graph& g, std::size_t node_index, std::vector<detail::value_state>& values, diagnostics& diag,
                 const std::vector<operand>& inputs, const std::vector<operand>& outputs, operand workspace,
                 std::vector<pending_step>& out_steps) noexcept
        : infer_context(g, node_index, values, diag, nullptr),
          inputs_(inputs), outputs_(outputs), workspace_(workspace), steps_(out_steps) {}

    operand input(std::size_t i) const noexcept { return inputs_[i]; }
    operand output(std::size_t i) const noexcept { return outputs_[i]; }
    /// The scratch space workspace_bytes() asked for, live only during this node's steps.
    operand workspace() const noexcept { return workspace_; }

    /// A zeroed, aligned buffer of `floats` floats that the plan owns (packed weights); null after
    /// failing with out_of_memory.
    float* packed_buffer(std::size_t floats) {
        const kernel_context* k = kernels();
        if (!k || !k->packed) {
            fail(status::invalid_argument, "no packed-weight storage in this context");
            return nullptr;
        }
        aligned_buffer buffer;
        if (floats == 0) floats = 1;  // an empty operand still gets a valid pointer
        if (!buffer.allocate(floats * sizeof(float), k->alloc)) {
            fail(status::out_of_memory, "allocator returned null for {} bytes of packed weights", floats * sizeof(float));
            return nullptr;
        }
        k->packed->push_back(std::move(buffer));
        return reinterpret_cast<float*>(k->packed->back().data());
    }

    template <class Args>
    void emit(kernel_fn fn, Args args) {
        steps_.push_back(pending_step{fn, detail::erased::make<Args>(std::move(args))});
    }

private:
    const std::vector<operand>& inputs_;
    const std::vector<operand>& outputs_;
    operand workspace_;
    std::vector<pending_step>& steps_;
};

// ---------------------------------------------------------------------------------------------
// Shape helpers shared by the ops.

/// Output 0 = input 0's dtype and shape.
inline status infer_same_shape(infer_context& ctx) {
    if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
    ctx.set_output(0, ctx.input_type(0), ctx.input_shape(0));
    return status::ok;
}

/// Numpy broadcasting of two shapes: align right, each pair equal or one of them 1.
inline bool broadcast_shapes(const shape& a, const shape& b, shape& out) noexcept {
    const std::size_t rank = a.rank() > b.rank() ? a.rank() : b.rank();
    out = shape();
    out.resize(rank);
    for (std::size_t i = 0; i < rank; ++i) {
        const std::int64_t da = i + a.rank() >= rank ? a[i + a.rank() - rank] : 1;
        const std::int64_t db = i + b.rank() >= rank ? b[i + b.rank() - rank] : 1;
        if (da != db && da != 1 && db != 1) return false;
        out[i] = da == 1 ? db : da;
    }
    return true;
}

/// Maps a possibly negative axis into [0, rank); false when out of range.
inline bool normalize_axis(std::int64_t axis, std::size_t rank, std::size_t& out) noexcept {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r) return false;
    out = static_cast<std::size_t>(axis < 0 ? axis + r : axis);
    return true;
}

/// Row-major strides of a shape, in elements.
inline void contiguous_strides(const shape& s, std::int64_t* strides) noexcept {
    std::int64_t acc = 1;
    for (std::size_t i = s.rank(); i-- > 0;) {
        strides[i] = acc;
        acc *= s[i];
    }
}

EMBER_NAMESPACE_END
