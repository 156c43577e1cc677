// transpose.cpp: gemm_omatcopy on the GPU against a copy of the same bytes. An n x n f32
// transpose (default 16384, about 1 GiB per matrix, far past the L2) on device memory: cuda_tiled's
// tiled kernel and its copy kernel (op N), cuBLAS's geam through the library and called directly,
// and cudaMemcpyAsync device to device, which moves the same bytes with no reordering: its rate
// is the ceiling a transpose is measured against. Each way is verified first (sampled elements
// of B against A), then the ways take turns over rounds, each sample calls back to back between
// two CUDA events; prints the median and best GB/s (bytes read plus written) and the ratio to the
// copy's median. Built and run by bench/device/run.sh (stage transpose).
// Usage: transpose [n]
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gemm/gemm.h>

#include "sampling.hpp"

namespace {

void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "transpose: %s failed (%s; %s)\n", what, gemm_last_error(),
                     cudaGetErrorString(cudaGetLastError()));
        std::exit(1);
    }
}

// A value every element of A can hold exactly and that differs between neighbours.
float value_at(int64_t index) { return float(index % 65521); }

struct way {
    const char *name;
    bool transposes;  // B = A^T (else B = A)
};

}  // namespace

int main(int argc, char **argv) {
    const int64_t n = argc > 1 ? std::atoll(argv[1]) : 16384;
    check(n > 0, "n > 0");
    const std::size_t elements = std::size_t(n) * std::size_t(n), bytes = elements * sizeof(float);
    std::printf("command: bench/device/transpose %lld\n", static_cast<long long>(n));
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0) == cudaSuccess, "cudaGetDeviceProperties");
    std::printf("device: %s, L2 %d MiB; f32 %lld x %lld, %.2f GiB per matrix\n", prop.name, prop.l2CacheSize >> 20,
                static_cast<long long>(n), static_cast<long long>(n), double(bytes) / double(1 << 30));

    std::vector<float> host(elements);
    for (std::size_t i = 0; i < elements; ++i) host[i] = value_at(int64_t(i));
    void *a_bytes = nullptr, *b_bytes = nullptr;
    check(cudaMalloc(&a_bytes, bytes) == cudaSuccess && cudaMalloc(&b_bytes, bytes) == cudaSuccess, "cudaMalloc");
    float *a = static_cast<float *>(a_bytes), *b = static_cast<float *>(b_bytes);
    check(cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy");
    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess, "cudaStreamCreate");
    check(gemm_set_stream(stream) == GEMM_STATUS_SUCCESS, "gemm_set_stream");
    cublasHandle_t handle = nullptr;
    check(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    cublasSetStream(handle, stream);

    const float one = 1.0f, zero = 0.0f;
    const way ways[] = {{"cuda_tiled T (gemm_omatcopy)", true},
                        {"cuda_tiled N (gemm_omatcopy)", false},
                        {"cublas geam T (gemm_omatcopy)", true},
                        {"cublasSgeam T (direct)", true},
                        {"cudaMemcpyAsync D2D", false}};
    constexpr std::size_t count = sizeof ways / sizeof ways[0];
    // The backend of way w, set outside the timed calls.
    auto select = [&](std::size_t w) {
        check(gemm_set_backend(w == 2  ? "cublas"
                               : w < 2 ? "cuda_tiled"
                                       : nullptr) == GEMM_STATUS_SUCCESS,
              "gemm_set_backend");
    };
    auto call = [&](std::size_t w) {
        switch (w) {
        case 0:
        case 1:
        case 2:
            check(gemm_omatcopy(GEMM_COL_MAJOR, w == 1 ? GEMM_OP_N : GEMM_OP_T, n, n, &one, a, n, b, n, GEMM_F32) ==
                      GEMM_STATUS_SUCCESS,
                  "gemm_omatcopy");
            break;
        case 3:
            check(cublasSgeam(handle, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(n), &one, a, int(n), &zero, b, int(n), b,
                              int(n)) == CUBLAS_STATUS_SUCCESS,
                  "cublasSgeam");
            break;
        default:
            check(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream) == cudaSuccess, "cudaMemcpyAsync");
        }
    };

    // Verify each way before timing: B zeroed, one call, 4096 elements of B sampled.
    for (std::size_t w = 0; w < count; ++w) {
        check(cudaMemsetAsync(b, 0, bytes, stream) == cudaSuccess, "cudaMemsetAsync");
        select(w);
        call(w);
        check(cudaStreamSynchronize(stream) == cudaSuccess, "cudaStreamSynchronize");
        int64_t wrong = 0;
        for (int s = 0; s < 4096; ++s) {
            const int64_t i = (int64_t(s) * 7919) % n, j = (int64_t(s) * 104729 + 13) % n;
            float got = 0;
            check(cudaMemcpy(&got, b + i + j * n, sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy");
            const float want = ways[w].transposes ? value_at(j + i * n) : value_at(i + j * n);
            wrong += got != want;
        }
        std::printf("verify %-30s %s\n", ways[w].name, wrong ? "WRONG" : "ok");
        if (wrong) return 1;
    }

    // Rounds in which the ways take turns; each sample 10 calls after 2 of warm-up.
    bench_device::event_timer timer(stream);
    const auto samples = bench_device::interleaved_samples(count, 7, [&](std::size_t w) {
        select(w);
        return timer.ms_per_call([&] { call(w); }, 10, 2);
    });
    gemm_set_backend(nullptr);
    const double moved = 2.0 * double(bytes);  // read and written
    const double copy_gbs = moved / (bench_device::median(samples[count - 1]) * 1e-3) * 1e-9;
    std::printf("%-30s %12s %12s %10s %14s\n", "way", "median_ms", "best_ms", "GB/s", "of copy's GB/s");
    for (std::size_t w = 0; w < count; ++w) {
        const double median_ms = bench_device::median(samples[w]);
        double best_ms = samples[w][0];
        for (double s : samples[w]) best_ms = s < best_ms ? s : best_ms;
        const double gbs = moved / (median_ms * 1e-3) * 1e-9;
        std::printf("%-30s %12.3f %12.3f %10.1f %14.3f\n", ways[w].name, median_ms, best_ms, gbs, gbs / copy_gbs);
    }
    cublasDestroy(handle);
    gemm_set_stream(nullptr);
    cudaStreamDestroy(stream);
    cudaFree(a);
    cudaFree(b);
    return 0;
}
