// SPDX-License-Identifier: Apache-2.0
// batcher: dynamic batching for a server or any host with many threads asking for inferences at
// once. Callers on any thread hand in one request (one or more items of the model's batch axis)
// and block; one worker thread that the batcher owns gathers the waiting requests into one batch
// (up to max_batch items, or whatever came within max_delay of the first), runs it on a plan
// compiled for that batch size, and hands every caller its own rows of the outputs. With
// `instances` > 1, that many workers take batches from the queue and run them side by side.
//
//     ember::batcher_options o;
//     o.max_batch = 16;
//     o.max_delay = std::chrono::microseconds(2000);
//     o.exec = &pool_executor;                     // where each batch runs (null: the worker alone)
//     auto b = ember::batcher::create(graph, {}, o);  // compiles a plan per batch size
//     // on any thread, any number of threads at once:
//     const void* in[] = {image.data()};  void* out[] = {scores.data()};
//     ember::status s = (*b)->run(in, out);     // ok, busy (shed: try later), or a run failure
//
// Every graph input and output must have the batch as its first axis: at batch b its shape is the
// single item's with b in front. The plans are compiled for the batch sizes in
// batcher_options::batch_sizes (default 1, 2, 4, ... up to max_batch, and max_batch); a batch of
// n items runs on the smallest plan that holds n, with the rows past n zeroed. An instance's plans
// share one arena. run() allocates nothing and throws nothing; it takes the batcher's mutex to queue and waits
// on a condition variable of its own until its batch is done.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ember/compile/compile.hpp"
#include "ember/config.hpp"
#include "ember/core/allocator.hpp"
#include "ember/core/span.hpp"
#include "ember/detail/format.hpp"
#include "ember/graph/graph.hpp"
#include "ember/runtime/executor.hpp"
#include "ember/runtime/plan.hpp"
#include "ember/runtime/session.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN

struct batcher_options {
    /// The most items one batch holds (and the largest plan compiled).
    std::size_t max_batch = 8;
    /// How long the first request of a batch waits for others to join it. 0: a batch is whatever
    /// is queued when the worker is free (still batching under load, no added latency when idle).
    std::chrono::microseconds max_delay{1000};
    /// Requests that may wait at once; one more is refused with status::busy.
    std::size_t max_queue = 1024;
    /// Load shedding (a circuit breaker): a request that arrives while the oldest waiting request
    /// has waited longer than this is refused at once with status::busy instead of queueing.
    /// 0 = never. Make it longer than max_delay.
    std::chrono::microseconds shed_after{0};
    /// The batch sizes to compile plans for, each in [1, max_batch]; empty = 1, 2, 4, ... below
    /// max_batch, and max_batch. max_batch is always added.
    std::vector<std::size_t> batch_sizes;
    /// Workers, each with its own sessions and arena, that run batches at the same time (Triton's
    /// model instances). On a CPU, convolution networks run no faster per item in a batch of 16
    /// than alone (the activations of the whole batch leave the caches), so what a server gains
    /// is running requests side by side: give one instance per core and no executor, or one
    /// instance and a thread pool's executor.
    std::size_t instances = 1;
    /// Runs each batch's kernels (a thread_pool's executor, or the host's); null = the instance's
    /// worker thread alone. Shared by every instance; must outlive the batcher.
    const executor* exec = nullptr;
};

/// Counters since the batcher was created (each read on its own: a snapshot, not a transaction).
struct batcher_stats {
    std::uint64_t requests = 0;   ///< accepted by run()
    std::uint64_t items = 0;      ///< items of the accepted requests
    std::uint64_t batches = 0;    ///< batches run
    std::uint64_t refused = 0;    ///< run() calls answered busy (queue full, shed, stopping)
    std::uint64_t shed = 0;       ///< of those, refused because the queue waited past shed_after
    std::uint64_t failed = 0;     ///< requests whose batch failed to run
    std::size_t queue_depth = 0;  ///< requests waiting now (not counting the running batch)
    /// batch_items[n]: batches that ran with n items (index 0 unused), n <= max_batch.
    std::vector<std::uint64_t> batch_items;
};

