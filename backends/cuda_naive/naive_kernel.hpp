// naive_kernel.hpp: launcher of the one-thread-per-element GEMM kernel (f32, f64).
#pragma once

#include <cuda_runtime_api.h>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda {

// Threads per block side: 16 x 16 = 256 threads, one per element of a 16 x 16 block of C.
constexpr int naive_block_side = 16;

// Enqueues dp (device pointers, f32 or f64) on stream; k == 0 or alpha == 0 never reads A
// or B, beta == 0 never reads C.
gemm_status_t launch_naive_gemm(const problem &dp, cudaStream_t stream);

}  // namespace gemm::cuda
