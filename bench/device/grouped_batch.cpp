// grouped_batch.cpp: a grouped batch of 64 small GEMMs (m, n, k drawn from 64..512, column-major
// NN, device memory, each operand's matrices in one allocation) on one stream: a loop of cuBLAS
// calls (cublasGemmEx), cuBLAS's own grouped call (cublasGemmGroupedBatchedEx_64, its pointer
// arrays uploaded once), and through gemm: gemm_ex_grouped (host arrays, read by the library
// each call) under auto (or GROUPED_BACKEND), forced to each of cublas's two ways
// (cublas:one_call, cublas:streams) and to cuda_tiled (its tensor-core kernel for bf16, a
// loop of its f32 kernels), and a loop of gemm_ex calls under auto. Then 64 GEMMs of one shape
// (256^3) the same ways, with cublasGemmBatchedEx_64 and gemm_ex_batched as the batched calls.
// Each way is timed with CUDA events over 20 calls, in 9 rounds that take the ways in turn;
// medians per batch. f32 and bf16 (f32 compute). Built and run by bench/device/run.sh (stage
// grouped).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include <gemm/gemm.h>

#include "sampling.hpp"

namespace {

void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "grouped_batch: %s failed (%s)\n", what, gemm_last_error());
        std::exit(1);
    }
}

constexpr int count = 64;

// One group per GEMM (64 groups of one), the arrays as both APIs take them.
struct batch {
    gemm_dtype_t type;
    std::vector<int64_t> m, n, k, size;
    std::vector<gemm_op_t> ops;
    std::vector<cublasOperation_t> cublas_ops;
    std::vector<float> alpha, beta;
    std::vector<const void *> a, b;
    std::vector<void *> c;
    void **device_arrays = nullptr;  // a, b, c for cuBLAS's grouped call

    bool one_shape;

    batch(gemm_dtype_t t, bool same) : type(t), one_shape(same) {
        std::mt19937 rng(2026);
        std::uniform_int_distribution<int> dim(same ? 256 : 64, same ? 256 : 512);
        std::size_t element = t == GEMM_F32 ? 4 : 2;
        // The matrices of each operand in one allocation, 256-byte aligned, as a framework's
        // memory pool hands them out.
        std::size_t offsets[3] = {0, 0, 0};
        std::vector<std::size_t> at[3];
        for (int i = 0; i < count; ++i) {
            m.push_back(dim(rng)), n.push_back(dim(rng)), k.push_back(dim(rng)), size.push_back(1);
            ops.push_back(GEMM_OP_N), cublas_ops.push_back(CUBLAS_OP_N);
            alpha.push_back(1.0f), beta.push_back(0.0f);
            std::size_t bytes[3] = {std::size_t(m.back() * k.back()) * element,
                                    std::size_t(k.back() * n.back()) * element,
                                    std::size_t(m.back() * n.back()) * element};
            for (int j = 0; j < 3; ++j) {
                at[j].push_back(offsets[j]);
                offsets[j] += (bytes[j] + 255) / 256 * 256;
            }
        }
        char *pool[3];
        for (int j = 0; j < 3; ++j) {
            check(cudaMalloc(reinterpret_cast<void **>(&pool[j]), offsets[j]) == cudaSuccess, "cudaMalloc");
            check(cudaMemset(pool[j], 0, offsets[j]) == cudaSuccess, "cudaMemset");
        }
        for (int i = 0; i < count; ++i) {
            a.push_back(pool[0] + at[0][std::size_t(i)]);
            b.push_back(pool[1] + at[1][std::size_t(i)]);
            c.push_back(pool[2] + at[2][std::size_t(i)]);
        }
        std::vector<void *> all;
        for (int i = 0; i < count; ++i) all.push_back(const_cast<void *>(a[std::size_t(i)]));
        for (int i = 0; i < count; ++i) all.push_back(const_cast<void *>(b[std::size_t(i)]));
        for (int i = 0; i < count; ++i) all.push_back(c[std::size_t(i)]);
        check(cudaMalloc(reinterpret_cast<void **>(&device_arrays), all.size() * sizeof(void *)) == cudaSuccess,
              "cudaMalloc arrays");
        check(cudaMemcpy(device_arrays, all.data(), all.size() * sizeof(void *), cudaMemcpyHostToDevice) == cudaSuccess,
              "cudaMemcpy arrays");
    }
    cudaDataType_t cuda_type() const { return type == GEMM_F32 ? CUDA_R_32F : CUDA_R_16BF; }
    double flops() const {
        double f = 0;
        for (int i = 0; i < count; ++i) f += 2.0 * double(m[std::size_t(i)] * n[std::size_t(i)] * k[std::size_t(i)]);
        return f;
    }
};

