// skinny_gemm.hpp: the kernels of kernel_table's skinny lines, for C of at most 32 columns with
// op(B) stored along k or along n and op(A) along k (skinny_kernel.cuh: a linear layer's X W^T for up to 32
// rows of X, the decode step of a language model) or along m (skinny_along_m_kernel.cuh: X W),
// which stream op(A) from memory straight into tensor-core registers, and their mirrors for C of
// at most 32 rows (skinny_view.hpp); FP8 (e4m3, e5m2) in the TN form on lines of its own;
// compiled for sm_90a beside the wgmma kernels: what they refuse, their launch.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "backends/cuda_tiled/kernel_table.hpp"
#include "backends/cuda_tiled/skinny/skinny_view.hpp"
#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled {

// Why line c's kernel (C of at most c.bn columns) cannot compute dp ("" when it can, with the
// orientation in `o`): types other than f16/bf16 inputs with C in their type or f32 (FP8 lines:
// e4m3/e5m2 with C in f32, f16 or bf16, the TN form, scales per tensor, device memory); C of more
// than c.bn columns and, where the op pair has a mirror the line reads, of more than c.bn rows;
// an op pair the line does not read in either orientation (skinny_orientation_for: along_k
// lines the weights along k, column-major op(A) = T with few columns and op(B) = N with few rows;
// a_along_m lines column-major op(A) = N with few columns and op(B) = T with few rows; the
// narrow operand along k or along its short side); the weights, and the narrow operand where
// it lies along k, not 16-byte aligned (base, leading dimension, batch stride); sizes past an
// int; a device of compute capability other than 9.0.
std::string skinny_refusal(const kernel_config &c, const problem &dp, skinny_orientation &o);
std::string skinny_refusal(const kernel_config &c, const problem &dp);

// dp on device memory with k > 0 and alpha != 0 in blocks of c.bm rows and c.bn columns of the
// kernel's C (dp's C, or C^T where mirrored): NOT_SUPPORTED with the reason, nothing launched, when skinny_refusal(c,
// dp) says why not.
gemm_status_t launch_skinny(const kernel_config &c, const problem &dp, cudaStream_t stream);

}  // namespace gemm::cuda_tiled
