// device_context.cpp: the per-(thread, device) context and the device guard.
#include "device_context.hpp"

#include <string>
#include <vector>

#include "backends/cuda_common/cublas_loader/cublas_library.hpp"
#include "cuda_devices.hpp"
#include "cuda_status.hpp"
#include "dispatch/error.hpp"

namespace gemm::cuda {
namespace {

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

// Frees and reallocates a growing buffer only when it is too small; sizes grow to the next
// 2 MiB so that a slowly growing sequence of calls does not reallocate every time.
template <class Alloc, class Free>
gemm_status_t grow(void *&buf, std::size_t &have, std::size_t need, Alloc alloc, Free release, const char *what) {
    if (need <= have && buf) return GEMM_STATUS_SUCCESS;
    if (buf) {
        release(buf);
        cudaGetLastError();
        buf = nullptr;
        have = 0;
    }
    std::size_t bytes = round_up(need > 0 ? need : 1, std::size_t(2) << 20);
    gemm_status_t s = cuda_status(alloc(&buf, bytes), what);
    if (s != GEMM_STATUS_SUCCESS) {
        buf = nullptr;
        return s;
    }
    have = bytes;
    return GEMM_STATUS_SUCCESS;
}

// The calling thread's contexts, one slot per device ordinal.
struct thread_contexts {
    std::vector<std::unique_ptr<device_context>> by_device;
};
thread_local thread_contexts tls_contexts;

}  // namespace

device_context::device_context(int device) : device_(device) {}

device_context::~device_context() {
    int previous = -1;
    bool switched =
        cudaGetDevice(&previous) == cudaSuccess && previous != device_ && cudaSetDevice(device_) == cudaSuccess;
    attachments_.clear();  // they may hold descriptors made with the handles below
    // Results are ignored: at process exit the runtime may already be unloading, and there
    // is no caller left to tell.
    workspace_.free();
    scratch_.free();
    if (device_buf_) cudaFree(device_buf_);
    if (pinned_buf_) cudaFreeHost(pinned_buf_);
    if (lt_) cublas().cublasLtDestroy(lt_);
    if (blas_) cublas().cublasDestroy(blas_);
    if (switched) cudaSetDevice(previous);
    cudaGetLastError();
}

gemm_status_t device_context::blas(cudaStream_t stream, cublasMath_t math, cublasHandle_t &out) {
    if (!blas_) {
        // Kept only once fully set up, so that a later call never finds a half-made handle.
        if (gemm_status_t s = require_cublas(); s != GEMM_STATUS_SUCCESS) return s;
        cublasHandle_t fresh = nullptr;
        gemm_status_t s = cublas_status(cublas().cublasCreate(&fresh), "cublasCreate");
        if (s != GEMM_STATUS_SUCCESS) return s;
        // Scalars are passed from the host.
        s = cublas_status(cublas().cublasSetPointerMode(fresh, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
        if (s != GEMM_STATUS_SUCCESS) {
            cublas().cublasDestroy(fresh);
            return s;
        }
        blas_ = fresh;
        blas_stream_ = nullptr;
        blas_math_ = CUBLAS_DEFAULT_MATH;
    }
    if (stream != blas_stream_) {
        gemm_status_t s = cublas_status(cublas().cublasSetStream(blas_, stream), "cublasSetStream");
        if (s != GEMM_STATUS_SUCCESS) return s;
        blas_stream_ = stream;
    }
    if (math != blas_math_) {
        gemm_status_t s = cublas_status(cublas().cublasSetMathMode(blas_, math), "cublasSetMathMode");
        if (s != GEMM_STATUS_SUCCESS) return s;
        blas_math_ = math;
    }
    out = blas_;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t device_context::blas_lt(cublasLtHandle_t &out) {
    if (!lt_) {
        if (gemm_status_t s = require_cublas(); s != GEMM_STATUS_SUCCESS) return s;
        gemm_status_t s = cublas_status(cublas().cublasLtCreate(&lt_), "cublasLtCreate");
        if (s != GEMM_STATUS_SUCCESS) {
            lt_ = nullptr;
            return s;
        }
    }
    out = lt_;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t stream_buffer::hold(std::size_t bytes) {
    if (fixed_bytes_ != 0 && bytes > fixed_bytes_)
        return set_error(GEMM_STATUS_INTERNAL_ERROR, std::string(what_) + ": " + std::to_string(bytes) +
                                                         " bytes asked of a buffer of " + std::to_string(fixed_bytes_));
    const std::size_t need = fixed_bytes_ != 0 ? fixed_bytes_ : bytes;
    if (buf_ && need <= bytes_) return GEMM_STATUS_SUCCESS;
    // The last work using the buffer may still run: it finishes before the buffer goes.
    if (buf_ && used_) cudaEventSynchronize(event_);
    used_ = false;
    return grow(
        buf_, bytes_, need, [](void **p, std::size_t n) { return cudaMalloc(p, n); }, [](void *p) { cudaFree(p); },
        (std::string("cudaMalloc (") + what_ + ")").c_str());
}

gemm_status_t stream_buffer::acquire(cudaStream_t stream, std::size_t bytes, void *&out) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    gemm_status_t captured = cuda_status(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
    if (captured != GEMM_STATUS_SUCCESS) return captured;
    if (capture == cudaStreamCaptureStatusActive)
        return cuda_status(cudaMallocAsync(&out, bytes > 0 ? bytes : 1, stream),
                           (std::string("cudaMallocAsync (") + what_ + " in a CUDA graph)").c_str());
    if (!event_)
        if (gemm_status_t s = made(event_, cudaEventCreateWithFlags(&event_, cudaEventDisableTiming),
                                   "cudaEventCreateWithFlags (stream buffer)");
            s != GEMM_STATUS_SUCCESS)
            return s;
    if (gemm_status_t s = hold(bytes); s != GEMM_STATUS_SUCCESS) return s;
    if (used_ && stream != stream_) {
        gemm_status_t s =
            cuda_status(cudaStreamWaitEvent(stream, event_, 0), "cudaStreamWaitEvent (a buffer shared by two streams)");
        if (s != GEMM_STATUS_SUCCESS) return s;
    }
    out = buf_;
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t stream_buffer::release(cudaStream_t stream, void *used) {
    if (used != buf_)
        return cuda_status(cudaFreeAsync(used, stream),
                           (std::string("cudaFreeAsync (") + what_ + " in a CUDA graph)").c_str());
    gemm_status_t s = cuda_status(cudaEventRecord(event_, stream), "cudaEventRecord (stream buffer)");
    if (s != GEMM_STATUS_SUCCESS) return s;
    used_ = true;
    stream_ = stream;
    return GEMM_STATUS_SUCCESS;
}

void stream_buffer::free() {
    if (event_) cudaEventDestroy(event_);
    if (buf_) cudaFree(buf_);
    event_ = nullptr;
    buf_ = nullptr;
    bytes_ = 0;
    used_ = false;
}

gemm_status_t device_context::device_staging(std::size_t bytes, void *&out) {
    gemm_status_t s = grow(
        device_buf_, device_buf_bytes_, bytes, [](void **p, std::size_t n) { return cudaMalloc(p, n); },
        [](void *p) { cudaFree(p); }, "cudaMalloc (offload)");
    out = device_buf_;
    return s;
}

gemm_status_t device_context::pinned_staging(std::size_t bytes, void *&out) {
    gemm_status_t s = grow(
        pinned_buf_, pinned_buf_bytes_, bytes, [](void **p, std::size_t n) { return cudaMallocHost(p, n); },
        [](void *p) { cudaFreeHost(p); }, "cudaMallocHost (offload)");
    out = pinned_buf_;
    return s;
}

device_guard::~device_guard() {
    if (switched_ && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

gemm_status_t device_guard::enter(int device) {
    gemm_status_t s = cuda_status(current_device(previous_), "cudaGetDevice");
    if (s != GEMM_STATUS_SUCCESS || previous_ == device) return s;
    s = cuda_status(cudaSetDevice(device), "cudaSetDevice");
    if (s == GEMM_STATUS_SUCCESS) switched_ = true;
    return s;
}

gemm_status_t context_for(int device, device_context *&out) {
    int count = device_count();
    if (device < 0 || device >= count)
        return set_error(GEMM_STATUS_EXECUTION_FAILED, "CUDA device " + std::to_string(device) + " does not exist (" +
                                                           std::to_string(count) + " devices)");
    std::vector<std::unique_ptr<device_context>> &slots = tls_contexts.by_device;
    if (slots.size() < std::size_t(count)) slots.resize(std::size_t(count));
    std::unique_ptr<device_context> &slot = slots[std::size_t(device)];
    if (!slot) slot = std::make_unique<device_context>(device);
    out = slot.get();
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm::cuda
