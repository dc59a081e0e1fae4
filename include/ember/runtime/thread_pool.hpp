// SPDX-License-Identifier: Apache-2.0
// thread_pool: the default executor. It starts no thread until start() or its first parallel_for.
// The calling thread takes part in every parallel_for, so a pool of N threads starts N - 1
// workers.
//
// Waiting: a worker that finishes a job spins (with the CPU's pause hint) for `spin` before it
// sleeps on a condition variable, and the caller spins as long for the workers to finish before
// it sleeps. A model's ops follow each other within microseconds, so during a run the hand-off is
// an atomic store seen by a spinning thread rather than a futex wake (tens of microseconds on a
// loaded machine, per op); between runs the workers sleep and cost nothing. spin = 0 never spins.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "ember/config.hpp"
#include "ember/runtime/executor.hpp"

EMBER_NAMESPACE_BEGIN

namespace detail {
/// The CPU's spin-wait hint (x86 pause, ARM yield): the loop waits without starving the sibling
/// hyper-thread.
inline void cpu_relax() noexcept {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_ia32_pause();
#elif (defined(__aarch64__) || defined(__arm__)) && (defined(__GNUC__) || defined(__clang__))
    asm volatile("yield" ::: "memory");
#endif  // elsewhere a plain busy loop
}

/// Spins until ready() or `spin` has passed; returns ready()'s last value.
template <class Ready>
bool spin_until(std::chrono::microseconds spin, Ready&& ready) noexcept {
    if (spin.count() <= 0) return ready();
    const auto deadline = std::chrono::steady_clock::now() + spin;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (ready()) return true;
            cpu_relax();
        }
        if (std::chrono::steady_clock::now() >= deadline) return ready();
    }
}
} // namespace detail

class thread_pool {
public:
    /// How long an idle worker (and a caller waiting for the workers) spins before sleeping.
    static constexpr std::chrono::microseconds default_spin{200};

    /// A pool that will use `threads` threads in all (the caller's included); 0 means one per
    /// hardware thread. `spin`: how long idle threads spin before they sleep (0: never spin).
    explicit thread_pool(std::size_t threads = 0, std::chrono::microseconds spin = default_spin)
        : threads_(threads ? threads : default_threads()), spin_(spin) {}
    ~thread_pool() { stop(); }
    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    std::size_t threads() const noexcept { return threads_; }
    std::chrono::microseconds spin() const noexcept { return spin_; }
    /// Whether the workers are running.
    bool started() const noexcept { return started_.load(std::memory_order_acquire); }

    /// Starts the workers now (it allocates: do it at load time to keep run() allocation-free).
    void start() {
        std::lock_guard<std::mutex> submit(submit_);
        start_locked();
    }

    /// Stops and joins the workers; a later parallel_for starts them again.
    void stop() {
        std::lock_guard<std::mutex> submit(submit_);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_.store(true, std::memory_order_seq_cst);
        }
        wake_.notify_all();
        for (std::thread& t : workers_) t.join();
        workers_.clear();
        stopping_.store(false, std::memory_order_relaxed);
        started_.store(false, std::memory_order_release);
    }

    /// The executor to hand to a session. The pool must outlive it.
    executor as_executor() noexcept { return executor{this, &thunk, threads_}; }

    /// Calls fn over disjoint chunks of [0, n) on the workers and this thread; returns when all
    /// are done. Calls from several threads at once take turns. A call from inside a running range
    /// (a nested parallel_for, on a worker or on the caller) runs inline.
    void parallel_for(std::size_t n, range_fn fn, void* fn_ctx) noexcept {
        if (n == 0) return;
        if (threads_ <= 1 || n == 1 || in_worker()) {
            fn(fn_ctx, 0, n);
            return;
        }
        std::lock_guard<std::mutex> submit(submit_);
        if (!started()) start_locked();
        const std::size_t chunks = threads_ * 4;
        // The workers are all done with the last job (active_ reached 0), so the fields are free;
        // the generation's release publishes them.
        fn_ = fn;
        fn_ctx_ = fn_ctx;
        n_ = n;
        chunk_ = n / chunks ? n / chunks : 1;
        next_.store(0, std::memory_order_relaxed);
        active_.store(workers_.size(), std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_seq_cst) > 0) {
            std::lock_guard<std::mutex> lock(mutex_);
            wake_.notify_all();
        }
        in_worker() = true;  // a nested parallel_for from this thread's share runs inline too
        work();
        in_worker() = false;
        const auto all_done = [this] { return active_.load(std::memory_order_acquire) == 0; };
        if (detail::spin_until(spin_, all_done)) return;
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, all_done);
    }

private:
    static std::size_t default_threads() noexcept {
        const unsigned hw = std::thread::hardware_concurrency();
        return hw ? hw : 1;
    }
    static bool& in_worker() noexcept {
        static thread_local bool flag = false;
        return flag;
    }
    static void thunk(void* self, std::size_t n, range_fn fn, void* fn_ctx) noexcept {
        static_cast<thread_pool*>(self)->parallel_for(n, fn, fn_ctx);
    }

    void start_locked() {
        if (started()) return;
        // Each worker starts from the generation current now, so a job posted before it first
        // looks is still seen as new.
        const std::uint64_t generation = generation_.load(std::memory_order_acquire);
        for (std::size_t i = 1; i < threads_; ++i) workers_.emplace_back([this, generation] { worker(generation); });
        started_.store(true, std::memory_order_release);
    }

    void work() noexcept {
        for (;;) {
            const std::size_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
            if (begin >= n_) return;
            const std::size_t end = begin + chunk_ < n_ ? begin + chunk_ : n_;
            fn_(fn_ctx_, begin, end);
        }
    }

    void worker(std::uint64_t seen) noexcept {
        in_worker() = true;
        const auto posted = [&] {
            return stopping_.load(std::memory_order_seq_cst) || generation_.load(std::memory_order_seq_cst) != seen;
        };
        for (;;) {
            if (!detail::spin_until(spin_, posted)) {
                // Sleep. sleepers_ is raised before the last look at the generation and the
                // poster reads it after raising the generation (both seq_cst), so either this
                // thread sees the job or the poster sees a sleeper and notifies under the mutex.
                std::unique_lock<std::mutex> lock(mutex_);
                sleepers_.fetch_add(1, std::memory_order_seq_cst);
                wake_.wait(lock, posted);
                sleepers_.fetch_sub(1, std::memory_order_relaxed);
            }
            if (stopping_.load(std::memory_order_acquire)) return;
            seen = generation_.load(std::memory_order_acquire);
            work();
            if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                std::lock_guard<std::mutex> lock(mutex_);  // the caller may be between its look and its wait
                done_.notify_one();
            }
        }
    }

    const std::size_t threads_;
    const std::chrono::microseconds spin_;
    std::mutex submit_;  // one parallel_for at a time
    std::mutex mutex_;   // the sleep/wake hand-shake
    std::condition_variable wake_, done_;
    std::vector<std::thread> workers_;
    std::atomic<bool> started_{false};
    std::atomic<bool> stopping_{false};
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<std::size_t> active_{0};
    std::atomic<int> sleepers_{0};
    range_fn fn_ = nullptr;
    void* fn_ctx_ = nullptr;
    std::size_t n_ = 0, chunk_ = 1;
    std::atomic<std::size_t> next_{0};
};

EMBER_NAMESPACE_END
