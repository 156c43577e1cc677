// cuda_runtime.hpp: what dispatch needs from CUDA without including it: the classifier of
// pointers into memory spaces and the device services the tuner uses (dispatch/memory.hpp).
// The registry installs them once, before it makes any CUDA backend (dispatch/registry.cpp).
#pragma once

namespace gemm::cuda {

// Installs the pointer classifier (unregistered and pinned host memory are host, device
// memory is device with its ordinal, managed memory is managed) and the device services
// (operand buffers, copies, events, page-locking). Defined in device_services.cpp.
void install_runtime();

}  // namespace gemm::cuda
