// short_calls.cpp: whether the measurement engine (what gemm tune and gemm bench time) sees a
// short device call as a caller does. For each shape, on device memory: cuBLAS called directly
// and through gemm (forced cublas, and a plan), back to back on one stream, rotating through
// operand sets twice the L2 cache in all (as the engine's), timed with CUDA events; then gemm_measure of cublas and
// cublaslt, whose medians should agree with those rates. Built and run by bench/device/run.sh (stage short).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gemm/gemm.h>

#include "sampling.hpp"

namespace {

void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "short_calls: %s failed (%s)\n", what, gemm_last_error());
        std::exit(1);
    }
}

struct shape {
    int m, n, k;
    gemm_dtype_t type;  // f32 or bf16 (C of the same type, f32 compute)
};

// Sets of row-major A (m x k), B (n x k, op T) and C (m x n), filled with ones: as many as it
// takes to exceed twice the L2 cache, 256 at most (the engine's rule).
struct operand_sets {
    int sets = 1;
    std::vector<void *> a, b, c;
    explicit operand_sets(const shape &s) {
        std::size_t element = s.type == GEMM_F32 ? 4 : 2;
        std::size_t sizes[3] = {std::size_t(s.m) * s.k * element, std::size_t(s.n) * s.k * element,
                                std::size_t(s.m) * s.n * element};
        int l2 = 0;
        cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
        sets = int(std::clamp<std::size_t>(2 * std::size_t(l2) / (sizes[0] + sizes[1] + sizes[2]) + 1, 1, 256));
        a.resize(std::size_t(sets)), b.resize(std::size_t(sets)), c.resize(std::size_t(sets));
        std::vector<unsigned char> ones(std::max({sizes[0], sizes[1], sizes[2]}));
        for (std::size_t i = 0; i < ones.size(); i += element) {  // 1.0 in f32 or bf16, little-endian
            if (element == 4) ones[i + 2] = 0x80, ones[i + 3] = 0x3f;
            else ones[i] = 0x80, ones[i + 1] = 0x3f;
        }
        for (int i = 0; i < sets; ++i) {
            void **p[3] = {&a[std::size_t(i)], &b[std::size_t(i)], &c[std::size_t(i)]};
            for (int j = 0; j < 3; ++j) {
                check(cudaMalloc(p[j], sizes[j]) == cudaSuccess, "cudaMalloc");
                check(cudaMemcpy(*p[j], ones.data(), sizes[j], cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy");
            }
        }
    }
    ~operand_sets() {
        for (int i = 0; i < sets; ++i)
            cudaFree(a[std::size_t(i)]), cudaFree(b[std::size_t(i)]), cudaFree(c[std::size_t(i)]);
    }
};

// Device time per call (us): `runs` calls back to back between two events, median of 7 rounds,
// each after 20 calls of warm-up.
template <class F> double per_call_us(cudaStream_t stream, F &&call, int runs) {
    return bench_device::median_ms_per_call(stream, call, 7, runs, 20) * 1e3;
}

void run_shape(const shape &s, cudaStream_t stream, cublasHandle_t handle) {
    operand_sets o(s);
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t type = s.type == GEMM_F32 ? CUDA_R_32F : CUDA_R_16BF;
    // Row-major C = A B^T is column-major C^T = B A^T: m and n swap, as gemm does it.
    auto direct = [&](int i) {
        int x = i % o.sets;
        cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &one, o.b[std::size_t(x)], type, s.k,
                     o.a[std::size_t(x)], type, s.k, &zero, o.c[std::size_t(x)], type, s.n, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT);
    };
    auto forced = [&](int i) {
        int x = i % o.sets;
        gemm_ex(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, s.m, s.n, s.k, &one, o.a[std::size_t(x)], s.type, s.k,
                o.b[std::size_t(x)], s.type, s.k, &zero, o.c[std::size_t(x)], s.type, s.n, GEMM_F32);
    };
    gemm_desc_t desc;
    gemm_desc_init(&desc, s.type, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, s.m, s.n, s.k);
    desc.device = 0;
    desc.beta_zero = 1;
    check(gemm_set_backend("cublas") == GEMM_STATUS_SUCCESS, "gemm_set_backend(cublas)");
    gemm_plan_t plan = nullptr;
    check(gemm_plan_create(&desc, &plan) == GEMM_STATUS_SUCCESS, "gemm_plan_create");
    auto planned = [&](int i) {
        int x = i % o.sets;
        gemm_plan_run(plan, &one, o.a[std::size_t(x)], o.b[std::size_t(x)], &zero, o.c[std::size_t(x)]);
    };
    const int runs = 200;
    double d = per_call_us(stream, direct, runs), f = per_call_us(stream, forced, runs),
           p = per_call_us(stream, planned, runs);
    gemm_plan_destroy(plan);
    check(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS, "gemm_set_backend(NULL)");

    const char *names[] = {"cublas", "cublaslt"};
    gemm_measurement_t reports[2];
    gemm_measure_options_t options;
    gemm_measure_options_init(&options);
    check(gemm_measure(&desc, names, 2, &options, reports) == GEMM_STATUS_SUCCESS, "gemm_measure");
    std::printf("%5dx%5dx%5d %-4s  %8.2f %8.2f %8.2f  %12.2f %12.2f  %10.3f\n", s.m, s.n, s.k,
                s.type == GEMM_F32 ? "f32" : "bf16", d, f, p, reports[0].median_us, reports[1].median_us,
                reports[0].median_us / d);
}

}  // namespace

int main() {
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cublasHandle_t handle;
    check(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    cublasSetStream(handle, stream);
    gemm_set_stream(stream);
    std::printf("us per call, back to back on one stream, rotating operand sets; measure: gemm_measure's median\n");
    std::printf("%-22s  %8s %8s %8s  %12s %12s  %10s\n", "shape", "direct", "forced", "plan", "measure:cublas",
                "measure:lt", "measure/direct");
    for (const shape &s :
         {shape{100, 100, 100, GEMM_BF16}, shape{8, 4096, 4096, GEMM_BF16}, shape{100, 100, 100, GEMM_F32},
          shape{32, 14336, 4096, GEMM_F32}, shape{1024, 1024, 1024, GEMM_BF16}})
        run_shape(s, stream, handle);
    cublasDestroy(handle);
    cudaStreamDestroy(stream);
    return 0;
}
