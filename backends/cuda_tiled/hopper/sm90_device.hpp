// sm90_device.hpp: what the Hopper kernels ask of a device: compute capability 9.0 (where sm_90a
// code runs) and its SM count.
#pragma once

#include "dispatch/problem.hpp"

namespace gemm::cuda_tiled {

// Whether dp runs on a device of compute capability 9.0, where sm_90a code runs (host problems:
// the calling thread's current device).
bool runs_on_sm90(const problem &dp);

// The device's SMs, 1 where the query fails (a grid of one block is still correct).
int multiprocessors(int device);

}  // namespace gemm::cuda_tiled
