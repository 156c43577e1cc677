// side_streams.cpp: creating, forking and joining a thread's side streams.
#include "side_streams.hpp"

#include "backends/cuda_common/cublas_loader/cublas_library.hpp"
#include "cuda_status.hpp"

namespace gemm::cuda {

side_streams::~side_streams() {
    // Results are ignored, as in ~device_context (which makes the device current first).
    for (lane &l : lanes_) {
        if (l.blas) cublas().cublasDestroy(l.blas);
        if (l.done) cudaEventDestroy(l.done);
        if (l.stream) cudaStreamDestroy(l.stream);
    }
    if (forked_) cudaEventDestroy(forked_);
    cudaGetLastError();
}

// Everything at once, or (on a failure) what was made stays for the destructor and the next
// call tries the rest again.
gemm_status_t side_streams::create() {
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    if (!forked_)
        s = cuda_status(cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming), "cudaEventCreateWithFlags (fork)");
    for (lane &l : lanes_) {
        if (s == GEMM_STATUS_SUCCESS && !l.stream)
            s = cuda_status(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking),
                            "cudaStreamCreateWithFlags (side stream)");
        if (s == GEMM_STATUS_SUCCESS && !l.done)
            s = cuda_status(cudaEventCreateWithFlags(&l.done, cudaEventDisableTiming),
                            "cudaEventCreateWithFlags (join)");
        if (s == GEMM_STATUS_SUCCESS && !l.blas) s = require_cublas();
        if (s == GEMM_STATUS_SUCCESS && !l.blas) {
            cublasHandle_t h = nullptr;
            s = cublas_status(cublas().cublasCreate(&h), "cublasCreate (side stream)");
            if (s == GEMM_STATUS_SUCCESS)
                s = cublas_status(cublas().cublasSetStream(h, l.stream), "cublasSetStream (side stream)");
            if (s == GEMM_STATUS_SUCCESS)
                s = cublas_status(cublas().cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST),
                                  "cublasSetPointerMode (side stream)");
            if (s == GEMM_STATUS_SUCCESS) l.blas = h;
            else if (h) cublas().cublasDestroy(h);
        }
    }
    created_ = s == GEMM_STATUS_SUCCESS;
    return s;
}

gemm_status_t side_streams::fork(cudaStream_t caller) {
    if (!created_)
        if (gemm_status_t s = create(); s != GEMM_STATUS_SUCCESS) return s;
    gemm_status_t s = cuda_status(cudaEventRecord(forked_, caller), "cudaEventRecord (fork)");
    for (lane &l : lanes_)
        if (s == GEMM_STATUS_SUCCESS)
            s = cuda_status(cudaStreamWaitEvent(l.stream, forked_, 0), "cudaStreamWaitEvent (fork)");
    return s;
}

gemm_status_t side_streams::join(cudaStream_t caller) {
    gemm_status_t first = GEMM_STATUS_SUCCESS;
    for (lane &l : lanes_) {
        gemm_status_t s = cuda_status(cudaEventRecord(l.done, l.stream), "cudaEventRecord (join)");
        if (s == GEMM_STATUS_SUCCESS)
            s = cuda_status(cudaStreamWaitEvent(caller, l.done, 0), "cudaStreamWaitEvent (join)");
        if (first == GEMM_STATUS_SUCCESS) first = s;
    }
    return first;
}

gemm_status_t side_streams::blas(int i, cublasMath_t math, cublasHandle_t &out) {
    lane &l = lanes_[i];
    if (math != l.math) {
        if (gemm_status_t s =
                cublas_status(cublas().cublasSetMathMode(l.blas, math), "cublasSetMathMode (side stream)");
            s != GEMM_STATUS_SUCCESS)
            return s;
        l.math = math;
    }
    out = l.blas;
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm::cuda
