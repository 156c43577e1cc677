// conversions_avx512.hpp: f16 and bf16 vectors of 16 values widened to f32 and rounded from it
// with AVX-512F, for the files built with -mavx512f only: conversions_avx512.cpp and the
// kernels that round their tile straight into a 16-bit C (microkernel_avx512.hpp). In an
// anonymous namespace, so that each file keeps its own copies, built with its own flags.
#pragma once

#include <immintrin.h>

#include "gemm/gemm.hpp"

namespace gemm::cpu_omp_detail::avx512 {
namespace {

// Where an intrinsic has a zero-masked form it is used with every lane kept: GCC 12 warns of an
// uninitialized value inside the unmasked ones once inlined into a kernel.
constexpr __mmask16 every_lane = 0xffff;

inline __m512 widen_f16_vector(const half *p) {
    return _mm512_maskz_cvtph_ps(every_lane, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
}

// A bf16 value is the high half of the f32 with the same bits.
inline __m512 widen_bf16_vector(const bfloat16 *p) {
    const __m256i narrow = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
    const __m512i wide = _mm512_maskz_cvtepu16_epi32(every_lane, narrow);
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(every_lane, wide, 16));
}

inline __m512 widen_vector(const half *p) { return widen_f16_vector(p); }
inline __m512 widen_vector(const bfloat16 *p) { return widen_bf16_vector(p); }

inline __m256i narrow_f16_vector(__m512 v) {
    return _mm512_maskz_cvtps_ph(every_lane, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// Round to nearest even by adding 0x7fff plus the lowest kept bit, then keep the high half; a
// NaN keeps its high half with the quiet bit set instead (the carry could turn it into inf).
inline __m256i narrow_bf16_vector(__m512 v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i high = _mm512_maskz_srli_epi32(every_lane, bits, 16);
    const __m512i odd = _mm512_and_si512(high, _mm512_set1_epi32(1));
    const __m512i carried = _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
    const __m512i rounded = _mm512_maskz_srli_epi32(every_lane, carried, 16);
    const __m512i quiet = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512i result = _mm512_mask_blend_epi32(nan, rounded, quiet);
    return _mm512_maskz_cvtepi32_epi16(every_lane, result);
}

inline __m256i narrow_vector(__m512 v, half *) { return narrow_f16_vector(v); }
inline __m256i narrow_vector(__m512 v, bfloat16 *) { return narrow_bf16_vector(v); }

// sums + beta * c: the product, then the sum, each rounded as f32 arithmetic rounds (the
// current rounding mode), never fused into one FMA, so that every CPU and every path rounds a
// 16-bit C alike (tests/test_cpu_omp_conversions.cpp). The _round forms are builtins that the
// compiler does not contract, whatever -ffp-contract the including file is built with.
template <class S> __m512 add_scaled(__m512 sums, __m512 beta, const S *c) {
    const __m512 scaled = _mm512_maskz_mul_round_ps(every_lane, beta, widen_vector(c), _MM_FROUND_CUR_DIRECTION);
    return _mm512_maskz_add_round_ps(every_lane, sums, scaled, _MM_FROUND_CUR_DIRECTION);
}

// Two vectors rounded to S in one 64-byte store, so that a column of a 32-row tile of a 16-bit
// C is one store, as in the f32 kernel's C.
template <class S> void store_pair(S *p, __m512 lo, __m512 hi) {
    const __m512i low_half = _mm512_castsi256_si512(narrow_vector(lo, p));
    _mm512_storeu_si512(p, _mm512_maskz_inserti64x4(__mmask8(0xff), low_half, narrow_vector(hi, p), 1));
}

template <class S> void store_one(S *p, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), narrow_vector(v, p));
}

}  // namespace
}  // namespace gemm::cpu_omp_detail::avx512
