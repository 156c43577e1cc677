// cuda_status.cpp: CUDA and cuBLAS statuses as the library's.
#include "cuda_status.hpp"

#include <string>

#include "cublas_library.hpp"
#include "dispatch/error.hpp"

namespace gemm::cuda {

gemm_status_t cuda_status(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return GEMM_STATUS_SUCCESS;
    cudaGetLastError();
    gemm_status_t s = e == cudaErrorMemoryAllocation ? GEMM_STATUS_ALLOC_FAILED : GEMM_STATUS_EXECUTION_FAILED;
    return set_error(s, std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

gemm_status_t cublas_status(cublasStatus_t st, const char *what) {
    if (st == CUBLAS_STATUS_SUCCESS) return GEMM_STATUS_SUCCESS;
    cudaGetLastError();
    gemm_status_t s = st == CUBLAS_STATUS_ALLOC_FAILED ? GEMM_STATUS_ALLOC_FAILED
                      : st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH
                          ? GEMM_STATUS_NOT_SUPPORTED
                          : GEMM_STATUS_EXECUTION_FAILED;
    return set_error(s, std::string(what) + ": " + cublas().cublasGetStatusName(st) + " (" +
                            cublas().cublasGetStatusString(st) + ")");
}

}  // namespace gemm::cuda
