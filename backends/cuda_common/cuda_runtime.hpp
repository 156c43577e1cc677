// cuda_runtime.hpp: what dispatch needs from CUDA without including it: the classifier of
// pointers into memory spaces and the device services the tuner uses (dispatch/memory.hpp).
// The registry installs them once, before any backend is made (dispatch/registry.cpp).
#pragma once

namespace gemm::cuda {

// Unregistered and pinned host memory are host; device memory is device (with its ordinal);
// managed memory is managed.
void install_runtime();

}  // namespace gemm::cuda
