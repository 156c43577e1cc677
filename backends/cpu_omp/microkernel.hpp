// microkernel.hpp: the register-blocked kernels of cpu_omp, one per instruction set and shape.
#pragma once

#include <complex>
#include <cstdint>

#include "gemm/gemm.hpp"

namespace gemm::cpu_omp_detail {

// What a packed panel of T holds: T itself for real types; for complex ones two planes of
// the real type (each step of k holds the real parts of its values, then their imaginary
// parts), so that the real FMA units do all the work.
template <class T> struct element_traits {
    using real = T;
    static constexpr int parts = 1;  // reals per element in a packed panel
};
template <class R> struct element_traits<std::complex<R>> {
    using real = R;
    static constexpr int parts = 2;
};
template <class T> using real_t = typename element_traits<T>::real;
template <class T> constexpr int parts_v = element_traits<T>::parts;

// C[0:MR, 0:NR] = alpha * (Ap * Bp) + beta * C[0:MR, 0:NR], C column-major with leading
// dimension ldc (in elements). Ap holds kc columns of MR contiguous values, Bp kc rows of NR
// contiguous values (the packed panels); for complex T each of those is MR (NR) real parts
// followed by MR (NR) imaginary parts. beta == 0 means C is written and never read.
// C is stored as Out: T, or for T = float a 16-bit type (a rounding microkernel): alpha times
// the f32 sums, plus beta times C widened (the product, then the sum, never fused), rounded
// once to nearest even as conversions.hpp's round_fn rounds, so that a 16-bit C whose k is one
// block of k is final when the kernel returns.
template <class T, class Out = T>
using microkernel = void (*)(int64_t kc, const real_t<T> *ap, const real_t<T> *bp, Out *c, int64_t ldc, T alpha, T beta);

// C[0:rows, 0:cols] = alpha * op(A) * op(B) + beta * C, C column-major with leading dimension
// ldc, for operands both stored along k: row i of op(A) is k contiguous values at a + i * lda,
// column j of op(B) at b + j * ldb (microkernel_dot.hpp). Read in place, not packed: for C
// with few rows or columns. Real types; beta == 0 means C is written and never read.
template <class T>
using dot_kernel = void (*)(int64_t rows, int64_t cols, int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb,
                            T *c, int64_t ldc, T alpha, T beta);

// The same for op(A) stored along m (column l of op(A) at a + l * lda) and op(B) along k, for
// a C of few columns (microkernel_dot.hpp): a row-major x·W for a few rows of x.
template <class T> using axpy_kernel = dot_kernel<T>;

// C[0:rows, 0:cols] = alpha * op(A) * op(B) + beta * C for a small product on one thread
// (microkernel_small.hpp): op(A)'s value (i, l) at a + i * a_m + l * a_k, where a_m == 1 (read
// in place) or a_k == 1 (each tile of rows gathered into `panel`, which holds
// small_panel_rows x k values), op(B)'s (l, j) at b + l * b_k + j * b_j (read in place). Real
// types; beta == 0 means C is written and never read.
template <class T>
using small_kernel = void (*)(int64_t rows, int64_t cols, int64_t k, const T *a, int64_t a_m, int64_t a_k, const T *b,
                              int64_t b_k, int64_t b_j, T *c, int64_t ldc, T alpha, T beta, T *panel);

// The most rows of any small kernel's tile: its panel's rows.
constexpr int64_t small_panel_rows = 32;

// The dot products and sums of columns (dot_kernel, axpy_kernel) for A and B stored as the
// 16-bit type S, widened to f32 in registers, summed in f32 into an f32 C.
template <class S>
using widening_kernel = void (*)(int64_t rows, int64_t cols, int64_t k, const S *a, int64_t lda, const S *b,
                                 int64_t ldb, float *c, int64_t ldc, float alpha, float beta);

template <class S> struct widening_kernels {
    widening_kernel<S> dot;
    widening_kernel<S> axpy;
};

// The kernels of one ISA that read the operands where they lie; null where it has none. f16
// and bf16 are f32's only (T = float).
template <class T> struct direct_kernels {
    dot_kernel<T> dot;
    axpy_kernel<T> axpy;
    small_kernel<T> small;
    widening_kernels<half> f16;
    widening_kernels<bfloat16> bf16;
};

using c32 = std::complex<float>;
using c64 = std::complex<double>;

// Portable C++ (microkernel_generic.cpp), compiled for the baseline instruction set.
void microkernel_generic_f32_8x4(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, float alpha,
                                 float beta);
void microkernel_generic_f64_4x4(int64_t kc, const double *ap, const double *bp, double *c, int64_t ldc, double alpha,
                                 double beta);
void microkernel_generic_c32_4m_4x4(int64_t kc, const float *ap, const float *bp, c32 *c, int64_t ldc, c32 alpha,
                                    c32 beta);
void microkernel_generic_c64_4m_2x4(int64_t kc, const double *ap, const double *bp, c64 *c, int64_t ldc, c64 alpha,
                                    c64 beta);

// AVX2 + FMA (microkernel_avx2.cpp); call only when the CPU has both.
void microkernel_avx2_f32_16x6(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, float alpha,
                               float beta);
void microkernel_avx2_f64_8x6(int64_t kc, const double *ap, const double *bp, double *c, int64_t ldc, double alpha,
                              double beta);
// The unpacked kernels (microkernel_dot.hpp, microkernel_small.hpp) built for AVX2.
extern const direct_kernels<float> direct_avx2_f32;
extern const direct_kernels<double> direct_avx2_f64;
void microkernel_avx2_c32_4m_8x6(int64_t kc, const float *ap, const float *bp, c32 *c, int64_t ldc, c32 alpha, c32 beta);
void microkernel_avx2_c64_4m_4x6(int64_t kc, const double *ap, const double *bp, c64 *c, int64_t ldc, c64 alpha,
                                 c64 beta);

// AVX-512F (microkernel_avx512.cpp); call only when the CPU and OS enable it.
void microkernel_avx512_f32_32x12(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, float alpha,
                                  float beta);
// The same kernel rounding its tile into a 16-bit C.
void microkernel_avx512_f32_32x12_into_f16(int64_t kc, const float *ap, const float *bp, half *c, int64_t ldc,
                                           float alpha, float beta);
void microkernel_avx512_f32_32x12_into_bf16(int64_t kc, const float *ap, const float *bp, bfloat16 *c, int64_t ldc,
                                            float alpha, float beta);
// The same by AVX512-BF16's rounding (microkernel_avx512_bf16.cpp); call only when the CPU has
// AVX512-BF16 and AVX512-DQ as well.
void microkernel_avx512bf16_f32_32x12_into_bf16(int64_t kc, const float *ap, const float *bp, bfloat16 *c, int64_t ldc,
                                                float alpha, float beta);
void microkernel_avx512_f64_16x12(int64_t kc, const double *ap, const double *bp, double *c, int64_t ldc, double alpha,
                                  double beta);
// The unpacked kernels built for AVX-512.
extern const direct_kernels<float> direct_avx512_f32;
extern const direct_kernels<double> direct_avx512_f64;
void microkernel_avx512_c32_4m_16x12(int64_t kc, const float *ap, const float *bp, c32 *c, int64_t ldc, c32 alpha,
                                     c32 beta);
void microkernel_avx512_c32_4m_32x6(int64_t kc, const float *ap, const float *bp, c32 *c, int64_t ldc, c32 alpha,
                                    c32 beta);
void microkernel_avx512_c64_4m_8x12(int64_t kc, const double *ap, const double *bp, c64 *c, int64_t ldc, c64 alpha,
                                    c64 beta);
void microkernel_avx512_c64_4m_16x6(int64_t kc, const double *ap, const double *bp, c64 *c, int64_t ldc, c64 alpha,
                                    c64 beta);

}  // namespace gemm::cpu_omp_detail
