// wgmma_gemm.hpp: the Hopper tensor-core kernels for f16/bf16 and for f32 through TF32
// (wgmma_kernel.cu: wgmma, operands brought by the bulk tensor copy engine, TMA), compiled for
// sm_90a when the CUDA compiler has it (12.0 and later).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled {

// The id of the kernel for f16, bf16 or f32 (TF32) inputs and BM x BN tiles of C (128 x 128,
// 256 x 128, 64 x 128 (f16/bf16) for C of 128 columns, or 256 x 64 and 128 x 64 for C with
// few columns, 256 x 16 and 128 x 16 for C of at most 16):
// wgmma_<f16|bf16|tf32>_<BM>x<BN>x<BK>_s<stages> (k steps of BK = 128 bytes: 64 elements, 32
// for tf32; that many stages of operands in shared memory), with the suffix _splitk for a
// twin that splits k where too few tiles would leave SMs idle (decode shapes: n small, k long).
std::string wgmma_id(dtype ab, int bm, int bn, bool split_k);

// Why the kernels cannot compute dp ("" when they can): its device (for host memory the
// calling thread's current one) is not of compute capability 9.0, types other than f16/bf16
// inputs with C in that type or f32 and f32 with C in f32, f32 without GEMM_ALLOW_TF32=1, A or
// B read directly and not 16-byte aligned (base, leading dimension, batch stride: what TMA can
// describe) or with overlapping batch matrices, more tiles than an int holds. f16/bf16: every
// op pair, read as stored. f32: TF32 reads operands along k only, so an operand stored along m
// or n (A op N, B op T) is copied along k first (refused where the copies would pass 1 GiB).
std::string wgmma_refusal(const problem &dp);

// Why the tiles of 16 columns cannot compute dp: wgmma_refusal's reasons, f32 (no TF32 kernel
// has them), and op(B)^T not stored along k (op(B) = T or C), whose 16 rows TMA could not copy
// alone in the 128-byte swizzle.
std::string wgmma_narrow_refusal(const problem &dp);

// Whether dp runs on a device of compute capability 9.0, where sm_90a code runs (host problems:
// the calling thread's current device).
bool runs_on_sm90(const problem &dp);

// dp on device memory with k > 0 and alpha != 0, in bm x bn tiles: NOT_SUPPORTED with the
// reason, nothing launched, when wgmma_refusal(dp) says why not. f32 operands stored along m or
// n are copied along k into the thread's scratch buffer on the stream first. With split_k, k is
// cut into as many ranges (up to 16) as make the busiest SM's share of k steps smallest,
// counting the cost of the split itself (a second launch, the partial sums written and read
// back), their f32 partial sums kept in the thread's workspace (32 MiB: a split count that does
// not fit is not taken); a second kernel then adds them in a fixed order into C, so the result
// does not depend on the order the blocks ran in.
gemm_status_t launch_wgmma(const problem &dp, int bm, int bn, bool split_k, cudaStream_t stream);

}  // namespace gemm::cuda_tiled
