// device_memory.hpp: what the GPU test programs of the calls beside GEMM (gpu_omatcopy.cpp,
// gpu_spmm.cpp) share: device or managed copies of test operands, a forced backend for a
// scope, and their main, which skips (exit code 77, "SKIPPED: ..." for CTest) without a device.
#pragma once

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness.hpp"

#define CUDA_REQUIRE(call)                                                                                             \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        REQUIRE_MESSAGE(e_ == cudaSuccess, #call ": " << cudaGetErrorString(e_));                                      \
    } while (0)

namespace gemm_test {

// Device (or managed) memory holding a copy of init, `lead` bytes into the allocation.
class device_bytes {
public:
    device_bytes(const bytes &init, bool managed, std::size_t lead = 0) : size_(init.size()), lead_(lead) {
        const std::size_t whole = size_ + lead_ + 1;
        const cudaError_t e = managed ? cudaMallocManaged(&base_, whole) : cudaMalloc(&base_, whole);
        REQUIRE_MESSAGE(e == cudaSuccess, "allocating " << whole << " bytes: " << cudaGetErrorString(e));
        CUDA_REQUIRE(cudaMemcpy(data(), init.data(), size_, cudaMemcpyDefault));
        CUDA_REQUIRE(cudaDeviceSynchronize());
    }
    ~device_bytes() { cudaFree(base_); }
    device_bytes(const device_bytes &) = delete;
    device_bytes &operator=(const device_bytes &) = delete;
    unsigned char *data() { return static_cast<unsigned char *>(base_) + lead_; }
    bytes read() {
        CUDA_REQUIRE(cudaDeviceSynchronize());
        bytes out(size_);
        CUDA_REQUIRE(cudaMemcpy(out.data(), data(), size_, cudaMemcpyDefault));
        return out;
    }

private:
    void *base_ = nullptr;
    std::size_t size_, lead_;
};

// The process's backend forced for a scope (gemm_set_backend), auto again after it.
struct forced {
    explicit forced(const char *name) { status = gemm_set_backend(name); }
    ~forced() { gemm_set_backend(nullptr); }
    gemm_status_t status;
};

inline bool available(const char *name) {
    for (const std::string &n : available_backends())
        if (n == name) return true;
    return false;
}

// CTest shows nothing a skipped test prints: the reason also goes to the file CTest names in
// GEMM_TEST_SKIP_REASON_FILE, which ctest prints after its summary (tests/CMakeLists.txt).
inline void report_skip(const std::string &reason) {
    std::printf("SKIPPED: %s\n", reason.c_str());
    const char *path = std::getenv("GEMM_TEST_SKIP_REASON_FILE");
    if (!path || !*path) return;
    if (std::FILE *f = std::fopen(path, "w")) {
        std::fprintf(f, "%s\n", reason.c_str());
        std::fclose(f);
    }
}

// The test program's main: doctest's run where a CUDA device is, else skipped (77) saying why.
inline int run_with_device(int argc, char **argv) {
    int devices = 0;
    const cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        cudaGetLastError();
        report_skip(std::string("no CUDA device (cudaGetDeviceCount: ") +
                    (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")");
        return 77;
    }
    doctest::Context context(argc, argv);
    return context.run();
}

}  // namespace gemm_test
