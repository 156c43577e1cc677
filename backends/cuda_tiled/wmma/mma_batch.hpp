// mma_batch.hpp: launching the tensor-core kernel (mma_kernel.cuh) for one problem or strided
// batch, and for a batch of GEMMs of their own shapes in few launches.
#pragma once

#include <cuda_runtime_api.h>

#include "dispatch/backend.hpp"
#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled {

// Whether the kernel computes p's types: f16 or bf16 inputs, C in the input type or f32.
bool mma_types(const problem &p);

// Whether p's tiles fit the kernel's int grid: at most 2^31 - 1 tiles of 64x64.
bool mma_tiles_fit(const problem &p);

// dp on device memory with k > 0 and alpha != 0 (a launch_fn).
gemm_status_t launch_mma(const problem &dp, cudaStream_t stream);

// Every matrix of batch (device memory, mma_types, each shape mma_tiles_fit) on stream, up to
// 128 matrices a launch; a matrix with k == 0 or alpha == 0 by scale_c instead.
gemm_status_t launch_mma_batch(const problem_batch &batch, cudaStream_t stream);

}  // namespace gemm::cuda_tiled
