// microkernel_generic.cpp: portable C++ kernels, 8x4 for f32 and 4x4 for f64, 4x4 for c32 and
// 2x4 for c64, for CPUs without AVX2 (or other architectures); the compiler vectorizes them
// for the baseline ISA.
#include "microkernel.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// MR x NR accumulators small enough to live in the 16 registers of SSE2 (8 vectors).
template <class T, int MR, int NR>
void multiply_tile(int64_t kc, const T *__restrict ap, const T *__restrict bp, T *__restrict c, int64_t ldc, T alpha,
                   T beta) {
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

// The complex kernel on split planes (the 4M method, as in microkernel_complex.hpp): the four
// real products of each step, 2 x MR x NR real accumulators (8 SSE2 registers here).
template <class R, int MR, int NR>
void multiply_complex_tile(int64_t kc, const R *__restrict ap, const R *__restrict bp, std::complex<R> *__restrict c,
                           int64_t ldc, std::complex<R> alpha, std::complex<R> beta) {
    R re[NR][MR] = {}, im[NR][MR] = {};
    for (int64_t l = 0; l < kc; ++l) {
        for (int j = 0; j < NR; ++j)
            for (int i = 0; i < MR; ++i) {
                re[j][i] += ap[i] * bp[j] - ap[MR + i] * bp[NR + j];
                im[j][i] += ap[i] * bp[NR + j] + ap[MR + i] * bp[j];
            }
        ap += 2 * MR;
        bp += 2 * NR;
    }
    const bool read_c = beta != std::complex<R>(0);
    for (int j = 0; j < NR; ++j) {
        std::complex<R> *cj = c + j * ldc;
        for (int i = 0; i < MR; ++i) {
            // Written out rather than std::complex's *, which checks for infinities per value.
            R out_re = alpha.real() * re[j][i] - alpha.imag() * im[j][i];
            R out_im = alpha.real() * im[j][i] + alpha.imag() * re[j][i];
            if (read_c) {
                const R c_re = cj[i].real(), c_im = cj[i].imag();
                out_re += beta.real() * c_re - beta.imag() * c_im;
                out_im += beta.real() * c_im + beta.imag() * c_re;
            }
            cj[i] = std::complex<R>(out_re, out_im);
        }
    }
}

}  // namespace

void microkernel_generic_f32_8x4(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, float alpha,
                                 float beta) {
    multiply_tile<float, 8, 4>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_generic_f64_4x4(int64_t kc, const double *ap, const double *bp, double *c, int64_t ldc, double alpha,
                                 double beta) {
    multiply_tile<double, 4, 4>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_generic_c32_4m_4x4(int64_t kc, const float *ap, const float *bp, c32 *c, int64_t ldc, c32 alpha,
                                    c32 beta) {
    multiply_complex_tile<float, 4, 4>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_generic_c64_4m_2x4(int64_t kc, const double *ap, const double *bp, c64 *c, int64_t ldc, c64 alpha,
                                    c64 beta) {
    multiply_complex_tile<double, 2, 4>(kc, ap, bp, c, ldc, alpha, beta);
}

}  // namespace gemm::cpu_omp_detail
