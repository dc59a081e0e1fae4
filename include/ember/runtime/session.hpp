// SPDX-License-Identifier: Apache-2.0
// session: per-thread state for running a plan over one arena. Cheap to create; not thread-safe
// (one per thread, all sharing one plan). bind_*(), run() and run_for() never allocate, throw or
// log, and take no lock of their own (an executor may: thread_pool's parallel_for does).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <vector>

#include "ember/config.hpp"
#include "ember/core/allocator.hpp"
#include "ember/core/span.hpp"
#include "ember/core/tensor.hpp"
#include "ember/runtime/plan.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN

/// How much of a plan one session::run_for() call may run. Either limit may be 0 (none); with
/// both 0 the call runs the rest of the plan.
struct run_budget {
    std::size_t max_steps = 0;            ///< at most this many steps
    std::chrono::nanoseconds max_time{0};  ///< start no step that is expected to end after this

    static run_budget steps(std::size_t n) noexcept { return {n, {}}; }
    static run_budget time(std::chrono::nanoseconds t) noexcept { return {0, t}; }
};

/// What session::run_for() did: finished the run (outputs ready), stopped within its budget with
/// steps left (call again to resume), or failed (code says why, as run() would).
struct run_progress {
    status code = status::ok;
    bool finished = false;
    std::size_t steps_done = 0;  ///< steps of the plan run so far in this run

    bool done() const noexcept { return code == status::ok && finished; }
    bool in_progress() const noexcept { return code == status::ok && !finished; }
};

class session {
public:
    /// Runs p over caller-owned memory: arena must hold p.arena_bytes() bytes and start at an
    /// address aligned to plan::arena_alignment(); otherwise state() and run() report
    /// invalid_argument. exec (may be null: run on the calling thread) must outlive the session.
    /// Allocates the small region table (a few pointers); never the arena.
    session(const plan& p, span<std::byte> arena, const executor* exec = nullptr) : plan_(&p), exec_(exec) {
        init(arena.data(), arena.size());
    }
    /// Runs p over an arena the session allocates through the plan's allocator; state() reports
    /// out_of_memory when that fails.
    explicit session(const plan& p, const executor* exec = nullptr) : plan_(&p), exec_(exec) {
        if (!owned_.allocate(p.arena_bytes(), p.alloc())) {
            state_ = status::out_of_memory;
            return;
        }
        init(owned_.data(), owned_.size_bytes());
    }

    session(session&&) noexcept = default;
    session& operator=(session&&) noexcept = default;

    /// ok, or why the session cannot run (arena too small or misaligned, out of memory).
    status state() const noexcept { return state_; }
    const plan& compiled_plan() const noexcept { return *plan_; }
    void set_executor(const executor* exec) noexcept { exec_ = exec; }

    /// Points input `index` at the caller's buffer, which must stay valid and unchanged while
    /// run() executes. bytes must equal the input's size, data must be aligned to its element.
    /// Until bound, an input lives in the arena (see input()).
    status bind_input(std::size_t index, const void* data, std::size_t bytes) noexcept {
        if (index >= plan_->input_count()) return status::invalid_argument;
        return bind(plan_->input(index), const_cast<void*>(data), bytes);
    }
    /// Points output `index` at the caller's buffer, written by run(). Until bound, an output lives
    /// in the arena (see output()).
    status bind_output(std::size_t index, void* data, std::size_t bytes) noexcept {
        if (index >= plan_->output_count()) return status::invalid_argument;
        return bind(plan_->output(index), data, bytes);
    }
    /// The same, by name (invalid_argument for a name the plan has no input or output of).
    status bind_input(std::string_view name, const void* data, std::size_t bytes) noexcept {
        return bind_input(plan_->input_index(name), data, bytes);
    }
    status bind_output(std::string_view name, void* data, std::size_t bytes) noexcept {
        return bind_output(plan_->output_index(name), data, bytes);
    }

    /// Typed binding from an array, std::vector, std::array, span or tensor_view values():
    /// the element type must be the input's dtype and the element count its size.
    template <class Range>
    status bind_input(std::size_t index, const Range& values) noexcept {
        if (index >= plan_->input_count() || !matches(plan_->input(index), values)) return status::invalid_argument;
        return bind_input(index, std::data(values), std::size(values) * sizeof(*std::data(values)));
    }
    template <class Range>
    status bind_input(std::string_view name, const Range& values) noexcept {
        return bind_input(plan_->input_index(name), values);
    }
    template <class Range>
    status bind_output(std::size_t index, Range& values) noexcept {
        if (index >= plan_->output_count() || !matches(plan_->output(index), values)) return status::invalid_argument;
        return bind_output(index, std::data(values), std::size(values) * sizeof(*std::data(values)));
    }
    template <class Range>
    status bind_output(std::string_view name, Range& values) noexcept {
        return bind_output(plan_->output_index(name), values);
    }

    /// Detaches a bound input or output: it lives in the arena again.
    void unbind_input(std::size_t index) noexcept {
        if (index < plan_->input_count()) reset_region(plan_->input(index));
    }
    void unbind_output(std::size_t index) noexcept {
        if (index < plan_->output_count()) reset_region(plan_->output(index));
    }

