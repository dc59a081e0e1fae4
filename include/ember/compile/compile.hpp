// SPDX-License-Identifier: Apache-2.0
// compile(): graph -> plan. Rewrites a copy of the graph with the graph passes
// (compile/passes/), resolves input shapes, infers every value's dtype and shape, folds what is
// known at compile time, fuses epilogues, plans one arena from value lifetimes (with in-place
// reuse), packs the weights and binds a kernel to every remaining node.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ember/compile/diagnostics.hpp"
#include "ember/compile/memory_plan.hpp"
#include "ember/compile/passes/passes.hpp"
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
    /// Share arena bytes between values whose lifetimes do not intersect, run in-place ops in
    /// place, and compute a Concat's inputs straight into its output where each is one contiguous
    /// run of it (plan_joins() says when; the Concat then runs no step). Off gives every value its
    /// own bytes (for debugging a kernel that scribbles).
    bool reuse_memory = true;
    /// The graph passes (compile/passes/passes.hpp): identity and dead-code removal,
    /// BatchNormalization folding, Transpose/Reshape simplification, epilogue fusion. All on;
    /// turn one off (`options.passes.epilogue_fusion = false`) or all (`pass_options::none()`).
    pass_options passes;
    /// The instruction set for the fast kernels: "" (the best this CPU runs; the environment
    /// variable EMBER_ISA, when set, decides instead), "avx512", "avx2", "sse2", "neon", or
    /// "reference" for the plain reference kernels everywhere. An ISA this binary lacks or this CPU
    /// cannot run fails with invalid_argument.
    std::string isa;
    /// Run 3x3 stride-1 convolutions with constant weights as Winograd F(4x4, 3x3) where it needs
    /// fewer multiplications (ops/conv.hpp says when): about 2.5x fewer on ResNet's 56x56 and
    /// 28x28 layers. Its sums round differently from the direct ones (relative differences around
    /// 1e-6 of the output's scale). Off (or the environment variable EMBER_WINOGRAD=0): every
    /// convolution runs as a GEMM.
    bool winograd = true;
    /// Run convolutions whose output has few positions (ResNet's and MobileNet's 14x14 and 7x7
    /// layers) as the transposed GEMM, Y^T = im2col^T * W^T, the output channels across the vector
    /// lanes, where that leaves the register tile idle a ninth less or better (ops/conv.hpp says
    /// when). The same bits either way. Off (or EMBER_TRANSPOSED_GEMM=0): every GEMM-path
    /// convolution puts the positions across the lanes.
    bool transposed_gemm = true;
    /// Run convolutions whose packed GEMM would spend its time packing the im2col (3-channel
    /// stems; 3x3 layers up to 640 deep where Winograd does not pay) as the direct kernel, its B
    /// vectors loaded straight from a padded copy of the input (ops/conv.hpp use_direct says
    /// when): ResNet's 7x7 stem in 0.69x the time. Depths up to 256 give the packed GEMM's bits.
    /// Off (or EMBER_DIRECT_CONV=0): they run as the packed GEMM or Winograd.
    bool direct_conv = true;
    /// Threads the kernels may split one op over (work slots, each with its own workspace); 0 = one
    /// per hardware thread. More executor threads than this run no faster; results are the same
    /// bits for any value.
    std::size_t max_threads = 0;
    /// The user's own ops, looked up before the built-in ones. Must outlive compile().
    const op_registry* custom_ops = nullptr;
    /// Where the plan's weights come from.
    allocator alloc = default_allocator();
    /// Where compile() logs (nothing by default).
    log_sink log;
    /// Limits, so that a hostile or broken model fails with a status instead of asking for all
    /// the memory there is: the largest one value (an input, a constant, a folded or computed
    /// value) may be, and the largest arena a session of the plan may need. compile() fails with
    /// out_of_memory, naming the value or the arena, above them.
    std::size_t max_value_bytes = std::size_t{16} << 30;
    std::size_t max_arena_bytes = std::size_t{64} << 30;
};

