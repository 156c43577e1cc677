// cuda_services.cpp: CUDA's table of the services dispatch uses (dispatch/memory.hpp).
#include "cuda_services.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "backends/cuda_common/kernels/epilogue_pass.hpp"
#include "backends/cuda_common/offload/offload_options.hpp"
#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"
#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"

namespace gemm::cuda {
namespace {

gemm_status_t allocate(int device, std::size_t bytes, void **out) {
    device_guard guard;
    if (gemm_status_t s = guard.enter(device); s != GEMM_STATUS_SUCCESS) return s;
    return cuda_status(cudaMalloc(out, bytes), "cudaMalloc (measured operands)");
}

void release(int device, void *ptr) {
    device_guard guard;
    if (guard.enter(device) == GEMM_STATUS_SUCCESS) cudaFree(ptr);
    cudaGetLastError();
}

gemm_status_t copy(int device, void *dst, const void *src, std::size_t bytes) {
    device_guard guard;
    if (gemm_status_t s = guard.enter(device); s != GEMM_STATUS_SUCCESS) return s;
    return cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy (measured operands)");
}

gemm_status_t create_stream(int device, void **stream) {
    device_guard guard;
    if (gemm_status_t s = guard.enter(device); s != GEMM_STATUS_SUCCESS) return s;
    cudaStream_t made = nullptr;
    gemm_status_t s =
        cuda_status(cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking), "cudaStreamCreate (measurement)");
    *stream = made;
    return s;
}

void destroy_stream(int device, void *stream) {
    device_guard guard;
    if (guard.enter(device) == GEMM_STATUS_SUCCESS) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
    cudaGetLastError();
}

// Events around the work, on the work's own stream, so that only device time is counted.
gemm_status_t time_on_stream(int device, void *stream, gemm_status_t (*work)(void *), void *state, double *ms) {
    device_guard guard;
    if (gemm_status_t s = guard.enter(device); s != GEMM_STATUS_SUCCESS) return s;
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    cudaEvent_t start = nullptr, stop = nullptr;
    gemm_status_t s = cuda_status(cudaEventCreate(&start), "cudaEventCreate");
    if (s == GEMM_STATUS_SUCCESS) s = cuda_status(cudaEventCreate(&stop), "cudaEventCreate");
    if (s == GEMM_STATUS_SUCCESS) s = cuda_status(cudaEventRecord(start, st), "cudaEventRecord");
    if (s == GEMM_STATUS_SUCCESS) s = work(state);
    if (s == GEMM_STATUS_SUCCESS) s = cuda_status(cudaEventRecord(stop, st), "cudaEventRecord");
    if (s == GEMM_STATUS_SUCCESS) s = cuda_status(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float elapsed = 0;
    if (s == GEMM_STATUS_SUCCESS) s = cuda_status(cudaEventElapsedTime(&elapsed, start, stop), "cudaEventElapsedTime");
    *ms = elapsed;
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    return s;
}

std::size_t cache_bytes(int device) {
    int l2 = 0;
    if (l2_cache_bytes(device, l2) != cudaSuccess) {
        cudaGetLastError();
        return std::size_t(64) << 20;
    }
    return std::size_t(l2);
}

gemm_status_t pin(void *host, std::size_t bytes) {
    return cuda_status(cudaHostRegister(host, bytes, cudaHostRegisterDefault), "cudaHostRegister");
}

void unpin(void *host) {
    cudaHostUnregister(host);
    cudaGetLastError();
}

// Each read enqueued with its device current, then one wait per device the reads named (one
// in practice; the legacy default stream, 0, is a different stream on each device).
gemm_status_t read_in_stream_order(void *stream, const stream_read *reads, int count) {
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    std::vector<int> devices;
    for (int i = 0; i < count; ++i) {
        device_guard guard;
        if (gemm_status_t s = guard.enter(reads[i].device); s != GEMM_STATUS_SUCCESS) return s;
        if (i == 0) {
            cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
            if (gemm_status_t s = cuda_status(cudaStreamIsCapturing(st, &capture), "cudaStreamIsCapturing");
                s != GEMM_STATUS_SUCCESS)
                return s;
            if (capture != cudaStreamCaptureStatusNone)
                return set_error(GEMM_STATUS_NOT_SUPPORTED,
                                 "the call's stream is being captured into a CUDA graph, where the host cannot read "
                                 "device memory; pass the array in host memory");
        }
        if (gemm_status_t s = cuda_status(
                cudaMemcpyAsync(reads[i].host, reads[i].src, reads[i].bytes, cudaMemcpyDefault, st), "cudaMemcpyAsync");
            s != GEMM_STATUS_SUCCESS)
            return s;
        if (std::find(devices.begin(), devices.end(), reads[i].device) == devices.end())
            devices.push_back(reads[i].device);
    }
    for (int device : devices) {
        device_guard guard;
        if (gemm_status_t s = guard.enter(device); s != GEMM_STATUS_SUCCESS) return s;
        if (gemm_status_t s = cuda_status(cudaStreamSynchronize(st), "cudaStreamSynchronize"); s != GEMM_STATUS_SUCCESS)
            return s;
    }
    return GEMM_STATUS_SUCCESS;
}

// In the order of device_services' members.
constexpr device_services services = {
    classify_pointer, allocate, release, copy,          create_stream,        destroy_stream,  time_on_stream,
    cache_bytes,      pin,      unpin,   epilogue_pass, read_in_stream_order, offload_options, "GPU offload"};

}  // namespace

const device_services &cuda_services() { return services; }

}  // namespace gemm::cuda
