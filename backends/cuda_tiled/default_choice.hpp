// default_choice.hpp: which variant cuda_tiled runs when no id is asked for (run("")).
#pragma once

#include "backends/cuda_tiled/kernel_variants.hpp"
#include "dispatch/problem.hpp"

namespace gemm::cuda_tiled {

// The variant run("") takes for dp (device memory, k > 0, alpha != 0) on a device of `sms` SMs:
// a Hopper kernel where the rule of hopper_default names one that computes dp; else the wmma
// kernel for its types (mma_types); else the register-tiled size rule for f32 and f64, among the lines
// marked by_size, in their vector form where `aligned` (vectors_aligned(dp)).
const variant_info *default_variant(const problem &dp, bool aligned, int sms);

// The wmma variant of input type ab (f16 or bf16).
const variant_info *wmma_variant(dtype ab);

}  // namespace gemm::cuda_tiled
