// skinny_gemm.hpp: the kernel for C of at most 32 columns with both operands stored along k
// (skinny_kernel.cu: a linear layer's X W^T for up to 32 rows of X, the decode step of a
// language model), which streams op(A) from memory straight into tensor-core registers.
// Compiled for sm_90a beside the wgmma kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled {

// The id of the kernel for f16 or bf16 inputs, blocks of bm rows of C (16 or 32) and C of at
// most bn columns (8, 16 or 32): skinny_<f16|bf16>_<BM>x<BN>.
std::string skinny_id(dtype ab, int bm, int bn);

// Why the kernel for C of at most bn columns cannot compute dp ("" when it can): types other
// than f16/bf16 inputs with C in their type or f32, C of more than bn columns, op(A) or op(B)
// not stored along k (column-major op(A) = T and op(B) = N; row-major op(A) = N and op(B) = T),
// A or B not 16-byte aligned (base, leading dimension, batch stride), sizes past an int, a
// device of compute capability other than 9.0.
std::string skinny_refusal(const problem &dp, int bn);

// dp on device memory with k > 0 and alpha != 0 in blocks of bm rows and bn columns of C (16x8,
// 32x8, 16x16 or 16x32): NOT_SUPPORTED with the reason, nothing launched, when
// skinny_refusal(dp, bn) says why not.
gemm_status_t launch_skinny(const problem &dp, int bm, int bn, cudaStream_t stream);

}  // namespace gemm::cuda_tiled
