// worker_pool.cpp: the process's helper threads for cpu_omp, and how a call hands them work.
#include "worker_pool.hpp"

#include <omp.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <new>
#include <thread>

#include "spin_then_block.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// One call's work, on the calling thread's stack. Helpers enter it only while it is in the
// pool's list of open jobs, under the pool's mutex; the caller takes it off the list under
// the same mutex, after which `entered` is final and no helper can reach the job any more.
struct job {
    void (*work)(void *);
    void *context;
    int wanted;                // helpers it can use
    int entered = 0;           // helpers that joined (under the pool's mutex)
    job *next = nullptr;       // in the list of open jobs
    std::atomic<int> left{0};  // helpers that joined and have returned
};

// Never destroyed: its threads sleep in it until the process ends, and a call may still
// arrive during exit (as with the backend registry).
class worker_pool {
public:
    void post(job &j);
    void finish(job &j);

private:
    void start_helpers(int count);
    void serve();
    job *enter_job();
    void unlink(job &j);

    std::mutex mutex_;
    job *open_ = nullptr;             // oldest first (under mutex_)
    std::atomic<int> open_count_{0};  // jobs in the list, read by helpers while they spin
    int helpers_ = 0;                 // started or being started (under mutex_)
    spin_then_block job_posted_;      // helpers wait here for work
    spin_then_block helper_left_;     // callers wait here for the helpers of their job
};

// Starts `count` helpers, already counted in helpers_. A thread that cannot be started is not
// an error: calls go on with the helpers there are, or with the caller alone, and a later
// call tries again.
void worker_pool::start_helpers(int count) {
    int started = 0;
    try {
        for (; started < count; ++started) std::thread([this] { serve(); }).detach();
    } catch (const std::exception &) {
        std::lock_guard<std::mutex> lock(mutex_);
        helpers_ -= count - started;
    }
}

// Opens j to helpers, and grows the pool to the helpers j can use.
void worker_pool::post(job &j) {
    int missing;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job **end = &open_;
        while (*end) end = &(*end)->next;
        *end = &j;
        open_count_.fetch_add(1, std::memory_order_relaxed);
        missing = std::max(0, j.wanted - helpers_);
        helpers_ += missing;
    }
    job_posted_.wake(j.wanted);
    if (missing > 0) start_helpers(missing);
}

// Takes j off the list of open jobs if it is still there. Under mutex_.
void worker_pool::unlink(job &j) {
    for (job **at = &open_; *at; at = &(*at)->next)
        if (*at == &j) {
            *at = j.next;
            open_count_.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
}

// Waits for an open job and enters it; a job that has all the helpers it wants leaves the list.
job *worker_pool::enter_job() {
    for (;;) {
        job_posted_.wait([this] { return open_count_.load(std::memory_order_relaxed) > 0; });
        std::lock_guard<std::mutex> lock(mutex_);
        if (job *j = open_) {
            if (++j->entered == j->wanted) unlink(*j);
            return j;
        }
    }
}

void worker_pool::serve() {
    for (;;) {
        job *j = enter_job();
        j->work(j->context);
        // The last touch of *j: once `left` reaches `entered`, its caller may return.
        j->left.fetch_add(1, std::memory_order_release);
        helper_left_.wake();
    }
}

// Closes j to helpers that have not entered it yet, and waits for those that have (they may
// hold work they took).
void worker_pool::finish(job &j) {
    int entered;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        unlink(j);
        entered = j.entered;
    }
    helper_left_.wait([&] { return j.left.load(std::memory_order_acquire) == entered; });
}

// The pool of this process. In a child after fork() the parent's helper threads do not exist
// (and its mutexes may have been held by them), so the child forgets that pool and makes its own.
std::atomic<worker_pool *> current_pool{nullptr};

void forget_pool_in_child() { current_pool.store(nullptr, std::memory_order_relaxed); }

// Without the fork handler a child would wait for helpers that do not exist: no pool then.
const bool fork_handler_set = pthread_atfork(nullptr, nullptr, forget_pool_in_child) == 0;

worker_pool *process_pool() {
    worker_pool *pool = current_pool.load(std::memory_order_acquire);
    if (pool || !fork_handler_set) return pool;
    worker_pool *fresh = new (std::nothrow) worker_pool;
    if (!fresh) return nullptr;
    if (current_pool.compare_exchange_strong(pool, fresh, std::memory_order_acq_rel)) return fresh;
    delete fresh;  // another thread's pool was installed first
    return pool;
}

}  // namespace

int call_threads() {
    if (omp_get_active_level() >= omp_get_max_active_levels()) return 1;
    return std::max(1, omp_get_max_threads());
}

void run_with_helpers(int helpers, void (*work)(void *), void *context) {
    worker_pool *pool = helpers > 0 ? process_pool() : nullptr;
    if (!pool) {
        work(context);
        return;
    }
    job j{work, context, helpers};
    pool->post(j);
    // The caller always works on its own job, so it finishes even when no helper comes.
    work(context);
    pool->finish(j);
}

}  // namespace gemm::cpu_omp_detail