namespace detail {

/// A backend's hook into compile() (the CUDA extension, include/ember/cuda/): the memory plan,
/// folding and passes stay the CPU's, and each scheduled node is bound by its op's reference
/// kernel as usual; `lower` then receives the steps that bind emitted (their args name the
/// node's operands and geometry) and turns them into the backend's own steps. The plan that
/// compile() returns then holds only the copies into graph outputs as CPU steps.
struct step_lowering {
    void* self = nullptr;
    status (*lower)(void* self, bind_context& ctx, span<const bind_context::pending_step> steps) = nullptr;
};

/// The ops that compile subgraphs (If, Loop, Scan): they call compile() for their bodies, so they
/// live in ops/control_flow.hpp, included at the end of this header, not in ops::builtin.
EMBER_DETAIL_OP_TABLE_LINKAGE const op_entry* find_control_flow_op(std::string_view name, std::string_view domain) noexcept;

class compiler {
public:
    compiler(const graph& g, const compile_options& options, const step_lowering* lowering = nullptr)
        : src_(g), options_(options), diag_(options.log), lowering_(lowering) {}

    result<plan> run() {
        if (error_info e = prepare(); e.code != status::ok) return e;
        if (analyse() != status::ok) return diag_.take_error(status::invalid_model);
        diag_.set_node(-1, "");
        if (plan_memory() != status::ok || pack_weights() != status::ok || bind_nodes() != status::ok)
            return diag_.take_error(status::invalid_model);
        plan_access::arena_bytes(plan_) = arena_bytes_;
        plan_access::alloc(plan_) = options_.alloc;
        diag_.log(log_level::debug, "compiled '{}': {} steps, {} folded nodes, arena {} bytes, weights {} bytes", g().name,
                  plan_.steps().size(), folded_count_, arena_bytes_, plan_.weights_bytes());
        return std::move(plan_);
    }

    /// The graph run() would compile: the passes' output, with its constants (ember::optimize).
    result<graph> optimized() {
        if (error_info e = prepare(); e.code != status::ok) return e;
        if (analyse() != status::ok) return diag_.take_error(status::invalid_model);
        graph out;
        out.name = g().name;
        out.values = g().values;
        out.nodes = g().nodes;
        out.inputs = g().inputs;
        out.outputs = g().outputs;
        out.opsets = g().opsets;
        for (node& n : out.nodes)  // drop the implicit inputs prepare() gave nodes with bodies
            if (has_subgraphs(n)) n.inputs.resize(n.inputs.size() - implicit_input_names(n).size());
        for (std::size_t i = 0; i < g().constants.size(); ++i) out.constants.push_back(constant_at(i));
        return out;
    }

private:
    // -- graph passes -----------------------------------------------------------------------

    const graph& g() const noexcept { return *g_; }

    /// The constant at index i of the graph being compiled: the user's, or one a pass made.
    const tensor& constant_at(std::size_t i) const noexcept {
        return g_ == &src_ || i < src_.constants.size() ? src_.constants[i] : work_.constants[i];
    }

    /// "node 3 'conv1' (Conv)": the user's node a node of the compiled graph comes from, so that
    /// messages and step names refer to the graph the user has; "(Conv as FusedConv)" when a pass
    /// changed its op.
    std::string describe(std::size_t index) const {
        const node& n = g().nodes[index];
        const std::int32_t o = origin_[index];
        if (o < 0 || static_cast<std::size_t>(o) >= src_.nodes.size()) return describe_node(g(), index);
        const node& s = src_.nodes[static_cast<std::size_t>(o)];
        if (s.op_type == n.op_type && s.domain == n.domain) return describe_node(src_, static_cast<std::size_t>(o));
        return s.name.empty() ? detail::format("node {} ({} as {})", o, s.op_type, n.op_type)
                              : detail::format("node {} '{}' ({} as {})", o, s.name, s.op_type, n.op_type);
    }
    void set_node(std::size_t index) { diag_.set_node(origin_[index], describe(index)); }

