// run_on_device.cpp: device problems launched on the caller's stream; host problems run by the
// offload engine (offload_engine.hpp) on the calling thread's context of its current device.
#include "run_on_device.hpp"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cuda_status.hpp"
#include "device_context.hpp"
#include "dispatch/error.hpp"
#include "dispatch/settings.hpp"
#include "offload_engine.hpp"

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
        for (cudaStream_t &s : streams)
            if (!s) {
                gemm_status_t status = cuda_status(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                                                   "cudaStreamCreateWithFlags (offload)");
                if (status != GEMM_STATUS_SUCCESS) {
                    s = nullptr;
                    return status;
                }
            }
        return GEMM_STATUS_SUCCESS;
    }
    gemm_status_t event(int i, cudaEvent_t &out) {
        if (std::size_t(i) >= events.size()) events.resize(std::size_t(i) + 1, nullptr);
        cudaEvent_t &e = events[std::size_t(i)];
        if (!e) {
            gemm_status_t s = cuda_status(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                                          "cudaEventCreateWithFlags (offload)");
            if (s != GEMM_STATUS_SUCCESS) {
                e = nullptr;
                return s;
            }
        }
        out = e;
        return GEMM_STATUS_SUCCESS;
    }
};

// GEMM_OFFLOAD_MAX_DEVICE_BYTES, checked with the other settings before any call runs; 0: none.
uint64_t offload_byte_cap() {
    static const uint64_t cap = parse_byte_count(settings().option("GEMM_OFFLOAD_MAX_DEVICE_BYTES")).value_or(0);
    return cap;
}

// GEMM_OFFLOAD_TILE: rows and columns of C per tile, or {0, 0} for the plan's rule.
std::pair<int64_t, int64_t> offload_tile() {
    static const std::pair<int64_t, int64_t> tile = parse_tile_size(settings().option("GEMM_OFFLOAD_TILE"));
    return tile;
}

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
        return on_event(event, [](cudaEvent_t e) { return cuda_status(cudaEventSynchronize(e), "cudaEventSynchronize (offload)"); });
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

std::string megabytes(std::size_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", double(bytes) / 1e6);
    return text;
}

std::string milliseconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", seconds * 1e3);
    return text;
}

gemm_status_t run_offloaded(const problem &p, run_report &ctx, launch_fn launch, check_fn check, void *state) {
    int device = 0;
    gemm_status_t s = cuda_status(cudaGetDevice(&device), "cudaGetDevice");
    device_context *dc = nullptr;
    if (s == GEMM_STATUS_SUCCESS) s = context_for(device, dc);
    if (s != GEMM_STATUS_SUCCESS) return s;
    offload_streams &lanes = dc->attachment<offload_streams>();
    if ((s = lanes.create()) != GEMM_STATUS_SUCCESS) return s;
    cuda_offload_device dev(*dc, device, lanes, launch, check, state);
    offload_report report;
    if ((s = run_offload(p, dev, report, offload_tile().first, offload_tile().second)) != GEMM_STATUS_SUCCESS) return s;
    ctx.note = "host pointers offloaded: " + report.plan + "; H2D " + megabytes(report.to_device) + " MB, D2H " +
               megabytes(report.to_host) + " MB, " +
               (report.all_page_locked ? "all page-locked: direct DMA" : "packed through page-locked staging where pageable") +
               "; " + milliseconds(report.seconds) + " ms: packing " + milliseconds(report.packing) + ", unpacking " +
               milliseconds(report.unpacking) + ", waiting on the GPU " + milliseconds(report.waiting);
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

problem offload_shape(const problem &p) {
    if (p.space != memory_space::host) return p;
    return offload_plan::first_shape(p, offload_tile().first, offload_tile().second);
}

gemm_status_t run_on_device(const problem &p, run_report &ctx, launch_fn launch, check_fn check, void *state) {
    if (p.space == memory_space::host) return run_offloaded(p, ctx, launch, check, state);
    device_guard guard;
    gemm_status_t s = guard.enter(p.device);
    if (s != GEMM_STATUS_SUCCESS) return s;
    return launch(state, p, static_cast<cudaStream_t>(p.stream));
}

}  // namespace gemm::cuda
