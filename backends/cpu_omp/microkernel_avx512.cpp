// microkernel_avx512.cpp: AVX-512F kernels, 32x12 for f32 and 16x12 for f64 (this file alone
// is compiled with -mavx512f; the caller checks the CPU first).
#include <immintrin.h>

#include "microkernel.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// Same scheme as the AVX2 kernels with twice the vector width and twice the registers:
// two zmm vectors of A per step of k, twelve broadcasts of B, 2 x 12 = 24 accumulators,
// 27 of the 32 zmm registers in use.
template <class T> struct zmm;

template <> struct zmm<float> {
    using type = __m512;
    static constexpr int width = 16;
    static type zero() { return _mm512_setzero_ps(); }
    static type set(float x) { return _mm512_set1_ps(x); }
    static type load(const float *p) { return _mm512_load_ps(p); }
    static type loadu(const float *p) { return _mm512_loadu_ps(p); }
    static void storeu(float *p, type v) { _mm512_storeu_ps(p, v); }
    static type broadcast(const float *p) { return _mm512_set1_ps(*p); }
    static type fmadd(type a, type b, type c) { return _mm512_fmadd_ps(a, b, c); }
    static type mul(type a, type b) { return _mm512_mul_ps(a, b); }
};

template <> struct zmm<double> {
    using type = __m512d;
    static constexpr int width = 8;
    static type zero() { return _mm512_setzero_pd(); }
    static type set(double x) { return _mm512_set1_pd(x); }
    static type load(const double *p) { return _mm512_load_pd(p); }
    static type loadu(const double *p) { return _mm512_loadu_pd(p); }
    static void storeu(double *p, type v) { _mm512_storeu_pd(p, v); }
    static type broadcast(const double *p) { return _mm512_set1_pd(*p); }
    static type fmadd(type a, type b, type c) { return _mm512_fmadd_pd(a, b, c); }
    static type mul(type a, type b) { return _mm512_mul_pd(a, b); }
};

template <class T, int MV, int NR>
void multiply_tile(int64_t kc, const T *__restrict ap, const T *__restrict bp, T *__restrict c,
                   int64_t ldc, T alpha, T beta) {
    using V = zmm<T>;
    constexpr int W = V::width;
    constexpr int MR = MV * W;
    typename V::type acc[NR][MV];
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
        for (int i = 0; i < MV; ++i) acc[j][i] = V::zero();

#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        _mm_prefetch(reinterpret_cast<const char *>(c + j * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char *>(c + j * ldc + MR - 1), _MM_HINT_T0);
    }

#pragma GCC unroll 2
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

void microkernel_avx512_f32_32x12(int64_t kc, const float *ap, const float *bp, float *c,
                                  int64_t ldc, float alpha, float beta) {
    multiply_tile<float, 2, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_f64_16x12(int64_t kc, const double *ap, const double *bp, double *c,
                                  int64_t ldc, double alpha, double beta) {
    multiply_tile<double, 2, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

}  // namespace gemm::cpu_omp_detail