    // Validates the user's graph, runs the graph passes on a copy of it, and lists the values
    // bodies capture as extra inputs of their nodes (ops/subgraph.hpp). Without passes and
    // bodies, the user's graph is compiled as it is, uncopied.
    error_info prepare() {
        result<std::vector<std::uint32_t>> checked = validate(src_);
        if (!checked) return checked.error();
        bool bodies = false;
        for (const node& n : src_.nodes) bodies = bodies || has_subgraphs(n);
        origin_.resize(src_.nodes.size());
        for (std::size_t i = 0; i < origin_.size(); ++i) origin_[i] = static_cast<std::int32_t>(i);
        if (!options_.passes.any() && !bodies) {
            g_ = &src_;
            order_ = std::move(*checked);
            return error_info{};
        }
        work_.name = src_.name;
        work_.values = src_.values;
        work_.nodes = src_.nodes;
        work_.inputs = src_.inputs;
        work_.outputs = src_.outputs;
        work_.opsets = src_.opsets;
        work_.constants.clear();
        work_.constants.resize(src_.constants.size());  // placeholders: constant_at() reads src_'s
        g_ = &work_;
        if (options_.passes.any()) {
            graph_rewrite rw(work_, src_, origin_, options_.custom_ops);
            run_graph_passes(rw, options_.passes, counts_);
            (void)rw.finish();
        }
        if (bodies) {
            for (std::size_t i = 0; i < work_.nodes.size(); ++i) {
                if (!has_subgraphs(work_.nodes[i])) continue;
                for (const std::string& name : implicit_input_names(work_.nodes[i])) {
                    const value_id v = work_.find_value(name);
                    if (v == no_value || (work_.values[v].kind == value_kind::input && !is_graph_input(work_, v)))
                        return error_info{status::invalid_model, origin_[i],
                                          detail::format("{}: a subgraph uses '{}', which is not a value of the enclosing graph", describe(i), name)};
                }
            }
            graph with_implicit;
            error_info error;
            if (const graph* p = with_implicit_inputs(work_, with_implicit, error); !p) return error;
            else if (p == &with_implicit) work_.nodes = std::move(with_implicit.nodes);
        }
        result<std::vector<std::uint32_t>> order = validate(work_);
        if (!order) return error_info{status::invalid_model, -1, "the graph passes made an invalid graph (turn compile_options::passes off to work around it): " + order.error().message};
        order_ = std::move(*order);
        return error_info{};
    }

    // Shapes, folding and the passes that need shapes.
    status analyse() {
        values_.assign(g().values.size(), value_state{});
        if (choose_kernels() != status::ok) return status::invalid_argument;
        if (resolve_inputs() != status::ok || resolve_constants() != status::ok || infer_nodes() != status::ok || shape_passes() != status::ok)
            return status::invalid_model;
        if (counts_.identities + counts_.batch_norms + counts_.layout + counts_.dead + counts_.fused + counts_.qdq != 0)
            diag_.log(log_level::debug, "passes on '{}': {} Identity/Dropout removed, {} QDQ convolutions folded, {} BatchNormalization folded, "
                      "{} Transpose/Reshape removed, {} dead nodes removed, {} epilogues fused", g().name, counts_.identities, counts_.qdq,
                      counts_.batch_norms, counts_.layout, counts_.dead, counts_.fused);
        return status::ok;
    }

    // Passes 6-7 (compile/passes/passes.hpp) on the inferred graph; then the nodes they changed
    // are inferred again (their inputs' shapes are all known) and the rest keep their records.
    status shape_passes() {
        const pass_options& p = options_.passes;
        if (g_ != &work_ || !(p.epilogue_fusion || p.layout_simplification)) return status::ok;
        graph_rewrite rw(work_, src_, origin_, options_.custom_ops, &values_);
        run_shape_passes(rw, p, order_, counts_);
        const rewrite_result r = rw.finish();
        bool changed = r.modified.size() != records_.size();
        for (bool m : r.modified) changed = changed || m;
        if (!changed) return status::ok;
        std::vector<node_record> records(work_.nodes.size());
        for (std::size_t i = 0; i < r.new_index.size(); ++i)
            if (r.new_index[i] != rewrite_result::removed_node) records[r.new_index[i]] = std::move(records_[i]);
        records_ = std::move(records);
        result<std::vector<std::uint32_t>> order = validate(work_);
        if (!order)
            return diag_.fail(status::invalid_model, "the graph passes made an invalid graph (turn compile_options::passes off to work around it): {}",
                              order.error().message);
        order_ = std::move(*order);
        for (std::uint32_t index : order_)
            if (r.modified[index]) {
                folded_count_ -= records_[index].folded ? 1 : 0;
                records_[index] = node_record{};
                if (status s = infer_node(index); s != status::ok) return s;
            }
        return status::ok;
    }

    struct node_record {
        const op_entry* entry = nullptr;
        erased attrs;
        bool folded = false;
        std::size_t workspace = 0;
        std::uint32_t position = 0;  // schedule position when not folded
        bool joined = false;         // a Concat whose inputs the planner placed inside its output: no step
    };

    // -- kernels for this CPU ---------------------------------------------------------------

