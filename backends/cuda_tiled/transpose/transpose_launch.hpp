// transpose_launch.hpp: cuda_tiled's gemm_omatcopy kernels: the shared-memory tiled transpose
// for op T and C, a scaled copy for op N, a fill for alpha = 0.
#pragma once

#include <cuda_runtime_api.h>

#include "dispatch/backend.hpp"
#include "dispatch/transpose_problem.hpp"

namespace gemm::cuda_tiled {

// Enqueues t (device or managed memory, every dtype) on stream; t.device must be current. The
// kernel that ran goes into ctx.variant_used.
gemm_status_t launch_transpose(const transpose_problem &t, cudaStream_t stream, run_report &ctx);

}  // namespace gemm::cuda_tiled
