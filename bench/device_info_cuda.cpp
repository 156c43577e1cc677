// device_info_cuda.cpp: device_info.hpp over the CUDA runtime API (no kernels here, so the
// host compiler builds it; CUDA::cudart links it).
#include "device_info.hpp"

#include <cuda_runtime_api.h>

#include <utility>

#include "gemm/gemm.h"

namespace gemm_cli {
namespace {

void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) throw device_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Why the library's device backends are unavailable: they share one device check, which puts
// a failed cudaGetDeviceCount in the user's terms (no driver at all reads "driver version is
// insufficient" in the runtime's). "" when they are available or not in this build.
std::string library_device_reason() {
    for (int64_t i = 0; i < gemm_backend_count(); ++i) {
        gemm_backend_info_t info{};
        gemm_backend_traits_t traits{};
        traits.struct_size = sizeof traits;
        if (gemm_backend_get_info(i, &info) != GEMM_STATUS_SUCCESS ||
            gemm_backend_get_traits(info.name, &traits) != GEMM_STATUS_SUCCESS || traits.kind != GEMM_BACKEND_DEVICE)
            continue;
        return info.available ? "" : info.reason;
    }
    return "";
}

}  // namespace

bool device_support_compiled() { return true; }

int device_count(std::string *why) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        std::string reason = library_device_reason();
        if (reason.empty()) reason = std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
        if (why) *why = reason;
        return 0;
    }
    if (count == 0 && why) *why = "no CUDA device (cudaGetDeviceCount found none)";
    return count;
}

device_properties device_select(int ordinal) {
    std::string why;
    int count = device_count(&why);
    if (count == 0) throw device_error("--device " + std::to_string(ordinal) + ": " + why);
    if (ordinal < 0 || ordinal >= count)
        throw device_error("--device " + std::to_string(ordinal) + ": this machine has " + std::to_string(count) +
                           " CUDA device" + (count == 1 ? "" : "s") + " (0 to " + std::to_string(count - 1) + ")");
    return device_describe(ordinal);
}

device_properties device_describe(int ordinal) {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
    device_properties d;
    d.ordinal = ordinal;
    d.name = prop.name;
    d.major = prop.major;
    d.minor = prop.minor;
    d.sm_count = prop.multiProcessorCount;
    d.l2_bytes = prop.l2CacheSize;
    d.memory_bytes = int64_t(prop.totalGlobalMem);
    return d;
}

}  // namespace gemm_cli
