// SPDX-License-Identifier: Apache-2.0
// The control-flow ops If, Loop and Scan, for a static plan that allocates nothing at run time.
// Each body is compiled once, at compile() time, to a nested plan of its own; the op's kernel runs
// that plan's steps over a part of the outer arena (the op's workspace: the nested region table,
// the body's arena and the op's own state buffers), reading the body's inputs from the outer
// values and writing the body's outputs straight into the op's outputs. Values a body captures
// from the enclosing graphs arrive as the node's implicit inputs (ops/subgraph.hpp); captured
// constants are constants in the body too (folded through, usable where a body op needs a
// compile-time value).
//
// If (opset 1+): a compile-time cond compiles only the chosen branch. A run-time cond compiles
//   both, and their outputs must have the same dtypes and shapes (the plan is static).
// Loop (opset 1+; 11, 13, 16 change nothing ember supports differently): the trip count M must be
//   known at compile time (a constant, or fixed with compile_options::input_values); a loop
//   without M (until cond turns false) is not supported. cond may be a run-time value; the body's
//   cond output stops the loop early. Loop-carried values keep their initial dtype and shape
//   (a body that changes them is refused). Scan outputs are stacked to [M, ...]: a loop with scan
//   outputs whose cond turns false before M iterations fails at run time (invalid_argument), as
//   its output shape would not be the planned one. When the body needs iteration_num at compile
//   time (a Slice by the iteration number, say) and M <= 1024, the body is compiled once per
//   iteration with iteration_num fixed (unrolled plans).
// Scan (opset 8; 9+; negative axes from 11): scan inputs are cut along scan_input_axes (opset 9+; opset 8: axis 1 after
//   the batch axis 0, and the batch rows are scanned one by one), in scan_input_directions
//   (opset 8: directions); scan outputs are stacked along scan_output_axes in
//   scan_output_directions. State values keep their dtype and shape. Scan-8's sequence_lens input
//   is not supported (every row scans the whole length).
// Not supported: sequence and optional types (If/Loop over sequences), body compile options other
// than the defaults (custom ops are not visible inside bodies).
//
// These ops call compile() for their bodies, so they are not in ops::builtin (op_list.hpp, which
// compile.hpp includes): compile.hpp finds them through detail::find_control_flow_op() and
// includes this header at its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ember/compile/compile.hpp"
#include "ember/compile/memory_plan.hpp"
#include "ember/ops/op_support.hpp"
#include "ember/ops/registry.hpp"
#include "ember/ops/subgraph.hpp"
#include "ember/runtime/plan.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {
namespace control_flow {

/// One formal input of a body: dtype, shape and, when fixed at compile time, its value.
struct formal {
    dtype type = dtype::undefined;
    shape dims;
    const tensor* value = nullptr;
};

/// A compiled body and where each of its plan inputs comes from.
struct body_plan {
    plan compiled;
    std::vector<std::int32_t> source;  ///< per plan input: formal index (>= 0), or -1 - implicit index
};

inline constexpr std::size_t slot_alignment = 64;

inline std::size_t table_bytes(std::size_t regions) noexcept { return align_up(regions * sizeof(std::byte*), slot_alignment); }

/// The node's implicit inputs: index of the first, and their names (ops/subgraph.hpp).
struct implicit_inputs {
    std::vector<std::string> names;
    std::size_t first = 0;
};
inline implicit_inputs implicit_of(const infer_context& ctx) {
    implicit_inputs im;
    im.names = detail::implicit_input_names(ctx.node());
    im.first = ctx.input_count() >= im.names.size() ? ctx.input_count() - im.names.size() : 0;
    return im;
}

/// Compiles `body` with the given formal inputs and the node's implicit inputs (those the body
/// uses). Returns the error (code ok on success) without reporting it.
inline error_info compile_body(const infer_context& ctx, const graph& body, std::string_view what, const std::vector<formal>& formals,
                               body_plan& out) {
    if (body.inputs.size() != formals.size())
        return error_info{status::invalid_model, -1, detail::format("{} has {} inputs, expected {}", what, body.inputs.size(), formals.size())};
    graph g = body;
    compile_options options;
    std::vector<std::string> formal_names;
    for (std::size_t j = 0; j < formals.size(); ++j) {
        value& v = g.values[g.inputs[j]];
        formal_names.push_back(v.name);
        v.type = formals[j].type;
        v.declared = partial_shape(formals[j].dims);
        if (formals[j].value) options.input_values.push_back(input_value{v.name, *formals[j].value});
    }
    const implicit_inputs im = implicit_of(ctx);
    std::vector<std::string> used;
    detail::free_names(body, used);
    for (const std::string& name : used) {
        std::size_t k = 0;
        while (k < im.names.size() && im.names[k] != name) ++k;
        if (k == im.names.size())
            return error_info{status::invalid_model, -1, detail::format("{} uses '{}', which the node does not capture", what, name)};
        const std::size_t i = im.first + k;
        value_id id = g.find_value(name);
        if (id == no_value) {  // used only by a body nested in this one
            value v;
            v.name = name;
            id = static_cast<value_id>(g.values.size());
            g.values.push_back(std::move(v));
        }
        value& v = g.values[id];
        v.kind = value_kind::input;
        v.type = ctx.input_type(i);
        v.declared = partial_shape(ctx.input_shape(i));
        g.inputs.push_back(id);
        if (const tensor* c = ctx.input_constant(i)) options.input_values.push_back(input_value{name, *c});
    }
    result<plan> p = compile(g, options);
    if (!p) return error_info{p.error().code, -1, detail::format("{}: {}", what, p.error().message)};
    out.compiled = std::move(*p);
    out.source.clear();
    for (std::size_t k = 0; k < out.compiled.input_count(); ++k) {
        const std::string& name = out.compiled.input(k).name;
        std::int32_t src = 0;
        bool found = false;
        for (std::size_t j = 0; j < formal_names.size() && !found; ++j)
            if (formal_names[j] == name) src = static_cast<std::int32_t>(j), found = true;
        for (std::size_t j = 0; j < im.names.size() && !found; ++j)
            if (im.names[j] == name) src = -1 - static_cast<std::int32_t>(j), found = true;
        if (!found) return error_info{status::invalid_model, -1, detail::format("{}: plan input '{}' has no source", what, name)};
        out.source.push_back(src);
    }
    return error_info{};
}

/// Runs a compiled body. The caller has pointed every io region of `table` (plan.region_count()
/// entries) at its buffer; arena holds plan.arena_bytes(). False when a kernel failed.
inline bool run_body(const plan& p, std::byte** table, std::byte* arena, const run_context& ctx) noexcept {
    table[arena_region] = arena;
    table[weights_region] = const_cast<std::byte*>(p.weights());
    const run_context inner{table, ctx.exec, ctx.error};
    for (const step& s : p.steps()) {
        s.fn(s.args, inner);
        if (ctx.error && ctx.error->load(std::memory_order_relaxed) != 0) return false;
    }
    return true;
}

/// Points the table's input regions at their sources: formal j -> formals[j], implicit j -> the
/// node's implicit input j.
inline void bind_body_inputs(const body_plan& b, std::byte** table, std::byte* const* formals, const operand* implicit,
                             const run_context& ctx) noexcept {
    for (std::size_t k = 0; k < b.source.size(); ++k) {
        const std::int32_t src = b.source[k];
        table[b.compiled.input(k).region] =
            src >= 0 ? formals[src] : ctx.at<std::byte>(implicit[static_cast<std::size_t>(-1 - src)]);
    }
}

inline std::size_t bytes_of(dtype t, const shape& s) noexcept { return static_cast<std::size_t>(s.elements()) * size_of(t); }

inline bool is_single_bool(dtype t, const shape& s) noexcept { return t == dtype::boolean && s.elements() == 1; }

} // namespace control_flow

