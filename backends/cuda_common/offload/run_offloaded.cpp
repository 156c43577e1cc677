// run_offloaded.cpp: host problems run by the offload engine (offload_engine.hpp) on CUDA
// devices: on the calling thread's context of its current device, or spread over several
// devices (offload_spread.hpp), a worker thread per further device.
#include "run_offloaded.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"
#include "dispatch/error.hpp"
#include "dispatch/launcher.hpp"
#include "offload_engine.hpp"
#include "offload_options.hpp"
#include "offload_plan.hpp"
#include "offload_spread.hpp"

namespace gemm::cuda {
namespace {

// The offload engine's streams and events on one (thread, device), kept across calls.
struct offload_streams final : context_attachment {
    cudaStream_t streams[3] = {};
    std::vector<cudaEvent_t> events;

    ~offload_streams() override {
        for (cudaEvent_t e : events)
            if (e) cudaEventDestroy(e);
        for (cudaStream_t s : streams)
            if (s) cudaStreamDestroy(s);
    }
    gemm_status_t create() {
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        for (cudaStream_t &stream : streams)
            if (!stream && s == GEMM_STATUS_SUCCESS)
                s = made(stream, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                         "cudaStreamCreateWithFlags (offload)");
        return s;
    }
    gemm_status_t event(int i, cudaEvent_t &out) {
        if (std::size_t(i) >= events.size()) events.resize(std::size_t(i) + 1, nullptr);
        cudaEvent_t &e = events[std::size_t(i)];
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        if (!e) s = made(e, cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags (offload)");
        out = e;
        return s;
    }
};

// The engine's GPU: the calling thread's context on `device`, the backend's launch for GEMMs.
class cuda_offload_device final : public offload_device {
public:
    cuda_offload_device(device_context &dc, int device, offload_streams &lanes, launch_fn launch, check_fn refusal,
                        void *state)
        : dc_(dc), device_(device), lanes_(lanes), launch_(launch), check_(refusal), state_(state) {}

    std::size_t device_budget() override {
        if (uint64_t cap = offload_byte_cap()) return std::size_t(cap);
        std::size_t free = 0, total = 0;
        if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
            cudaGetLastError();
            return dc_.device_staging_bytes();
        }
        return (free + dc_.device_staging_bytes()) / 2;
    }

    // Host memory at ptr page-locked (cudaMallocHost, cudaHostRegister): the DMA engine reads
    // and writes it directly, at the link's speed.
    bool page_locked(const void *ptr) override {
        cudaPointerAttributes attributes{};
        if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return attributes.type == cudaMemoryTypeHost;
    }

    gemm_status_t device_memory(std::size_t bytes, char *&out) override {
        void *p = nullptr;
        gemm_status_t s = dc_.device_staging(bytes, p);
        out = static_cast<char *>(p);
        return s;
    }
    gemm_status_t pinned_memory(std::size_t bytes, char *&out) override {
        void *p = nullptr;
        gemm_status_t s = dc_.pinned_staging(bytes, p);
        out = static_cast<char *>(p);
        return s;
    }

    gemm_status_t copy(char *dst, std::size_t dst_pitch, const char *src, std::size_t src_pitch, std::size_t width,
                       std::size_t height, bool to_device, offload_stream s) override {
        const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        cudaError_t e = height == 1 ? cudaMemcpyAsync(dst, src, width, kind, stream(s))
                                    : cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height, kind, stream(s));
        return cuda_status(e, to_device ? "offload: copy to the device" : "offload: copy to the host");
    }

    gemm_status_t record(int event, offload_stream s) override {
        return on_event(event, [&](cudaEvent_t e) {
            return cuda_status(cudaEventRecord(e, stream(s)), "cudaEventRecord (offload)");
        });
    }
    gemm_status_t wait(offload_stream s, int event) override {
        return on_event(event, [&](cudaEvent_t e) {
            return cuda_status(cudaStreamWaitEvent(stream(s), e, 0), "cudaStreamWaitEvent (offload)");
        });
    }
    gemm_status_t host_wait(int event) override {
        return on_event(event, [](cudaEvent_t e) {
            return cuda_status(cudaEventSynchronize(e), "cudaEventSynchronize (offload)");
        });
    }
    gemm_status_t passed(int event, bool &out) override {
        return on_event(event, [&](cudaEvent_t e) {
            cudaError_t q = cudaEventQuery(e);
            out = q == cudaSuccess;
            if (q != cudaErrorNotReady) return cuda_status(q, "cudaEventQuery (offload)");
            cudaGetLastError();
            return GEMM_STATUS_SUCCESS;
        });
    }