    /// The buffer input `index` currently reads: the bound one, or its slot in the arena (write
    /// into it to feed the model without a copy). Empty when T is not the input's type.
    template <class T>
    tensor_view<T> input(std::size_t index) noexcept {
        return view<T>(index < plan_->input_count() ? &plan_->input(index) : nullptr);
    }
    /// The buffer output `index` is written to: the bound one, or its slot in the arena.
    template <class T>
    tensor_view<const T> output(std::size_t index) const noexcept {
        return const_cast<session*>(this)->view<T>(index < plan_->output_count() ? &plan_->output(index) : nullptr);
    }

    /// Runs every step of the plan. No allocation, no lock of its own, no exception, no logging.
    /// Returns invalid_argument when state() is not ok; otherwise ok.
    /// A run started by run_for() and not finished is dropped: run() starts from the first step.
    [[nodiscard]] status run() noexcept {
        if (state_ != status::ok) return status::invalid_argument;
        next_step_ = 0;
        std::atomic<std::uint8_t> error{0};
        const run_context ctx{regions_.data(), exec_, &error};
        for (const step& s : plan_->steps()) {
            s.fn(s.args, ctx);
            if (error.load(std::memory_order_relaxed) != 0) return static_cast<status>(error.load(std::memory_order_relaxed));
        }
        return status::ok;
    }

    /// Runs part of the plan, for a frame loop that gives inference a slice of each frame: the
    /// steps from where the last call stopped, within `budget`, and returns in_progress() while
    /// steps remain or done() after the last one. The outputs are those run() gives, bit for bit.
    /// Between calls the inputs (and any bound buffer) must stay as they are and the outputs are
    /// not ready. Each call runs at least one step. With a time budget, a step is started only
    /// if the time spent so far plus what that step took the last time run_for() ran it fits the
    /// budget, so a call overruns by at most one step's misjudged time. After done() or a failure,
    /// the next call starts a new run. No allocation, no lock of its own, no exception, no logging.
    [[nodiscard]] run_progress run_for(run_budget budget) noexcept {
        run_progress progress;
        if (state_ != status::ok) {
            progress.code = status::invalid_argument;
            return progress;
        }
        const span<const step> steps = plan_->steps();
        using clock = std::chrono::steady_clock;
        const clock::time_point start = clock::now();
        clock::time_point before = start;
        std::atomic<std::uint8_t> error{0};
        const run_context ctx{regions_.data(), exec_, &error};
        std::size_t ran = 0;
        while (next_step_ < steps.size()) {
            if (ran > 0) {
                if (budget.max_steps != 0 && ran >= budget.max_steps) break;
                if (budget.max_time.count() > 0 && (before - start) + step_time_[next_step_] > budget.max_time) break;
            }
            const step& s = steps[next_step_];
            s.fn(s.args, ctx);
            const clock::time_point after = clock::now();
            step_time_[next_step_] = std::chrono::duration_cast<std::chrono::nanoseconds>(after - before);
            before = after;
            ++next_step_;
            ++ran;
            if (const std::uint8_t code = error.load(std::memory_order_relaxed); code != 0) {
                progress.code = static_cast<status>(code);
                progress.steps_done = next_step_;
                next_step_ = 0;
                return progress;
            }
        }
        progress.steps_done = next_step_;
        progress.finished = next_step_ == steps.size();
        if (progress.finished) next_step_ = 0;
        return progress;
    }

private:
    void init(std::byte* arena, std::size_t bytes) {
        arena_ = arena;
        regions_.assign(plan_->region_count(), nullptr);
        step_time_.assign(plan_->steps().size(), std::chrono::nanoseconds{0});
        if (bytes < plan_->arena_bytes() || (plan_->arena_bytes() != 0 && !arena) ||
            reinterpret_cast<std::uintptr_t>(arena) % plan::arena_alignment() != 0) {
            state_ = status::invalid_argument;
            return;
        }
        regions_[arena_region] = arena;
        regions_[weights_region] = const_cast<std::byte*>(plan_->weights());
        for (std::size_t i = 0; i < plan_->input_count(); ++i) reset_region(plan_->input(i));
        for (std::size_t i = 0; i < plan_->output_count(); ++i) reset_region(plan_->output(i));
    }

    void reset_region(const io_info& io) noexcept {
        if (arena_) regions_[io.region] = arena_ + io.arena_offset;
    }

    status bind(const io_info& io, void* data, std::size_t bytes) noexcept {
        if (state_ != status::ok || bytes != io.bytes || (!data && bytes != 0) ||
            reinterpret_cast<std::uintptr_t>(data) % (size_of(io.type) ? size_of(io.type) : 1) != 0)
            return status::invalid_argument;
        regions_[io.region] = static_cast<std::byte*>(data);
        return status::ok;
    }

    template <class Range>
    static bool matches(const io_info& io, const Range& values) noexcept {
        using T = std::remove_cv_t<std::remove_reference_t<decltype(*std::data(values))>>;
        return dtype_of<T> == io.type && std::size(values) * sizeof(T) == io.bytes;
    }

    template <class T>
    tensor_view<T> view(const io_info* io) noexcept {
        if (!io || io->type != dtype_of<T> || state_ != status::ok) return {};
        return tensor_view<T>(reinterpret_cast<T*>(regions_[io->region]), io->dims);
    }

    const plan* plan_ = nullptr;
    const executor* exec_ = nullptr;
    aligned_buffer owned_;
    std::byte* arena_ = nullptr;
    std::vector<std::byte*> regions_;
    std::vector<std::chrono::nanoseconds> step_time_;  // each step's last time, for run_for()
    std::size_t next_step_ = 0;                        // where run_for() resumes
    status state_ = status::ok;
};

EMBER_NAMESPACE_END