// ---------------------------------------------------------------------------------------------

struct if_ {
    static constexpr std::string_view onnx_name = "If";
    static constexpr op_flags flags = op_flags::none;

    struct compiled_branches {
        control_flow::body_plan branch[2];  // then, else
        int fixed = -1;                     // 0 / 1: cond known at compile time, only that branch compiled
        std::size_t regions = 0, arena = 0;
    };
    struct attributes {
        graph then_branch;
        graph else_branch;
        mutable std::shared_ptr<const compiled_branches> compiled;  // set by infer()
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(required_attr("else_branch", &attributes::else_branch), required_attr("then_branch", &attributes::then_branch));

    struct args {
        std::shared_ptr<const compiled_branches> bodies;
        operand cond;
        std::vector<operand> implicit;
        std::vector<operand> outputs;
        std::vector<std::size_t> discard;  // per output: workspace offset when the output is unused, else npos
        operand ws;
        std::size_t arena_offset = 0;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        const control_flow::implicit_inputs im = control_flow::implicit_of(ctx);
        if (im.first != 1 || !ctx.has_input(0)) return ctx.fail(status::invalid_model, "expected 1 input (cond), got {}", im.first);
        if (!control_flow::is_single_bool(ctx.input_type(0), ctx.input_shape(0)))
            return ctx.fail(status::invalid_model, "input 0 (cond) is {} of shape {}, expected one bool", ctx.input_type(0), ctx.input_shape(0));
        auto c = std::make_shared<compiled_branches>();
        if (const tensor* cond = ctx.input_constant(0)) c->fixed = cond->bytes()[0] != std::byte{0} ? 0 : 1;
        const graph* branches[2] = {&a.then_branch, &a.else_branch};
        const char* names[2] = {"then_branch", "else_branch"};
        for (int k = 0; k < 2; ++k) {
            if (c->fixed >= 0 && c->fixed != k) continue;
            error_info e = control_flow::compile_body(ctx, *branches[k], names[k], {}, c->branch[k]);
            if (e.code != status::ok) return ctx.fail(e.code, "{}", e.message);
            c->regions = std::max(c->regions, c->branch[k].compiled.region_count());
            c->arena = std::max(c->arena, c->branch[k].compiled.arena_bytes());
        }
        const plan& first = c->branch[c->fixed == 1 ? 1 : 0].compiled;
        if (ctx.output_count() > first.output_count())
            return ctx.fail(status::invalid_model, "the node has {} outputs, its branches {}", ctx.output_count(), first.output_count());
        if (c->fixed < 0) {
            const plan& other = c->branch[1].compiled;
            if (other.output_count() != first.output_count())
                return ctx.fail(status::invalid_model, "then_branch has {} outputs, else_branch {}", first.output_count(), other.output_count());
            for (std::size_t k = 0; k < first.output_count(); ++k)
                if (first.output(k).type != other.output(k).type || first.output(k).dims != other.output(k).dims)
                    return ctx.fail(status::unsupported_op,
                                    "output {} is {} {} in then_branch but {} {} in else_branch; with a run-time cond ember needs both "
                                    "branches to give the same dtypes and shapes (a static plan)",
                                    k, first.output(k).type, first.output(k).dims, other.output(k).type, other.output(k).dims);
        }
        for (std::size_t k = 0; k < ctx.output_count(); ++k) ctx.set_output(k, first.output(k).type, first.output(k).dims);
        a.compiled = std::move(c);
        return status::ok;
    }