    gemm_status_t check(const problem &dp) override {
        return check_ ? check_(state_, on_device(dp)) : GEMM_STATUS_SUCCESS;
    }
    gemm_status_t gemm(const problem &dp) override {
        return launch_(state_, on_device(dp), stream(offload_stream::compute));
    }

    gemm_status_t finish() override {
        cudaError_t first = cudaSuccess;
        for (cudaStream_t s : lanes_.streams) {
            cudaError_t e = cudaStreamSynchronize(s);
            if (first == cudaSuccess) first = e;
        }
        if (first != cudaSuccess) cudaGetLastError();
        return cuda_status(first, "offload: cudaStreamSynchronize");
    }

private:
    cudaStream_t stream(offload_stream s) const { return lanes_.streams[int(s)]; }
    // f(the event numbered `event`, created on first use).
    template <class F> gemm_status_t on_event(int event, F f) {
        cudaEvent_t e = nullptr;
        gemm_status_t s = lanes_.event(event, e);
        return s != GEMM_STATUS_SUCCESS ? s : f(e);
    }
    problem on_device(problem dp) const {
        dp.device = device_;
        dp.stream = stream(offload_stream::compute);
        return dp;
    }

    device_context &dc_;
    int device_;
    offload_streams &lanes_;
    launch_fn launch_;
    check_fn check_;
    void *state_;
};

// "12.35": for traces.
std::string two_places(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", value);
    return text;
}

// What the engine's GEMMs call: the backend's launch and check.
struct backend_calls {
    launch_fn launch;
    check_fn check;
    void *state;
};

// Rows and columns of C per tile: GEMM_OFFLOAD_TILE, else what the plan's rule gives the
// whole problem, so that the shares of a spread call run the tiles (the shapes the backend
// planned for, offload_shape) the whole would.
std::pair<int64_t, int64_t> tile_of(const problem &whole) {
    if (offload_tile().first) return offload_tile();
    const problem first = offload_plan::first_shape(whole);
    return {first.m, first.n};
}

// One share of a host problem on `device`, by this thread's context there.
gemm_status_t run_share(const problem &share, int device, const backend_calls &calls, offload_report &report,
                        std::pair<int64_t, int64_t> tile, const offload_gate &gate = {}) {
    device_guard guard;
    gemm_status_t s = guard.enter(device);
    device_context *dc = nullptr;
    if (s == GEMM_STATUS_SUCCESS) s = context_for(device, dc);
    if (s != GEMM_STATUS_SUCCESS) return s;
    offload_streams &lanes = dc->attachment<offload_streams>();
    if ((s = lanes.create()) != GEMM_STATUS_SUCCESS) return s;
    cuda_offload_device dev(*dc, device, lanes, calls.launch, calls.check, calls.state);
    return run_offload(share, dev, report, tile.first, tile.second, gate);
}

// The worker of a device ordinal's n-th share in a call (a device named twice takes two
// shares, which must run at once), started on first use and joined at exit, so that its
// contexts there (streams, device memory, page-locked waves, library handles) are kept from
// call to call as a calling thread's are; null when no thread can be started.
share_worker *worker_for(int device, int nth) {
    static std::mutex mutex;
    static std::map<std::pair<int, int>, std::unique_ptr<share_worker>> workers;
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<share_worker> &w = workers[{device, nth}];
    if (!w) {
        try {
            w = std::make_unique<share_worker>();
        } catch (...) {
            return nullptr;
        }
    }
    return w.get();
}

device_speeds &speeds() {
    static device_speeds measured;
    return measured;
}

// The devices a host call may use: the listed ones (when none is, every device, or a rank's
// own: default_offload_devices), the caller's current device first when it is among them. A
// device listed twice takes two shares, each on its own thread: how spreading is tested on a
// machine of one GPU.
gemm_status_t call_devices(std::vector<int> &out) {
    const int count = device_count();
    int current = 0;
    if (gemm_status_t s = cuda_status(cudaGetDevice(&current), "cudaGetDevice"); s != GEMM_STATUS_SUCCESS) return s;
    out = offload_devices_listed();
    if (out.empty() && count > 0) out = default_offload_devices(count, this_launch_rank().local_rank);
    for (int d : out)
        if (d >= count)
            return set_error(GEMM_STATUS_INVALID_CONFIG, "GEMM_OFFLOAD_DEVICES names device " + std::to_string(d) +
                                                             ", but this machine has " + std::to_string(count));
    const auto at = std::find(out.begin(), out.end(), current);
    if (at != out.end()) std::rotate(out.begin(), at, at + 1);
    return GEMM_STATUS_SUCCESS;
}

std::string offload_note(const offload_report &r) {
    return r.plan + "; H2D " + two_places(double(r.to_device) / 1e6) + " MB, D2H " +
           two_places(double(r.to_host) / 1e6) + " MB, " +
           (r.all_page_locked ? "all page-locked: direct DMA" : "packed through page-locked staging where pageable") +
           "; " + two_places(r.seconds * 1e3) + " ms: packing " + two_places(r.packing * 1e3) + ", unpacking " +
           two_places(r.unpacking * 1e3) + ", waiting on the GPU " + two_places(r.waiting * 1e3);
}

// Shares run at once on several devices: the backend's launch and check are called by one
// thread at a time (they may keep state of the call's, such as its report).
struct serialized_calls {
    backend_calls calls;
    std::mutex mutex;

