// SPDX-License-Identifier: Apache-2.0
// Counts, while armed, every heap allocation, lock and throw of the whole process, on any thread:
// the real-time check behind "session::run() allocates nothing, locks nothing, throws nothing".
// RealtimeSanitizer is not in Debian 12, so these hooks are the check:
//   - malloc, calloc, realloc, free, aligned_alloc, posix_memalign, memalign, valloc: replaced in
//     the executable (glibc allows it) and forwarded to glibc's __libc_* entry points;
//   - every replaceable global operator new (they call malloc above, so they count once);
//   - pthread_mutex_lock, pthread_mutex_trylock, pthread_cond_wait, pthread_cond_timedwait
//     (std::mutex and std::condition_variable go through them), forwarded through dlsym;
//   - __cxa_allocate_exception (every C++ throw allocates its exception through it).
// Include it in exactly one translation unit of a test executable (it defines those functions).
// Under AddressSanitizer (which owns malloc itself) it defines nothing and active() is false.
#pragma once

#include <atomic>
#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define EMBER_TEST_NO_ALLOC_HOOKS 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__GLIBC__) && !defined(__linux__)
#define EMBER_TEST_NO_ALLOC_HOOKS 1
#endif

namespace ember::test::hooks {

/// What the hooks saw while armed.
struct counts {
    long allocations = 0;  ///< malloc-family calls (operator new included), frees not counted
    long locks = 0;        ///< mutex lock/trylock and condition waits
    long throws = 0;       ///< exceptions allocated (thrown)

    bool none() const noexcept { return allocations == 0 && locks == 0 && throws == 0; }
};

inline std::atomic<bool> armed{false};
inline void resolve_all() noexcept;  // looks the forwarded functions up (below)
inline std::atomic<long> allocations{0}, locks{0}, throws{0};

/// Whether the hooks are compiled in (false under sanitizers).
constexpr bool active() noexcept {
#if defined(EMBER_TEST_NO_ALLOC_HOOKS)
    return false;
#else
    return true;
#endif
}

/// Counts from now until the returned guard's take() (or destruction).
class window {
public:
    window() noexcept {
        resolve_all();
        allocations.store(0);
        locks.store(0);
        throws.store(0);
        armed.store(true, std::memory_order_seq_cst);
    }
    ~window() { armed.store(false, std::memory_order_seq_cst); }
    window(const window&) = delete;
    window& operator=(const window&) = delete;

    /// Stops counting and returns what was seen.
    counts take() noexcept {
        armed.store(false, std::memory_order_seq_cst);
        return {allocations.load(), locks.load(), throws.load()};
    }
};

inline void note(std::atomic<long>& what) noexcept {
    if (armed.load(std::memory_order_relaxed)) what.fetch_add(1, std::memory_order_relaxed);
}

} // namespace ember::test::hooks

#if !defined(EMBER_TEST_NO_ALLOC_HOOKS)
#include <cxxabi.h>
#include <dlfcn.h>
#include <pthread.h>

