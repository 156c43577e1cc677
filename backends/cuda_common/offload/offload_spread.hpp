// offload_spread.hpp: a host-memory GEMM spread over several GPUs. The problem is cut into one
// share per device, each an ordinary GEMM on a range of C (whole batch matrices, or columns,
// or rows) that the device's offload engine runs alone; the shares' sizes follow the devices'
// measured speeds, and the shares run at once, meeting before their first copies. Plain C++,
// so that it is tested without a GPU (tests/test_offload.cpp, on simulated devices).
//
// Where to cut, for D devices:
//   batch >= D       whole matrices: nothing is copied twice
//   else m <= n      C's columns: every device needs all of A and its columns of B, so the
//                    smaller operand (A, as m <= n) is the one copied D times
//   else             C's rows: all of B to every device, its rows of A
// at multiples of 256 columns or rows, and only as many devices as each move 32 MiB or more.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"
#include "offload_engine.hpp"

namespace gemm::cuda {

enum class spread_axis : int { none = 0, batch = 1, columns = 2, rows = 3 };

// One device's part: p cut to [first, first + count) along the axis, its pointers moved
// there. device indexes the list the split was made for.
struct offload_share {
    problem p;
    std::size_t device = 0;
    int64_t first = 0, count = 0;
};

// Each share moves at least this many bytes across its link: below that, starting a second
// device's share costs more than the copies it saves.
constexpr double least_share_bytes = double(32 << 20);

// The shares of p (a host problem) for devices of relative speeds `speeds` (each > 0), in
// device order, each non-empty, together covering every element of C once, each moving at
// least `least_bytes` (of A, B and C). One share (all of p, on device 0) when the problem is
// too small to spread, or only one device is given.
std::vector<offload_share> split_offload(const problem &p, const std::vector<double> &speeds, spread_axis &axis,
                                         double least_bytes = least_share_bytes);

// "columns", "rows", "batch matrices": for traces.
const char *spread_axis_name(spread_axis a);

// The devices a host call uses where GEMM_OFFLOAD_DEVICES names none, of `count` (> 0): all
// of them, or, for a process a launcher gave a local rank (>= 0, dispatch/launcher.hpp), the
// one of its local rank modulo count, so that the ranks of a node share its GPUs out instead
// of each spreading over all of them.
std::vector<int> default_offload_devices(int count, int local_rank);

// What each device of a process computed lately, in FLOP/s, for the next split: every device
// starts at the same speed, and each spread call moves a device's estimate halfway towards
// the rate its share ran at (its FLOPs over the seconds its engine took). Thread-safe.
class device_speeds {
public:
    // The estimates of the devices named by `ordinals` (in that order; 1 for a device never
    // measured, or the mean of those measured).
    std::vector<double> of(const std::vector<int> &ordinals) const;
    void record(int ordinal, double flops, double seconds);

private:
    mutable std::mutex mutex_;
    std::vector<double> rate_;  // by ordinal; 0: never measured
};

// A thread that runs the jobs submitted to it one at a time, in order: the library keeps one
// per device for the shares that are not the calling thread's. Joined when destroyed, after
// the jobs already submitted.
class share_worker {
public:
    share_worker();
    ~share_worker();
    share_worker(const share_worker &) = delete;
    share_worker &operator=(const share_worker &) = delete;
    void submit(std::function<void()> job);

private:
    void serve();

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> jobs_;
    bool stop_ = false;
    std::thread thread_;  // last: started once the members it uses exist
};

// What one share of a spread call came to.
struct share_outcome {
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    std::string error;  // the last error of the thread that ran it, when it failed
    offload_report report;
    bool stopped = false;  // ready, but stopped before its first copy by another share's failure
};

// Runs share i through run(i, gate, report), which computes it as run_offload does, passing
// it the gate; starts a job on another thread through submit(job), false when it cannot.
using share_run = std::function<gemm_status_t(std::size_t i, const offload_gate &gate, offload_report &report)>;
using share_submit = std::function<bool(std::size_t i, std::function<void()> job)>;

// Runs `count` shares at once: share 0 on the calling thread, the others through submit. The
// shares meet at the gate before their first copies, and none copies anything unless every
// one is ready, so that one share's refusal leaves all of C untouched. The submissions of
// calls made at once go one call at a time, so that threads which take their jobs in order
// (a worker per device) take every call's shares in the same order, and no share waits at a
// gate for one queued behind a share that waits at another. Returns once every share has
// finished: the index of the first share that failed (not one the gate stopped), or count.
std::size_t run_shares_at_once(std::size_t count, const share_submit &submit, const share_run &run,
                               std::vector<share_outcome> &outcomes);

}  // namespace gemm::cuda
