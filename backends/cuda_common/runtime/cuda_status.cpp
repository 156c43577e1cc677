// cuda_status.cpp: CUDA runtime statuses as the library's.
#include "cuda_status.hpp"

#include <string>

#include "dispatch/error.hpp"

namespace gemm::cuda {

gemm_status_t cuda_status(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return GEMM_STATUS_SUCCESS;
    cudaGetLastError();
    gemm_status_t s = e == cudaErrorMemoryAllocation ? GEMM_STATUS_ALLOC_FAILED : GEMM_STATUS_EXECUTION_FAILED;
    return set_error(s, std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

}  // namespace gemm::cuda
