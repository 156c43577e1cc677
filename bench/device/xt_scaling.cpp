// xt_scaling.cpp: host-pointer f32 GEMM through gemm on big squares: cublasxt's block
// dimensions, and cublas (offloaded to one GPU) for comparison. Operands are page-locked
// (cudaMallocHost), as a program feeding GPUs from host memory would allocate them, and
// filled with a cheap pattern; each result is spot-checked against dot products on the host.
// GEMM_XT_DEVICES picks cublasxt's GPUs: run.sh runs it with 0 and with all of them.
// Usage: xt_scaling N... [--backends spec,spec,...]
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gemm/gemm.h>

#include "sampling.hpp"

namespace {

struct pinned_matrix {
    float *data = nullptr;
    explicit pinned_matrix(std::size_t count) {
        if (cudaMallocHost(reinterpret_cast<void **>(&data), count * sizeof(float)) != cudaSuccess) {
            std::fprintf(stderr, "xt_scaling: cudaMallocHost of %zu MiB failed\n", (count * sizeof(float)) >> 20);
            std::exit(1);
        }
    }
    ~pinned_matrix() { cudaFreeHost(data); }
};

float pattern(std::size_t i, unsigned salt) { return float((i * 2654435761u + salt) % 2001u) / 1000.0f - 1.0f; }

// Largest |C(i,j) - sum_l A(i,l) B(l,j)| / sum_l |A(i,l) B(l,j)| over a few entries.
double spot_error(int64_t n, const float *a, const float *b, const float *c) {
    double worst = 0;
    for (int s = 0; s < 16; ++s) {
        int64_t i = (s * 7919) % n, j = (s * 104729 + 17) % n;
        double sum = 0, mag = 0;
        for (int64_t l = 0; l < n; ++l) {
            double v = double(a[i + l * n]) * double(b[l + j * n]);
            sum += v;
            mag += std::fabs(v);
        }
        worst = std::fmax(worst, std::fabs(double(c[i + j * n]) - sum) / (mag + 1e-30));
    }
    return worst;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<int64_t> sizes;
    std::string backends = "cublasxt:b4096,cublasxt:b8192";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--backends") == 0 && i + 1 < argc) backends = argv[++i];
        else sizes.push_back(std::atoll(argv[i]));
    }
    const char *devices = std::getenv("GEMM_XT_DEVICES");
    std::printf("xt_scaling: GEMM_XT_DEVICES=%s, host memory page-locked, f32 NN column-major\n",
                devices ? devices : "(all)");
    std::printf("%-16s %6s %8s %10s %10s %10s %10s\n", "backend", "n", "devices", "call1_s", "mean23_s", "TFLOP/s",
                "spot_err");
    for (int64_t n : sizes) {
        std::size_t count = std::size_t(n) * std::size_t(n);
        pinned_matrix a(count), b(count), c(count);
        for (std::size_t i = 0; i < count; ++i) {
            a.data[i] = pattern(i, 1);
            b.data[i] = pattern(i, 7);
        }
        for (std::size_t start = 0; start <= backends.size();) {
            std::size_t end = std::min(backends.find(',', start), backends.size());
            std::string spec = backends.substr(start, end - start);
            start = end + 1;
            if (gemm_set_backend(spec.c_str()) != GEMM_STATUS_SUCCESS) {
                std::printf("%-16s %s\n", spec.c_str(), gemm_last_error());
                continue;
            }
            std::vector<double> times;
            for (int rep = 0; rep < 3; ++rep) {  // call 1 warms up; calls 2 and 3 are averaged
                gemm_status_t s = GEMM_STATUS_SUCCESS;
                times.push_back(bench_device::host_seconds([&] {
                    s = gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, n, n, n, 1.0f, a.data, n, b.data, n, 0.0f,
                                   c.data, n);
                }));
                if (s != GEMM_STATUS_SUCCESS) {
                    std::printf("%-16s %6lld FAILED: %s\n", spec.c_str(), (long long)n, gemm_last_error());
                    times.clear();
                    break;
                }
            }
            if (times.empty()) continue;
            double mean = 0.5 * (times[1] + times[2]);
            std::printf("%-16s %6lld %8s %10.3f %10.3f %10.1f %10.2e\n", spec.c_str(), (long long)n,
                        spec.rfind("cublasxt", 0) == 0 ? (devices ? devices : "all") : "0", times[0], mean,
                        2.0 * double(n) * double(n) * double(n) / mean * 1e-12, spot_error(n, a.data, b.data, c.data));
            std::fflush(stdout);
        }
        gemm_set_backend(nullptr);
    }
    return 0;
}
