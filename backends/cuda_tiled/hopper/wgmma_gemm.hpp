// wgmma_gemm.hpp: the Hopper tensor-core kernels of kernel_table's wgmma lines, for f16/bf16, for
// f32 through TF32 and for FP8 (wgmma, operands brought by the bulk tensor copy engine, TMA), compiled
// for sm_90a when the CUDA compiler has it (12.0 and later): what they refuse, their launch.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "backends/cuda_tiled/kernel_table.hpp"
#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled {

// Why line c's kernel cannot compute dp ("" when it can): its device (for host memory the
// calling thread's current one) is not of compute capability 9.0; types other than those of the
// line (f16/bf16 inputs with C in that type or f32; f32 with C in f32 where the line has TF32);
// f32 without GEMM_ALLOW_TF32=1; an operand form the line does not read (b_along_k: op(B)^T
// stored along k); A or B read directly and not 16-byte aligned (base, leading dimension, batch
// stride: what TMA can describe) or with overlapping batch matrices; more tiles of the line's
// than an int holds. f16/bf16: every op pair the line reads, as stored. f32: TF32 reads
// operands along k only, so an operand stored along m or n (A op N, B op T) is copied along k
// first (refused where the copies would pass 1 GiB). e4m3/e5m2 (the FP8 lines, C in f32, f16
// or bf16): both operands stored along k (op(A) = T, op(B) = N), per-tensor or block scales,
// device or managed memory; other op pairs and host memory are refused.
std::string wgmma_refusal(const kernel_config &c, const problem &dp);

// dp on device memory with k > 0 and alpha != 0, in line c's tiles: NOT_SUPPORTED with the
// reason, nothing launched, when wgmma_refusal(c, dp) says why not. f32 operands stored along m
// or n are copied along k into the thread's scratch buffer on the stream first. A line that
// splits k cuts it into as many ranges (up to 16) as make the busiest SM's share of k steps
// smallest, counting the cost of the split itself (a second launch, the partial sums written
// and read back), their f32 partial sums kept in the thread's workspace (a split count that
// does not fit is not taken); a second kernel then adds them in a fixed order into C, so the
// result does not depend on the order the blocks ran in. FP8: the scales are read on the device
// by the GEMM kernel, which raises amax_d to max |D| from what it holds: the caller zeroes it
// on the stream first (once for a group of matrices that share it).
gemm_status_t launch_wgmma(const kernel_config &c, const problem &dp, cudaStream_t stream);

}  // namespace gemm::cuda_tiled
