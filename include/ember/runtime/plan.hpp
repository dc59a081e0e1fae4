// SPDX-License-Identifier: Apache-2.0
// plan: the immutable result of compile(): a flat list of steps, the packed weights, the arena
// size and the table of inputs and outputs. Shareable across threads; run it with a session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/allocator.hpp"
#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"
#include "ember/core/span.hpp"
#include "ember/detail/erased.hpp"
#include "ember/runtime/step.hpp"

EMBER_NAMESPACE_BEGIN

/// A graph input or output as the plan sees it.
struct io_info {
    std::string name;
    dtype type = dtype::undefined;
    shape dims;
    std::size_t bytes = 0;          ///< dims.elements() * size_of(type)
    std::uint32_t region = 0;       ///< the operand region of this slot
    std::size_t arena_offset = 0;   ///< where the slot's default buffer lives in the arena
};

/// Where one graph value lives in the plan, for tools and tests (planner invariants, memory maps).
struct value_placement {
    std::uint32_t value = 0;     ///< graph value id
    operand where;
    std::size_t bytes = 0;       ///< exact size of the value (not rounded)
    std::uint32_t first_step = 0;  ///< schedule positions (see lifetime); io slots span the whole plan
    std::uint32_t last_step = 0;
    std::uint32_t buffer = 0;        ///< arena buffer id: values sharing one are an in-place chain
    std::size_t arena_offset = 0;    ///< where the bytes are in the arena (io slots: their default)
    /// The joined Concat output whose bytes this value is computed into (its buffer's), or
    /// 0xffffffff: such values share their buffer with the output and with each other, side by side.
    std::uint32_t part_of = 0xffffffffu;
};

namespace detail {
struct plan_access;
}

class plan {
public:
    plan() = default;
    plan(plan&&) noexcept = default;
    plan& operator=(plan&&) noexcept = default;
    plan(const plan&) = delete;
    plan& operator=(const plan&) = delete;

    /// Bytes of arena one session needs: exact, fixed at compile().
    std::size_t arena_bytes() const noexcept { return arena_bytes_; }
    /// The arena must start at an address aligned to this (a std::vector<std::byte> is).
    static constexpr std::size_t arena_alignment() noexcept { return alignof(std::max_align_t); }
    /// Bytes of constant data (weights, and the kernels' packed copies of them) the plan owns.
    std::size_t weights_bytes() const noexcept {
        std::size_t bytes = weights_.size_bytes();
        for (const aligned_buffer& b : packed_) bytes += b.size_bytes();
        return bytes;
    }
    /// The instruction set the plan's kernels use ("avx512", "avx2", "sse2", "neon"), or
    /// "reference" when compile_options::isa asked for the reference kernels.
    std::string_view isa() const noexcept { return isa_; }

    span<const step> steps() const noexcept { return {steps_.data(), steps_.size()}; }
    /// Name of the graph node step i runs ("" for steps compile() added itself).
    std::string_view step_name(std::size_t i) const noexcept { return step_names_[i]; }
    std::string_view step_op(std::size_t i) const noexcept { return step_ops_[i]; }

    std::size_t input_count() const noexcept { return inputs_.size(); }
    std::size_t output_count() const noexcept { return outputs_.size(); }
    const io_info& input(std::size_t i) const noexcept { return inputs_[i]; }
    const io_info& output(std::size_t i) const noexcept { return outputs_[i]; }
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    /// Index of the input with this name, or npos.
    std::size_t input_index(std::string_view name) const noexcept { return find(inputs_, name); }
    std::size_t output_index(std::string_view name) const noexcept { return find(outputs_, name); }

    span<const value_placement> placements() const noexcept { return {placements_.data(), placements_.size()}; }
    const std::byte* weights() const noexcept { return weights_.data(); }
    /// Number of regions a session's table holds (arena, weights, one per io slot).
    std::size_t region_count() const noexcept { return first_io_region + inputs_.size() + outputs_.size(); }
    const allocator& alloc() const noexcept { return alloc_; }

private:
    friend struct detail::plan_access;
    static std::size_t find(const std::vector<io_info>& list, std::string_view name) noexcept {
        for (std::size_t i = 0; i < list.size(); ++i)
            if (list[i].name == name) return i;
        return npos;
    }

    std::vector<step> steps_;
    std::vector<std::string> step_names_;
    std::vector<std::string> step_ops_;
    std::vector<detail::erased> args_;
    aligned_buffer weights_;
    std::vector<aligned_buffer> packed_;
    std::string_view isa_ = "reference";
    std::vector<io_info> inputs_;
    std::vector<io_info> outputs_;
    std::vector<value_placement> placements_;
    std::size_t arena_bytes_ = 0;
    allocator alloc_ = default_allocator();
};

namespace detail {
/// compile()'s way in; not for users.
struct plan_access {
    static std::vector<step>& steps(plan& p) { return p.steps_; }
    static std::vector<std::string>& step_names(plan& p) { return p.step_names_; }
    static std::vector<std::string>& step_ops(plan& p) { return p.step_ops_; }
    static std::vector<detail::erased>& args(plan& p) { return p.args_; }
    static aligned_buffer& weights(plan& p) { return p.weights_; }
    static std::vector<aligned_buffer>& packed(plan& p) { return p.packed_; }
    static std::string_view& isa(plan& p) { return p.isa_; }
    static std::vector<io_info>& inputs(plan& p) { return p.inputs_; }
    static std::vector<io_info>& outputs(plan& p) { return p.outputs_; }
    static std::vector<value_placement>& placements(plan& p) { return p.placements_; }
    static std::size_t& arena_bytes(plan& p) { return p.arena_bytes_; }
    static allocator& alloc(plan& p) { return p.alloc_; }
};
} // namespace detail

EMBER_NAMESPACE_END
