// microkernel_avx512.hpp: the AVX-512 vector traits (zmm) and the rounding of the packed
// kernels' tile into a 16-bit C (round_tile, rounded_store), for the files built with -mavx512f only:
// microkernel_avx512.cpp and microkernel_avx512_bf16.cpp, which adds AVX512-BF16's rounding.
// Everything here is in an anonymous namespace, so that each file keeps its own copies, built
// with its own flags: a shared inline copy built with AVX512-BF16 could otherwise be linked
// into the AVX-512F paths.
#pragma once

#include <immintrin.h>

#include "conversions_avx512.hpp"
#include "microkernel.hpp"
#include "microkernel_tile.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// The packed kernels' tile (microkernel_tile.hpp) is 2 x 12 vectors here, twice AVX2's width
// and twice its registers: two zmm vectors of A per step of k, twelve broadcasts of B,
// 2 x 12 = 24 accumulators, 27 of the 32 zmm registers in use.
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
        re = _mm512_permutex2var_ps(lo, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
                                    hi);
        im = _mm512_permutex2var_ps(lo, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31),
                                    hi);
    }
    static void interleave(type re, type im, type &lo, type &hi) {
        lo = _mm512_permutex2var_ps(re, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), im);
        hi = _mm512_permutex2var_ps(re, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31),
                                    im);
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

// How a rounding kernel stores a column's two vectors into a 16-bit C: by AVX-512F's integer
// rounding (conversions_avx512.hpp) here; microkernel_avx512_bf16.cpp has AVX512-BF16's.
struct pair_by_avx512f {
    template <class S> static void store(S *p, __m512 lo, __m512 hi) { avx512::store_pair(p, lo, hi); }
};

// The f32 tile alpha * acc, plus beta * C where beta != 0, rounded once into a 16-bit C, a
// column (two vectors, one 64-byte store by Pair) at a time: what rounding the tile the f32
// kernel leaves would give (conversions_avx512.cpp's round_into, the same vector functions),
// without the tile's trip through memory and a call a column, which cost a 16-bit C much of
// f32's speed where k is short (backends/cpu_omp/NOTES.md, "16-bit operands and C").
template <int MV, int NR, class Pair, class S>
void round_tile(const __m512 (&acc)[NR][MV], S *__restrict c, int64_t ldc, float alpha, float beta) {
    static_assert(MV % 2 == 0, "a column is stored two vectors at a time");
    constexpr int W = 16;
    const __m512 va = _mm512_set1_ps(alpha);
    if (beta == 0.0f) {
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
            for (int i = 0; i < MV; i += 2)
                Pair::store(c + j * ldc + i * W, _mm512_mul_ps(acc[j][i], va), _mm512_mul_ps(acc[j][i + 1], va));
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
            Pair::store(cij, lo, hi);
        }
}

// multiply_tile's Store for a 16-bit C: round_tile, its columns stored by Pair.
template <class Pair> struct rounded_store {
    template <class V, int MV, int NR, class S>
    static void store(const __m512 (&acc)[NR][MV], S *__restrict c, int64_t ldc, float alpha, float beta) {
        round_tile<MV, NR, Pair>(acc, c, ldc, alpha, beta);
    }
};

}  // namespace
}  // namespace gemm::cpu_omp_detail
