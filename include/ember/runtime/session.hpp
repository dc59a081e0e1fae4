// SPDX-License-Identifier: Apache-2.0
// session: per-thread state for running a plan over one arena. Cheap to create; not thread-safe
// (one per thread, all sharing one plan). bind_*(), run() and run_for() never allocate, throw or
// log, and take no lock of their own (an executor may: thread_pool's parallel_for does).
// A host may hook profiling in: set_profile_hook() gets a plain function called after each step
// with its name, op, thread and begin/end times (runtime/profile.hpp records them as a trace).
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

/// Whether run() and run_for() call a profile hook (config.hpp, EMBER_ENABLE_PROFILING).
inline constexpr bool profiling_enabled = EMBER_ENABLE_PROFILING != 0;

/// One step a session ran, as a profile hook sees it. name and op view the plan's strings
/// (plan::step_name/step_op): valid while the plan lives.
struct step_event {
    std::size_t step = 0;      ///< index into plan::steps()
    std::string_view name;     ///< the graph node's name ("output y" for a copy compile() added)
    std::string_view op;       ///< its op type: "Conv", "FusedConv", "Copy", ...
    std::uint32_t thread = 0;  ///< the thread that ran it: this_thread_number(), not the OS's id
    std::int64_t begin_ns = 0;  ///< std::chrono::steady_clock time, in ns since its epoch
    std::int64_t end_ns = 0;    ///< the same, when the step returned (>= begin_ns)
};

/// Called after each step a session runs, on the thread that called run() or run_for() (a
/// step's parallel chunks are inside its begin..end). Keep it short; it must not throw.
using profile_fn = void (*)(void* user, const step_event& event) noexcept;

/// A profile hook: a plain function and its user pointer (no allocation, no virtual call).
struct profile_hook {
    profile_fn fn = nullptr;
    void* user = nullptr;
};

/// A small number for the calling thread: 1 for the first thread that asks, 2 for the next, and
/// so on; the same for the thread's life. Lock-free; allocates nothing in the program's own
/// code (a thread_local of a plain integer).
inline std::uint32_t this_thread_number() noexcept {
    static std::atomic<std::uint32_t> next{0};
    static thread_local std::uint32_t mine = 0;
    if (mine == 0) mine = next.fetch_add(1, std::memory_order_relaxed) + 1;
    return mine;
}

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

    /// Calls hook.fn(hook.user, event) after each step that run() and run_for() run, until set
    /// to another hook or to {} (none). With EMBER_ENABLE_PROFILING 0 the hook is kept but never
    /// called. The hook and its user data must outlive the runs that call it.
    void set_profile_hook(profile_hook hook) noexcept { hook_ = hook; }
    void set_profile_hook(profile_fn fn, void* user) noexcept { hook_ = {fn, user}; }
    profile_hook get_profile_hook() const noexcept { return hook_; }

    /// Each step's time (by index) the last time it was timed: by run_for(), which times every
    /// step, or by run() while a profile hook is set. Zero for a step not timed yet.
    span<const std::chrono::nanoseconds> step_times() const noexcept { return {step_time_.data(), step_time_.size()}; }

    /// Runs every step of the plan. No allocation, no lock of its own, no exception, no logging.
    /// Returns invalid_argument when state() is not ok; otherwise ok (or the code a kernel
    /// reported). A run started by run_for() and not finished is dropped: run() starts from the
    /// first step. With a profile hook set, each step is timed and reported (the check is made
    /// once per run; without a hook the loop is the plain one).
    [[nodiscard]] status run() noexcept {
        if (state_ != status::ok) return status::invalid_argument;
        next_step_ = 0;
        if constexpr (profiling_enabled)
            if (hook_.fn) return run_all<true>();
        return run_all<false>();
    }

    /// Runs part of the plan, for a frame loop that gives inference a slice of each frame: the
    /// steps from where the last call stopped, within `budget`, and returns in_progress() while
    /// steps remain or done() after the last one. The outputs are those run() gives, bit for bit.
    /// Between calls the inputs (and any bound buffer) must stay as they are and the outputs are
    /// not ready. Each call runs at least one step. With a time budget, a step is started only
    /// if the time spent so far plus what that step took the last time it was timed (see
    /// step_times()) fits the budget, so a call overruns by at most one step's misjudged time
    /// (a profile hook's own time counts as time spent). After done() or a failure, the next
    /// call starts a new run. No allocation, no lock of its own, no exception, no logging.
    [[nodiscard]] run_progress run_for(run_budget budget) noexcept {
        run_progress progress;
        if (state_ != status::ok) {
            progress.code = status::invalid_argument;
            return progress;
        }
        const span<const step> steps = plan_->steps();
        const clock::time_point start = clock::now();
        clock::time_point before = start;
        std::atomic<std::uint8_t> error{0};
        const run_context ctx{regions_.data(), exec_, &error};
        const profile_hook hook = profiling_enabled ? hook_ : profile_hook{};
        const std::uint32_t thread = hook.fn ? this_thread_number() : 0;
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
            if (profiling_enabled && hook.fn) {
                hook.fn(hook.user, event(next_step_, thread, before, after));
                before = clock::now();  // the hook's time is not the next step's
            } else {
                before = after;
            }
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
    using clock = std::chrono::steady_clock;

    /// run()'s loop, with (Profiled) or without timing and reporting each step.
    template <bool Profiled>
    status run_all() noexcept {
        std::atomic<std::uint8_t> error{0};
        const run_context ctx{regions_.data(), exec_, &error};
        const span<const step> steps = plan_->steps();
        [[maybe_unused]] const std::uint32_t thread = Profiled ? this_thread_number() : 0;
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const step& s = steps[i];
            if constexpr (Profiled) {
                const clock::time_point begin = clock::now();
                s.fn(s.args, ctx);
                const clock::time_point end = clock::now();
                step_time_[i] = std::chrono::duration_cast<std::chrono::nanoseconds>(end - begin);
                hook_.fn(hook_.user, event(i, thread, begin, end));
            } else {
                s.fn(s.args, ctx);
            }
            if (error.load(std::memory_order_relaxed) != 0) return static_cast<status>(error.load(std::memory_order_relaxed));
        }
        return status::ok;
    }

    step_event event(std::size_t i, std::uint32_t thread, clock::time_point begin, clock::time_point end) const noexcept {
        using ns = std::chrono::nanoseconds;
        return {i, plan_->step_name(i), plan_->step_op(i), thread, std::chrono::duration_cast<ns>(begin.time_since_epoch()).count(),
                std::chrono::duration_cast<ns>(end.time_since_epoch()).count()};
    }

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
    std::vector<std::chrono::nanoseconds> step_time_;  // each step's last time (step_times())
    std::size_t next_step_ = 0;                        // where run_for() resumes
    profile_hook hook_;
    status state_ = status::ok;
};

EMBER_NAMESPACE_END
