// offload_spread.cpp: where a host-memory GEMM is cut for several GPUs, and the devices' speeds.
#include "offload_spread.hpp"

#include <algorithm>
#include <cmath>
#include <new>

#include "dispatch/error.hpp"

namespace gemm::cuda {
namespace {

// Cuts fall on multiples of this many columns or rows, so that every share but the last tiles
// as evenly as the whole would.
constexpr int64_t spread_granule = 256;

// The bytes a call moves across the links: A and B once (a matrix the batch shares once), C
// back, and C in too when beta != 0.
double operand_bytes(const problem &p) {
    const double ab = double(dtype_size(p.ab_type)), c = double(dtype_size(p.c_type));
    const double batch = double(p.batch);
    const double a = p.scales_only() ? 0 : double(p.m) * double(p.k) * ab * (p.stride_a ? batch : 1);
    const double b = p.scales_only() ? 0 : double(p.k) * double(p.n) * ab * (p.stride_b ? batch : 1);
    return a + b + double(p.m) * double(p.n) * c * batch * (p.beta_zero() ? 1 : 2);
}

const void *moved(const void *ptr, int64_t elements, dtype t) {
    return ptr ? static_cast<const char *>(ptr) + elements * int64_t(dtype_size(t)) : ptr;
}

// p cut to [first, first + count) along `axis`.
problem cut(const problem &p, spread_axis axis, int64_t first, int64_t count) {
    problem s = p;
    switch (axis) {
    case spread_axis::batch:
        s.a = moved(p.a, first * p.stride_a, p.ab_type);
        s.b = moved(p.b, first * p.stride_b, p.ab_type);
        s.c = const_cast<void *>(moved(p.c, first * p.stride_c, p.c_type));
        s.batch = count;
        break;
    case spread_axis::columns:  // columns of C and of op(B)
        s.b = moved(p.b, p.op_b == transpose::n ? first * p.ldb : first, p.ab_type);
        s.c = const_cast<void *>(moved(p.c, first * p.ldc, p.c_type));
        s.n = count;
        break;
    case spread_axis::rows:  // rows of C and of op(A)
        s.a = moved(p.a, p.op_a == transpose::n ? first : first * p.lda, p.ab_type);
        s.c = const_cast<void *>(moved(p.c, first, p.c_type));
        s.m = count;
        break;
    case spread_axis::none: break;
    }
    return s;
}

// The shares of one call meet before their first copies: each says whether its plan, device
// memory and checks succeeded, and none copies anything unless all did.
class share_gate {
public:
    explicit share_gate(std::size_t shares) : waiting_(shares) {}
    // Waits for every share; whether all are ready.
    bool arrive(bool ok) {
        std::unique_lock<std::mutex> lock(mutex_);
        count(ok);
        all_.wait(lock, [&] { return waiting_ == 0; });
        return !failed_;
    }
    // A share that failed before it could arrive: counted, without waiting.
    void fail_absent() {
        std::lock_guard<std::mutex> lock(mutex_);
        count(false);
    }

private:
    void count(bool ok) {
        failed_ |= !ok;
        if (--waiting_ == 0) all_.notify_all();
    }

    std::mutex mutex_;
    std::condition_variable all_;
    std::size_t waiting_;
    bool failed_ = false;
};

std::mutex &submission_order() {
    static std::mutex order;
    return order;
}

}  // namespace

const char *spread_axis_name(spread_axis a) {
    switch (a) {
    case spread_axis::batch: return "batch matrices";
    case spread_axis::columns: return "columns";
    case spread_axis::rows: return "rows";
    case spread_axis::none: break;
    }
    return "none";
}

std::vector<offload_share> split_offload(const problem &p, const std::vector<double> &speeds, spread_axis &axis,
                                         double least_bytes) {
    axis = spread_axis::none;
    const int64_t devices = int64_t(speeds.size());
    if (devices < 2 || p.m == 0 || p.n == 0 || p.batch == 0) return {{p, 0, 0, 0}};
    int64_t length = 0, granule = 1;
    if (p.batch >= devices) {
        axis = spread_axis::batch, length = p.batch;
    } else {
        axis = p.m <= p.n ? spread_axis::columns : spread_axis::rows;
        length = axis == spread_axis::columns ? p.n : p.m;
        granule = spread_granule;
    }
    const int64_t units = (length + granule - 1) / granule;
    const int64_t used = std::min({devices, units, int64_t(std::min(1e9, operand_bytes(p) / least_bytes))});
    if (used < 2) {
        axis = spread_axis::none;
        return {{p, 0, 0, 0}};
    }
    double total = 0;
    for (int64_t d = 0; d < used; ++d) total += speeds[std::size_t(d)];
    std::vector<offload_share> shares;
    double before = 0;
    int64_t start = 0;  // in units
    for (int64_t d = 0; d < used; ++d) {
        before += speeds[std::size_t(d)];
        int64_t end = d + 1 == used ? units : int64_t(std::llround(double(length) * before / total / double(granule)));
        end = std::clamp(end, start + 1, units - (used - 1 - d));  // every share at least one unit
        const int64_t first = start * granule, count = std::min(length, end * granule) - first;
        shares.push_back({cut(p, axis, first, count), std::size_t(d), first, count});
        start = end;
    }
    return shares;
}

share_worker::share_worker() : thread_([this] { serve(); }) {}

share_worker::~share_worker() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void share_worker::submit(std::function<void()> job) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        jobs_.push_back(std::move(job));
    }
    wake_.notify_one();
}

