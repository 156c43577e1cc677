// spmm_launch.hpp: cuda_tiled's gemm_spmm_csr and gemm_spmm_coo kernels: CSR with op N gathered
// one thread per element of C (a warp per row for SpMV of 8 or more entries a row); transposed
// CSR and COO scattered with atomics after a pass that scales C by beta.
#pragma once

#include <cuda_runtime_api.h>

#include "dispatch/backend.hpp"
#include "dispatch/sparse_problem.hpp"

namespace gemm::cuda_tiled {

// Enqueues s (device or managed memory, f32, f64, c32 or c64) on stream; s.device must be
// current. The kernels that ran go into ctx.variant_used.
gemm_status_t launch_spmm(const sparse_problem &s, cudaStream_t stream, run_report &ctx);

}  // namespace gemm::cuda_tiled
