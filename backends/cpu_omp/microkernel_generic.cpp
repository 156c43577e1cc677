// microkernel_generic.cpp: portable C++ kernels, 8x4 for f32 and 4x4 for f64, for CPUs
// without AVX2 (or other architectures); the compiler vectorizes them for the baseline ISA.
#include "microkernel.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// MR x NR accumulators small enough to live in the 16 registers of SSE2 (8 vectors).
template <class T, int MR, int NR>
void multiply_tile(int64_t kc, const T *__restrict ap, const T *__restrict bp, T *__restrict c,
                   int64_t ldc, T alpha, T beta) {
    T acc[NR][MR] = {};
    for (int64_t l = 0; l < kc; ++l) {
        for (int j = 0; j < NR; ++j)
            for (int i = 0; i < MR; ++i) acc[j][i] += ap[i] * bp[j];
        ap += MR;
        bp += NR;
    }
    for (int j = 0; j < NR; ++j) {
        T *cj = c + j * ldc;
        if (beta == T(0))
            for (int i = 0; i < MR; ++i) cj[i] = alpha * acc[j][i];
        else
            for (int i = 0; i < MR; ++i) cj[i] = alpha * acc[j][i] + beta * cj[i];
    }
}

}  // namespace

void microkernel_generic_f32_8x4(int64_t kc, const float *ap, const float *bp, float *c,
                                 int64_t ldc, float alpha, float beta) {
    multiply_tile<float, 8, 4>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_generic_f64_4x4(int64_t kc, const double *ap, const double *bp, double *c,
                                 int64_t ldc, double alpha, double beta) {
    multiply_tile<double, 4, 4>(kc, ap, bp, c, ldc, alpha, beta);
}

}  // namespace gemm::cpu_omp_detail