void share_worker::serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, nothing left
        std::function<void()> job = std::move(jobs_.front());
        jobs_.pop_front();
        lock.unlock();
        job();
        lock.lock();
    }
}

std::size_t run_shares_at_once(std::size_t count, const share_submit &submit, const share_run &run,
                               std::vector<share_outcome> &outcomes) {
    outcomes.assign(count, share_outcome{});
    share_gate gate(count);
    std::mutex mutex;
    std::condition_variable done;
    std::size_t running = 0;
    auto run_one = [&](std::size_t i) {
        share_outcome &o = outcomes[i];
        bool arrived = false;
        const offload_gate meet = [&](gemm_status_t checked) {
            arrived = true;
            const bool ready = checked == GEMM_STATUS_SUCCESS, go = gate.arrive(ready);
            o.stopped = ready && !go;
            return go;
        };
        // Nothing may leave a worker's job, nor the caller's share while the others run.
        try {
            o.status = run(i, meet, o.report);
        } catch (const std::bad_alloc &) {
            o.status = set_fixed_error(GEMM_STATUS_ALLOC_FAILED, "out of memory running a share");
        } catch (...) {
            o.status = set_fixed_error(GEMM_STATUS_INTERNAL_ERROR, "an exception running a share");
        }
        if (!arrived) gate.fail_absent();  // failed before its plan
        if (o.status != GEMM_STATUS_SUCCESS) {
            try {
                o.error = last_error_message();
            } catch (...) {
            }
        }
    };
    {
        std::lock_guard<std::mutex> order(submission_order());
        for (std::size_t i = 1; i < count; ++i) {
            {
                std::lock_guard<std::mutex> lock(mutex);
                ++running;
            }
            bool started = false;
            try {
                started = submit(i, [&, i] {
                    run_one(i);
                    std::lock_guard<std::mutex> lock(mutex);
                    if (--running == 0) done.notify_one();
                });
            } catch (...) {  // out of memory queuing it: not started
            }
            if (!started) {
                {
                    std::lock_guard<std::mutex> lock(mutex);
                    --running;
                }
                outcomes[i].status = GEMM_STATUS_ALLOC_FAILED;
                outcomes[i].error = "no thread could be started for its share";
                gate.fail_absent();
            }
        }
    }
    if (count > 0) run_one(0);
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return running == 0; });
    for (std::size_t i = 0; i < count; ++i)
        if (outcomes[i].status != GEMM_STATUS_SUCCESS && !outcomes[i].stopped) return i;
    return count;
}

std::vector<double> device_speeds::of(const std::vector<int> &ordinals) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto rate = [&](int o) { return o >= 0 && std::size_t(o) < rate_.size() ? rate_[std::size_t(o)] : 0.0; };
    double sum = 0;
    int measured = 0;
    for (int o : ordinals)
        if (rate(o) > 0) sum += rate(o), ++measured;
    const double unknown = measured ? sum / measured : 1.0;
    std::vector<double> out;
    out.reserve(ordinals.size());
    for (int o : ordinals) out.push_back(rate(o) > 0 ? rate(o) : unknown);
    return out;
}

std::vector<int> default_offload_devices(int count, int local_rank) {
    if (local_rank >= 0) return {local_rank % count};
    std::vector<int> all;
    all.reserve(std::size_t(count));
    for (int d = 0; d < count; ++d) all.push_back(d);
    return all;
}

void device_speeds::record(int ordinal, double flops, double seconds) {
    if (ordinal < 0 || !(flops > 0) || !(seconds > 0)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::size_t(ordinal) >= rate_.size()) rate_.resize(std::size_t(ordinal) + 1, 0.0);
    double &r = rate_[std::size_t(ordinal)];
    const double now = flops / seconds;
    r = r > 0 ? (r + now) / 2 : now;
}

}  // namespace gemm::cuda
