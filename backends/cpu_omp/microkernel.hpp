// microkernel.hpp: the register-blocked kernels of cpu_omp, one per instruction set and shape.
#pragma once

#include <cstdint>

namespace gemm::cpu_omp_detail {

// C[0:MR, 0:NR] = alpha * (Ap * Bp) + beta * C[0:MR, 0:NR], C column-major with leading
// dimension ldc. Ap holds kc columns of MR contiguous values, Bp kc rows of NR contiguous
// values (the packed panels). beta == 0 means C is written and never read.
template <class T>
using microkernel = void (*)(int64_t kc, const T *ap, const T *bp, T *c, int64_t ldc, T alpha,
                             T beta);

// Portable C++ (microkernel_generic.cpp), compiled for the baseline instruction set.
void microkernel_generic_f32_8x4(int64_t kc, const float *ap, const float *bp, float *c,
                                 int64_t ldc, float alpha, float beta);
void microkernel_generic_f64_4x4(int64_t kc, const double *ap, const double *bp, double *c,
                                 int64_t ldc, double alpha, double beta);

// AVX2 + FMA (microkernel_avx2.cpp); call only when the CPU has both.
void microkernel_avx2_f32_16x6(int64_t kc, const float *ap, const float *bp, float *c,
                               int64_t ldc, float alpha, float beta);
void microkernel_avx2_f64_8x6(int64_t kc, const double *ap, const double *bp, double *c,
                              int64_t ldc, double alpha, double beta);

// AVX-512F (microkernel_avx512.cpp); call only when the CPU and OS enable it.
void microkernel_avx512_f32_32x12(int64_t kc, const float *ap, const float *bp, float *c,
                                  int64_t ldc, float alpha, float beta);
void microkernel_avx512_f64_16x12(int64_t kc, const double *ap, const double *bp, double *c,
                                  int64_t ldc, double alpha, double beta);

}  // namespace gemm::cpu_omp_detail
