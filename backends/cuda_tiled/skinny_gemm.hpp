// skinny_gemm.hpp: the kernel for C of at most 8 columns with both operands stored along k
// (skinny_kernel.cu: a linear layer's X W^T for up to 8 rows of X, the decode step of a language
// model), which streams op(A) from memory straight into tensor-core registers. Compiled for
// sm_90a beside the wgmma kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled {

// The id of the kernel for f16 or bf16 inputs and blocks of bm rows of C (16 or 32):
// skinny_<f16|bf16>_<BM>x8.
std::string skinny_id(dtype ab, int bm);

// Why the kernel cannot compute dp ("" when it can): types other than f16/bf16 inputs with C in
// their type or f32, C of more than 8 columns, op(A) or op(B) not stored along k (column-major
// op(A) = T and op(B) = N; row-major op(A) = N and op(B) = T), A or B not 16-byte aligned (base,
// leading dimension, batch stride), sizes past an int, a device of compute capability other than
// 9.0.
std::string skinny_refusal(const problem &dp);

// dp on device memory with k > 0 and alpha != 0 in blocks of bm rows of C: NOT_SUPPORTED with
// the reason, nothing launched, when skinny_refusal(dp) says why not.
gemm_status_t launch_skinny(const problem &dp, int bm, cudaStream_t stream);

}  // namespace gemm::cuda_tiled
