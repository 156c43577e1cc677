// cuda_services.hpp: what the CUDA backends hand dispatch (dispatch/memory.hpp's device_services).
#pragma once

#include "dispatch/memory.hpp"

namespace gemm::cuda {

// CUDA's table: the pointer classifier (runtime/cuda_devices.hpp), device memory, streams and
// event timing for the measurement engine, the epilogue pass (kernels/epilogue_pass.hpp),
// stream-ordered reads of device memory, and the offload engine's options
// (offload/offload_options.hpp). Every CUDA backend returns it from backend::runtime_services().
const device_services &cuda_services();

}  // namespace gemm::cuda