class batcher {
public:
    /// Compiles `g` (with `base`'s options; its input_shapes may give an input's item shape, the
    /// first axis being replaced by the batch) for every batch size, checks that every input and
    /// output scales with the batch on its first axis, and starts the worker thread. A declared
    /// first axis of 1 (a model exported at batch 1) or a symbol is the batch; a number above 1
    /// is refused unless input_shapes gives the item shape (it may not be a batch at all).
    static result<std::unique_ptr<batcher>> create(const graph& g, const compile_options& base, const batcher_options& options) {
        if (options.max_batch == 0) return error_info{status::invalid_argument, -1, "batcher: max_batch must be at least 1"};
        if (options.max_queue == 0) return error_info{status::invalid_argument, -1, "batcher: max_queue must be at least 1"};
        if (options.instances == 0) return error_info{status::invalid_argument, -1, "batcher: instances must be at least 1"};
        std::vector<std::size_t> sizes = options.batch_sizes;
        if (sizes.empty())
            for (std::size_t b = 1; b < options.max_batch; b *= 2) sizes.push_back(b);
        sizes.push_back(options.max_batch);
        for (std::size_t b : sizes)
            if (b == 0 || b > options.max_batch)
                return error_info{status::invalid_argument, -1,
                                  detail::format("batcher: batch size {} is outside [1, max_batch = {}]", b, options.max_batch)};
        std::sort(sizes.begin(), sizes.end());
        sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());

        // Models exported for one fixed batch (torch.onnx's default: [1, 3, 224, 224]) declare
        // the first axis as a number; it becomes a free dimension here, and the check below proves
        // the outputs follow it.
        graph free_batch = g;
        for (value_id v : free_batch.inputs) {
            partial_shape& declared = free_batch.values[v].declared;
            if (declared.rank_known && declared.rank() > 0) declared.dims[0] = dim();
        }
        for (value_id v : free_batch.outputs) {
            partial_shape& declared = free_batch.values[v].declared;
            if (declared.rank_known && declared.rank() > 0) declared.dims[0] = dim();
        }

        std::unique_ptr<batcher> self(new batcher(options));
        for (std::size_t b : sizes) {
            result<compile_options> copts = options_for(g, base, b);
            if (!copts) return copts.error();
            result<plan> p = compile(free_batch, *copts);
            if (!p) {
                error_info e = p.error();
                e.message = detail::format("batcher: compiling for batch {}: {}", b, e.message);
                return e;
            }
            self->plans_.push_back({b, std::make_unique<plan>(*std::move(p))});
        }
        if (status s = self->check_and_allocate(); s != status::ok) return error_info{s, -1, self->error_};
        for (std::unique_ptr<instance>& w : self->instances_) w->thread = std::thread([raw = self.get(), one = w.get()] { raw->work(*one); });
        return self;
    }

    ~batcher() { stop(); }
    batcher(const batcher&) = delete;
    batcher& operator=(const batcher&) = delete;

    /// The plan of the smallest batch size: its inputs and outputs name the model's, and their
    /// bytes / first dimension give one item's size.
    const plan& smallest_plan() const noexcept { return *plans_.front().compiled; }
    std::size_t max_batch() const noexcept { return options_.max_batch; }
    /// Bytes of one item of input / output i.
    std::size_t input_item_bytes(std::size_t i) const noexcept { return in_item_[i]; }
    std::size_t output_item_bytes(std::size_t i) const noexcept { return out_item_[i]; }

    /// Runs `items` items (1 <= items <= max_batch) as part of a batch and blocks until they are
    /// done. inputs[i] holds items * input_item_bytes(i) bytes of input i, in the plan's order;
    /// outputs[i] receives items * output_item_bytes(i) bytes of output i. Returns ok, busy when
    /// refused (queue full, shed, stopping), invalid_argument for wrong counts, or the status of a
    /// failed run. Thread-safe; no allocation, no exception.
    [[nodiscard]] status run(span<const void* const> inputs, span<void* const> outputs, std::size_t items = 1) noexcept {
        if (inputs.size() != in_item_.size() || outputs.size() != out_item_.size() || items == 0 || items > options_.max_batch)
            return status::invalid_argument;
        request r;
        r.inputs = inputs.data();
        r.outputs = outputs.data();
        r.items = items;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            const clock::time_point now = clock::now();
            const bool full = stopping_ || count_ == queue_.size();
            const bool shed = !full && options_.shed_after.count() > 0 && count_ > 0 && now - queue_[head_]->arrival > options_.shed_after;
            if (full || shed) {
                refused_.fetch_add(1, std::memory_order_relaxed);
                if (shed) shed_.fetch_add(1, std::memory_order_relaxed);
                return status::busy;
            }
            r.arrival = now;
            queue_[(head_ + count_) % queue_.size()] = &r;
            ++count_;
            queued_items_ += items;
            requests_.fetch_add(1, std::memory_order_relaxed);
            items_.fetch_add(items, std::memory_order_relaxed);
            if (queued_items_ >= options_.max_batch) work_cv_.notify_all();  // the gathering worker, whichever it is
            else if (count_ == 1) work_cv_.notify_one();
            r.done_cv.wait(lock, [&] { return r.done; });
        }
        return r.result;
    }

    /// Counters, and the number of requests waiting now.
    batcher_stats stats() const {
        batcher_stats s;
        s.requests = requests_.load(std::memory_order_relaxed);
        s.items = items_.load(std::memory_order_relaxed);
        s.batches = batches_.load(std::memory_order_relaxed);
        s.refused = refused_.load(std::memory_order_relaxed);
        s.shed = shed_.load(std::memory_order_relaxed);
        s.failed = failed_.load(std::memory_order_relaxed);
        s.queue_depth = queue_depth();
        s.batch_items.resize(options_.max_batch + 1);
        for (std::size_t n = 0; n < s.batch_items.size(); ++n) s.batch_items[n] = batch_items_[n].load(std::memory_order_relaxed);
        return s;
    }
    std::size_t queue_depth() const noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        return count_;
    }

    /// Refuses new requests (busy), runs the ones already queued, and joins the workers.
    /// Idempotent; the destructor calls it.
    void stop() noexcept {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        work_cv_.notify_all();
        for (std::unique_ptr<instance>& w : instances_)
            if (w->thread.joinable()) w->thread.join();
    }

