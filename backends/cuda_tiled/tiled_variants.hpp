// tiled_variants.hpp: the table of cuda_tiled kernel configurations, the one source of their ids.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda_tiled {

// Enqueues the GEMM dp (device pointers, k > 0, alpha != 0) on stream; checks the launch.
using launch_fn = gemm_status_t (*)(const problem &dp, cudaStream_t stream);

// One configuration. Ids read
//   textbook_<dtype>_t<TILE>                              e.g. textbook_f32_t16
//   tiled_<dtype>_<BM>x<BN>x<BK>_<TM>x<TN>_s<STAGES>_a<ALIGN>   e.g. tiled_f32_128x128x8_8x8_s3_a4
//   mma_<dtype>_<BM>x<BN>                                 e.g. mma_bf16_64x64 (tensor cores)
//   wgmma_<dtype>_<BM>x<BN>x<BK>_s<STAGES>[_splitk]       e.g. wgmma_bf16_128x128x64_s6 (Hopper)
// ALIGN is the alignment in elements the variant needs: 16 bytes (a4 for f32, a2 for f64) lets
// it use 16-byte global copies and C accesses; a1 is its scalar twin, which runs anywhere.
struct variant_info {
    std::string id;
    dtype type;
    int bm, bn;                 // block tile of C
    bool textbook;
    bool vector;                // needs vectors_aligned(dp)
    bool default_candidate;     // considered by the size rule of run("")
    std::string scalar_twin;    // the a1 id of a vector variant, run when dp is misaligned
    launch_fn launch;
    // Why the variant cannot compute dp ("" when it can); nullptr: it computes every problem
    // of its type.
    std::string (*refusal)(const problem &dp) = nullptr;
    bool split_k = false;       // splits k where the tiles alone would leave SMs idle
};

// Every configuration, f32, f64, f16 and bf16, in one list (built once).
const std::vector<variant_info> &variant_table();

const variant_info *find_variant(std::string_view id);

// Whether an operand can be read in 16-byte pieces: its base, leading dimension and (for a
// batch) batch stride multiples of 16 bytes. What TMA can describe, too.
bool aligned_16_bytes(const void *ptr, int64_t ld, int64_t stride, int64_t batch, std::size_t element_bytes);

// Whether the 16-byte accesses of a vector variant are legal for dp: C, and each operand that
// is copied straight (A op N, B op T), has a 16-byte aligned base, and a leading dimension and
// (for batches) a batch stride that are multiples of 16 bytes; a straight operand's extent
// along its vectors (m for A, n for B) is a multiple of 16 bytes too, so that no vector
// straddles the edge. A op T and B op N are copied element by element and need nothing.
bool vectors_aligned(const problem &dp);

}  // namespace gemm::cuda_tiled
