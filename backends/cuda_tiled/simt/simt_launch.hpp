// simt_launch.hpp: launching the textbook and register-tiled kernels of a kernel_table line.
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda_tiled/kernel_table.hpp"
#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled {

// Enqueues dp (device pointers, k > 0, alpha != 0, f32 or f64 as line c computes) with c's
// textbook or register-tiled kernel on stream (vector: its 16-byte form, which needs
// vectors_aligned(dp)); checks the launch.
gemm_status_t launch_simt(const kernel_config &c, bool vector, const problem &dp, cudaStream_t stream);

}  // namespace gemm::cuda_tiled
