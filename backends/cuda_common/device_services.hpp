// device_services.hpp: installs the CUDA device services the tuner uses (dispatch/memory.hpp).
#pragma once

namespace gemm::cuda {

// Idempotent; called with install_pointer_classifier() when a CUDA backend registers.
void install_device_services();

}  // namespace gemm::cuda
