// SPDX-License-Identifier: Apache-2.0
// compile(): graph -> plan. Resolves input shapes, infers every value's dtype and shape, folds
// what is known at compile time, plans one arena from value lifetimes (with in-place reuse),
// packs the weights and binds a kernel to every remaining node.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "ember/compile/diagnostics.hpp"
#include "ember/compile/memory_plan.hpp"
#include "ember/config.hpp"
#include "ember/graph/graph.hpp"
#include "ember/graph/validate.hpp"
#include "ember/ops/copy.hpp"
#include "ember/ops/op_list.hpp"
#include "ember/ops/registry.hpp"
#include "ember/ops/subgraph.hpp"
#include "ember/runtime/plan.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN

/// The concrete shape of one graph input, by name.
struct input_shape {
    std::string name;
    shape dims;
};

/// The value of a symbolic dimension ("batch" = 8), applied to every input that uses it.
struct dim_value {
    std::string symbol;
    std::int64_t value = 0;
};

/// A graph input whose value is fixed at compile time: it becomes a constant (folded through,
/// like an initializer) and leaves the plan's input list. For inputs that decide shapes (a
/// Reshape target, Slice bounds, a TopK k) in models exported with them as inputs.
struct input_value {
    std::string name;
    tensor value;
};

struct compile_options {
    /// Shapes of inputs whose declared shape is not fully known (or to override it).
    std::vector<input_shape> input_shapes;
    /// Inputs fixed to a value at compile time (they are no longer inputs of the plan).
    std::vector<input_value> input_values;
    /// Values of symbolic dimensions, for inputs not listed in input_shapes.
    std::vector<dim_value> dim_values;
    /// Evaluate nodes whose inputs are all known at compile time, once, into constants.
    bool fold_constants = true;
    /// Share arena bytes between values whose lifetimes do not intersect, and run in-place ops
    /// in place. Off gives every value its own bytes (for debugging a kernel that scribbles).
    bool reuse_memory = true;
    /// The user's own ops, looked up before the built-in ones. Must outlive compile().
    const op_registry* custom_ops = nullptr;
    /// Where the plan's weights come from.
    allocator alloc = default_allocator();
    /// Where compile() logs (nothing by default).
    log_sink log;
};

namespace detail {

/// The ops that compile subgraphs (If, Loop, Scan): they call compile() for their bodies, so they
/// live in ops/control_flow.hpp, included at the end of this header, not in ops::builtin.
EMBER_DETAIL_OP_TABLE_LINKAGE const op_entry* find_control_flow_op(std::string_view name, std::string_view domain) noexcept;

class compiler {
public:
    compiler(const graph& g, const compile_options& options)
        : src_(g), g_(*implicit_or_self(g)), options_(options), diag_(options.log) {}

    result<plan> run() {
        if (prepare_error_.code != status::ok) return prepare_error_;
        if (&g_ != &src_)
            if (result<std::vector<std::uint32_t>> checked = validate(src_); !checked) return checked.error();
        result<std::vector<std::uint32_t>> order = validate(g_);
        if (!order) return order.error();
        order_ = std::move(*order);
        values_.assign(g_.values.size(), value_state{});
        if (resolve_inputs() != status::ok || resolve_constants() != status::ok || infer_nodes() != status::ok)
            return diag_.take_error(status::invalid_model);
        diag_.set_node(-1, "");
        if (plan_memory() != status::ok || pack_weights() != status::ok || bind_nodes() != status::ok)
            return diag_.take_error(status::invalid_model);
        plan_access::arena_bytes(plan_) = arena_bytes_;
        plan_access::alloc(plan_) = options_.alloc;
        diag_.log(log_level::debug, "compiled '{}': {} steps, {} folded nodes, arena {} bytes, weights {} bytes", g_.name,
                  plan_.steps().size(), folded_count_, arena_bytes_, plan_.weights_bytes());
        return std::move(plan_);
    }

private:
    struct node_record {
        const op_entry* entry = nullptr;
        erased attrs;
        bool folded = false;
        std::size_t workspace = 0;
        std::uint32_t position = 0;  // schedule position when not folded
    };

    // -- shapes -----------------------------------------------------------------------------

