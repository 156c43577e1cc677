// offload_options.hpp: the GEMM_OFFLOAD_* variables, declared and read here, beside the offload
// engine, the only code that reads them.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "dispatch/backend.hpp"

namespace gemm::cuda {

// Their declarations. Settings lists them under "GPU offload", after the library's own, through
// the CUDA services every CUDA backend hands dispatch (cuda_services.cpp), and checks them
// before any call runs: a build without CUDA neither lists nor reads them.
std::vector<backend_option> offload_options();

// GEMM_OFFLOAD_MAX_DEVICE_BYTES: the device memory one thread's offload may hold; 0: the
// engine's own rule (half of what is free).
uint64_t offload_byte_cap();

// GEMM_OFFLOAD_TILE: rows and columns of C per tile, or {0, 0} for the plan's rule.
std::pair<int64_t, int64_t> offload_tile();

// GEMM_OFFLOAD_DEVICES: the devices listed, in order, repeats kept; empty: not set, or all.
const std::vector<int> &offload_devices_listed();

}  // namespace gemm::cuda
