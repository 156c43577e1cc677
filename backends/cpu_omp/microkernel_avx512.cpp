// microkernel_avx512.cpp: AVX-512F kernels, 32x12 for f32 and 16x12 for f64, and the complex
// ones on split planes (this file alone is compiled with -mavx512f; the caller checks the CPU
// first).
#include <immintrin.h>

#include <type_traits>

#include "conversions_avx512.hpp"
#include "microkernel.hpp"
#include "microkernel_complex.hpp"
#include "microkernel_dot.hpp"
#include "microkernel_small.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// Same scheme as the AVX2 kernels with twice the vector width and twice the registers:
// two zmm vectors of A per step of k, twelve broadcasts of B, 2 x 12 = 24 accumulators,
// 27 of the 32 zmm registers in use.
template <class T> struct zmm;

template <> struct zmm<float> {
    using real = float;
    using type = __m512;
    static constexpr int width = 16;
    static type zero() { return _mm512_setzero_ps(); }
    static type set(float x) { return _mm512_set1_ps(x); }
    static type load(const float *p) { return _mm512_load_ps(p); }
    static type loadu(const float *p) { return _mm512_loadu_ps(p); }
    static void storeu(float *p, type v) { _mm512_storeu_ps(p, v); }
    static type broadcast(const float *p) { return _mm512_set1_ps(*p); }
    // 16-bit operands widened on loading (microkernel_dot.hpp); exact.
    static type loadu(const half *p) { return avx512::widen_vector(p); }
    static type loadu(const bfloat16 *p) { return avx512::widen_vector(p); }
    static type broadcast(const half *p) { return _mm512_set1_ps(float(*p)); }
    static type broadcast(const bfloat16 *p) { return _mm512_set1_ps(float(*p)); }
    static type fmadd(type a, type b, type c) { return _mm512_fmadd_ps(a, b, c); }
    static type fnmadd(type a, type b, type c) { return _mm512_fnmadd_ps(a, b, c); }
    static type fmsub(type a, type b, type c) { return _mm512_fmsub_ps(a, b, c); }
    static type mul(type a, type b) { return _mm512_mul_ps(a, b); }
    using mask = __mmask16;
    using index = __m512i;
    static mask first(int count) { return mask((1u << count) - 1); }
    static type load_first(const float *p, mask m) { return _mm512_maskz_loadu_ps(m, p); }
    static void store_first(float *p, mask m, type v) { _mm512_mask_storeu_ps(p, m, v); }
    static index strides(int32_t s) {
        return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                  _mm512_set1_epi32(s));
    }
    static type gather(const float *p, index offsets, mask m) {
        return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, offsets, p, 4);
    }
    // The lanes added by permutex2var: GCC 12 warns of an uninitialized value inside
    // _mm512_reduce_add_ps, the shuffles and the casts to 128 bits.
    static float sum(type v) {
        const __m512i halves = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
        const __m512i quarters = _mm512_setr_epi32(4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3);
        const __m512i pairs = _mm512_setr_epi32(2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1);
        const __m512i ones = _mm512_setr_epi32(1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
        for (const __m512i &swap : {halves, quarters, pairs, ones})
            v = _mm512_add_ps(v, _mm512_permutex2var_ps(v, swap, v));
        return _mm512_cvtss_f32(v);
    }
    // lo, hi: complex values 0-7 and 8-15 (real, imaginary, ...); re, im: their planes.
    static void deinterleave(type lo, type hi, type &re, type &im) {
        re = _mm512_permutex2var_ps(lo, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), hi);
        im = _mm512_permutex2var_ps(lo, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), hi);
    }
    static void interleave(type re, type im, type &lo, type &hi) {
        lo = _mm512_permutex2var_ps(re, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), im);
        hi = _mm512_permutex2var_ps(re, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), im);
    }
};

template <> struct zmm<double> {
    using real = double;
    using type = __m512d;
    static constexpr int width = 8;
    static type zero() { return _mm512_setzero_pd(); }
    static type set(double x) { return _mm512_set1_pd(x); }
    static type load(const double *p) { return _mm512_load_pd(p); }
    static type loadu(const double *p) { return _mm512_loadu_pd(p); }
    static void storeu(double *p, type v) { _mm512_storeu_pd(p, v); }
    static type broadcast(const double *p) { return _mm512_set1_pd(*p); }
    static type fmadd(type a, type b, type c) { return _mm512_fmadd_pd(a, b, c); }
    static type fnmadd(type a, type b, type c) { return _mm512_fnmadd_pd(a, b, c); }
    static type fmsub(type a, type b, type c) { return _mm512_fmsub_pd(a, b, c); }
    static type mul(type a, type b) { return _mm512_mul_pd(a, b); }
    using mask = __mmask8;
    using index = __m256i;
    static mask first(int count) { return mask((1u << count) - 1); }
    static type load_first(const double *p, mask m) { return _mm512_maskz_loadu_pd(m, p); }
    static void store_first(double *p, mask m, type v) { _mm512_mask_storeu_pd(p, m, v); }
    static index strides(int32_t s) {
        return _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(s));
    }
    static type gather(const double *p, index offsets, mask m) {
        return _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, offsets, p, 8);
    }
    static double sum(type v) {
        const __m512i halves = _mm512_setr_epi64(4, 5, 6, 7, 0, 1, 2, 3);
        const __m512i pairs = _mm512_setr_epi64(2, 3, 0, 1, 2, 3, 0, 1);
        const __m512i ones = _mm512_setr_epi64(1, 0, 1, 0, 1, 0, 1, 0);
        for (const __m512i &swap : {halves, pairs, ones}) v = _mm512_add_pd(v, _mm512_permutex2var_pd(v, swap, v));
        return _mm512_cvtsd_f64(v);
    }
    // lo, hi: complex values 0-3 and 4-7 (real, imaginary, ...); re, im: their planes.
    static void deinterleave(type lo, type hi, type &re, type &im) {
        re = _mm512_permutex2var_pd(lo, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), hi);
        im = _mm512_permutex2var_pd(lo, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), hi);
    }
    static void interleave(type re, type im, type &lo, type &hi) {
        lo = _mm512_permutex2var_pd(re, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), im);
        hi = _mm512_permutex2var_pd(re, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), im);
    }
};