    status choose_kernels() {
        std::string isa = options_.isa;
        if (isa.empty())
            if (const char* env = std::getenv("EMBER_ISA")) isa = env;
        kernels_.packed = &plan_access::packed(plan_);
        kernels_.alloc = options_.alloc;
        kernels_.winograd = options_.winograd;
        if (const char* env = std::getenv("EMBER_WINOGRAD"); env && std::string_view(env) == "0") kernels_.winograd = false;
        kernels_.transposed_gemm = options_.transposed_gemm;
        if (const char* env = std::getenv("EMBER_TRANSPOSED_GEMM"); env && std::string_view(env) == "0") kernels_.transposed_gemm = false;
        kernels_.direct_conv = options_.direct_conv;
        if (const char* env = std::getenv("EMBER_DIRECT_CONV"); env && std::string_view(env) == "0") kernels_.direct_conv = false;
        std::size_t threads = options_.max_threads ? options_.max_threads : std::thread::hardware_concurrency();
        kernels_.slots = threads == 0 ? 1 : (threads > 256 ? 256 : threads);
        if (isa == "reference") {
            plan_access::isa(plan_) = "reference";
            return status::ok;
        }
        kernels_.table = simd::find_kernel_table(isa);
        if (!kernels_.table) {
            std::string compiled, runs;
            for (std::string_view n : simd::compiled_isas()) compiled += (compiled.empty() ? "" : ", ") + std::string(n);
            for (const simd::kernel_table* t : simd::available_kernel_tables()) runs += (runs.empty() ? "" : ", ") + std::string(t->name);
            if (isa.empty()) {  // a dispatch build without its baseline ISA on this CPU: reference kernels
                plan_access::isa(plan_) = "reference";
                return status::ok;
            }
            return diag_.fail(status::invalid_argument, "ISA '{}' is not available: this binary has kernels for {}, of which this CPU runs {}", isa,
                              compiled.empty() ? "none" : compiled, runs.empty() ? "none" : runs);
        }
        plan_access::isa(plan_) = kernels_.table->name;
        return status::ok;
    }

    // -- shapes -----------------------------------------------------------------------------