    // workspace: [region table | body arena | buffers for unused outputs]
    static std::size_t layout(const compiled_branches& c, const infer_context& ctx, std::vector<std::size_t>* discard, std::size_t* arena_offset) {
        std::size_t at = control_flow::table_bytes(c.regions);
        if (arena_offset) *arena_offset = at;
        at += align_up(c.arena, control_flow::slot_alignment);
        const plan& p = c.branch[c.fixed == 1 ? 1 : 0].compiled;
        for (std::size_t k = 0; k < p.output_count(); ++k) {
            const bool used = ctx.has_output(k);
            if (discard) discard->push_back(used ? static_cast<std::size_t>(-1) : at);
            if (!used) at += align_up(p.output(k).bytes, control_flow::slot_alignment);
        }
        return at;
    }
    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) {
        return a.compiled ? layout(*a.compiled, ctx, nullptr, nullptr) : 0;
    }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        const int k = g.bodies->fixed >= 0 ? g.bodies->fixed : (*ctx.at<const std::uint8_t>(g.cond) != 0 ? 0 : 1);
        const control_flow::body_plan& b = g.bodies->branch[k];
        std::byte* ws = ctx.at<std::byte>(g.ws);
        auto** table = reinterpret_cast<std::byte**>(ws);
        control_flow::bind_body_inputs(b, table, nullptr, g.implicit.data(), ctx);
        for (std::size_t j = 0; j < b.compiled.output_count(); ++j)
            table[b.compiled.output(j).region] = g.discard[j] == static_cast<std::size_t>(-1) ? ctx.at<std::byte>(g.outputs[j]) : ws + g.discard[j];
        control_flow::run_body(b.compiled, table, ws + g.arena_offset, ctx);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        if (!a.compiled) return ctx.fail(status::invalid_model, "the branches were not compiled");
        args g;
        g.bodies = a.compiled;
        g.cond = ctx.input(0);
        for (std::size_t i = 1; i < ctx.input_count(); ++i) g.implicit.push_back(ctx.input(i));
        const plan& p = a.compiled->branch[a.compiled->fixed == 1 ? 1 : 0].compiled;
        for (std::size_t k = 0; k < p.output_count(); ++k) g.outputs.push_back(ctx.has_output(k) ? ctx.output(k) : operand{});
        layout(*a.compiled, ctx, &g.discard, &g.arena_offset);
        g.ws = ctx.workspace();
        ctx.emit(&kernel, std::move(g));
        return status::ok;
    }
};

// ---------------------------------------------------------------------------------------------

struct loop {
    static constexpr std::string_view onnx_name = "Loop";
    static constexpr op_flags flags = op_flags::none;
    static constexpr std::int64_t max_unrolled = 1024;

    struct compiled_body {
        std::vector<control_flow::body_plan> plans;  // one, or one per iteration (unrolled)
        std::int64_t trip_count = 0;
        std::size_t carried = 0, scans = 0;
        std::vector<std::size_t> carried_bytes, scan_bytes;
        std::size_t regions = 0, arena = 0;
    };
    struct attributes {
        graph body;
        mutable std::shared_ptr<const compiled_body> compiled;  // set by infer()
    };
    static constexpr auto onnx_attributes = std::make_tuple(required_attr("body", &attributes::body));

    /// Workspace offsets.
    struct layout_t {
        std::size_t arena = 0, state[2] = {0, 0}, iter = 0, cond_in = 0, cond_out = 0, total = 0;
        std::vector<std::size_t> carried;  // offset of carried value k within a state buffer
        std::vector<std::size_t> discard;  // per scan output: workspace offset when unused, else npos
    };

    struct args {
        std::shared_ptr<const compiled_body> bodies;
        layout_t at;
        bool has_cond = false;
        operand cond;
        std::vector<operand> initial, implicit, outputs;  // outputs: N final values, then K scan outputs
        std::vector<bool> used;
        operand ws;
    };

