// device_services.hpp: installs the CUDA device services the tuner uses (dispatch/memory.hpp).
#pragma once

namespace gemm::cuda {

// Part of install_runtime() (cuda_runtime.hpp).
void install_device_services();

}  // namespace gemm::cuda
