// mma_rules.cpp: which problems the wmma tensor-core kernel computes.
#include <climits>

#include "backends/cuda_tiled/kernel_table.hpp"
#include "backends/cuda_tiled/wmma/mma_batch.hpp"

namespace gemm::cuda_tiled {

bool mma_types(const problem &p) {
    const bool half = p.ab_type == dtype::f16 || p.ab_type == dtype::bf16;
    return half && (p.c_type == p.ab_type || p.c_type == dtype::f32) && p.compute_type == dtype::f32;
}

// The kernel's grid has a block per tile of C, counted in an int.
bool mma_tiles_fit(const problem &p) {
    constexpr kernel_config c = wmma_config();
    return ((p.m + c.bm - 1) / c.bm) * ((p.n + c.bn - 1) / c.bn) <= INT_MAX;
}

}  // namespace gemm::cuda_tiled