    static status infer(const attributes& a, infer_context& ctx) {
        const control_flow::implicit_inputs im = control_flow::implicit_of(ctx);
        if (im.first < 2) return ctx.fail(status::invalid_model, "expected at least 2 inputs (M, cond), got {}", im.first);
        const std::size_t n = im.first - 2;
        for (std::size_t k = 2; k < im.first; ++k)
            if (!ctx.has_input(k)) return ctx.fail(status::invalid_model, "input {} (loop-carried value {}) is missing", k, k - 2);
        if (a.body.outputs.size() < 1 + n)
            return ctx.fail(status::invalid_model, "the body has {} outputs, expected at least {} (cond and {} loop-carried)", a.body.outputs.size(), 1 + n, n);
        const std::size_t k_scans = a.body.outputs.size() - 1 - n;
        if (ctx.output_count() > n + k_scans)
            return ctx.fail(status::invalid_model, "the node has {} outputs, the body gives {} ({} loop-carried, {} scan)", ctx.output_count(), n + k_scans, n, k_scans);
        if (!ctx.has_input(0))
            return ctx.fail(status::unsupported_op, "a Loop without a trip count M (until cond is false) is not supported: ember needs M at compile time");
        if (ctx.input_type(0) != dtype::int64 || ctx.input_shape(0).elements() != 1)
            return ctx.fail(status::invalid_model, "input 0 (M) is {} of shape {}, expected one int64", ctx.input_type(0), ctx.input_shape(0));
        const tensor* m = ctx.require_constant(0, "trip count M");
        if (!m) return status::unsupported_op;
        std::int64_t trip = *m->data<std::int64_t>();
        if (trip < 0) trip = 0;
        if (ctx.has_input(1) && !control_flow::is_single_bool(ctx.input_type(1), ctx.input_shape(1)))
            return ctx.fail(status::invalid_model, "input 1 (cond) is {} of shape {}, expected one bool", ctx.input_type(1), ctx.input_shape(1));

        auto c = std::make_shared<compiled_body>();
        c->trip_count = trip;
        c->carried = n;
        c->scans = k_scans;
        std::vector<control_flow::formal> formals(2 + n);
        formals[0] = {dtype::int64, shape{}, nullptr};
        formals[1] = {dtype::boolean, shape{}, nullptr};
        for (std::size_t k = 0; k < n; ++k) {
            formals[2 + k] = {ctx.input_type(2 + k), ctx.input_shape(2 + k), nullptr};
            c->carried_bytes.push_back(control_flow::bytes_of(ctx.input_type(2 + k), ctx.input_shape(2 + k)));
        }
        c->plans.emplace_back();
        error_info e = control_flow::compile_body(ctx, a.body, "body", formals, c->plans[0]);
        if (e.code != status::ok) {
            const bool needs_iteration = e.message.find("must be known at compile time") != std::string::npos;
            if (!needs_iteration || trip == 0 || trip > max_unrolled) return ctx.fail(e.code, "{}", e.message);
            // unroll: one plan per iteration, iteration_num fixed
            c->plans.clear();
            for (std::int64_t i = 0; i < trip; ++i) {
                result<tensor> iter = tensor::copy_of<std::int64_t>(shape{}, {i});
                if (!iter) return ctx.fail(iter.error().code, "{}", iter.error().message);
                formals[0].value = &*iter;
                c->plans.emplace_back();
                e = control_flow::compile_body(ctx, a.body, detail::format("body (iteration {})", i), formals, c->plans.back());
                if (e.code != status::ok) return ctx.fail(e.code, "{}", e.message);
            }
        }
        const plan& first = c->plans[0].compiled;
        for (const control_flow::body_plan& b : c->plans) {
            const plan& p = b.compiled;
            c->regions = std::max(c->regions, p.region_count());
            c->arena = std::max(c->arena, p.arena_bytes());
            if (!control_flow::is_single_bool(p.output(0).type, p.output(0).dims))
                return ctx.fail(status::invalid_model, "body output 0 (cond) is {} of shape {}, expected one bool", p.output(0).type, p.output(0).dims);
            for (std::size_t k = 0; k < n; ++k)
                if (p.output(1 + k).type != formals[2 + k].type || p.output(1 + k).dims != formals[2 + k].dims)
                    return ctx.fail(status::unsupported_op,
                                    "loop-carried value {} ('{}') is {} {} after an iteration but {} {} before; ember needs loop-carried "
                                    "values of fixed dtype and shape",
                                    k, p.output(1 + k).name, p.output(1 + k).type, p.output(1 + k).dims, formals[2 + k].type, formals[2 + k].dims);
            for (std::size_t s = 0; s < k_scans; ++s)
                if (p.output(1 + n + s).type != first.output(1 + n + s).type || p.output(1 + n + s).dims != first.output(1 + n + s).dims)
                    return ctx.fail(status::unsupported_op, "scan output {} changes shape between iterations ({} and {})", s,
                                    first.output(1 + n + s).dims, p.output(1 + n + s).dims);
        }
        for (std::size_t k = 0; k < n; ++k) ctx.set_output(k, formals[2 + k].type, formals[2 + k].dims);
        for (std::size_t s = 0; s < k_scans; ++s) {
            const io_info& o = first.output(1 + n + s);
            if (!shape::valid_rank(o.dims.rank() + 1))
                return ctx.fail(status::unsupported_op, "scan output {} of shape {} stacked would pass EMBER_MAX_RANK", s, o.dims);
            shape stacked;
            stacked.push_back(trip);
            for (std::size_t d = 0; d < o.dims.rank(); ++d) stacked.push_back(o.dims[d]);
            ctx.set_output(n + s, o.type, stacked);
            c->scan_bytes.push_back(o.bytes);
        }
        a.compiled = std::move(c);
        return status::ok;
    }

