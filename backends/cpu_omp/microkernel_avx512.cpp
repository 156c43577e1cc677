// microkernel_avx512.cpp: AVX-512F kernels, 32x12 for f32 and 16x12 for f64, and the complex
// ones on split planes (this file alone is compiled with -mavx512f; the caller checks the CPU
// first).
#include "microkernel_avx512.hpp"
#include "microkernel_complex.hpp"
#include "microkernel_dot.hpp"
#include "microkernel_small.hpp"

namespace gemm::cpu_omp_detail {

void microkernel_avx512_f32_32x12(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, float alpha,
                                  float beta) {
    multiply_tile<zmm<float>, 2, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_f32_32x12_into_f16(int64_t kc, const float *ap, const float *bp, half *c, int64_t ldc,
                                           float alpha, float beta) {
    multiply_tile<zmm<float>, 2, 12, half, rounded_store<pair_by_avx512f>>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_f32_32x12_into_bf16(int64_t kc, const float *ap, const float *bp, bfloat16 *c, int64_t ldc,
                                            float alpha, float beta) {
    multiply_tile<zmm<float>, 2, 12, bfloat16, rounded_store<pair_by_avx512f>>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_f64_16x12(int64_t kc, const double *ap, const double *bp, double *c, int64_t ldc, double alpha,
                                  double beta) {
    multiply_tile<zmm<double>, 2, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

// Dot products in 4 x 4 tiles (16 accumulators, 8 loads for 16 FMAs a step); small products in
// the packed kernels' 32 x 12 (f32) and 16 x 12 (f64) tiles. f16 and bf16 operands take the
// f32 dot products and sums of columns, widened as they are loaded.
const direct_kernels<float> direct_avx512_f32 = {
    dot_block<zmm<float>, 4, 4>,
    axpy_block<zmm<float>>,
    small_block<zmm<float>, 12>,
    {dot_block<zmm<float>, 4, 4, half>, axpy_block<zmm<float>, half>},
    {dot_block<zmm<float>, 4, 4, bfloat16>, axpy_block<zmm<float>, bfloat16>}};
const direct_kernels<double> direct_avx512_f64 = {
    dot_block<zmm<double>, 4, 4>, axpy_block<zmm<double>>, small_block<zmm<double>, 12>, {}, {}};

// Complex sizes are in complex values: c32 16x12 is one zmm of each plane of A per step of k
// and 12 values of B, 24 accumulators and 4 operands in 28 of the 32 registers.
void microkernel_avx512_c32_4m_16x12(int64_t kc, const float *ap, const float *bp, c32 *c, int64_t ldc, c32 alpha,
                                     c32 beta) {
    multiply_complex_tile<zmm<float>, 1, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_c32_4m_32x6(int64_t kc, const float *ap, const float *bp, c32 *c, int64_t ldc, c32 alpha,
                                    c32 beta) {
    multiply_complex_tile<zmm<float>, 2, 6>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_c64_4m_8x12(int64_t kc, const double *ap, const double *bp, c64 *c, int64_t ldc, c64 alpha,
                                    c64 beta) {
    multiply_complex_tile<zmm<double>, 1, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_c64_4m_16x6(int64_t kc, const double *ap, const double *bp, c64 *c, int64_t ldc, c64 alpha,
                                    c64 beta) {
    multiply_complex_tile<zmm<double>, 2, 6>(kc, ap, bp, c, ldc, alpha, beta);
}

}  // namespace gemm::cpu_omp_detail