#include <cstdlib>
#include <new>
// The x86 intrinsics headers (xsimd includes them) declare posix_memalign again, without glibc's
// noexcept: clang rejects that after the definition below, so their declaration comes first.
#if __has_include(<mm_malloc.h>)
#include <mm_malloc.h>
#endif

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t n) noexcept {
    ember::test::hooks::note(ember::test::hooks::allocations);
    return __libc_malloc(n);
}
void* calloc(std::size_t count, std::size_t n) noexcept {
    ember::test::hooks::note(ember::test::hooks::allocations);
    return __libc_calloc(count, n);
}
void* realloc(void* p, std::size_t n) noexcept {
    ember::test::hooks::note(ember::test::hooks::allocations);
    return __libc_realloc(p, n);
}
void free(void* p) noexcept { __libc_free(p); }
void* memalign(std::size_t alignment, std::size_t n) noexcept {
    ember::test::hooks::note(ember::test::hooks::allocations);
    return __libc_memalign(alignment, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) noexcept {
    ember::test::hooks::note(ember::test::hooks::allocations);
    return __libc_memalign(alignment, n);
}
void* valloc(std::size_t n) noexcept {
    ember::test::hooks::note(ember::test::hooks::allocations);
    return __libc_memalign(4096, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) noexcept {
    ember::test::hooks::note(ember::test::hooks::allocations);
    if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return 22;  // EINVAL
    void* p = __libc_memalign(alignment, n);
    if (!p) return 12;  // ENOMEM
    *out = p;
    return 0;
}

} // extern "C"

namespace ember::test::hooks {
// The real functions, looked up with dlsym on first use (no function-local static: its guard
// would take a lock and recurse). window() looks them all up before it arms, since dlsym may
// allocate.
using mutex_fn = int (*)(pthread_mutex_t*);
using cond_wait_fn = int (*)(pthread_cond_t*, pthread_mutex_t*);
using cond_timedwait_fn = int (*)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
using allocate_exception_fn = void* (*)(std::size_t);
template <class Fn>
Fn real(std::atomic<Fn>& slot, const char* name) noexcept {
    Fn fn = slot.load(std::memory_order_acquire);
    if (!fn) {
        fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
        slot.store(fn, std::memory_order_release);
    }
    return fn;
}
inline std::atomic<mutex_fn> real_lock{nullptr}, real_trylock{nullptr};
inline std::atomic<cond_wait_fn> real_wait{nullptr};
inline std::atomic<cond_timedwait_fn> real_timedwait{nullptr};
inline std::atomic<allocate_exception_fn> real_allocate_exception{nullptr};
inline void resolve_all() noexcept {
    (void)real(real_lock, "pthread_mutex_lock");
    (void)real(real_trylock, "pthread_mutex_trylock");
    (void)real(real_wait, "pthread_cond_wait");
    (void)real(real_timedwait, "pthread_cond_timedwait");
    (void)real(real_allocate_exception, "__cxa_allocate_exception");
}
} // namespace ember::test::hooks

extern "C" {
int pthread_mutex_lock(pthread_mutex_t* m) noexcept {
    ember::test::hooks::note(ember::test::hooks::locks);
    return ember::test::hooks::real(ember::test::hooks::real_lock, "pthread_mutex_lock")(m);
}
int pthread_mutex_trylock(pthread_mutex_t* m) noexcept {
    ember::test::hooks::note(ember::test::hooks::locks);
    return ember::test::hooks::real(ember::test::hooks::real_trylock, "pthread_mutex_trylock")(m);
}
int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
    ember::test::hooks::note(ember::test::hooks::locks);
    return ember::test::hooks::real(ember::test::hooks::real_wait, "pthread_cond_wait")(c, m);
}
int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* t) {
    ember::test::hooks::note(ember::test::hooks::locks);
    return ember::test::hooks::real(ember::test::hooks::real_timedwait, "pthread_cond_timedwait")(c, m, t);
}
void* __cxa_allocate_exception(std::size_t n) noexcept {
    ember::test::hooks::note(ember::test::hooks::throws);
    return ember::test::hooks::real(ember::test::hooks::real_allocate_exception, "__cxa_allocate_exception")(n);
}
} // extern "C"

// The global operator new family, over the malloc above (so each counts once).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
namespace ember::test::hooks {
inline void* allocate_or_throw(std::size_t n, std::size_t align) {
    if (n == 0) n = 1;
    void* p = align > alignof(std::max_align_t) ? __libc_memalign(align, n) : __libc_malloc(n);
    note(allocations);
    if (!p) throw std::bad_alloc();
    return p;
}
inline void* allocate_or_null(std::size_t n, std::size_t align) noexcept {
    if (n == 0) n = 1;
    note(allocations);
    return align > alignof(std::max_align_t) ? __libc_memalign(align, n) : __libc_malloc(n);
}
} // namespace ember::test::hooks
void* operator new(std::size_t n) { return ember::test::hooks::allocate_or_throw(n, 0); }
void* operator new[](std::size_t n) { return ember::test::hooks::allocate_or_throw(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return ember::test::hooks::allocate_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return ember::test::hooks::allocate_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return ember::test::hooks::allocate_or_null(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return ember::test::hooks::allocate_or_null(n, 0); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return ember::test::hooks::allocate_or_null(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return ember::test::hooks::allocate_or_null(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { __libc_free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#else
inline void ember::test::hooks::resolve_all() noexcept {}
#endif  // !EMBER_TEST_NO_ALLOC_HOOKS