    static layout_t layout(const compiled_body& c, const infer_context& ctx) {
        layout_t l;
        std::size_t at = control_flow::table_bytes(c.regions);
        l.arena = at;
        at += align_up(c.arena, control_flow::slot_alignment);
        std::size_t state = 0;
        for (std::size_t k = 0; k < c.carried; ++k) {
            l.carried.push_back(state);
            state += align_up(c.carried_bytes[k], control_flow::slot_alignment);
        }
        l.state[0] = at;
        l.state[1] = at + state;
        at += 2 * state;
        l.iter = at;
        l.cond_in = at + 8;
        l.cond_out = at + 16;
        at += control_flow::slot_alignment;
        for (std::size_t s = 0; s < c.scans; ++s) {
            const bool used = ctx.has_output(c.carried + s);
            l.discard.push_back(used ? static_cast<std::size_t>(-1) : at);
            if (!used) at += align_up(c.scan_bytes[s], control_flow::slot_alignment);
        }
        l.total = at;
        return l;
    }
    static std::size_t workspace_bytes(const attributes& a, const infer_context& ctx) { return a.compiled ? layout(*a.compiled, ctx).total : 0; }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        const compiled_body& c = *g.bodies;
        std::byte* ws = ctx.at<std::byte>(g.ws);
        auto** table = reinterpret_cast<std::byte**>(ws);
        for (std::size_t k = 0; k < c.carried; ++k)
            if (c.carried_bytes[k] != 0) std::memcpy(ws + g.at.state[0] + g.at.carried[k], ctx.at<const std::byte>(g.initial[k]), c.carried_bytes[k]);
        bool cond = g.has_cond ? *ctx.at<const std::uint8_t>(g.cond) != 0 : true;
        auto* iter = reinterpret_cast<std::int64_t*>(ws + g.at.iter);
        auto* cond_in = reinterpret_cast<std::uint8_t*>(ws + g.at.cond_in);
        auto* cond_out = reinterpret_cast<std::uint8_t*>(ws + g.at.cond_out);
        std::int64_t it = 0;
        int cur = 0;
        for (; it < c.trip_count && cond; ++it) {
            const control_flow::body_plan& b = c.plans[c.plans.size() == 1 ? 0 : static_cast<std::size_t>(it)];
            *iter = it;
            *cond_in = cond ? 1 : 0;
            // formal inputs: iteration_num, cond, the carried values (read from the current state)
            for (std::size_t k = 0; k < b.source.size(); ++k) {
                const std::int32_t src = b.source[k];
                std::byte* where = nullptr;
                if (src < 0) where = ctx.at<std::byte>(g.implicit[static_cast<std::size_t>(-1 - src)]);
                else if (src == 0) where = reinterpret_cast<std::byte*>(iter);
                else if (src == 1) where = reinterpret_cast<std::byte*>(cond_in);
                else where = ws + g.at.state[cur] + g.at.carried[static_cast<std::size_t>(src - 2)];
                table[b.compiled.input(k).region] = where;
            }
            const plan& bp = b.compiled;
            table[bp.output(0).region] = reinterpret_cast<std::byte*>(cond_out);
            for (std::size_t k = 0; k < c.carried; ++k) table[bp.output(1 + k).region] = ws + g.at.state[1 - cur] + g.at.carried[k];
            for (std::size_t s = 0; s < c.scans; ++s)
                table[bp.output(1 + c.carried + s).region] =
                    g.used[c.carried + s] ? ctx.at<std::byte>(g.outputs[c.carried + s]) + static_cast<std::size_t>(it) * c.scan_bytes[s]
                                          : ws + g.at.discard[s];
            if (!control_flow::run_body(bp, table, ws + g.at.arena, ctx)) return;
            cur = 1 - cur;
            cond = *cond_out != 0;
        }
        if (it < c.trip_count && c.scans > 0) {  // stopped early: the scan outputs would be shorter than planned
            ctx.fail(static_cast<std::uint8_t>(status::invalid_argument));
            return;
        }
        for (std::size_t k = 0; k < c.carried; ++k)
            if (g.used[k] && c.carried_bytes[k] != 0)
                std::memcpy(ctx.at<std::byte>(g.outputs[k]), ws + g.at.state[cur] + g.at.carried[k], c.carried_bytes[k]);
    }

    static status bind(const attributes& a, bind_context& ctx) {
        if (!a.compiled) return ctx.fail(status::invalid_model, "the body was not compiled");
        const compiled_body& c = *a.compiled;
        args g;
        g.bodies = a.compiled;
        g.at = layout(c, ctx);
        g.has_cond = ctx.has_input(1);
        if (g.has_cond) g.cond = ctx.input(1);
        const std::size_t first_implicit = 2 + c.carried;
        for (std::size_t k = 0; k < c.carried; ++k) g.initial.push_back(ctx.input(2 + k));
        for (std::size_t i = first_implicit; i < ctx.input_count(); ++i) g.implicit.push_back(ctx.input(i));
        for (std::size_t k = 0; k < c.carried + c.scans; ++k) {
            g.used.push_back(ctx.has_output(k));
            g.outputs.push_back(ctx.has_output(k) ? ctx.output(k) : operand{});
        }
        g.ws = ctx.workspace();
        ctx.emit(&kernel, std::move(g));
        return status::ok;
    }
};

// ---------------------------------------------------------------------------------------------

struct scan {
    static constexpr std::string_view onnx_name = "Scan";
    static constexpr op_flags flags = op_flags::none;

