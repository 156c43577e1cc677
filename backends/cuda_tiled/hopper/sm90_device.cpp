// sm90_device.cpp: whether a problem's device runs sm_90a code, and its SM count.
#include "backends/cuda_tiled/hopper/sm90_device.hpp"

#include <cuda_runtime_api.h>

#include <atomic>

#include "backends/cuda_common/runtime/cuda_devices.hpp"

namespace gemm::cuda_tiled {
namespace {

// Per device ordinal below 64, asked once: 0 not asked, else 1 + the answer.
std::atomic<int> sm90_facts[64] = {};

// Compute capability 9.0 exactly: sm_90a code runs on no other device.
bool device_is_sm90(int device) {
    if (device < 0 || device >= 64) return false;
    int v = sm90_facts[device].load(std::memory_order_relaxed);
    if (v == 0) {
        int major = 0, minor = 0;
        const bool ok = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess;
        if (!ok) cudaGetLastError();
        v = 1 + (ok && major == 9 && minor == 0);
        sm90_facts[device].store(v, std::memory_order_relaxed);
    }
    return v == 2;
}

}  // namespace

bool runs_on_sm90(const problem &dp) {
    // Host problems (and their offload shapes, device -1) are judged on the calling thread's
    // current device, where they run unless GEMM_OFFLOAD_DEVICES names others.
    int device = dp.space == memory_space::host ? -1 : dp.device;
    if (device < 0 && cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        device = -1;
    }
    return device_is_sm90(device);
}

int multiprocessors(int device) {
    int sms = 0;
    if (cuda::multiprocessor_count(device, sms) != cudaSuccess || sms <= 0) {
        cudaGetLastError();
        return 1;
    }
    return sms;
}

}  // namespace gemm::cuda_tiled
