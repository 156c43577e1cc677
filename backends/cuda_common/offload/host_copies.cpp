// host_copies.cpp: a small pool of persistent copy threads shared by the calls running at once.
#include "host_copies.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace gemm::cuda {
namespace {

class copy_pool {
public:
    copy_pool() {
        const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
        const unsigned helpers = std::min(15u, hardware - 1);
        for (unsigned i = 0; i < helpers; ++i) {
            try {
                threads_.emplace_back([this] { serve(); });
            } catch (...) {
                break;  // fewer helpers; the caller always works
            }
        }
    }
    ~copy_pool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (std::thread &t : threads_) t.join();
    }

    int threads() const { return int(threads_.size()) + 1; }

    void run(int64_t count, void (*task)(void *, int64_t), void *context) {
        if (threads_.empty() || count <= 1) {
            for (int64_t i = 0; i < count; ++i) task(context, i);
            return;
        }
        job j{task, context, count};
        {
            std::lock_guard<std::mutex> lock(mutex_);
            jobs_.push_back(&j);
        }
        wake_.notify_all();
        const int64_t mine = work(j);
        std::unique_lock<std::mutex> lock(mutex_);
        j.done += mine;
        // Every task ran and every helper that joined has left: j may go out of scope.
        finished_.wait(lock, [&] { return j.done == j.count && j.helpers == 0; });
        jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &j));
    }

private:
    // One call's tasks. Listed for the helpers under mutex_; next is taken without it.
    struct job {
        void (*task)(void *, int64_t);
        void *context;
        int64_t count;
        std::atomic<int64_t> next{0};
        int64_t done = 0;  // tasks finished, under mutex_
        int helpers = 0;   // helpers inside work(), under mutex_
    };

    // Takes tasks until none is left; returns how many this thread ran.
    static int64_t work(job &j) {
        int64_t ran = 0;
        for (int64_t i; (i = j.next.fetch_add(1, std::memory_order_relaxed)) < j.count; ++ran) j.task(j.context, i);
        return ran;
    }

    // A job with tasks not yet taken, oldest first; null when there is none. Under mutex_.
    job *open_job() const {
        for (job *j : jobs_)
            if (j->next.load(std::memory_order_relaxed) < j->count) return j;
        return nullptr;
    }

    void serve() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            job *j = nullptr;
            wake_.wait(lock, [&] { return stop_ || (j = open_job()) != nullptr; });
            if (stop_) return;
            ++j->helpers;
            lock.unlock();
            const int64_t ran = work(*j);
            lock.lock();
            j->done += ran;
            --j->helpers;
            if (j->done == j->count && j->helpers == 0) finished_.notify_all();
        }
    }

    std::vector<std::thread> threads_;
    std::mutex mutex_;  // jobs_, stop_ and the jobs' counts
    std::condition_variable wake_, finished_;
    std::vector<job *> jobs_;  // the calls running now, oldest first
    bool stop_ = false;
};

copy_pool &pool() {
    static copy_pool shared;
    return shared;
}

}  // namespace

void run_host_copies(int64_t count, void (*task)(void *, int64_t), void *context) { pool().run(count, task, context); }

int host_copy_threads() { return pool().threads(); }

}  // namespace gemm::cuda
