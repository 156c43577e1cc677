// side_streams.hpp: streams of one (thread, device) that independent work is spread over,
// forked from the caller's stream and joined back to it, each with a cuBLAS handle of its own.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "device_context.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda {

// The thread's side streams of a device (a context attachment: created on first use, with the
// device current, and kept). fork(caller) makes every side stream wait for what the caller's
// stream holds so far; join(caller) makes the caller's stream wait for everything enqueued on
// the side streams since. Between the two the caller's stream sees nothing, so to the caller
// the work is one step of its stream, as any call's. Each side stream has its own cuBLAS handle
// bound to it, so no two of them share a cuBLAS workspace.
class side_streams final : public context_attachment {
public:
    static constexpr int count = 4;

    ~side_streams() override;

    gemm_status_t fork(cudaStream_t caller);
    // Always called after a fork, also when enqueuing failed, so that the caller's stream
    // still follows the work that was enqueued.
    gemm_status_t join(cudaStream_t caller);

    cudaStream_t stream(int i) const { return lanes_[i].stream; }
    // Side stream i's handle in math mode `math`.
    gemm_status_t blas(int i, cublasMath_t math, cublasHandle_t &out);

private:
    struct lane {
        cudaStream_t stream = nullptr;
        cublasHandle_t blas = nullptr;
        cublasMath_t math = CUBLAS_DEFAULT_MATH;
        cudaEvent_t done = nullptr;
    };
    gemm_status_t create();

    lane lanes_[count];
    cudaEvent_t forked_ = nullptr;
    bool created_ = false;
};

}  // namespace gemm::cuda
