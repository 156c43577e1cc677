// skinny_gemm.hpp: the kernels of kernel_table's skinny lines, for C of at most 32 columns with
// both operands stored along k (skinny_kernel.cuh: a linear layer's X W^T for up to 32 rows of
// X, the decode step of a language model), which stream op(A) from memory straight into
// tensor-core registers; compiled for sm_90a beside the wgmma kernels: what they refuse, their
// launch.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "backends/cuda_tiled/kernel_table.hpp"
#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled {

// Why line c's kernel (C of at most c.bn columns) cannot compute dp ("" when it can): types
// other than f16/bf16 inputs with C in their type or f32, C of more than c.bn columns, op(A) or
// op(B) not stored along k (column-major op(A) = T and op(B) = N; row-major op(A) = N and op(B) =
// T), A or B not 16-byte aligned (base, leading dimension, batch stride), sizes past an int, a
// device of compute capability other than 9.0.
std::string skinny_refusal(const kernel_config &c, const problem &dp);

// dp on device memory with k > 0 and alpha != 0 in blocks of c.bm rows and c.bn columns of C:
// NOT_SUPPORTED with the reason, nothing launched, when skinny_refusal(c, dp) says why not.
gemm_status_t launch_skinny(const kernel_config &c, const problem &dp, cudaStream_t stream);

}  // namespace gemm::cuda_tiled
