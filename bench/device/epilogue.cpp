// epilogue.cpp: fused against unfused epilogues on a GPU, bf16 in and out (f32 compute),
// row-major as a framework's fully connected layer calls it: Y[M,N] = act(X[M,K] W[N,K]^T + b),
// b per column. Each case four ways through gemm_ex_epilogue / gemm_ex on one stream:
//   gemm     the product alone on cublas (gemm_ex, no epilogue): the floor
//   unfused  cublas forced: cuBLAS's GEMM, then the library's pass over C
//   fused    cublaslt forced: cuBLASLt's epilogue in the GEMM
//   auto     the selection a caller gets without choosing
// Timed with CUDA events over 20 calls, in 7 rounds that take the ways in turn; medians per
// call. Built and run by bench/device/run.sh (stage epilogue).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <gemm/gemm.h>

#include "sampling.hpp"

namespace {

void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "epilogue: %s failed (%s)\n", what, gemm_last_error());
        std::exit(1);
    }
}

void *device_zeros(std::size_t bytes) {
    void *p = nullptr;
    check(cudaMalloc(&p, bytes) == cudaSuccess, "cudaMalloc");
    check(cudaMemset(p, 0, bytes) == cudaSuccess, "cudaMemset");
    return p;
}

// Small values, so GELU sees both signs without overflow (bf16 0x3c00 = 0.0078125, mixed).
void fill(void *p, std::size_t elements) {
    std::vector<unsigned short> host(elements);
    for (std::size_t i = 0; i < elements; ++i) host[i] = (unsigned short)((i * 2654435761u) % 7 == 0 ? 0xbc00 : 0x3c00);
    check(cudaMemcpy(p, host.data(), elements * 2, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy");
}

struct bench_case {
    const char *name;
    int64_t m, n, k;
    gemm_op_t tb;  // W as [N,K] (T) for a forward layer, or [K,N] (N) for the backward product
    gemm_activation_t act;
    bool aux;  // forward: save Z + b; backward: make the bias gradient too
};

}  // namespace

int main() {
    const bench_case cases[] = {
        {"4096^3 bias+relu", 4096, 4096, 4096, GEMM_OP_T, GEMM_ACTIVATION_RELU, false},
        {"4096^3 bias+gelu", 4096, 4096, 4096, GEMM_OP_T, GEMM_ACTIVATION_GELU, false},
        {"4096^3 bias+gelu+aux", 4096, 4096, 4096, GEMM_OP_T, GEMM_ACTIVATION_GELU, true},
        {"MLP up 4096x14336x4096 bias+gelu", 4096, 14336, 4096, GEMM_OP_T, GEMM_ACTIVATION_GELU, false},
        {"MLP up 4096x14336x4096 bias+gelu+aux", 4096, 14336, 4096, GEMM_OP_T, GEMM_ACTIVATION_GELU, true},
        {"MLP back 4096x14336x4096 dgelu", 4096, 14336, 4096, GEMM_OP_N, GEMM_ACTIVATION_GELU_BACKWARD, false},
        {"MLP back 4096x14336x4096 dgelu+dbias", 4096, 14336, 4096, GEMM_OP_N, GEMM_ACTIVATION_GELU_BACKWARD, true},
    };
    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess, "cudaStreamCreate");
    check(gemm_set_stream(stream) == GEMM_STATUS_SUCCESS, "gemm_set_stream");
    bench_device::event_timer timer(stream);
    std::printf("%-40s %10s %10s %10s %10s %14s %12s\n", "case (bf16, row-major)", "gemm us", "unfused us", "fused us",
                "auto us", "unfused/fused", "auto/fused");
    for (const bench_case &c : cases) {
        const std::size_t mk = std::size_t(c.m * c.k), kn = std::size_t(c.k * c.n), mn = std::size_t(c.m * c.n);
        void *x = device_zeros(mk * 2), *w = device_zeros(kn * 2), *y = device_zeros(mn * 2),
             *aux = device_zeros(mn * 2), *bias = device_zeros(std::size_t(c.n) * 2);
        fill(x, mk), fill(w, kn), fill(aux, mn), fill(bias, std::size_t(c.n));
        const bool backward = c.act == GEMM_ACTIVATION_GELU_BACKWARD;
        gemm_epilogue_t e;
        gemm_epilogue_init(&e);
        e.activation = c.act;
        // Backward cases always read aux; their flag says whether they also make the bias gradient.
        e.bias_axis = backward && !c.aux ? GEMM_BIAS_NONE : GEMM_BIAS_COLUMNS;
        e.bias = backward ? nullptr : bias;
        e.bias_grad = backward && c.aux ? bias : nullptr;
        e.aux = c.aux || backward ? aux : nullptr;
        e.ld_aux = c.n;
        const float one = 1.0f, zero = 0.0f;
        const int64_t ldb = c.tb == GEMM_OP_T ? c.k : c.n;
        auto product = [&] {
            return gemm_ex(GEMM_ROW_MAJOR, GEMM_OP_N, c.tb, c.m, c.n, c.k, &one, x, GEMM_BF16, c.k, w, GEMM_BF16, ldb,
                           &zero, y, GEMM_BF16, c.n, GEMM_F32);
        };
        auto with_epilogue = [&] {
            return gemm_ex_epilogue(GEMM_ROW_MAJOR, GEMM_OP_N, c.tb, c.m, c.n, c.k, &one, x, GEMM_BF16, c.k, w,
                                    GEMM_BF16, ldb, &zero, y, GEMM_BF16, c.n, GEMM_F32, &e);
        };
        struct way {
            const char *backend;
            std::function<gemm_status_t()> call;
        };
        const way ways[] = {
            {"cublas", product}, {"cublas", with_epilogue}, {"cublaslt", with_epilogue}, {nullptr, with_epilogue}};
        constexpr int calls = 20, rounds = 7;
        auto sample_us = [&](std::size_t i) {
            check(gemm_set_backend(ways[i].backend) == GEMM_STATUS_SUCCESS, "gemm_set_backend");
            check(ways[i].call() == GEMM_STATUS_SUCCESS, "warm-up call");
            return timer.ms_per_call([&] { check(ways[i].call() == GEMM_STATUS_SUCCESS, "call"); }, calls) * 1000.0;
        };
        const std::vector<double> us = bench_device::medians(bench_device::interleaved_samples(4, rounds, sample_us));
        const double gemm_us = us[0], unfused = us[1], fused = us[2], automatic = us[3];
        std::printf("%-40s %10.1f %10.1f %10.1f %10.1f %14.3f %12.3f\n", c.name, gemm_us, unfused, fused, automatic,
                    unfused / fused, automatic / fused);
        for (void *p : {x, w, y, aux, bias}) cudaFree(p);
    }
    gemm_set_backend(nullptr);
    gemm_set_stream(nullptr);
    cudaStreamDestroy(stream);
    return 0;
}