    status check_input_name(const std::string& name, std::string_view option) {
        const value_id v = g().find_value(name);
        if (v != no_value && g().values[v].kind == value_kind::input) return status::ok;
        std::string names;
        for (value_id in : g().inputs) names += (names.empty() ? "" : ", ") + g().values[in].name;
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
        for (value_id v : g().inputs) {
            const value& val = g().values[v];
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
        for (std::size_t v = 0; v < g().values.size(); ++v) {
            const value& val = g().values[v];
            if (val.kind != value_kind::constant) continue;
            const tensor& t = constant_at(static_cast<std::size_t>(val.constant));
            if (t.empty()) return diag_.fail(status::invalid_model, "constant '{}' holds no tensor", val.name);
            values_[v] = value_state{true, t.type(), t.dims(), &t};
        }
        return status::ok;
    }

    status check_size(const std::string& name, dtype type, const shape& dims) {
        std::int64_t bytes = 0;
        const std::int64_t n = dims.checked_elements();
        if (n < 0 || !checked_mul(n, static_cast<std::int64_t>(size_of(type)), bytes))
            return diag_.fail(status::shape_mismatch, "value '{}' of shape {} is too large", name, dims);
        if (static_cast<std::uint64_t>(bytes) > options_.max_value_bytes)
            return diag_.fail(status::out_of_memory, "value '{}' of shape {} {} would take {} bytes, more than compile_options::max_value_bytes ({})",
                              name, type, dims, bytes, options_.max_value_bytes);
        return status::ok;
    }

    const op_entry* find_op(const node& n) const noexcept {
        if (options_.custom_ops)
            if (const op_entry* e = options_.custom_ops->find(n.op_type, n.domain)) return e;
        if (const op_entry* e = ops::find_builtin(n.op_type, n.domain)) return e;
        return find_control_flow_op(n.op_type, n.domain);
    }

    status infer_nodes() {
        records_.resize(g().nodes.size());
        for (std::uint32_t index : order_)
            if (status s = infer_node(index); s != status::ok) return s;
        return status::ok;
    }

    status infer_node(std::uint32_t index) {
        {
            const node& n = g().nodes[index];
            node_record& rec = records_[index];
            set_node(index);
            rec.entry = find_op(n);
            if (!rec.entry)
                return n.domain.empty() ? diag_.fail(status::unsupported_op, "op '{}' is not supported", n.op_type)
                                        : diag_.fail(status::unsupported_op, "op '{}' of domain '{}' is not supported", n.op_type, n.domain);
            if (status s = rec.entry->parse(n, rec.attrs, diag_); s != status::ok) return s;
            infer_context ctx(g(), index, values_, diag_, &folded_);
            ctx.set_kernels(&kernels_);
            if (status s = rec.entry->infer(rec.attrs.get(), ctx); s != status::ok) return diag_.failed() ? s : diag_.fail(s, "shape inference failed");
            bool all_constant = true;
            for (std::size_t k = 0; k < n.outputs.size(); ++k) {
                const value_id o = n.outputs[k];
                if (o == no_value) continue;
                if (!values_[o].known) return diag_.fail(status::invalid_model, "output {} '{}' was not inferred", k, g().values[o].name);
                if (status s = check_size(g().values[o].name, values_[o].type, values_[o].dims); s != status::ok) return s;
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
        const node& n = g().nodes[index];
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
        bind_context ctx(g(), index, values_, diag_, ins, outs, ws, steps);
        // The same kernels as at run time (so a folded value has the bits the step would give),
        // with packed weights that live only as long as this evaluation.
        std::vector<aligned_buffer> packed;
        kernel_context local = kernels_;
        local.packed = &packed;
        ctx.set_kernels(&local);
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
        const std::size_t nv = g().values.size();
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
            for (value_id in : g().nodes[index].inputs)
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
            info.name = g().values[v].name;
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
        for (std::size_t j = 0; j < g().outputs.size(); ++j) {
            const value_id v = g().outputs[j];
            const auto region = static_cast<std::uint32_t>(first_io_region + n_in + j);
            add_slot(outputs, v, region);
            const value& val = g().values[v];
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
        std::vector<std::uint32_t> workspace_buffer(g().nodes.size(), unused);
        const std::vector<std::uint32_t> join_last = plan_joins();
        for (std::uint32_t index : order_) {
            node_record& rec = records_[index];
            if (rec.folded) continue;
            const node& n = g().nodes[index];
            const std::uint32_t p = rec.position;
            for (std::size_t k = 0; k < n.outputs.size(); ++k) {
                const value_id v = n.outputs[k];
                if (v == no_value || located_[v]) continue;
                if (part_of_[v] != no_value) {  // a joined Concat's input: its bytes inside the output's buffer
                    const value_id whole = part_of_[v];
                    if (buffer_of_[whole] == unused) {  // the first of its inputs to be computed
                        buffer_of_[whole] = new_buffer(p, join_last[whole], align_up(bytes_of(whole), EMBER_ALIGNMENT));
                        buffer_last.push_back(buffers.back().last_step);
                        located_[whole] = true;
                    }
                    buffer_of_[v] = buffer_of_[whole];
                    located_[v] = true;
                    continue;
                }
                const std::uint32_t last = last_use_[v] == unused ? p : last_use_[v];
                const std::size_t bytes = align_up(bytes_of(v), EMBER_ALIGNMENT);
                std::uint32_t b = unused;
                if (k == 0 && options_.reuse_memory && has_flag(rec.entry->flags, op_flags::in_place) && !n.inputs.empty() &&
                    n.inputs[0] != no_value) {
                    const value_id in = n.inputs[0];
                    const std::uint32_t ib = buffer_of_[in];
                    // in place over in's own bytes (part of a joined buffer or the whole of one),
                    // when nothing else in its buffer is read later, nor by this node
                    bool alone = true;
                    for (std::size_t i = 1; i < n.inputs.size(); ++i)
                        alone = alone && (n.inputs[i] == in || n.inputs[i] == no_value || buffer_of_[n.inputs[i]] != ib);
                    if (ib != unused && alone && last_use_[in] == p && buffer_last[ib] == p && bytes_of(v) == bytes_of(in) &&
                        buffers[ib].bytes >= bytes) {
                        b = ib;
                        part_offset_[v] = part_offset_[in];
                    }
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
        if (arena_bytes_ > options_.max_arena_bytes)
            return diag_.fail(status::out_of_memory, "a session of this plan would need an arena of {} bytes, more than compile_options::max_arena_bytes ({})",
                              arena_bytes_, options_.max_arena_bytes);
        for (std::size_t k = 0; k < inputs.size(); ++k) inputs[k].arena_offset = offsets[slot_buffer[k]];
        for (std::size_t j = 0; j < outputs.size(); ++j) outputs[j].arena_offset = offsets[slot_buffer[inputs.size() + j]];
        for (std::size_t v = 0; v < nv; ++v)
            if (buffer_of_[v] != unused) loc_[v] = operand{arena_region, offsets[buffer_of_[v]] + part_offset_[v]};
        workspace_.assign(g().nodes.size(), operand{});
        for (std::size_t i = 0; i < g().nodes.size(); ++i)
            if (workspace_buffer[i] != unused) workspace_[i] = operand{arena_region, offsets[workspace_buffer[i]]};

        // placements, for tools and the planner's tests
        std::vector<value_placement>& placements = plan_access::placements(plan_);
        for (std::size_t k = 0; k < inputs.size() + outputs.size(); ++k) {
            const value_id v = k < inputs.size() ? live_inputs_[k] : g().outputs[k - inputs.size()];
            const io_info& info = k < inputs.size() ? inputs[k] : outputs[k - inputs.size()];
            placements.push_back(value_placement{v, operand{info.region, 0}, info.bytes, 0, end_position_, slot_buffer[k], info.arena_offset});
        }
        for (std::uint32_t index : order_) {
            if (records_[index].folded) continue;
            const std::uint32_t p = records_[index].position;
            for (value_id v : g().nodes[index].outputs)
                if (v != no_value && buffer_of_[v] != unused)
                    placements.push_back(value_placement{v, loc_[v], bytes_of(v), p, last_use_[v] == unused ? p : last_use_[v], buffer_of_[v],
                                                         loc_[v].offset, part_of_[v]});
        }
        return status::ok;
    }

    // Concats computed in place ("joined"): where every dimension before a Concat's axis is 1,
    // each input is one contiguous run of the output's bytes, so the nodes that compute the inputs
    // can write them straight there and the Concat has nothing left to do (SqueezeNet's fire
    // modules copied a twentieth of the model's time). A Concat joins when its output is an
    // intermediate (not a graph output) and each input is computed by a scheduled node, is no
    // graph output, joins no other Concat, is not itself a joined output, appears once, and starts
    // on an EMBER_ALIGNMENT boundary (as every buffer does: a kernel may round its writes up to
    // it). Marks those Concats joined, sets part_of_ and part_offset_ of their inputs, and returns
    // per value the last use of a joined output's buffer: the latest of its own and its inputs'.
    std::vector<std::uint32_t> plan_joins() {
        const std::size_t nv = g().values.size();
        part_of_.assign(nv, no_value);
        part_offset_.assign(nv, 0);
        std::vector<std::uint32_t> last(nv, 0);
        if (!options_.reuse_memory) return last;
        std::vector<bool> whole(nv, false);
        for (std::uint32_t index : order_) {
            node_record& rec = records_[index];
            const node& n = g().nodes[index];
            if (rec.folded || !has_flag(rec.entry->flags, op_flags::concatenates) || n.outputs.size() != 1 || n.outputs[0] == no_value) continue;
            const value_id out = n.outputs[0];
            const attribute* axis_attr = n.find_attribute("axis");
            std::size_t axis = 0;
            if (located_[out] || !axis_attr || !normalize_axis(axis_attr->i, values_[out].dims.rank(), axis)) continue;
            bool ok = true;
            for (std::size_t d = 0; d < axis; ++d) ok = ok && values_[out].dims[d] == 1;
            std::size_t offset = 0;
            std::uint32_t end = last_use_[out] == 0xffffffffu ? rec.position : std::max(rec.position, last_use_[out]);
            for (std::size_t i = 0; ok && i < n.inputs.size(); ++i) {
                const value_id in = n.inputs[i];
                ok = in != no_value && g().values[in].kind == value_kind::node_output && !values_[in].constant && !located_[in] &&
                     part_of_[in] == no_value && !whole[in] && offset % EMBER_ALIGNMENT == 0;
                for (std::size_t j = 0; ok && j < i; ++j) ok = n.inputs[j] != in;
                if (ok) {
                    offset += bytes_of(in);
                    end = std::max(end, last_use_[in]);
                }
            }
            if (!ok || offset != bytes_of(out)) continue;
            offset = 0;
            for (value_id in : n.inputs) {
                part_of_[in] = out;
                part_offset_[in] = offset;
                offset += bytes_of(in);
            }
            rec.joined = true;
            whole[out] = true;
            last[out] = end;
        }
        return last;
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
                for (value_id in : g().nodes[index].inputs)
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
            if (rec.folded || rec.joined) continue;
            const node& n = g().nodes[index];
            set_node(index);
            ins.clear();
            outs.clear();
            for (value_id in : n.inputs) ins.push_back(in == no_value ? operand{} : loc_[in]);
            for (value_id out : n.outputs) outs.push_back(out == no_value ? operand{} : loc_[out]);
            pending.clear();
            bind_context ctx(g(), index, values_, diag_, ins, outs, workspace_[index], pending);
            ctx.set_kernels(&kernels_);
            if (status s = rec.entry->bind(rec.attrs.get(), ctx); s != status::ok) return diag_.failed() ? s : diag_.fail(s, "binding failed");
            if (lowering_) {
                const span<const bind_context::pending_step> emitted(pending.data(), pending.size());
                if (status s = lowering_->lower(lowering_->self, ctx, emitted); s != status::ok)
                    return diag_.failed() ? s : diag_.fail(s, "the backend could not run this node");
                continue;
            }
            for (bind_context::pending_step& p : pending) {
                steps.push_back(step{p.fn, p.args.get(), origin_[index]});
                args.push_back(std::move(p.args));
                plan_access::step_names(plan_).push_back(n.name.empty() ? describe(index) : n.name);
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

    const graph& src_;
    // What is compiled: src_ itself, or (with passes or bodies) work_: src_'s structure rewritten
    // by the passes, nodes with bodies listing the values those capture as extra inputs
    // (ops/subgraph.hpp). work_'s constants below src_.constants.size() are empty placeholders
    // for src_'s; the passes' new constants follow them (constant_at()).
    graph work_;
    const graph* g_ = nullptr;
    std::vector<std::int32_t> origin_;  // per node of *g_: the index of the user's node it comes from
    pass_counts counts_;
    const compile_options& options_;
    diagnostics diag_;
    const step_lowering* lowering_ = nullptr;
    std::vector<std::uint32_t> order_;
    std::vector<value_state> values_;
    std::vector<value_id> live_inputs_;  // graph inputs not fixed by input_values: the plan's inputs
    std::deque<tensor> folded_;
    std::vector<node_record> records_;
    std::vector<std::uint32_t> last_use_;
    std::vector<operand> loc_;
    std::vector<bool> located_;
    std::vector<std::uint32_t> buffer_of_;
    std::vector<value_id> part_of_;         // per value: the joined Concat output it is computed into, or no_value
    std::vector<std::size_t> part_offset_;  // per value: where its bytes start in its buffer
    std::vector<operand> workspace_;
    std::vector<output_copy> copies_;
    std::uint32_t end_position_ = 0;
    std::size_t arena_bytes_ = 0;
    std::size_t folded_count_ = 0;
    kernel_context kernels_;
    plan plan_;
};

} // namespace detail

/// Compiles a graph into an immutable plan: validates it, runs the graph passes
/// (options.passes) on a copy of it, infers shapes, folds constants, plans the arena, packs
/// weights and binds kernels. Allocates; may log through options.log. Fails with invalid_model,
/// unsupported_op, shape_mismatch, invalid_argument or out_of_memory; the error_info names the
/// node (of g, also when a pass rewrote it).
[[nodiscard]] inline result<plan> compile(const graph& g, const compile_options& options = {}) {
    return detail::compiler(g, options).run();
}

/// The graph compile(g, options) compiles: g after the graph passes of options.passes (the
/// shape-dependent ones after shape inference, which is why it takes the same options). Inputs,
/// outputs and their names are g's; value ids are g's too (values the passes bypassed stay,
/// unused, and new constants come after g's values); nodes may be fewer, and fused ones are ops
/// of domain "ember". For tests and tools that inspect what the passes did; g is not changed.
/// Allocates (copies g's constants). Fails as compile() does.
[[nodiscard]] inline result<graph> optimize(const graph& g, const compile_options& options = {}) {
    return detail::compiler(g, options).optimized();
}

EMBER_NAMESPACE_END

// If, Loop and Scan compile their bodies with compile(), so they come after it.
#include "ember/ops/control_flow.hpp"
