// SPDX-License-Identifier: Apache-2.0
// thread_pool: the default executor. It starts no thread until start() or its first parallel_for,
// and idle workers sleep on a condition variable (no spinning). The calling thread takes part in
// every parallel_for, so a pool of N threads starts N - 1 workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "ember/config.hpp"
#include "ember/runtime/executor.hpp"

EMBER_NAMESPACE_BEGIN

class thread_pool {
public:
    /// A pool that will use `threads` threads in all (the caller's included); 0 means one per
    /// hardware thread.
    explicit thread_pool(std::size_t threads = 0) : threads_(threads ? threads : default_threads()) {}
    ~thread_pool() { stop(); }
    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    std::size_t threads() const noexcept { return threads_; }
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
            stopping_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : workers_) t.join();
        workers_.clear();
        stopping_ = false;
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
        {
            std::lock_guard<std::mutex> lock(mutex_);
            fn_ = fn;
            fn_ctx_ = fn_ctx;
            n_ = n;
            chunk_ = n / chunks ? n / chunks : 1;
            next_.store(0, std::memory_order_relaxed);
            active_ = workers_.size();
            ++generation_;
        }
        wake_.notify_all();
        in_worker() = true;  // a nested parallel_for from this thread's share runs inline too
        work();
        in_worker() = false;
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [&] { return active_ == 0; });
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
        std::uint64_t generation = 0;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            generation = generation_;
        }
        // Each worker starts from the generation current now, so a job posted before it first
        // takes the lock is still seen as new.
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
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
                if (stopping_) return;
                seen = generation_;
            }
            work();
            std::lock_guard<std::mutex> lock(mutex_);
            if (--active_ == 0) done_.notify_one();
        }
    }

    const std::size_t threads_;
    std::mutex submit_;  // one parallel_for at a time
    std::mutex mutex_;   // guards the job fields below and the worker hand-shake
    std::condition_variable wake_, done_;
    std::vector<std::thread> workers_;
    std::atomic<bool> started_{false};
    bool stopping_ = false;
    std::uint64_t generation_ = 0;
    std::size_t active_ = 0;
    range_fn fn_ = nullptr;
    void* fn_ctx_ = nullptr;
    std::size_t n_ = 0, chunk_ = 1;
    std::atomic<std::size_t> next_{0};
};

EMBER_NAMESPACE_END
