// device_context.hpp: what a thread keeps per CUDA device (library handles, workspace,
// staging buffers), created on first use and reused, and the guard that makes a device
// current for a while.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda {

// A piece of per-context state a backend owns (e.g. cuBLASLt's descriptor cache). Destroyed
// with the context, before the handles and buffers.
struct context_attachment {
    virtual ~context_attachment() = default;
};

// A device buffer that work on the thread's streams uses in turn. acquire() hands it out for
// work about to be enqueued on `stream`: if the last work using it was enqueued on another
// stream, `stream` first waits for that work, so two streams never share it at once. A stream
// being captured into a CUDA graph gets a buffer the graph allocates and frees itself instead
// (cudaMallocAsync): waiting there on uncaptured work is an error, and the graph may be
// replayed at any time, alongside anything. Call release(stream, out) right after enqueuing
// the work that uses it. A buffer of fixed size refuses more than that; a growing one is
// reallocated (after the last work using it has finished) when asked for more than it holds.
class stream_buffer {
public:
    stream_buffer(const char *what, std::size_t fixed_bytes) : what_(what), fixed_bytes_(fixed_bytes) {}
    ~stream_buffer() { free(); }
    stream_buffer(const stream_buffer &) = delete;
    stream_buffer &operator=(const stream_buffer &) = delete;

    gemm_status_t acquire(cudaStream_t stream, std::size_t bytes, void *&out);
    gemm_status_t release(cudaStream_t stream, void *used);
    // Frees the buffer and its event (results ignored: it may run at process exit).
    void free();

private:
    gemm_status_t hold(std::size_t bytes);  // a buffer of at least bytes, not captured

    const char *what_;
    std::size_t fixed_bytes_;  // 0: grows
    void *buf_ = nullptr;
    std::size_t bytes_ = 0;
    cudaStream_t stream_ = nullptr;  // stream of the last work using the buffer
    bool used_ = false;
    cudaEvent_t event_ = nullptr;  // recorded after that work
};

// One per (thread, device), created on first use by context_for() and destroyed when the
// thread exits. Every member is created lazily the first time it is asked for, then reused;
// nothing here is freed per call. Not shared between threads, so no locking.
class device_context {
public:
    explicit device_context(int device);
    ~device_context();
    device_context(const device_context &) = delete;
    device_context &operator=(const device_context &) = delete;

    // Library handles (the device must be current, as run_on_device guarantees). The cuBLAS
    // handle comes bound to `stream` and `math`; they are set only when they differ from the
    // last call's, because at small sizes the host cost of setting them every call shows.
    gemm_status_t blas(cudaStream_t stream, cublasMath_t math, cublasHandle_t &out);
    gemm_status_t blas_lt(cublasLtHandle_t &out);

    // The workspace (cuBLASLt's, the split-k partial sums) of at most workspace_bytes, 32 MiB,
    // and a growing scratch buffer (operands copied into the layout a kernel reads), each a
    // stream_buffer: acquire for work about to be enqueued on `stream`, release right after.
    static constexpr std::size_t workspace_bytes = std::size_t(32) << 20;
    gemm_status_t acquire_workspace(cudaStream_t stream, std::size_t bytes, void *&out) {
        return workspace_.acquire(stream, bytes, out);
    }
    gemm_status_t release_workspace(cudaStream_t stream, void *used) { return workspace_.release(stream, used); }
    gemm_status_t acquire_scratch(cudaStream_t stream, std::size_t bytes, void *&out) {
        return scratch_.acquire(stream, bytes, out);
    }
    gemm_status_t release_scratch(cudaStream_t stream, void *used) { return scratch_.release(stream, used); }

    // Growing, reused buffers of the offload engine (host-pointer calls): at least `bytes`,
    // 256-byte aligned; what the device one holds now.
    gemm_status_t device_staging(std::size_t bytes, void *&out);
    gemm_status_t pinned_staging(std::size_t bytes, void *&out);
    std::size_t device_staging_bytes() const { return device_buf_bytes_; }

    // The attachment of type T (default-constructed on first use).
    template <class T> T &attachment() {
        std::unique_ptr<context_attachment> &slot = attachments_[std::type_index(typeid(T))];
        if (!slot) slot = std::make_unique<T>();
        return static_cast<T &>(*slot);
    }

private:
    int device_;
    cublasHandle_t blas_ = nullptr;
    cudaStream_t blas_stream_ = nullptr;  // what blas_ is set to (a new handle: stream 0)
    cublasMath_t blas_math_ = CUBLAS_DEFAULT_MATH;
    cublasLtHandle_t lt_ = nullptr;
    stream_buffer workspace_{"workspace", workspace_bytes};
    stream_buffer scratch_{"scratch", 0};
    void *device_buf_ = nullptr;
    std::size_t device_buf_bytes_ = 0;
    void *pinned_buf_ = nullptr;
    std::size_t pinned_buf_bytes_ = 0;
    std::unordered_map<std::type_index, std::unique_ptr<context_attachment>> attachments_;
};

// The calling thread's context for `device`, created on first use. Sets out on success.
gemm_status_t context_for(int device, device_context *&out);

// Makes a device current until the guard is destroyed, then restores the caller's device.
class device_guard {
public:
    device_guard() = default;
    device_guard(const device_guard &) = delete;
    device_guard &operator=(const device_guard &) = delete;
    ~device_guard();
    gemm_status_t enter(int device);

private:
    int previous_ = -1;
    bool switched_ = false;
};

}  // namespace gemm::cuda
