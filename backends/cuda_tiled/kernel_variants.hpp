// kernel_variants.hpp: cuda_tiled's variants, each an id for one input type of one line of
// kernel_table; their launch and their refusal.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda_tiled/kernel_table.hpp"
#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled {

// One variant. Ids read <family>_<type>_<tile>[_<more>] (kernel_id builds them):
//   textbook_<dtype>_t<TILE>                                     e.g. textbook_f32_t16
//   tiled_<dtype>_<BM>x<BN>x<BK>_<TM>x<TN>_s<STAGES>_a<ALIGN>      e.g. tiled_f32_128x128x8_8x8_s3_a4
//   mma_<dtype>_<BM>x<BN>                                        e.g. mma_bf16_64x64 (tensor cores)
//   wgmma_<f16|bf16|tf32|e4m3|e5m2>_<BM>x<BN>x<BK>_s<STAGES>[_splitk]
//                                                                e.g. wgmma_bf16_128x128x64_s6
//   skinny_<dtype>_<BM>x<BN>[_nn]                                e.g. skinny_bf16_16x8
// ALIGN is the alignment in elements a register-tiled variant needs: 16 bytes (a4 for f32, a2
// for f64) lets it use 16-byte global copies and C accesses; a1 is its scalar twin, which runs
// anywhere. BK of wgmma is 128 bytes of the input type (64 f16/bf16, 32 tf32, 128 e4m3/e5m2:
// the FP8 kernels, wgmma_e4m3_128x128x128_s6, promote partial sums every 128 k). A skinny id
// without a suffix reads both operands along k (column-major op(A) = T, op(B) = N); _nn reads
// op(A) along m (column-major op(A) = op(B) = N; row-major X W with W stored (in, out)). The
// same ids compute the mirrors, C of at most BN rows, as C^T = op(B)^T op(A)^T: column-major
// op(A) = T and op(B) = N (without a suffix) or op(A) = op(B) = T (_nn) (skinny_view.hpp).
struct variant_info {
    std::string id;
    dtype type;
    const kernel_config *config;  // its line of kernel_table
    bool vector;                  // needs vectors_aligned(dp)
    std::string scalar_twin;      // the a1 id of a vector variant, run when dp is misaligned

    kernel_family family() const { return config->family; }
    // Whether it may refuse a problem of its type (refusal says why); the others compute every one.
    bool may_refuse() const { return family() == kernel_family::wgmma || family() == kernel_family::skinny; }
};

// The id of line c's kernel for input type t (vector: the 16-byte form of a register-tiled line).
std::string kernel_id(const kernel_config &c, dtype t, bool vector);

// Every variant of this build, f32, f64, f16, bf16, e4m3 and e5m2, by family, then input type
// (f16, bf16, f32, f64, e4m3, e5m2), then table line (built once). The Hopper lines (wgmma, skinny) only where the
// build has their part (CUDA 12.0 and later).
const std::vector<variant_info> &variant_table();

const variant_info *find_variant(std::string_view id);

// Why v cannot compute dp ("" when it can; always "" where !v.may_refuse()).
std::string refusal(const variant_info &v, const problem &dp);

// Enqueues the GEMM dp (device pointers, k > 0, alpha != 0, dp's type v's) with v's kernel on
// stream; checks the launch.
gemm_status_t launch(const variant_info &v, const problem &dp, cudaStream_t stream);

}  // namespace gemm::cuda_tiled