private:
    using clock = std::chrono::steady_clock;

    struct request {
        const void* const* inputs = nullptr;
        void* const* outputs = nullptr;
        std::size_t items = 0;
        clock::time_point arrival{};
        status result = status::ok;
        bool done = false;
        std::condition_variable done_cv;
    };
    struct compiled {
        std::size_t batch;
        std::unique_ptr<plan> compiled;
    };
    /// One worker: a session per plan over one arena, the batch's input and output buffers.
    struct instance {
        std::vector<std::unique_ptr<session>> sessions;  // as plans_
        std::vector<aligned_buffer> in_stage, out_stage;
        aligned_buffer arena;
        std::vector<request*> taken;  // the batch being run (reserved: no allocation per batch)
        std::thread thread;
    };

    explicit batcher(const batcher_options& o) : options_(o), queue_(o.max_queue), batch_items_(o.max_batch + 1) {}

    /// base with every graph input's shape set to its item shape with `batch` in front.
    static result<compile_options> options_for(const graph& g, const compile_options& base, std::size_t batch) {
        compile_options o = base;
        for (value_id v : g.inputs) {
            const value& in = g.values[v];
            const auto named = [&](const auto& entry) { return entry.name == in.name; };
            if (std::any_of(o.input_values.begin(), o.input_values.end(), named)) continue;
            auto given = std::find_if(o.input_shapes.begin(), o.input_shapes.end(), named);
            shape dims;
            if (given != o.input_shapes.end()) {
                dims = given->dims;
            } else {
                if (!in.declared.rank_known || in.declared.rank() == 0 || !shape::valid_rank(in.declared.rank()))
                    return error_info{status::invalid_argument, -1,
                                      detail::format("batcher: input '{}' has no declared batch axis (shape {}); give its shape in "
                                                     "compile_options::input_shapes",
                                                     in.name, in.declared)};
                if (in.declared.dims[0].known() && in.declared.dims[0].value != 1)
                    return error_info{status::invalid_argument, -1,
                                      detail::format("batcher: input '{}' is declared {}: its first axis is fixed at {}; if that is the "
                                                     "batch, give one item's shape in compile_options::input_shapes",
                                                     in.name, in.declared, in.declared.dims[0].value)};
                for (std::size_t d = 0; d < in.declared.rank(); ++d) {
                    if (d > 0 && !in.declared.dims[d].known())
                        return error_info{status::invalid_argument, -1,
                                          detail::format("batcher: input '{}' has an unknown dimension {} (shape {}); give its shape in "
                                                         "compile_options::input_shapes",
                                                         in.name, d, in.declared)};
                    dims.push_back(d == 0 ? 1 : in.declared.dims[d].value);
                }
            }
            if (dims.rank() == 0)
                return error_info{status::invalid_argument, -1, detail::format("batcher: input '{}' is a scalar: it has no batch axis", in.name)};
            dims[0] = static_cast<std::int64_t>(batch);
            if (given != o.input_shapes.end()) given->dims = dims;
            else o.input_shapes.push_back({in.name, dims});
        }
        return o;
    }

    /// Checks that every plan's inputs and outputs are the smallest plan's with the batch in
    /// front, sizes the shared arena and the staging buffers, and makes one session per plan.
    status check_and_allocate() {
        const plan& first = *plans_.front().compiled;
        const std::size_t b0 = plans_.front().batch;
        std::size_t arena = 0;
        for (const compiled& c : plans_) {
            const plan& p = *c.compiled;
            if (p.input_count() != first.input_count() || p.output_count() != first.output_count()) {
                error_ = detail::format("batcher: the plan for batch {} has {} inputs and {} outputs, the one for batch {} {} and {}", c.batch,
                                        p.input_count(), p.output_count(), b0, first.input_count(), first.output_count());
                return status::invalid_argument;
            }
            for (int side = 0; side < 2; ++side) {
                const std::size_t n = side == 0 ? p.input_count() : p.output_count();
                for (std::size_t i = 0; i < n; ++i) {
                    const io_info& a = side == 0 ? first.input(i) : first.output(i);
                    const io_info& x = side == 0 ? p.input(i) : p.output(i);
                    if (!scales(a.dims, b0, x.dims, c.batch) || a.type != x.type || a.name != x.name) {
                        error_ = detail::format("batcher: {} '{}' does not have the batch as its first axis ({} {} at batch {}, {} {} at batch {})",
                                                side == 0 ? "input" : "output", a.name, a.type, a.dims, b0, x.type, x.dims, c.batch);
                        return status::invalid_argument;
                    }
                }
            }
            arena = std::max(arena, p.arena_bytes());
        }
        const plan& last = *plans_.back().compiled;
        in_item_.resize(first.input_count());
        out_item_.resize(first.output_count());
        for (std::size_t i = 0; i < first.input_count(); ++i) in_item_[i] = first.input(i).bytes / b0;
        for (std::size_t i = 0; i < first.output_count(); ++i) out_item_[i] = first.output(i).bytes / b0;
        for (std::size_t k = 0; k < options_.instances; ++k) {
            instances_.push_back(std::make_unique<instance>());
            instance& w = *instances_.back();
            w.taken.reserve(options_.max_batch);
            w.in_stage.resize(first.input_count());
            w.out_stage.resize(first.output_count());
            for (std::size_t i = 0; i < first.input_count(); ++i)
                if (!w.in_stage[i].allocate(last.input(i).bytes, first.alloc())) return out_of_memory("an input's batch buffer");
            for (std::size_t i = 0; i < first.output_count(); ++i)
                if (!w.out_stage[i].allocate(last.output(i).bytes, first.alloc())) return out_of_memory("an output's batch buffer");
            if (!w.arena.allocate(arena, first.alloc(), false)) return out_of_memory("the arena");
            for (const compiled& c : plans_) {
                w.sessions.push_back(std::make_unique<session>(*c.compiled, span<std::byte>(w.arena.data(), w.arena.size_bytes()), options_.exec));
                session& s = *w.sessions.back();
                bool ok = s.state() == status::ok;
                for (std::size_t i = 0; ok && i < first.input_count(); ++i)
                    ok = s.bind_input(i, w.in_stage[i].data(), c.compiled->input(i).bytes) == status::ok;
                for (std::size_t i = 0; ok && i < first.output_count(); ++i)
                    ok = s.bind_output(i, w.out_stage[i].data(), c.compiled->output(i).bytes) == status::ok;
                if (!ok) {
                    error_ = detail::format("batcher: cannot set up the session for batch {}", c.batch);
                    return status::invalid_argument;
                }
            }
        }
        return status::ok;
    }

    status out_of_memory(const char* what) {
        error_ = detail::format("batcher: out of memory allocating {}", what);
        return status::out_of_memory;
    }

    static bool scales(const shape& item, std::size_t b0, const shape& at, std::size_t batch) noexcept {
        if (item.rank() == 0 || item.rank() != at.rank() || item[0] != static_cast<std::int64_t>(b0) || at[0] != static_cast<std::int64_t>(batch))
            return false;
        for (std::size_t d = 1; d < item.rank(); ++d)
            if (item[d] != at[d]) return false;
        return true;
    }

    /// A worker: waits until there is a request and no other worker is gathering a batch, gives
    /// others max_delay to join the first (or until max_batch items wait), takes whole requests
    /// from the front up to max_batch items, runs them, wakes their callers. The workers drain
    /// the queue before they stop.
    void work(instance& w) noexcept {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            work_cv_.wait(lock, [&] { return !gathering_ && (count_ > 0 || stopping_); });
            if (count_ == 0) return;  // stopping, nothing left
            gathering_ = true;
            const clock::time_point deadline = queue_[head_]->arrival + options_.max_delay;
            while (!stopping_ && queued_items_ < options_.max_batch && clock::now() < deadline)
                work_cv_.wait_until(lock, deadline);
            std::size_t items = 0;
            w.taken.clear();
            while (count_ > 0 && items + queue_[head_]->items <= options_.max_batch) {
                request* r = queue_[head_];
                head_ = (head_ + 1) % queue_.size();
                --count_;
                queued_items_ -= r->items;
                items += r->items;
                w.taken.push_back(r);
            }
            gathering_ = false;
            if (count_ > 0 || stopping_) work_cv_.notify_all();  // another worker may gather the rest
            lock.unlock();
            const status result = run_batch(w, items);
            batches_.fetch_add(1, std::memory_order_relaxed);
            batch_items_[items].fetch_add(1, std::memory_order_relaxed);
            if (result != status::ok) failed_.fetch_add(w.taken.size(), std::memory_order_relaxed);
            lock.lock();
            for (request* r : w.taken) {
                r->result = result;
                r->done = true;
                r->done_cv.notify_one();  // under the lock: r lives on its caller's stack
            }
        }
    }

    status run_batch(instance& w, std::size_t items) noexcept {
        std::size_t k = plans_.size() - 1;
        for (std::size_t j = 0; j < plans_.size(); ++j)
            if (plans_[j].batch >= items) {
                k = j;
                break;
            }
        const std::size_t batch = plans_[k].batch;
        for (std::size_t i = 0; i < in_item_.size(); ++i) {
            std::byte* dst = w.in_stage[i].data();
            for (const request* r : w.taken) {
                std::memcpy(dst, r->inputs[i], r->items * in_item_[i]);
                dst += r->items * in_item_[i];
            }
            std::memset(dst, 0, (batch - items) * in_item_[i]);  // rows no request filled
        }
        const status s = w.sessions[k]->run();
        if (s != status::ok) return s;
        for (std::size_t i = 0; i < out_item_.size(); ++i) {
            const std::byte* src = w.out_stage[i].data();
            for (const request* r : w.taken) {
                std::memcpy(r->outputs[i], src, r->items * out_item_[i]);
                src += r->items * out_item_[i];
            }
        }
        return status::ok;
    }

    batcher_options options_;
    std::vector<compiled> plans_;  // ascending batch sizes
    std::vector<std::size_t> in_item_, out_item_;
    std::vector<std::unique_ptr<instance>> instances_;
    std::string error_;

    mutable std::mutex mutex_;
    std::condition_variable work_cv_;
    std::vector<request*> queue_;  // a ring of max_queue slots
    std::size_t head_ = 0, count_ = 0, queued_items_ = 0;
    bool stopping_ = false;
    bool gathering_ = false;  // a worker is waiting for a batch to fill

    std::atomic<std::uint64_t> requests_{0}, items_{0}, batches_{0}, refused_{0}, shed_{0}, failed_{0};
    std::vector<std::atomic<std::uint64_t>> batch_items_;
};

EMBER_NAMESPACE_END
