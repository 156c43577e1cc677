// xt_footprint.cpp: how much device memory the cublasxt backend holds on each GPU per block
// dimension, and what one call costs. For each dtype and block dimension it runs one
// host-memory GEMM through gemm (cublasxt forced) while a thread samples cudaMemGetInfo on
// every device each half millisecond, and prints the peak use over the idle baseline.
// The cublasxt backend's footprint model (backends/cublasxt) comes from this table.
// Built and run by bench/device/run.sh (stage xt). Usage: xt_footprint [n]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gemm/gemm.h>

#include "sampling.hpp"

namespace {

struct device_watch {
    std::vector<std::size_t> baseline_free, lowest_free;
    std::atomic<bool> stop{false};
    std::thread sampler;

    explicit device_watch(int devices) : baseline_free(std::size_t(devices)), lowest_free(std::size_t(devices)) {
        for (int d = 0; d < devices; ++d) {
            std::size_t free = 0, total = 0;
            cudaSetDevice(d);
            cudaMemGetInfo(&free, &total);
            baseline_free[std::size_t(d)] = lowest_free[std::size_t(d)] = free;
        }
        sampler = std::thread([this, devices] {
            while (!stop.load()) {
                for (int d = 0; d < devices; ++d) {
                    std::size_t free = 0, total = 0;
                    cudaSetDevice(d);
                    if (cudaMemGetInfo(&free, &total) == cudaSuccess)
                        lowest_free[std::size_t(d)] = std::min(lowest_free[std::size_t(d)], free);
                }
                std::this_thread::sleep_for(std::chrono::microseconds(500));
            }
        });
    }
    ~device_watch() {
        stop = true;
        sampler.join();
    }
    double peak_mib(int d) const {
        return double(baseline_free[std::size_t(d)] - lowest_free[std::size_t(d)]) / double(1 << 20);
    }
};

template <class T> gemm_status_t call(int64_t n, const T *a, const T *b, T *c) {
    if constexpr (sizeof(T) == 4)
        return gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    else return gemm_dgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
}

template <class T> void table(int64_t n, int devices, const char *dtype) {
    std::vector<T> a(std::size_t(n * n)), b(a.size()), c(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = b[i] = T(int(i % 7) - 3) / T(4);
    for (const char *variant : {"b512", "b1024", "b2048", "b4096", "b8192"}) {
        std::string spec = std::string("cublasxt:") + variant;
        if (gemm_set_backend(spec.c_str()) != GEMM_STATUS_SUCCESS) {
            std::printf("%s: %s\n", spec.c_str(), gemm_last_error());
            continue;
        }
        call<T>(n, a.data(), b.data(), c.data());  // warm: handle, threads, buffers
        device_watch watch(devices);
        gemm_status_t s = GEMM_STATUS_SUCCESS;
        const double seconds = bench_device::host_seconds([&] { s = call<T>(n, a.data(), b.data(), c.data()); });
        std::printf("%-4s n=%-6lld %-6s %s %7.3f s %7.1f TFLOP/s  peak device MiB:", dtype, (long long)n, variant,
                    s == GEMM_STATUS_SUCCESS ? "ok  " : "FAIL", seconds,
                    2.0 * double(n) * double(n) * double(n) / seconds * 1e-12);
        for (int d = 0; d < devices; ++d) std::printf(" %8.1f", watch.peak_mib(d));
        std::printf("\n");
    }
    gemm_set_backend(nullptr);
}

}  // namespace

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? std::atoll(argv[1]) : 16384;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("xt_footprint: no CUDA device\n");
        return 0;
    }
    std::printf("xt_footprint: %d device(s), n=%lld, GEMM_XT_DEVICES=%s\n", devices, (long long)n,
                std::getenv("GEMM_XT_DEVICES") ? std::getenv("GEMM_XT_DEVICES") : "(all)");
    table<float>(n, devices, "f32");
    table<double>(n, devices, "f64");
    return 0;
}
