// cuda_devices.hpp: what CUDA devices this machine has, asked once, in the user's terms.
#pragma once

#include <cuda_runtime_api.h>

#include "dispatch/backend.hpp"
#include "dispatch/memory.hpp"

namespace gemm::cuda {

// Number of CUDA devices, asked once and cached; 0 when there is no device or no driver.
// Never leaves an error behind.
int device_count();

// yes("device 0: <name>, sm_90, <n> SMs, <g> GiB; CUDA runtime 13.1, driver 13.1") or no() with
// why in the user's terms: "no CUDA device: no NVIDIA driver / no GPU (...)", "... the NVIDIA
// driver (CUDA 12.2) is older than the CUDA runtime (13.1) ...". Computed once; thread-safe.
verdict device_verdict();

// The number of SMs of `device` into sms, asked once per device ordinal below 64 (kernels
// that size their grids by it ask on every launch). A failed query is returned, not cached.
cudaError_t multiprocessor_count(int device, int &sms);

// The size of `device`'s L2 cache in bytes into bytes, asked once per device ordinal below 64.
cudaError_t l2_cache_bytes(int device, int &bytes);

// Where ptr lives, as the driver says: unregistered and page-locked host memory are host
// memory, device memory is device memory with its ordinal, managed memory is managed; the
// allocation it lies in, where the driver knows it. Plain host memory without a device.
pointer_place classify_pointer(const void *ptr);

// The calling thread's current device, as cudaGetDevice gives it. Every device call asks once
// (device_guard), so it asks the driver for the current context and its device first, which
// costs less than cudaGetDevice (backends/cuda_common/NOTES.md, "Per-call queries"). Where no
// context is current yet (a thread's first CUDA call), the runtime answers.
cudaError_t current_device(int &device);

// The driver's function `symbol` of the given ABI version (e.g. 12000), found through the
// runtime (linking libcuda would keep the library from loading where there is no driver), or
// null where the driver lacks it. Never leaves an error behind; callers cache the answer.
void *driver_entry_point(const char *symbol, unsigned version);

}  // namespace gemm::cuda
