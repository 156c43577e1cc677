// cublas_verdict.cpp: the probe and fingerprint of a backend built on cuBLAS.
#include "cublas_verdict.hpp"

#include "backends/cuda_common/cublas_loader/cublas_library.hpp"
#include "cuda_devices.hpp"

namespace gemm::cuda {

verdict cublas_verdict() {
    verdict device = device_verdict();
    if (!device.ok) return device;
    const verdict &loaded = cublas_loaded();
    return loaded.ok ? verdict::yes(device.detail + ", " + loaded.detail) : loaded;
}

std::string cublas_identity() {
    verdict device = device_verdict();
    if (!device.ok) return "unavailable";
    return device.detail + ", " + cublas_built_version();
}

}  // namespace gemm::cuda