    status check_input_name(const std::string& name, std::string_view option) {
        const value_id v = g_.find_value(name);
        if (v != no_value && g_.values[v].kind == value_kind::input) return status::ok;
        std::string names;
        for (value_id in : g_.inputs) names += (names.empty() ? "" : ", ") + g_.values[in].name;
        return diag_.fail(status::invalid_argument, "compile_options::{} names '{}', which is not a graph input (inputs: {})", option, name, names);
    }

    const input_value* frozen(const value& val) const noexcept {
        for (const input_value& iv : options_.input_values)
            if (iv.name == val.name) return &iv;
        return nullptr;
    }

    status resolve_inputs() {
        for (const input_shape& given : options_.input_shapes)
            if (status s = check_input_name(given.name, "input_shapes"); s != status::ok) return s;
        for (const input_value& given : options_.input_values)
            if (status s = check_input_name(given.name, "input_values"); s != status::ok) return s;
        for (value_id v : g_.inputs) {
            const value& val = g_.values[v];
            value_state& st = values_[v];
            if (val.type == dtype::undefined)
                return diag_.fail(status::invalid_model, "input '{}' has no dtype", val.name);
            if (const input_value* iv = frozen(val)) {
                if (iv->value.type() != val.type)
                    return diag_.fail(status::shape_mismatch, "input '{}' is {} but compile_options::input_values gives {}", val.name, val.type,
                                      iv->value.type());
                st = value_state{true, val.type, iv->value.dims(), &iv->value};
                continue;
            }
            live_inputs_.push_back(v);
            const input_shape* given = nullptr;
            for (const input_shape& s : options_.input_shapes)
                if (s.name == val.name) given = &s;
            if (given) {
                if (val.declared.rank_known) {
                    if (val.declared.rank() != given->dims.rank())
                        return diag_.fail(status::shape_mismatch, "input '{}' is declared {} but compile_options gives {}", val.name,
                                          val.declared, given->dims);
                    for (std::size_t i = 0; i < given->dims.rank(); ++i)
                        if (val.declared.dims[i].known() && val.declared.dims[i].value != given->dims[i])
                            return diag_.fail(status::shape_mismatch, "input '{}' is declared {} but compile_options gives {}", val.name,
                                              val.declared, given->dims);
                }
                st.dims = given->dims;
            } else {
                if (!val.declared.rank_known)
                    return diag_.fail(status::invalid_argument, "input '{}' has unknown rank; give its shape in compile_options::input_shapes",
                                      val.name);
                if (!shape::valid_rank(val.declared.rank()))
                    return diag_.fail(status::unsupported_op, "input '{}' has rank {}, more than EMBER_MAX_RANK ({})", val.name,
                                      val.declared.rank(), max_rank);
                st.dims = shape();
                for (std::size_t i = 0; i < val.declared.rank(); ++i) {
                    const dim& d = val.declared.dims[i];
                    std::int64_t size = d.value;
                    if (!d.known())
                        for (const dim_value& dv : options_.dim_values)
                            if (!d.symbol.empty() && dv.symbol == d.symbol) size = dv.value;
                    if (size < 0)
                        return diag_.fail(status::invalid_argument,
                                          "input '{}' {} has dynamic dimension {}{}; give its shape in compile_options::input_shapes",
                                          val.name, val.declared, i, d.symbol.empty() ? std::string() : " ('" + d.symbol + "')");
                    st.dims.push_back(size);
                }
            }
            for (std::size_t i = 0; i < st.dims.rank(); ++i)
                if (st.dims[i] < 0) return diag_.fail(status::invalid_argument, "input '{}' has negative dimension in {}", val.name, st.dims);
            if (status s = check_size(val.name, val.type, st.dims); s != status::ok) return s;
            st.known = true;
            st.type = val.type;
        }
        return status::ok;
    }

    status resolve_constants() {
        for (std::size_t v = 0; v < g_.values.size(); ++v) {
            const value& val = g_.values[v];
            if (val.kind != value_kind::constant) continue;
            const tensor& t = src_.constants[static_cast<std::size_t>(val.constant)];
            if (t.empty()) return diag_.fail(status::invalid_model, "constant '{}' holds no tensor", val.name);
            values_[v] = value_state{true, t.type(), t.dims(), &t};
        }
        return status::ok;
    }

