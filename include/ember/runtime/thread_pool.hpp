// SPDX-License-Identifier: Apache-2.0
// thread_pool: the default executor. It starts no thread until start() or its first parallel_for.
// The calling thread takes part in every parallel_for, so a pool of N threads starts N - 1
// workers.
//
// No lock on the run path. A parallel_for posts a job by raising a generation counter; idle
// workers park on that counter (a futex on Linux: a syscall, no mutex) and the caller parks on
// the count of workers still busy. Parking and waking are atomic hand-shakes (see worker() and
// parallel_for()), so run() over a pool takes no pthread mutex and never waits on a thread that
// holds one. A parallel_for called while another thread's parallel_for has the pool does not
// wait for it: it runs its whole range on the calling thread (same result bits: ember's kernels
// partition work the same way whatever the thread count).
//
// Spinning: `spin` is how long an idle worker (and a caller waiting for the workers) spins, with
// the CPU's pause hint, before it parks. The default is 0: idle threads park at once and cost no
// CPU time between ops or runs; each op then pays a futex wake-up (a few microseconds, tens on a
// loaded machine). A benchmark or a server that has cores to spare passes e.g. 200 us, so that a
// model's ops, which follow each other within microseconds, hand over through a spinning thread.
// Elsewhere than Linux (or with EMBER_THREAD_POOL_CONDVAR defined, as a test does to run that
// path here), parking uses a condition variable, and so a mutex, instead of the futex.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(__linux__) && !defined(EMBER_THREAD_POOL_CONDVAR)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <climits>
#else
#include <condition_variable>
#include <mutex>
#endif

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

/// Sleeping on a 32-bit atomic until another thread changes it and wakes the sleepers: C++20's
/// atomic wait/notify, for C++17. wait() may return early (spuriously); callers loop on their
/// condition. On Linux a futex (no mutex anywhere); elsewhere a mutex and a condition variable.
class parking {
public:
#if defined(__linux__) && !defined(EMBER_THREAD_POOL_CONDVAR)
    /// Sleeps while word == expected (returns at once if it already differs).
    void wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
        (void)::syscall(SYS_futex, address(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
    }
    /// Wakes every thread sleeping in wait() on word; call it after changing word.
    void wake_all(std::atomic<std::uint32_t>& word) noexcept {
        (void)::syscall(SYS_futex, address(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
    }

private:
    static std::uint32_t* address(std::atomic<std::uint32_t>& word) noexcept {
        static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) && std::atomic<std::uint32_t>::is_always_lock_free,
                      "the futex needs a plain 32-bit word");
        return reinterpret_cast<std::uint32_t*>(&word);
    }
#else
    void wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return word.load(std::memory_order_seq_cst) != expected; });
    }
    void wake_all(std::atomic<std::uint32_t>&) noexcept {
        { std::lock_guard<std::mutex> lock(mutex_); }  // a waiter between its look and its wait gets the notify
        changed_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
#endif
};
} // namespace detail

class thread_pool {
public:
    /// How long an idle worker (and a caller waiting for the workers) spins before parking: none.
    static constexpr std::chrono::microseconds default_spin{0};

    /// A pool that will use `threads` threads in all (the caller's included); 0 means one per
    /// hardware thread. `spin`: how long idle threads spin before they park (0: never spin).
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
    /// Waits for a parallel_for of another thread to finish first.
    void start() {
        acquire();
        start_owned();
        release();
    }

    /// Stops and joins the workers; a later parallel_for starts them again. Waits for a
    /// parallel_for of another thread to finish first.
    void stop() {
        acquire();
        stopping_.store(true, std::memory_order_seq_cst);
        generation_.fetch_add(1, std::memory_order_seq_cst);
        parking_.wake_all(generation_);
        for (std::thread& t : workers_) t.join();
        workers_.clear();
        stopping_.store(false, std::memory_order_relaxed);
        started_.store(false, std::memory_order_release);
        release();
    }

    /// The executor to hand to a session. The pool must outlive it.
    executor as_executor() noexcept { return executor{this, &thunk, threads_}; }

