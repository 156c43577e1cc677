// microkernel_avx2.cpp: AVX2 + FMA kernels, 16x6 for f32 and 8x6 for f64 (this file alone is
// compiled with -mavx2 -mfma; the caller checks the CPU first).
#include <immintrin.h>

#include "microkernel.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// C is column-major, so a column of the C tile is MR contiguous values: two vectors of A
// are loaded per step of k and each of the NR values of B is broadcast against them.
// 2 x 6 = 12 accumulators, 2 A vectors and 1 broadcast fill 15 of the 16 ymm registers,
// and 12 independent FMAs per step cover the FMA latency of both pipes.
template <class T> struct ymm;

template <> struct ymm<float> {
    using type = __m256;
    static constexpr int width = 8;
    static type zero() { return _mm256_setzero_ps(); }
    static type set(float x) { return _mm256_set1_ps(x); }
    static type load(const float *p) { return _mm256_load_ps(p); }
    static type loadu(const float *p) { return _mm256_loadu_ps(p); }
    static void storeu(float *p, type v) { _mm256_storeu_ps(p, v); }
    static type broadcast(const float *p) { return _mm256_broadcast_ss(p); }
    static type fmadd(type a, type b, type c) { return _mm256_fmadd_ps(a, b, c); }
    static type mul(type a, type b) { return _mm256_mul_ps(a, b); }
};

template <> struct ymm<double> {
    using type = __m256d;
    static constexpr int width = 4;
    static type zero() { return _mm256_setzero_pd(); }
    static type set(double x) { return _mm256_set1_pd(x); }
    static type load(const double *p) { return _mm256_load_pd(p); }
    static type loadu(const double *p) { return _mm256_loadu_pd(p); }
    static void storeu(double *p, type v) { _mm256_storeu_pd(p, v); }
    static type broadcast(const double *p) { return _mm256_broadcast_sd(p); }
    static type fmadd(type a, type b, type c) { return _mm256_fmadd_pd(a, b, c); }
    static type mul(type a, type b) { return _mm256_mul_pd(a, b); }
};

// MV vectors of A (MR = MV * width) times NR broadcasts of B per step of k.
template <class T, int MV, int NR>
void multiply_tile(int64_t kc, const T *__restrict ap, const T *__restrict bp, T *__restrict c,
                   int64_t ldc, T alpha, T beta) {
    using V = ymm<T>;
    constexpr int W = V::width;
    constexpr int MR = MV * W;
    typename V::type acc[NR][MV];
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
        for (int i = 0; i < MV; ++i) acc[j][i] = V::zero();

    // The C tile is needed at the end; ask for it now so the stores do not wait on memory.
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        _mm_prefetch(reinterpret_cast<const char *>(c + j * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char *>(c + j * ldc + MR - 1), _MM_HINT_T0);
    }

#pragma GCC unroll 4
    for (int64_t l = 0; l < kc; ++l) {
        typename V::type a[MV];
#pragma GCC unroll 4
        for (int i = 0; i < MV; ++i) a[i] = V::load(ap + i * W);
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) {
            typename V::type b = V::broadcast(bp + j);
#pragma GCC unroll 4
            for (int i = 0; i < MV; ++i) acc[j][i] = V::fmadd(a[i], b, acc[j][i]);
        }
        ap += MR;
        bp += NR;
    }

    const typename V::type va = V::set(alpha);
    if (beta == T(0)) {
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
            for (int i = 0; i < MV; ++i) V::storeu(c + j * ldc + i * W, V::mul(acc[j][i], va));
    } else {
        const typename V::type vb = V::set(beta);
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
            for (int i = 0; i < MV; ++i) {
                T *cij = c + j * ldc + i * W;
                V::storeu(cij, V::fmadd(V::loadu(cij), vb, V::mul(acc[j][i], va)));
            }
    }
}

}  // namespace

void microkernel_avx2_f32_16x6(int64_t kc, const float *ap, const float *bp, float *c,
                               int64_t ldc, float alpha, float beta) {
    multiply_tile<float, 2, 6>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx2_f64_8x6(int64_t kc, const double *ap, const double *bp, double *c,
                              int64_t ldc, double alpha, double beta) {
    multiply_tile<double, 2, 6>(kc, ap, bp, c, ldc, alpha, beta);
}

}  // namespace gemm::cpu_omp_detail