    status check_size(const std::string& name, dtype type, const shape& dims) {
        std::int64_t bytes = 0;
        const std::int64_t n = dims.checked_elements();
        if (n < 0 || !checked_mul(n, static_cast<std::int64_t>(size_of(type)), bytes) ||
            bytes > std::int64_t{1} << 46)  // 64 TiB: far past any real model, well below overflow
            return diag_.fail(status::shape_mismatch, "value '{}' of shape {} is too large", name, dims);
        return status::ok;
    }

    const op_entry* find_op(const node& n) const noexcept {
        if (options_.custom_ops)
            if (const op_entry* e = options_.custom_ops->find(n.op_type, n.domain)) return e;
        if (const op_entry* e = ops::find_builtin(n.op_type, n.domain)) return e;
        return find_control_flow_op(n.op_type, n.domain);
    }

    status infer_nodes() {
        records_.resize(g_.nodes.size());
        for (std::uint32_t index : order_) {
            const node& n = g_.nodes[index];
            node_record& rec = records_[index];
            diag_.set_node(static_cast<std::int32_t>(index), describe_node(g_, index));
            rec.entry = find_op(n);
            if (!rec.entry)
                return n.domain.empty() ? diag_.fail(status::unsupported_op, "op '{}' is not supported", n.op_type)
                                        : diag_.fail(status::unsupported_op, "op '{}' of domain '{}' is not supported", n.op_type, n.domain);
            if (status s = rec.entry->parse(n, rec.attrs, diag_); s != status::ok) return s;
            infer_context ctx(g_, index, values_, diag_, &folded_);
            if (status s = rec.entry->infer(rec.attrs.get(), ctx); s != status::ok) return diag_.failed() ? s : diag_.fail(s, "shape inference failed");
            bool all_constant = true;
            for (std::size_t k = 0; k < n.outputs.size(); ++k) {
                const value_id o = n.outputs[k];
                if (o == no_value) continue;
                if (!values_[o].known) return diag_.fail(status::invalid_model, "output {} '{}' was not inferred", k, g_.values[o].name);
                if (status s = check_size(g_.values[o].name, values_[o].type, values_[o].dims); s != status::ok) return s;
                all_constant = all_constant && values_[o].constant != nullptr;
            }
            rec.workspace = rec.entry->workspace_bytes(rec.attrs.get(), ctx);
            if (all_constant) {
                rec.folded = true;
            } else if (options_.fold_constants && !has_flag(rec.entry->flags, op_flags::no_fold) && inputs_constant(n)) {
                if (status s = fold(index, rec); s != status::ok) return s;
                rec.folded = true;
            }
            folded_count_ += rec.folded ? 1 : 0;
        }
        return status::ok;
    }

    bool inputs_constant(const node& n) const noexcept {
        for (value_id in : n.inputs)
            if (in != no_value && !values_[in].constant) return false;
        return true;
    }

    // Runs the node's own kernel now, on temporary buffers, and keeps its outputs as constants.
    status fold(std::uint32_t index, node_record& rec) {
        const node& n = g_.nodes[index];
        std::vector<std::byte*> regions;
        std::vector<operand> ins, outs;
        for (value_id in : n.inputs) {
            if (in == no_value) {
                ins.push_back(operand{});
                continue;
            }
            ins.push_back(operand{static_cast<std::uint32_t>(regions.size()), 0});
            regions.push_back(const_cast<std::byte*>(values_[in].constant->bytes()));
        }
        std::vector<tensor> results;
        for (value_id out : n.outputs) {
            if (out == no_value) {
                outs.push_back(operand{});
                continue;
            }
            result<tensor> t = tensor::create(values_[out].type, values_[out].dims, options_.alloc);
            if (!t) return diag_.fail(t.error());
            outs.push_back(operand{static_cast<std::uint32_t>(regions.size()), 0});
            regions.push_back(t->bytes());
            results.push_back(std::move(*t));
        }
        aligned_buffer scratch;
        if (!scratch.allocate(rec.workspace, options_.alloc))
            return diag_.fail(status::out_of_memory, "allocator returned null for {} bytes of scratch", rec.workspace);
        const operand ws{static_cast<std::uint32_t>(regions.size()), 0};
        regions.push_back(scratch.data());
        std::vector<bind_context::pending_step> steps;
        bind_context ctx(g_, index, values_, diag_, ins, outs, ws, steps);
        if (status s = rec.entry->bind(rec.attrs.get(), ctx); s != status::ok) return s;
        std::atomic<std::uint8_t> error{0};
        const run_context run{regions.data(), nullptr, &error};
        for (const bind_context::pending_step& s : steps) {
            s.fn(s.args.get(), run);
            if (error.load() != 0)
                return diag_.fail(static_cast<status>(error.load()), "evaluating the node at compile time failed: its constant inputs are out of range");
        }
        std::size_t r = 0;
        for (value_id out : n.outputs) {
            if (out == no_value) continue;
            folded_.push_back(std::move(results[r++]));
            values_[out].constant = &folded_.back();
        }
        return status::ok;
    }

