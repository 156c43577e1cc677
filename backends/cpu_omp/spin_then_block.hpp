// spin_then_block.hpp: a wait that spins for up to spin_time (50 us), then sleeps until woken.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace gemm::cpu_omp_detail {

// How long a waiting thread spins before it sleeps. Long enough to cover the gap between two
// items or two calls of a busy program, so a helper is not put to sleep and woken again for
// each; short enough that an idle or waiting thread hands its core to whoever needs it (a
// thread of ours that was descheduled, OpenBLAS's threads, another process) within a fraction
// of a scheduler tick. A time, not a count of pauses: a pause takes 10 to 140 cycles,
// depending on the CPU.
constexpr std::chrono::microseconds spin_time{50};

inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// Spins until ready() or spin_time has passed; returns ready().
template <class Ready> bool spin_until(Ready ready) {
    if (ready()) return true;
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        for (int i = 0; i < 32; ++i) {
            if (ready()) return true;
            spin_pause();
        }
        if (std::chrono::steady_clock::now() - start > spin_time) return ready();
    }
}

// Threads wait here for a condition that other threads make true and then announce with
// wake(). The object must outlive every wake() that may touch it; the condition itself can
// live anywhere. wake() costs one fence and one load when nobody sleeps.
class spin_then_block {
public:
    // Returns once ready() is true; ready() reads atomics that the waker writes before wake().
    template <class Ready> void wait(Ready ready) {
        if (spin_until(ready)) return;
        sleeping_.fetch_add(1, std::memory_order_relaxed);
        // Pairs with the fence in wake(): either the waker sees this sleeper, or this thread
        // sees the waker's write in ready() below. Without it a wake-up could be lost.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        {
            std::unique_lock<std::mutex> lock(mutex_);
            condition_.wait(lock, ready);
        }
        sleeping_.fetch_sub(1, std::memory_order_relaxed);
    }

    // Wakes up to `count` sleepers (all by default) after the caller made a condition true.
    void wake(int count = -1) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        const int sleeping = sleeping_.load(std::memory_order_relaxed);
        if (sleeping == 0) return;
        // Taking the lock orders this wake-up after a sleeper's last check of its condition,
        // which it makes under the lock just before it sleeps.
        { std::lock_guard<std::mutex> lock(mutex_); }
        if (count < 0 || count >= sleeping) {
            condition_.notify_all();
        } else {
            for (int i = 0; i < count; ++i) condition_.notify_one();
        }
    }

private:
    std::atomic<int> sleeping_{0};
    std::mutex mutex_;
    std::condition_variable condition_;
};

}  // namespace gemm::cpu_omp_detail