// The f32 tile alpha * acc, plus beta * C where beta != 0, rounded once into a 16-bit C, a
// column (two vectors, one 64-byte store) at a time: what rounding the tile the f32 kernel
// leaves would give (conversions_avx512.cpp's round_into, the same vector functions), without
// the tile's trip through memory and a call a column. At 4096x4096x16 that trip and the calls
// took a 16-bit C to 0.8 of f32's speed (docs/PERFORMANCE.md).
template <int MV, int NR, class S>
void round_tile(const __m512 (&acc)[NR][MV], S *__restrict c, int64_t ldc, float alpha, float beta) {
    static_assert(MV % 2 == 0, "a column is stored two vectors at a time");
    constexpr int W = 16;
    const __m512 va = _mm512_set1_ps(alpha);
    if (beta == 0.0f) {
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
            for (int i = 0; i < MV; i += 2)
                avx512::store_pair(c + j * ldc + i * W, _mm512_mul_ps(acc[j][i], va), _mm512_mul_ps(acc[j][i + 1], va));
        return;
    }
    const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
        for (int i = 0; i < MV; i += 2) {
            S *cij = c + j * ldc + i * W;
            const __m512 lo = avx512::add_scaled(_mm512_mul_ps(acc[j][i], va), vb, cij);
            const __m512 hi = avx512::add_scaled(_mm512_mul_ps(acc[j][i + 1], va), vb, cij + W);
            avx512::store_pair(cij, lo, hi);
        }
}

// C stored as T, or for T = float a 16-bit type rounded from the tile (round_tile).
template <class T, int MV, int NR, class C = T>
void multiply_tile(int64_t kc, const T *__restrict ap, const T *__restrict bp, C *__restrict c,
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

    if constexpr (!std::is_same_v<C, T>) {
        round_tile<MV, NR>(acc, c, ldc, alpha, beta);
    } else {
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
}

}  // namespace

void microkernel_avx512_f32_32x12(int64_t kc, const float *ap, const float *bp, float *c,
                                  int64_t ldc, float alpha, float beta) {
    multiply_tile<float, 2, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_f32_32x12_into_f16(int64_t kc, const float *ap, const float *bp, half *c,
                                           int64_t ldc, float alpha, float beta) {
    multiply_tile<float, 2, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_f32_32x12_into_bf16(int64_t kc, const float *ap, const float *bp, bfloat16 *c,
                                            int64_t ldc, float alpha, float beta) {
    multiply_tile<float, 2, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_f64_16x12(int64_t kc, const double *ap, const double *bp, double *c,
                                  int64_t ldc, double alpha, double beta) {
    multiply_tile<double, 2, 12>(kc, ap, bp, c, ldc, alpha, beta);
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
const direct_kernels<double> direct_avx512_f64 = {dot_block<zmm<double>, 4, 4>, axpy_block<zmm<double>>,
                                                 small_block<zmm<double>, 12>, {}, {}};

// Complex sizes are in complex values: c32 16x12 is one zmm of each plane of A per step of k
// and 12 values of B, 24 accumulators and 4 operands in 28 of the 32 registers.
void microkernel_avx512_c32_4m_16x12(int64_t kc, const float *ap, const float *bp, c32 *c,
                                     int64_t ldc, c32 alpha, c32 beta) {
    multiply_complex_tile<zmm<float>, 1, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_c32_4m_32x6(int64_t kc, const float *ap, const float *bp, c32 *c,
                                    int64_t ldc, c32 alpha, c32 beta) {
    multiply_complex_tile<zmm<float>, 2, 6>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_c64_4m_8x12(int64_t kc, const double *ap, const double *bp, c64 *c,
                                    int64_t ldc, c64 alpha, c64 beta) {
    multiply_complex_tile<zmm<double>, 1, 12>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx512_c64_4m_16x6(int64_t kc, const double *ap, const double *bp, c64 *c,
                                    int64_t ldc, c64 alpha, c64 beta) {
    multiply_complex_tile<zmm<double>, 2, 6>(kc, ap, bp, c, ldc, alpha, beta);
}

}  // namespace gemm::cpu_omp_detail