    /// Calls fn over disjoint chunks of [0, n) on the workers and this thread; returns when all
    /// are done. Runs the whole range on this thread when the pool has one thread, when this is a
    /// nested call (from inside a running range, on a worker or on the caller), and when another
    /// thread's parallel_for has the pool.
    void parallel_for(std::size_t n, range_fn fn, void* fn_ctx) noexcept {
        if (n == 0) return;
        if (threads_ <= 1 || n == 1 || in_worker() || !try_acquire()) {
            fn(fn_ctx, 0, n);
            return;
        }
        if (!started()) start_owned();  // allocates: start() at load time avoids it
        const std::size_t chunks = threads_ * 4;
        // The workers are all done with the last job (active_ reached 0), so the fields are free;
        // the generation's release publishes them.
        fn_ = fn;
        fn_ctx_ = fn_ctx;
        n_ = n;
        chunk_ = n / chunks ? n / chunks : 1;
        next_.store(0, std::memory_order_relaxed);
        active_.store(static_cast<std::uint32_t>(workers_.size()), std::memory_order_relaxed);
        // Posting: raise the generation, then look for parked workers. A worker raises sleepers_
        // before its last look at the generation (all seq_cst), so either it sees this job or
        // this thread sees it parked and wakes it.
        generation_.fetch_add(1, std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_seq_cst) > 0) parking_.wake_all(generation_);
        in_worker() = true;  // a nested parallel_for from this thread's share runs inline too
        work();
        in_worker() = false;
        wait_for_workers();
        release();
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

    // The pool has one owner at a time: a parallel_for, start() or stop().
    bool try_acquire() noexcept { return !busy_.exchange(true, std::memory_order_acquire); }
    void acquire() noexcept {
        while (!try_acquire()) std::this_thread::yield();  // start()/stop() only, never run()
    }
    void release() noexcept { busy_.store(false, std::memory_order_release); }

    void start_owned() {
        if (started()) return;
        // Each worker starts from the generation current now, so a job posted before it first
        // looks is still seen as new.
        const std::uint32_t generation = generation_.load(std::memory_order_acquire);
        for (std::size_t i = 1; i < threads_; ++i) workers_.emplace_back([this, generation] { worker(generation); });
        started_.store(true, std::memory_order_release);
    }

    // The caller's half of the done hand-shake: it raises caller_parked_ before its last look at
    // active_; the last worker lowers active_ before it looks at caller_parked_ (all seq_cst).
    void wait_for_workers() noexcept {
        const auto all_done = [this] { return active_.load(std::memory_order_acquire) == 0; };
        if (detail::spin_until(spin_, all_done)) return;
        caller_parked_.store(true, std::memory_order_seq_cst);
        for (std::uint32_t left; (left = active_.load(std::memory_order_seq_cst)) != 0;) parking_.wait(active_, left);
        caller_parked_.store(false, std::memory_order_relaxed);
    }

    void work() noexcept {
        for (;;) {
            const std::size_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
            if (begin >= n_) return;
            const std::size_t end = begin + chunk_ < n_ ? begin + chunk_ : n_;
            fn_(fn_ctx_, begin, end);
        }
    }

    void worker(std::uint32_t seen) noexcept {
        in_worker() = true;
        const auto posted = [&] { return generation_.load(std::memory_order_seq_cst) != seen; };
        for (;;) {
            if (!detail::spin_until(spin_, posted)) {
                sleepers_.fetch_add(1, std::memory_order_seq_cst);
                while (!posted()) parking_.wait(generation_, seen);
                sleepers_.fetch_sub(1, std::memory_order_relaxed);
            }
            if (stopping_.load(std::memory_order_acquire)) return;
            seen = generation_.load(std::memory_order_acquire);
            work();
            if (active_.fetch_sub(1, std::memory_order_seq_cst) == 1 && caller_parked_.load(std::memory_order_seq_cst))
                parking_.wake_all(active_);
        }
    }

    const std::size_t threads_;
    const std::chrono::microseconds spin_;
    detail::parking parking_;
    std::vector<std::thread> workers_;
    std::atomic<bool> busy_{false};
    std::atomic<bool> started_{false};
    std::atomic<bool> stopping_{false};
    std::atomic<bool> caller_parked_{false};
    std::atomic<std::uint32_t> generation_{0};  // 32 bits: the futex word (wrap-around is harmless)
    std::atomic<std::uint32_t> active_{0};      // workers not yet done with the current job
    std::atomic<int> sleepers_{0};
    range_fn fn_ = nullptr;
    void* fn_ctx_ = nullptr;
    std::size_t n_ = 0, chunk_ = 1;
    std::atomic<std::size_t> next_{0};
};

EMBER_NAMESPACE_END