    // -- memory -----------------------------------------------------------------------------

    status plan_memory() {
        const std::size_t nv = g_.values.size();
        std::uint32_t position = 0;
        for (std::uint32_t index : order_)
            if (!records_[index].folded) records_[index].position = position++;
        end_position_ = position;  // copies into graph outputs run here, after every node

        // last schedule position that reads each value
        constexpr std::uint32_t unused = 0xffffffffu;
        last_use_.assign(nv, unused);
        auto use = [&](value_id v, std::uint32_t p) {
            if (last_use_[v] == unused || p > last_use_[v]) last_use_[v] = p;
        };
        for (std::uint32_t index : order_) {
            if (records_[index].folded) continue;
            for (value_id in : g_.nodes[index].inputs)
                if (in != no_value) use(in, records_[index].position);
        }

        loc_.assign(nv, operand{});
        located_.assign(nv, false);
        buffer_of_.assign(nv, unused);
        const std::size_t n_in = live_inputs_.size();
        std::vector<lifetime> buffers;
        auto new_buffer = [&](std::uint32_t first, std::uint32_t last, std::size_t bytes) {
            if (!options_.reuse_memory) {
                first = 0;
                last = end_position_;
            }
            buffers.push_back(lifetime{static_cast<std::uint32_t>(buffers.size()), first, last, align_up(bytes, EMBER_ALIGNMENT)});
            return static_cast<std::uint32_t>(buffers.size() - 1);
        };

        // io slots: one buffer each for the whole run, so a caller may fill them before run()
        std::vector<std::uint32_t> slot_buffer;
        auto add_slot = [&](std::vector<io_info>& list, value_id v, std::uint32_t region) {
            io_info info;
            info.name = g_.values[v].name;
            info.type = values_[v].type;
            info.dims = values_[v].dims;
            info.bytes = bytes_of(v);
            info.region = region;
            list.push_back(info);
            slot_buffer.push_back(static_cast<std::uint32_t>(buffers.size()));
            buffers.push_back(lifetime{static_cast<std::uint32_t>(buffers.size()), 0, end_position_, align_up(info.bytes, EMBER_ALIGNMENT)});
        };
        std::vector<io_info>& inputs = plan_access::inputs(plan_);
        std::vector<io_info>& outputs = plan_access::outputs(plan_);
        for (std::size_t k = 0; k < n_in; ++k) {
            const value_id v = live_inputs_[k];
            add_slot(inputs, v, static_cast<std::uint32_t>(first_io_region + k));
            loc_[v] = operand{static_cast<std::uint32_t>(first_io_region + k), 0};
            located_[v] = true;
        }
        for (std::size_t j = 0; j < g_.outputs.size(); ++j) {
            const value_id v = g_.outputs[j];
            const auto region = static_cast<std::uint32_t>(first_io_region + n_in + j);
            add_slot(outputs, v, region);
            const value& val = g_.values[v];
            const bool computed = val.kind == value_kind::node_output && !values_[v].constant;
            if (computed && !located_[v]) {
                loc_[v] = operand{region, 0};
                located_[v] = true;
            } else {
                copies_.push_back({v, j});  // an input, a constant or an output listed twice
                use(v, end_position_);
            }
        }

        // node outputs and workspaces, in schedule order, joining the input's buffer in place
        std::vector<std::uint32_t> buffer_last;  // parallel to buffers: last use of any member
        for (const lifetime& b : buffers) buffer_last.push_back(b.last_step);
        std::vector<std::uint32_t> workspace_buffer(g_.nodes.size(), unused);
        for (std::uint32_t index : order_) {
            node_record& rec = records_[index];
            if (rec.folded) continue;
            const node& n = g_.nodes[index];
            const std::uint32_t p = rec.position;
            for (std::size_t k = 0; k < n.outputs.size(); ++k) {
                const value_id v = n.outputs[k];
                if (v == no_value || located_[v]) continue;
                const std::uint32_t last = last_use_[v] == unused ? p : last_use_[v];
                const std::size_t bytes = align_up(bytes_of(v), EMBER_ALIGNMENT);
                std::uint32_t b = unused;
                if (k == 0 && options_.reuse_memory && has_flag(rec.entry->flags, op_flags::in_place) && !n.inputs.empty() &&
                    n.inputs[0] != no_value) {
                    const value_id in = n.inputs[0];
                    const std::uint32_t ib = buffer_of_[in];
                    if (ib != unused && last_use_[in] == p && buffer_last[ib] == p && bytes_of(v) == bytes_of(in) && buffers[ib].bytes >= bytes)
                        b = ib;
                }
                if (b == unused) {
                    b = new_buffer(p, last, bytes);
                    buffer_last.push_back(buffers.back().last_step);
                } else {
                    buffers[b].last_step = std::max(buffers[b].last_step, last);
                    buffer_last[b] = buffers[b].last_step;
                }
                buffer_of_[v] = b;
                located_[v] = true;
            }
            if (rec.workspace != 0) {
                workspace_buffer[index] = new_buffer(p, p, rec.workspace);
                buffer_last.push_back(buffers.back().last_step);
            }
        }

        std::vector<std::size_t> offsets(buffers.size(), 0);
        arena_bytes_ = assign_offsets(span<const lifetime>(buffers.data(), buffers.size()), span<std::size_t>(offsets.data(), offsets.size()),
                                      EMBER_ALIGNMENT);
        for (std::size_t k = 0; k < inputs.size(); ++k) inputs[k].arena_offset = offsets[slot_buffer[k]];
        for (std::size_t j = 0; j < outputs.size(); ++j) outputs[j].arena_offset = offsets[slot_buffer[inputs.size() + j]];
        for (std::size_t v = 0; v < nv; ++v)
            if (buffer_of_[v] != unused) loc_[v] = operand{arena_region, offsets[buffer_of_[v]]};
        workspace_.assign(g_.nodes.size(), operand{});
        for (std::size_t i = 0; i < g_.nodes.size(); ++i)
            if (workspace_buffer[i] != unused) workspace_[i] = operand{arena_region, offsets[workspace_buffer[i]]};

        // placements, for tools and the planner's tests
        std::vector<value_placement>& placements = plan_access::placements(plan_);
        for (std::size_t k = 0; k < inputs.size() + outputs.size(); ++k) {
            const value_id v = k < inputs.size() ? live_inputs_[k] : g_.outputs[k - inputs.size()];
            const io_info& info = k < inputs.size() ? inputs[k] : outputs[k - inputs.size()];
            placements.push_back(value_placement{v, operand{info.region, 0}, info.bytes, 0, end_position_, slot_buffer[k], info.arena_offset});
        }
        for (std::uint32_t index : order_) {
            if (records_[index].folded) continue;
            const std::uint32_t p = records_[index].position;
            for (value_id v : g_.nodes[index].outputs)
                if (v != no_value && buffer_of_[v] != unused)
                    placements.push_back(value_placement{v, loc_[v], bytes_of(v), p, last_use_[v] == unused ? p : last_use_[v], buffer_of_[v],
                                                         loc_[v].offset});
        }
        return status::ok;
    }