// Median milliseconds per call of each way: rounds taking the ways in turn, each round a
// warm-up call and then `calls` calls between two events.
std::vector<double> interleaved_ms(cudaStream_t s, const std::vector<std::function<void()>> &ways, int rounds,
                                   int calls) {
    bench_device::event_timer timer(s);
    return bench_device::medians(bench_device::interleaved_samples(
        ways.size(), rounds, [&](std::size_t w) { return timer.ms_per_call(ways[w], calls, 1); }));
}

}  // namespace

int main() {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cublasHandle_t h;
    check(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    cublasSetStream(h, s);
    gemm_set_stream(s);
    const char *forced = std::getenv("GROUPED_BACKEND");
    const char *builtin = forced ? forced : "auto";
    std::printf("%-5s %-7s %9s %11s %9s %9s %9s %9s %9s %9s %9s %s\n", "type", "shapes", "loop_us", "cublas_bat",
                forced ? "gemm_bat" : "auto", "one_call", "streams", "tiled", "gemm_loop", "vs_loop", "vs_cublas",
                "TFLOP/s(gemm)");
    for (bool same : {false, true})
        for (gemm_dtype_t t : {GEMM_F32, GEMM_BF16}) {
            batch x(t, same);
            const float one = 1.0f, zero = 0.0f;
            const cudaDataType_t ct = x.cuda_type();
            auto loop = [&] {
                for (int i = 0; i < count; ++i)
                    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(x.m[i]), int(x.n[i]), int(x.k[i]), &one, x.a[i], ct,
                                 int(x.m[i]), x.b[i], ct, int(x.k[i]), &zero, x.c[i], ct, int(x.m[i]),
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            };
            auto cublas_grouped = [&] {
                if (x.one_shape) {
                    cublasGemmBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, x.m[0], x.n[0], x.k[0], &one, x.device_arrays,
                                           ct, x.m[0], x.device_arrays + count, ct, x.k[0], &zero,
                                           x.device_arrays + 2 * count, ct, x.m[0], count, CUBLAS_COMPUTE_32F,
                                           CUBLAS_GEMM_DEFAULT);
                    return;
                }
                cublasGemmGroupedBatchedEx_64(
                    h, x.cublas_ops.data(), x.cublas_ops.data(), x.m.data(), x.n.data(), x.k.data(), x.alpha.data(),
                    x.device_arrays, ct, x.m.data(), x.device_arrays + count, ct, x.k.data(), x.beta.data(),
                    x.device_arrays + 2 * count, ct, x.m.data(), count, x.size.data(), CUBLAS_COMPUTE_32F);
            };
            auto gemm_grouped = [&] {
                if (x.one_shape) {
                    gemm_status_t st = gemm_ex_batched(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, x.m[0], x.n[0], x.k[0],
                                                       &one, x.a.data(), t, x.m[0], x.b.data(), t, x.k[0], &zero,
                                                       x.c.data(), t, x.m[0], count, GEMM_F32);
                    check(st == GEMM_STATUS_SUCCESS, "gemm_ex_batched");
                    return;
                }
                gemm_status_t st =
                    gemm_ex_grouped(GEMM_COL_MAJOR, x.ops.data(), x.ops.data(), x.m.data(), x.n.data(), x.k.data(),
                                    x.alpha.data(), x.a.data(), t, x.m.data(), x.b.data(), t, x.k.data(), x.beta.data(),
                                    x.c.data(), t, x.m.data(), count, x.size.data(), GEMM_F32);
                check(st == GEMM_STATUS_SUCCESS, "gemm_ex_grouped");
            };
            auto on = [&](const char *selection) {
                return [&, selection] {
                    check(gemm_set_backend(selection) == GEMM_STATUS_SUCCESS, "gemm_set_backend");
                    gemm_grouped();
                };
            };
            auto gemm_loop = [&] {
                check(gemm_set_backend(builtin) == GEMM_STATUS_SUCCESS, "gemm_set_backend");
                for (int i = 0; i < count; ++i)
                    gemm_ex(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, x.m[i], x.n[i], x.k[i], &one, x.a[i], t, x.m[i],
                            x.b[i], t, x.k[i], &zero, x.c[i], t, x.m[i], GEMM_F32);
            };
            std::vector<double> ms = interleaved_ms(s,
                                                    {loop, cublas_grouped, on(builtin), on("cublas:one_call"),
                                                     on("cublas:streams"), on("cuda_tiled"), gemm_loop},
                                                    9, 20);
            std::printf("%-5s %-7s %9.1f %11.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.3f %9.3f %.1f\n",
                        t == GEMM_F32 ? "f32" : "bf16", same ? "256^3" : "64..512", ms[0] * 1e3, ms[1] * 1e3,
                        ms[2] * 1e3, ms[3] * 1e3, ms[4] * 1e3, ms[5] * 1e3, ms[6] * 1e3, ms[0] / ms[2], ms[1] / ms[2],
                        x.flops() / (ms[2] * 1e-3) * 1e-12);
        }
    return 0;
}
