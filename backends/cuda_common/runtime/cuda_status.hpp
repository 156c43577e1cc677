// cuda_status.hpp: CUDA runtime statuses as the library's, with the message recorded.
#pragma once

#include <cuda_runtime_api.h>

#include "gemm/gemm.h"

namespace gemm::cuda {

// Success passes through. Otherwise records "what: cudaErrorX (text)" with set_error and
// returns GEMM_STATUS_ALLOC_FAILED for cudaErrorMemoryAllocation, else
// GEMM_STATUS_EXECUTION_FAILED. Clears the runtime's last (non-sticky) error, so the caller
// never finds one left behind by this library.
gemm_status_t cuda_status(cudaError_t e, const char *what);

// cuda_status of e, the call that made `handle` (a stream or event created on first use): on
// failure the handle is left null, so that the next use makes it again.
template <class Handle> gemm_status_t made(Handle &handle, cudaError_t e, const char *what) {
    const gemm_status_t s = cuda_status(e, what);
    if (s != GEMM_STATUS_SUCCESS) handle = nullptr;
    return s;
}

}  // namespace gemm::cuda