    std::size_t bytes_of(value_id v) const noexcept {
        return static_cast<std::size_t>(values_[v].dims.elements()) * size_of(values_[v].type);
    }

    status pack_weights() {
        std::vector<value_id> needed;
        auto need = [&](value_id v) {
            if (values_[v].constant && !located_[v]) {
                located_[v] = true;
                needed.push_back(v);
            }
        };
        for (std::uint32_t index : order_)
            if (!records_[index].folded)
                for (value_id in : g_.nodes[index].inputs)
                    if (in != no_value) need(in);
        for (const output_copy& c : copies_) need(c.value);
        std::size_t total = 0;
        for (value_id v : needed) {
            loc_[v] = operand{weights_region, total};
            total += align_up(values_[v].constant->size_bytes(), EMBER_ALIGNMENT);
        }
        aligned_buffer& weights = plan_access::weights(plan_);
        if (!weights.allocate(total, options_.alloc, false))
            return diag_.fail(status::out_of_memory, "allocator returned null for {} bytes of weights", total);
        for (value_id v : needed) {
            const tensor& t = *values_[v].constant;
            if (t.size_bytes() != 0) std::memcpy(weights.data() + loc_[v].offset, t.bytes(), t.size_bytes());
        }
        return status::ok;
    }

    // -- kernels ----------------------------------------------------------------------------

