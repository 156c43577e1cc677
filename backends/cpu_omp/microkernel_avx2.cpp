// microkernel_avx2.cpp: AVX2 + FMA kernels, 16x6 for f32 and 8x6 for f64, and the complex ones
// on split planes (this file alone is compiled with -mavx2 -mfma; the caller checks the CPU
// first).
#include <immintrin.h>

#include "microkernel.hpp"
#include "microkernel_complex.hpp"
#include "microkernel_dot.hpp"
#include "microkernel_small.hpp"
#include "microkernel_tile.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// The packed kernels' tile (microkernel_tile.hpp) is 2 x 6 vectors here: 12 accumulators, 2 A
// vectors and 1 broadcast fill 15 of the 16 ymm registers, and 12 independent FMAs per step
// cover the FMA latency of both pipes.
template <class T> struct ymm;

template <> struct ymm<float> {
    using real = float;
    using type = __m256;
    static constexpr int width = 8;
    static type zero() { return _mm256_setzero_ps(); }
    static type set(float x) { return _mm256_set1_ps(x); }
    static type load(const float *p) { return _mm256_load_ps(p); }
    static type loadu(const float *p) { return _mm256_loadu_ps(p); }
    static void storeu(float *p, type v) { _mm256_storeu_ps(p, v); }
    static type broadcast(const float *p) { return _mm256_broadcast_ss(p); }
    // bf16 operands widened on loading (microkernel_dot.hpp), exactly: a bf16 value is the
    // high half of the f32 with the same bits. (f16 would need F16C, which this file's
    // kernels do not require.)
    static type loadu(const bfloat16 *p) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    static type broadcast(const bfloat16 *p) { return _mm256_set1_ps(float(*p)); }
    static type fmadd(type a, type b, type c) { return _mm256_fmadd_ps(a, b, c); }
    static type fnmadd(type a, type b, type c) { return _mm256_fnmadd_ps(a, b, c); }
    static type fmsub(type a, type b, type c) { return _mm256_fmsub_ps(a, b, c); }
    static type mul(type a, type b) { return _mm256_mul_ps(a, b); }
    using mask = __m256i;
    using index = __m256i;
    static mask first(int count) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static type load_first(const float *p, mask m) { return _mm256_maskload_ps(p, m); }
    static void store_first(float *p, mask m, type v) { _mm256_maskstore_ps(p, m, v); }
    static index strides(int32_t s) {
        return _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(s));
    }
    static type gather(const float *p, index offsets, mask m) {
        return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, offsets, _mm256_castsi256_ps(m), 4);
    }
    static float sum(type v) {
        __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        x = _mm_add_ps(x, _mm_movehl_ps(x, x));
        return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
    }
    // lo, hi: complex values 0-3 and 4-7 (real, imaginary, ...); re, im: their planes. The
    // lane swaps first put values 0, 1, 4, 5 in one vector and 2, 3, 6, 7 in the other, so
    // that the in-lane shuffles (and unpacks, on the way back) keep the order.
    static void deinterleave(type lo, type hi, type &re, type &im) {
        const type even = _mm256_permute2f128_ps(lo, hi, 0x20), odd = _mm256_permute2f128_ps(lo, hi, 0x31);
        re = _mm256_shuffle_ps(even, odd, 0x88);
        im = _mm256_shuffle_ps(even, odd, 0xDD);
    }
    static void interleave(type re, type im, type &lo, type &hi) {
        const type first = _mm256_unpacklo_ps(re, im), second = _mm256_unpackhi_ps(re, im);
        lo = _mm256_permute2f128_ps(first, second, 0x20);
        hi = _mm256_permute2f128_ps(first, second, 0x31);
    }
};