    /// A tensor seen as [outer, length, inner bytes], one batch row every batch_stride bytes.
    struct cut {
        std::size_t outer = 1, inner = 0, batch_stride = 0;
        bool reverse = false;
    };
    struct compiled_body {
        control_flow::body_plan body;
        std::size_t states = 0, scan_inputs = 0, scan_outputs = 0, batch = 1, length = 0;
        std::vector<std::size_t> state_bytes;
        std::vector<cut> in_cuts, out_cuts;
        std::vector<std::size_t> in_bytes, out_bytes;  // one slice
        std::size_t first_state_input = 0;
    };
    struct attributes {
        graph body;
        std::int64_t num_scan_inputs = 0;
        std::vector<std::int64_t> directions;  // opset 8
        std::vector<std::int64_t> scan_input_axes, scan_input_directions, scan_output_axes, scan_output_directions;  // opset 9+
        mutable std::shared_ptr<const compiled_body> compiled;
    };
    static constexpr auto onnx_attributes =
        std::make_tuple(required_attr("body", &attributes::body), attr("directions", &attributes::directions),
                        required_attr("num_scan_inputs", &attributes::num_scan_inputs), attr("scan_input_axes", &attributes::scan_input_axes),
                        attr("scan_input_directions", &attributes::scan_input_directions), attr("scan_output_axes", &attributes::scan_output_axes),
                        attr("scan_output_directions", &attributes::scan_output_directions));

    struct layout_t {
        std::size_t arena = 0, state[2] = {0, 0}, total = 0;
        std::vector<std::size_t> state_at, in_at, out_at;  // state_at within a state buffer; in/out in the workspace
    };
    struct args {
        std::shared_ptr<const compiled_body> bodies;
        layout_t at;
        std::vector<operand> initial, scan_in, implicit, outputs;
        std::vector<bool> used;
        operand ws;
    };

    static bool direction_ok(const std::vector<std::int64_t>& v) noexcept {
        for (std::int64_t d : v)
            if (d != 0 && d != 1) return false;
        return true;
    }