    status bind_nodes() {
        std::vector<step>& steps = plan_access::steps(plan_);
        std::vector<detail::erased>& args = plan_access::args(plan_);
        std::vector<bind_context::pending_step> pending;
        std::vector<operand> ins, outs;
        for (std::uint32_t index : order_) {
            const node_record& rec = records_[index];
            if (rec.folded) continue;
            const node& n = g_.nodes[index];
            diag_.set_node(static_cast<std::int32_t>(index), describe_node(g_, index));
            ins.clear();
            outs.clear();
            for (value_id in : n.inputs) ins.push_back(in == no_value ? operand{} : loc_[in]);
            for (value_id out : n.outputs) outs.push_back(out == no_value ? operand{} : loc_[out]);
            pending.clear();
            bind_context ctx(g_, index, values_, diag_, ins, outs, workspace_[index], pending);
            if (status s = rec.entry->bind(rec.attrs.get(), ctx); s != status::ok) return diag_.failed() ? s : diag_.fail(s, "binding failed");
            for (bind_context::pending_step& p : pending) {
                steps.push_back(step{p.fn, p.args.get(), static_cast<std::int32_t>(index)});
                args.push_back(std::move(p.args));
                plan_access::step_names(plan_).push_back(n.name.empty() ? describe_node(g_, index) : n.name);
                plan_access::step_ops(plan_).push_back(n.op_type);
            }
        }
        diag_.set_node(-1, "");
        for (const output_copy& c : copies_) {
            const io_info& out = plan_.output(c.slot);
            detail::erased a = detail::erased::make(ops::copy_args{loc_[c.value], operand{out.region, 0}, out.bytes});
            steps.push_back(step{&ops::copy_kernel, a.get(), -1});
            args.push_back(std::move(a));
            plan_access::step_names(plan_).push_back("output " + out.name);
            plan_access::step_ops(plan_).push_back("Copy");
        }
        return status::ok;
    }

    struct output_copy {
        value_id value;
        std::size_t slot;
    };

    // g_ is src_, or (when nodes have subgraphs) a copy of its structure whose subgraph nodes list
    // the values their bodies capture as extra inputs (ops/subgraph.hpp); constants stay in src_.
    const graph* implicit_or_self(const graph& g) {
        const graph* p = with_implicit_inputs(g, prepared_, prepare_error_);
        return p ? p : &g;
    }
    const graph& src_;
    graph prepared_;
    error_info prepare_error_;
    const graph& g_;
    const compile_options& options_;
    diagnostics diag_;
    std::vector<std::uint32_t> order_;
    std::vector<value_state> values_;
    std::vector<value_id> live_inputs_;  // graph inputs not fixed by input_values: the plan's inputs
    std::deque<tensor> folded_;
    std::vector<node_record> records_;
    std::vector<std::uint32_t> last_use_;
    std::vector<operand> loc_;
    std::vector<bool> located_;
    std::vector<std::uint32_t> buffer_of_;
    std::vector<operand> workspace_;
    std::vector<output_copy> copies_;
    std::uint32_t end_position_ = 0;
    std::size_t arena_bytes_ = 0;
    std::size_t folded_count_ = 0;
    plan plan_;
};

} // namespace detail

/// Compiles a graph into an immutable plan: validates it, infers shapes, folds constants, plans
/// the arena, packs weights and binds kernels. Allocates; may log through options.log. Fails with
/// invalid_model, unsupported_op, shape_mismatch, invalid_argument or out_of_memory; the
/// error_info names the node.
[[nodiscard]] inline result<plan> compile(const graph& g, const compile_options& options = {}) {
    return detail::compiler(g, options).run();
}

EMBER_NAMESPACE_END

// If, Loop and Scan compile their bodies with compile(), so they come after it.
#include "ember/ops/control_flow.hpp"