template <> struct ymm<double> {
    using real = double;
    using type = __m256d;
    static constexpr int width = 4;
    static type zero() { return _mm256_setzero_pd(); }
    static type set(double x) { return _mm256_set1_pd(x); }
    static type load(const double *p) { return _mm256_load_pd(p); }
    static type loadu(const double *p) { return _mm256_loadu_pd(p); }
    static void storeu(double *p, type v) { _mm256_storeu_pd(p, v); }
    static type broadcast(const double *p) { return _mm256_broadcast_sd(p); }
    static type fmadd(type a, type b, type c) { return _mm256_fmadd_pd(a, b, c); }
    static type fnmadd(type a, type b, type c) { return _mm256_fnmadd_pd(a, b, c); }
    static type fmsub(type a, type b, type c) { return _mm256_fmsub_pd(a, b, c); }
    static type mul(type a, type b) { return _mm256_mul_pd(a, b); }
    using mask = __m256i;
    using index = __m128i;
    static mask first(int count) {
        return _mm256_cmpgt_epi64(_mm256_set1_epi64x(count), _mm256_setr_epi64x(0, 1, 2, 3));
    }
    static type load_first(const double *p, mask m) { return _mm256_maskload_pd(p, m); }
    static void store_first(double *p, mask m, type v) { _mm256_maskstore_pd(p, m, v); }
    static index strides(int32_t s) { return _mm_mullo_epi32(_mm_setr_epi32(0, 1, 2, 3), _mm_set1_epi32(s)); }
    static type gather(const double *p, index offsets, mask m) {
        return _mm256_mask_i32gather_pd(_mm256_setzero_pd(), p, offsets, _mm256_castsi256_pd(m), 8);
    }
    static double sum(type v) {
        const __m128d x = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
        return _mm_cvtsd_f64(_mm_add_sd(x, _mm_unpackhi_pd(x, x)));
    }
    // lo, hi: complex values 0-1 and 2-3; re, im: their planes (as for float).
    static void deinterleave(type lo, type hi, type &re, type &im) {
        const type even = _mm256_permute2f128_pd(lo, hi, 0x20), odd = _mm256_permute2f128_pd(lo, hi, 0x31);
        re = _mm256_unpacklo_pd(even, odd);
        im = _mm256_unpackhi_pd(even, odd);
    }
    static void interleave(type re, type im, type &lo, type &hi) {
        const type first = _mm256_unpacklo_pd(re, im), second = _mm256_unpackhi_pd(re, im);
        lo = _mm256_permute2f128_pd(first, second, 0x20);
        hi = _mm256_permute2f128_pd(first, second, 0x31);
    }
};

}  // namespace

void microkernel_avx2_f32_16x6(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, float alpha,
                               float beta) {
    multiply_tile<ymm<float>, 2, 6>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx2_f64_8x6(int64_t kc, const double *ap, const double *bp, double *c, int64_t ldc, double alpha,
                              double beta) {
    multiply_tile<ymm<double>, 2, 6>(kc, ap, bp, c, ldc, alpha, beta);
}

// Dot products in 3 x 3 tiles (9 accumulators and 4 operands in the 16 registers); small
// products in the packed kernels' 16 x 6 (f32) and 8 x 6 (f64) tiles. bf16 operands take the
// f32 dot products and sums of columns, widened as they are loaded.
const direct_kernels<float> direct_avx2_f32 = {
    dot_block<ymm<float>, 3, 3>,
    axpy_block<ymm<float>>,
    small_block<ymm<float>, 6>,
    {},
    {dot_block<ymm<float>, 3, 3, bfloat16>, axpy_block<ymm<float>, bfloat16>}};
const direct_kernels<double> direct_avx2_f64 = {
    dot_block<ymm<double>, 3, 3>, axpy_block<ymm<double>>, small_block<ymm<double>, 6>, {}, {}};

// Complex sizes are in complex values: one ymm of each plane of A per step of k and 6 values of
// B, 12 accumulators and 4 operands in the 16 registers.
void microkernel_avx2_c32_4m_8x6(int64_t kc, const float *ap, const float *bp, c32 *c, int64_t ldc, c32 alpha,
                                 c32 beta) {
    multiply_complex_tile<ymm<float>, 1, 6>(kc, ap, bp, c, ldc, alpha, beta);
}

void microkernel_avx2_c64_4m_4x6(int64_t kc, const double *ap, const double *bp, c64 *c, int64_t ldc, c64 alpha,
                                 c64 beta) {
    multiply_complex_tile<ymm<double>, 1, 6>(kc, ap, bp, c, ldc, alpha, beta);
}

}  // namespace gemm::cpu_omp_detail