    static status infer(const attributes& a, infer_context& ctx) {
        const bool v8 = ctx.opset() < 9;
        const control_flow::implicit_inputs im = control_flow::implicit_of(ctx);
        if (a.num_scan_inputs < 1) return ctx.fail(status::invalid_model, "attribute 'num_scan_inputs' is {}, expected at least 1", a.num_scan_inputs);
        const auto m = static_cast<std::size_t>(a.num_scan_inputs);
        const std::size_t first = v8 ? 1 : 0;
        if (im.first < first + m)
            return ctx.fail(status::invalid_model, "expected at least {} inputs ({} scan inputs), got {}", first + m, m, im.first);
        const std::size_t n = im.first - first - m;
        if (v8 && ctx.has_input(0)) return ctx.fail(status::unsupported_op, "input 0 (sequence_lens) of Scan-8 is not supported");
        if (v8 && (!a.scan_input_axes.empty() || !a.scan_input_directions.empty() || !a.scan_output_axes.empty() || !a.scan_output_directions.empty()))
            return ctx.fail(status::invalid_model, "scan_input_axes/directions and scan_output_axes/directions need opset 9 or later, the model has opset {}", ctx.opset());
        if (!v8 && !a.directions.empty())
            return ctx.fail(status::invalid_model, "attribute 'directions' is Scan-8's; from opset 9 it is 'scan_input_directions'");
        for (std::size_t i = first; i < im.first; ++i)
            if (!ctx.has_input(i)) return ctx.fail(status::invalid_model, "input {} is missing", i);
        const std::vector<std::int64_t>& in_dirs = v8 ? a.directions : a.scan_input_directions;
        if ((!in_dirs.empty() && in_dirs.size() != m) || !direction_ok(in_dirs))
            return ctx.fail(status::invalid_model, "the scan input directions must be {} values of 0 or 1", m);
        if (!a.scan_input_axes.empty() && a.scan_input_axes.size() != m)
            return ctx.fail(status::invalid_model, "attribute 'scan_input_axes' has {} values, expected {}", a.scan_input_axes.size(), m);
        if (a.body.outputs.size() < n)
            return ctx.fail(status::invalid_model, "the body has {} outputs, expected at least {} (the states)", a.body.outputs.size(), n);
        const std::size_t k_out = a.body.outputs.size() - n;
        if ((!a.scan_output_directions.empty() && a.scan_output_directions.size() != k_out) || !direction_ok(a.scan_output_directions))
            return ctx.fail(status::invalid_model, "attribute 'scan_output_directions' must be {} values of 0 or 1", k_out);
        if (!a.scan_output_axes.empty() && a.scan_output_axes.size() != k_out)
            return ctx.fail(status::invalid_model, "attribute 'scan_output_axes' has {} values, expected {}", a.scan_output_axes.size(), k_out);
        if (ctx.output_count() > n + k_out)
            return ctx.fail(status::invalid_model, "the node has {} outputs, the body gives {}", ctx.output_count(), n + k_out);
        if (ctx.opset() < 11)
            for (const std::vector<std::int64_t>* axes : {&a.scan_input_axes, &a.scan_output_axes})
                for (std::int64_t ax : *axes)
                    if (ax < 0) return ctx.fail(status::invalid_model, "negative scan axis {} needs opset 11 or later, the model has opset {}", ax, ctx.opset());

        auto c = std::make_shared<compiled_body>();
        c->states = n;
        c->scan_inputs = m;
        c->scan_outputs = k_out;
        c->first_state_input = first;
        std::vector<control_flow::formal> formals;
        std::int64_t batch = 1, length = -1;
        for (std::size_t k = 0; k < n; ++k) {
            const shape& s = ctx.input_shape(first + k);
            shape f;
            if (v8) {
                if (s.rank() < 1) return ctx.fail(status::shape_mismatch, "state input {} is a scalar; Scan-8 needs a batch axis", k);
                if (k == 0) batch = s[0];
                if (s[0] != batch) return ctx.fail(status::shape_mismatch, "state input {} of shape {} has batch {}, expected {}", k, s, s[0], batch);
                for (std::size_t d = 1; d < s.rank(); ++d) f.push_back(s[d]);
            } else {
                f = s;
            }
            formals.push_back({ctx.input_type(first + k), f, nullptr});
            c->state_bytes.push_back(control_flow::bytes_of(ctx.input_type(first + k), f));
        }
        for (std::size_t j = 0; j < m; ++j) {
            const std::size_t i = first + n + j;
            const shape& s = ctx.input_shape(i);
            std::size_t axis = 1;
            if (v8) {
                if (s.rank() < 2) return ctx.fail(status::shape_mismatch, "scan input {} has shape {}; Scan-8 needs [batch, sequence, ...]", j, s);
                if (n == 0 && j == 0) batch = s[0];
                if (s[0] != batch) return ctx.fail(status::shape_mismatch, "scan input {} of shape {} has batch {}, expected {}", j, s, s[0], batch);
            } else {
                const std::int64_t ax = a.scan_input_axes.empty() ? 0 : a.scan_input_axes[j];
                if (!normalize_axis(ax, s.rank(), axis))
                    return ctx.fail(status::invalid_model, "scan input axis {} is out of range for scan input {} of shape {}", ax, j, s);
            }
            if (length < 0) length = s[axis];
            if (s[axis] != length)
                return ctx.fail(status::shape_mismatch, "scan input {} of shape {} has length {} on its scan axis, scan input 0 has {}", j, s, s[axis], length);
            shape f;
            cut cu;
            const std::size_t elem = size_of(ctx.input_type(i));
            std::size_t inner = elem;
            for (std::size_t d = (v8 ? 1 : 0); d < s.rank(); ++d) {
                if (d == axis) continue;
                f.push_back(s[d]);
                if (d > axis) inner *= static_cast<std::size_t>(s[d]);
                else cu.outer *= static_cast<std::size_t>(s[d]);
            }
            cu.inner = inner;
            cu.batch_stride = v8 ? static_cast<std::size_t>(length) * inner : 0;
            cu.reverse = !in_dirs.empty() && in_dirs[j] == 1;
            formals.push_back({ctx.input_type(i), f, nullptr});
            c->in_cuts.push_back(cu);
            c->in_bytes.push_back(control_flow::bytes_of(ctx.input_type(i), f));
        }
        c->batch = static_cast<std::size_t>(batch);
        c->length = static_cast<std::size_t>(length);
        error_info e = control_flow::compile_body(ctx, a.body, "body", formals, c->body);
        if (e.code != status::ok) return ctx.fail(e.code, "{}", e.message);
        const plan& p = c->body.compiled;
        for (std::size_t k = 0; k < n; ++k) {
            if (p.output(k).type != formals[k].type || p.output(k).dims != formals[k].dims)
                return ctx.fail(status::unsupported_op, "state {} ('{}') is {} {} after an iteration but {} {} before; ember needs states of fixed dtype and shape",
                                k, p.output(k).name, p.output(k).type, p.output(k).dims, formals[k].type, formals[k].dims);
            ctx.set_output(k, formals[k].type, ctx.input_shape(first + k));
        }
        for (std::size_t s = 0; s < k_out; ++s) {
            const io_info& o = p.output(n + s);
            const std::size_t rank = o.dims.rank() + (v8 ? 2 : 1);
            if (!shape::valid_rank(rank)) return ctx.fail(status::unsupported_op, "scan output {} of shape {} stacked would pass EMBER_MAX_RANK", s, o.dims);
            std::size_t axis = 0;
            if (!v8) {
                const std::int64_t ax = a.scan_output_axes.empty() ? 0 : a.scan_output_axes[s];
                if (!normalize_axis(ax, rank, axis))
                    return ctx.fail(status::invalid_model, "scan output axis {} is out of range for scan output {} of rank {}", ax, s, rank);
            }
            shape full;
            cut cu;
            cu.inner = size_of(o.type);
            if (v8) {
                full.push_back(batch);
                full.push_back(length);
                for (std::size_t d = 0; d < o.dims.rank(); ++d) full.push_back(o.dims[d]);
                cu.inner = o.bytes;
                cu.batch_stride = static_cast<std::size_t>(length) * o.bytes;
            } else {
                for (std::size_t d = 0; d < o.dims.rank(); ++d) {
                    if (d == axis) full.push_back(length);
                    full.push_back(o.dims[d]);
                    if (d < axis) cu.outer *= static_cast<std::size_t>(o.dims[d]);
                    else cu.inner *= static_cast<std::size_t>(o.dims[d]);
                }
                if (axis == o.dims.rank()) full.push_back(length);
            }
            cu.reverse = !a.scan_output_directions.empty() && a.scan_output_directions[s] == 1;
            c->out_cuts.push_back(cu);
            c->out_bytes.push_back(o.bytes);
            ctx.set_output(n + s, o.type, full);
        }
        a.compiled = std::move(c);
        return status::ok;
    }

