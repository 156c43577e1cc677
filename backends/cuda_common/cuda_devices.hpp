// cuda_devices.hpp: what CUDA devices this machine has, asked once, in the user's terms.
#pragma once

#include "dispatch/backend.hpp"

namespace gemm::cuda {

// Number of CUDA devices, asked once and cached; 0 when there is no device or no driver.
// Never leaves an error behind.
int device_count();

// yes("device 0: NVIDIA H200, sm_90, 132 SMs; CUDA runtime 13.1, driver 13.1") or no() with
// why in the user's terms: "no CUDA device: no NVIDIA driver / no GPU (...)", "... the NVIDIA
// driver (CUDA 12.2) is older than the CUDA runtime (13.1) ...". Computed once; thread-safe.
verdict device_verdict();

}  // namespace gemm::cuda
