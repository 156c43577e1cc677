// cuda_context.hpp: what every CUDA backend shares: the device check, CUDA and cuBLAS error
// mapping, the per-(thread, device) context (library handles, workspace, staging buffers),
// host-pointer staging and the pointer classifier. Everything lives in namespace gemm::cuda.
//
// Usage from a backend (sketch):
//
//     verdict probe() const override { return cuda::device_verdict(); }
//     gemm_status_t run(const problem &p, std::string_view v, run_context &ctx) override {
//         return cuda::run_on_device(p, ctx, [&](const problem &dp, cudaStream_t s) {
//             ... enqueue work for dp on s; return a gemm_status_t ...
//         });
//     }
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>
#include <utility>

#include "dispatch/backend.hpp"

namespace gemm::cuda {

// ---- devices -------------------------------------------------------------------------------

// Number of CUDA devices, asked once and cached; 0 when there is no device or no driver.
// Never leaves an error behind.
int device_count();

// yes("device 0: NVIDIA H200, sm_90, 132 SMs; CUDA runtime 13.1, driver 13.1") or no() with
// why in the user's terms: "no CUDA device: no NVIDIA driver / no GPU (...)", "... the NVIDIA
// driver (CUDA 12.2) is older than the CUDA runtime (13.1) ...". Computed once; thread-safe.
verdict device_verdict();

// ---- errors --------------------------------------------------------------------------------

// Success passes through. Otherwise records "what: cudaErrorX (text)" with set_error and
// returns GEMM_STATUS_ALLOC_FAILED for cudaErrorMemoryAllocation, else
// GEMM_STATUS_EXECUTION_FAILED. Clears the runtime's last (non-sticky) error, so the caller
// never finds one left behind by this library.
gemm_status_t cuda_status(cudaError_t e, const char *what);

// Same for cuBLAS and cuBLASLt: CUBLAS_STATUS_ALLOC_FAILED -> GEMM_STATUS_ALLOC_FAILED,
// CUBLAS_STATUS_NOT_SUPPORTED / ARCH_MISMATCH -> GEMM_STATUS_NOT_SUPPORTED, others
// GEMM_STATUS_EXECUTION_FAILED.
gemm_status_t cublas_status(cublasStatus_t s, const char *what);

// ---- the libraries' names for our types ------------------------------------------------------

inline cublasOperation_t operation_of(transpose t) { return t == transpose::n ? CUBLAS_OP_N : CUBLAS_OP_T; }

inline cudaDataType_t data_type_of(dtype t) {
    switch (t) {
    case dtype::f32: return CUDA_R_32F;
    case dtype::f64: return CUDA_R_64F;
    case dtype::f16: return CUDA_R_16F;
    case dtype::bf16: return CUDA_R_16BF;
    }
    return CUDA_R_32F;
}

// f32 stays f32 unless GEMM_ALLOW_TF32=1; f16 and bf16 accumulate in f32.
bool use_tf32(const problem &p);

// ---- the per-(thread, device) context ------------------------------------------------------

// A piece of per-context state a backend owns (e.g. cuBLASLt's descriptor cache). Destroyed
// with the context, before the handles and buffers.
struct context_attachment {
    virtual ~context_attachment() = default;
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

    int device() const { return device_; }

    // Library handles (the device must be current, as run_on_device guarantees). The cuBLAS
    // handle comes bound to `stream` and `math`; they are set only when they differ from the
    // last call's, because at small sizes the host cost of setting them every call shows.
    gemm_status_t blas(cudaStream_t stream, cublasMath_t math, cublasHandle_t &out);
    gemm_status_t blas_lt(cublasLtHandle_t &out);

    // cuBLASLt's workspace (workspace_bytes, 32 MiB) for work about to be enqueued on
    // `stream`. If the last work using it was enqueued on another stream, `stream` first
    // waits for that work, so two streams of this thread never share the buffer at once.
    // Call release_workspace(stream) right after enqueuing the work that uses it.
    static constexpr std::size_t workspace_bytes = std::size_t(32) << 20;
    gemm_status_t acquire_workspace(cudaStream_t stream, void *&out);
    gemm_status_t release_workspace(cudaStream_t stream);

    // The context's own non-blocking stream, used for staged (host-pointer) calls.
    gemm_status_t staging_stream(cudaStream_t &out);

    // Growing, reused buffers for staging: at least `bytes`, 256-byte aligned.
    gemm_status_t device_staging(std::size_t bytes, void *&out);
    gemm_status_t pinned_staging(std::size_t bytes, void *&out);

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
    void *workspace_ = nullptr;
    cudaStream_t workspace_stream_ = nullptr;  // stream of the last work using the workspace
    bool workspace_used_ = false;
    cudaEvent_t workspace_event_ = nullptr;    // recorded after that work
    cudaStream_t staging_stream_ = nullptr;
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

// The device a problem runs on: p.device for device and managed memory, the calling thread's
// current device for host memory (staged there).
gemm_status_t device_of(const problem &p, int &device);

// ---- running a problem on the device -------------------------------------------------------

// The problem a host-pointer call becomes once staged, with null pointers: packed operands
// (see run_on_device). Device and managed problems are returned unchanged. Backends that
// plan by shape (cuBLASLt heuristics, variant lists) plan on this.
problem staged_shape(const problem &p);

// What a backend enqueues: compute dp (device or managed pointers) on `stream`, asynchronously,
// returning a status (set_error on failure). dp.device is current.
using launch_fn = gemm_status_t (*)(void *state, const problem &dp, cudaStream_t stream);

gemm_status_t run_on_device(const problem &p, run_context &ctx, launch_fn launch, void *state);

// Runs p on the GPU through launch(dp, stream):
//  - device or managed p: cudaSetDevice(p.device), launch(p, p.stream) (the caller's stream
//    from gemm_set_stream; asynchronous), then the caller's current device is restored.
//  - host p: runs on the caller's current device. A and B (only when k > 0 and alpha != 0)
//    and C (only when beta != 0) are packed on the CPU into the context's pinned buffer,
//    copied in one transfer to the context's device buffer, launched on the context's
//    staging stream, C is copied back, the stream synchronized and C unpacked (only its m x n
//    elements per matrix: padding between columns is never written). Packing rewrites the
//    layout: ld = rows rounded up to 16 bytes, batch stride = ld * cols rounded up to 256
//    bytes, or 0 when the caller's stride was 0 (one shared matrix) or batch == 1; pointers
//    not staged are null. ctx.note = "staged host pointers (H2D x MB, D2H y MB)".
// F: gemm_status_t (const problem &dp, cudaStream_t stream).
template <class F> gemm_status_t run_on_device(const problem &p, run_context &ctx, F &&launch) {
    using fn_type = std::remove_reference_t<F>;
    return run_on_device(
        p, ctx,
        [](void *state, const problem &dp, cudaStream_t stream) -> gemm_status_t {
            return (*static_cast<fn_type *>(state))(dp, stream);
        },
        const_cast<void *>(static_cast<const void *>(&launch)));
}

// The types cuBLAS and cuBLASLt serve: all of the library's (c_type_allowed, compute_type_for).
verdict library_supports_types(const problem &p);

// C = beta * C for every matrix of dp (beta == 0 writes zeros without reading C), any C type;
// the k == 0 or alpha == 0 case for backends whose library would read A or B.
gemm_status_t scale_c(const problem &dp, cudaStream_t stream);

}  // namespace gemm::cuda
