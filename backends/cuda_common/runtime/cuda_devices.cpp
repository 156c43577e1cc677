// cuda_devices.cpp: the device count and verdict, the devices' attributes, and pointer
// classification.
#include "cuda_devices.hpp"

#include <cuda.h>  // the driver's types only: its functions are looked up at run time
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace gemm::cuda {
namespace {

struct device_probe {
    int count = 0;
    std::string error;  // why count is 0
};

std::string version_text(int v) {  // CUDA encodes 13.1 as 13010
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// Why cudaGetDeviceCount failed, in the user's terms. Without any NVIDIA driver the runtime
// says "CUDA driver version is insufficient for CUDA runtime version", which reads as "update
// the driver": that is only true when a driver is there (libcuda loads, and the kernel
// module shows /proc/driver/nvidia).
std::string device_count_error(cudaError_t e) {
    int driver = 0, runtime = 0;  // driver 0: libcuda.so.1 could not be loaded
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
    cudaGetLastError();
    bool kernel_module = access("/proc/driver/nvidia", F_OK) == 0;
    std::string call = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e);
    if (e == cudaErrorInsufficientDriver && (driver == 0 || !kernel_module))
        return std::string("no NVIDIA driver / no GPU (") +
               (driver == 0 ? "libcuda.so.1 cannot be loaded" : "no /proc/driver/nvidia") + "; " + call + ")";
    if (e == cudaErrorInsufficientDriver)
        return "the NVIDIA driver (CUDA " + version_text(driver) + ") is older than the CUDA runtime (" +
               version_text(runtime) + "): update the driver (" + call + ")";
    if (e == cudaErrorNoDevice) {
        const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
        std::string hidden = visible ? "; CUDA_VISIBLE_DEVICES='" + std::string(visible) + "'" : "";
        return std::string(kernel_module ? "no GPU: the NVIDIA driver shows none" : "no NVIDIA driver / no GPU") +
               " (" + call + hidden + ")";
    }
    return call + " (" + cudaGetErrorString(e) + ")";
}

const device_probe &probe_devices() {
    static const device_probe probe = [] {
        device_probe d;
        cudaError_t e = cudaGetDeviceCount(&d.count);
        if (e != cudaSuccess) {
            cudaGetLastError();  // no driver or no device: not sticky, leave nothing behind
            d.count = 0;
            d.error = device_count_error(e);
        } else if (d.count == 0) {
            d.error = "cudaGetDeviceCount returned 0";
        }
        return d;
    }();
    return probe;
}

verdict make_device_verdict() {
    const device_probe &d = probe_devices();
    if (d.count == 0) return verdict::no("no CUDA device: " + d.error);
    std::string detail;
    for (int i = 0; i < d.count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
            cudaGetLastError();
            detail += "device " + std::to_string(i) + ": properties unavailable; ";
            continue;
        }
        char line[400];
        std::snprintf(line, sizeof line, "device %d: %s, sm_%d%d, %d SMs, %.0f GiB; ", i, prop.name, prop.major,
                      prop.minor, prop.multiProcessorCount, double(prop.totalGlobalMem) / double(1ull << 30));
        detail += line;
    }
    int runtime = 0, driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) cudaGetLastError();
    if (cudaDriverGetVersion(&driver) != cudaSuccess) cudaGetLastError();
    detail += "CUDA runtime " + version_text(runtime) + ", driver " + version_text(driver);
    return verdict::yes(detail);
}

// attr of `device`, asked once per attribute and device ordinal below 64.
template <cudaDeviceAttr attr> cudaError_t cached_attribute(int device, int &value) {
    static std::atomic<int> known[64] = {};  // 0: not asked yet
    std::atomic<int> *slot = device >= 0 && device < 64 ? &known[device] : nullptr;
    if (slot && (value = slot->load(std::memory_order_relaxed)) > 0) return cudaSuccess;
    const cudaError_t e = cudaDeviceGetAttribute(&value, attr, device);
    if (e == cudaSuccess && slot) slot->store(value, std::memory_order_relaxed);
    return e;
}

}  // namespace

cudaError_t multiprocessor_count(int device, int &sms) {
    return cached_attribute<cudaDevAttrMultiProcessorCount>(device, sms);
}

cudaError_t l2_cache_bytes(int device, int &bytes) { return cached_attribute<cudaDevAttrL2CacheSize>(device, bytes); }

void *driver_entry_point(const char *symbol, unsigned version) {
    void *f = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, &f, version, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return f;
}

cudaError_t current_device(int &device) {
    static const auto current_context =
        reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(driver_entry_point("cuCtxGetCurrent", 4000));
    static const auto context_device =
        reinterpret_cast<PFN_cuCtxGetDevice_v2000>(driver_entry_point("cuCtxGetDevice", 2000));
    // cuCtxGetDevice is asked only where a context is current: without one it fails, and tools
    // that watch API calls (compute-sanitizer) report that failure as an error of the program.
    CUcontext context = nullptr;
    CUdevice d = 0;
    if (current_context && context_device && current_context(&context) == CUDA_SUCCESS && context &&
        context_device(&d) == CUDA_SUCCESS) {
        device = int(d);
        return cudaSuccess;
    }
    return cudaGetDevice(&device);
}

namespace {

// The driver's cuPointerGetAttributes, or null. Asked for the attributes a call needs, it
// costs less than cudaPointerGetAttributes, which fills in more, and every device call pays it
// up to three times (backends/cuda_common/NOTES.md, "Per-call queries").
PFN_cuPointerGetAttributes_v7000 driver_pointer_query() {
    static const auto query =
        reinterpret_cast<PFN_cuPointerGetAttributes_v7000>(driver_entry_point("cuPointerGetAttributes", 7000));
    return query;
}

}  // namespace

pointer_place classify_pointer(const void *ptr) {
    pointer_place place;
    if (device_count() == 0) return place;
    if (PFN_cuPointerGetAttributes_v7000 query = driver_pointer_query()) {
        // Memory the driver does not know (plain host memory) gets the zero values: success.
        unsigned int type = 0, managed = 0;
        int ordinal = -1;
        CUdeviceptr begin = 0;
        std::size_t bytes = 0;
        CUpointer_attribute asked[5] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                        CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                        CU_POINTER_ATTRIBUTE_RANGE_SIZE};
        void *answers[5] = {&type, &ordinal, &managed, &begin, &bytes};
        if (query(5, asked, answers, CUdeviceptr(reinterpret_cast<uintptr_t>(ptr))) == CUDA_SUCCESS) {
            place.range_begin = std::uintptr_t(begin);
            place.range_bytes = bytes;
            if (managed) {
                place.space = memory_space::managed;
                place.device = ordinal;
            } else if (type == CU_MEMORYTYPE_DEVICE) {
                place.space = memory_space::device;
                place.device = ordinal;
            } else {
                place.page_locked = type == CU_MEMORYTYPE_HOST;  // either way offloaded
            }
            return place;
        }
    }
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        cudaGetLastError();  // older drivers report plain host memory as an invalid value
        return place;
    }
    switch (attr.type) {
    case cudaMemoryTypeDevice:
        place.space = memory_space::device;
        place.device = attr.device;
        break;
    case cudaMemoryTypeManaged:
        place.space = memory_space::managed;
        place.device = attr.device;
        break;
    case cudaMemoryTypeHost: place.page_locked = true; break;
    default: break;  // unregistered host memory: offloaded
    }
    return place;
}

int device_count() { return probe_devices().count; }

verdict device_verdict() {
    static const verdict v = make_device_verdict();
    return v;
}

}  // namespace gemm::cuda