    static gemm_status_t launch(void *self, const problem &dp, cudaStream_t stream) {
        auto &s = *static_cast<serialized_calls *>(self);
        std::lock_guard<std::mutex> lock(s.mutex);
        return s.calls.launch(s.calls.state, dp, stream);
    }
    static gemm_status_t check(void *self, const problem &dp) {
        auto &s = *static_cast<serialized_calls *>(self);
        std::lock_guard<std::mutex> lock(s.mutex);
        return s.calls.check ? s.calls.check(s.calls.state, dp) : GEMM_STATUS_SUCCESS;
    }
};

// The shares on their devices: the first on the calling thread, the others on their devices'
// workers, all at once (run_shares_at_once); the error of a share that failed.
gemm_status_t run_shares(const std::vector<offload_share> &shares, const std::vector<int> &devices,
                         const backend_calls &calls, std::pair<int64_t, int64_t> tile,
                         std::vector<share_outcome> &outcomes) {
    serialized_calls serialized{calls, {}};
    const backend_calls shared{serialized_calls::launch, serialized_calls::check, &serialized};
    std::map<int, int> taken;  // shares given to each device so far, the caller's included
    taken[devices[shares[0].device]] = 1;
    const share_submit submit = [&](std::size_t i, std::function<void()> job) {
        const int device = devices[shares[i].device];
        share_worker *w = worker_for(device, taken[device]++);
        if (w) w->submit(std::move(job));
        return w != nullptr;
    };
    const share_run run = [&](std::size_t i, const offload_gate &gate, offload_report &report) {
        return run_share(shares[i].p, devices[shares[i].device], shared, report, tile, gate);
    };
    const std::size_t failed = run_shares_at_once(shares.size(), submit, run, outcomes);
    if (failed == shares.size()) return GEMM_STATUS_SUCCESS;
    return set_error(outcomes[failed].status,
                     "GPU " + std::to_string(devices[shares[failed].device]) + ": " + outcomes[failed].error);
}

gemm_status_t run_offloaded(const problem &p, run_report &ctx, const backend_calls &calls,
                            const std::vector<int> &devices) {
    spread_axis axis = spread_axis::none;
    const std::vector<offload_share> shares = split_offload(p, speeds().of(devices), axis);
    if (shares.size() == 1) {
        offload_report report;
        gemm_status_t s = run_share(p, devices.front(), calls, report, offload_tile());
        if (s == GEMM_STATUS_SUCCESS) ctx.note = "host pointers offloaded: " + offload_note(report);
        return s;
    }
    std::vector<share_outcome> outcomes;
    if (gemm_status_t s = run_shares(shares, devices, calls, tile_of(p), outcomes); s != GEMM_STATUS_SUCCESS) return s;
    ctx.note = "host pointers offloaded to " + std::to_string(shares.size()) + " GPUs by C's " + spread_axis_name(axis);
    for (std::size_t i = 0; i < shares.size(); ++i) {
        const offload_share &sh = shares[i];
        const int device = devices[sh.device];
        speeds().record(device, sh.p.flops(), outcomes[i].report.seconds);
        ctx.note += "; GPU " + std::to_string(device) + " (" + std::to_string(sh.first) + " to " +
                    std::to_string(sh.first + sh.count - 1) + "): " + offload_note(outcomes[i].report);
    }
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

problem offload_shape(const problem &p) {
    if (p.space != memory_space::host) return p;
    return offload_plan::first_shape(p, offload_tile().first, offload_tile().second);
}

gemm_status_t host_problem_device(int &device) {
    std::vector<int> devices;
    gemm_status_t s = call_devices(devices);
    if (s == GEMM_STATUS_SUCCESS) device = devices.front();
    return s;
}

gemm_status_t run_offloaded(const problem &p, run_report &ctx, launch_fn launch, check_fn check, void *state) {
    std::vector<int> devices;
    gemm_status_t s = call_devices(devices);
    return s != GEMM_STATUS_SUCCESS ? s : run_offloaded(p, ctx, {launch, check, state}, devices);
}

}  // namespace gemm::cuda