    static layout_t layout(const compiled_body& c) {
        layout_t l;
        std::size_t at = control_flow::table_bytes(c.body.compiled.region_count());
        l.arena = at;
        at += align_up(c.body.compiled.arena_bytes(), control_flow::slot_alignment);
        std::size_t state = 0;
        for (std::size_t k = 0; k < c.states; ++k) {
            l.state_at.push_back(state);
            state += align_up(c.state_bytes[k], control_flow::slot_alignment);
        }
        l.state[0] = at;
        l.state[1] = at + state;
        at += 2 * state;
        for (std::size_t j = 0; j < c.scan_inputs; ++j) {
            l.in_at.push_back(at);
            at += align_up(c.in_bytes[j], control_flow::slot_alignment);
        }
        for (std::size_t s = 0; s < c.scan_outputs; ++s) {
            l.out_at.push_back(at);
            at += align_up(c.out_bytes[s], control_flow::slot_alignment);
        }
        l.total = at;
        return l;
    }
    static std::size_t workspace_bytes(const attributes& a, const infer_context&) { return a.compiled ? layout(*a.compiled).total : 0; }

    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& g = *static_cast<const args*>(p);
        const compiled_body& c = *g.bodies;
        const control_flow::body_plan& b = c.body;
        const plan& bp = b.compiled;
        std::byte* ws = ctx.at<std::byte>(g.ws);
        auto** table = reinterpret_cast<std::byte**>(ws);
        const std::size_t L = c.length;
        for (std::size_t row = 0; row < c.batch; ++row) {
            int cur = 0;
            for (std::size_t k = 0; k < c.states; ++k)
                if (c.state_bytes[k] != 0)
                    std::memcpy(ws + g.at.state[0] + g.at.state_at[k], ctx.at<const std::byte>(g.initial[k]) + row * c.state_bytes[k], c.state_bytes[k]);
            for (std::size_t t = 0; t < L; ++t) {
                for (std::size_t j = 0; j < c.scan_inputs; ++j) {
                    const cut& cu = c.in_cuts[j];
                    const std::size_t tt = cu.reverse ? L - 1 - t : t;
                    const std::byte* src = ctx.at<const std::byte>(g.scan_in[j]) + row * cu.batch_stride;
                    std::byte* dst = ws + g.at.in_at[j];
                    for (std::size_t o = 0; o < cu.outer; ++o) std::memcpy(dst + o * cu.inner, src + (o * L + tt) * cu.inner, cu.inner);
                }
                for (std::size_t k = 0; k < b.source.size(); ++k) {
                    const std::int32_t src = b.source[k];
                    std::byte* where = nullptr;
                    if (src < 0) where = ctx.at<std::byte>(g.implicit[static_cast<std::size_t>(-1 - src)]);
                    else if (static_cast<std::size_t>(src) < c.states) where = ws + g.at.state[cur] + g.at.state_at[static_cast<std::size_t>(src)];
                    else where = ws + g.at.in_at[static_cast<std::size_t>(src) - c.states];
                    table[bp.input(k).region] = where;
                }
                for (std::size_t k = 0; k < c.states; ++k) table[bp.output(k).region] = ws + g.at.state[1 - cur] + g.at.state_at[k];
                for (std::size_t s = 0; s < c.scan_outputs; ++s) table[bp.output(c.states + s).region] = ws + g.at.out_at[s];
                if (!control_flow::run_body(bp, table, ws + g.at.arena, ctx)) return;
                cur = 1 - cur;
                for (std::size_t s = 0; s < c.scan_outputs; ++s) {
                    if (!g.used[c.states + s]) continue;
                    const cut& cu = c.out_cuts[s];
                    const std::size_t tt = cu.reverse ? L - 1 - t : t;
                    std::byte* dst = ctx.at<std::byte>(g.outputs[c.states + s]) + row * cu.batch_stride;
                    const std::byte* src = ws + g.at.out_at[s];
                    for (std::size_t o = 0; o < cu.outer; ++o) std::memcpy(dst + (o * L + tt) * cu.inner, src + o * cu.inner, cu.inner);
                }
            }
            for (std::size_t k = 0; k < c.states; ++k)
                if (g.used[k] && c.state_bytes[k] != 0)
                    std::memcpy(ctx.at<std::byte>(g.outputs[k]) + row * c.state_bytes[k], ws + g.at.state[cur] + g.at.state_at[k], c.state_bytes[k]);
        }
    }

    static status bind(const attributes& a, bind_context& ctx) {
        if (!a.compiled) return ctx.fail(status::invalid_model, "the body was not compiled");
        const compiled_body& c = *a.compiled;
        args g;
        g.bodies = a.compiled;
        g.at = layout(c);
        const std::size_t first = c.first_state_input;
        for (std::size_t k = 0; k < c.states; ++k) g.initial.push_back(ctx.input(first + k));
        for (std::size_t j = 0; j < c.scan_inputs; ++j) g.scan_in.push_back(ctx.input(first + c.states + j));
        for (std::size_t i = first + c.states + c.scan_inputs; i < ctx.input_count(); ++i) g.implicit.push_back(ctx.input(i));
        for (std::size_t k = 0; k < c.states + c.scan_outputs; ++k) {
            g.used.push_back(ctx.has_output(k));
            g.outputs.push_back(ctx.has_output(k) ? ctx.output(k) : operand{});
        }
        g.ws = ctx.workspace();
        ctx.emit(&kernel, std::move(g));
        return status::ok;
    }
};

} // namespace ops

namespace detail {
#if !EMBER_DETAIL_OP_TABLE_DECLARE_ONLY
EMBER_DETAIL_OP_TABLE_LINKAGE const op_entry* find_control_flow_op(std::string_view name, std::string_view domain) noexcept {
    return find_in_table<op_table<ops::if_, ops::loop, ops::scan>>(name, domain);
}
#endif
} // namespace detail

EMBER_NAMESPACE_END
