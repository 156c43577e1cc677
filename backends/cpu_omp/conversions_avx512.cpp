// conversions_avx512.cpp: 16-bit conversions 16 values at a time with AVX-512F (this file alone
// is compiled with -mavx512f; the caller checks the CPU first). The last n % 16 values go
// through gemm::half and gemm::bfloat16, which round the same way.
#include <immintrin.h>

#include "conversions.hpp"

namespace gemm::cpu_omp_detail {
namespace {

constexpr int width = 16;

__m512 widen_f16_vector(const half *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
}

// A bf16 value is the high half of the f32 with the same bits.
__m512 widen_bf16_vector(const bfloat16 *p) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}

__m256i narrow_f16_vector(__m512 v) { return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

// Round to nearest even by adding 0x7fff plus the lowest kept bit, then keep the high half; a
// NaN keeps its high half with the quiet bit set instead (the carry could turn it into inf).
__m256i narrow_bf16_vector(__m512 v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
    const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512i result = _mm512_mask_blend_epi32(nan, rounded, quiet);
    return _mm512_cvtepi32_epi16(result);
}

template <class S, __m512 (*load)(const S *)> void widen(const S *src, float *dst, int64_t n) {
    int64_t i = 0;
    for (; i + width <= n; i += width) _mm512_storeu_ps(dst + i, load(src + i));
    for (; i < n; ++i) dst[i] = float(src[i]);
}

// Two vectors of 16-bit values in one 64-byte store, so that a column of a 32-row tile of a
// 16-bit C (blocked_gemm.hpp: multiply_block) is one store, as in the f32 kernel's C.
template <class S, __m256i (*narrow)(__m512)> void store_pair(S *p, __m512 lo, __m512 hi) {
    const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(narrow(lo)), narrow(hi), 1);
    _mm512_storeu_si512(p, both);
}

template <class S, __m512 (*load)(const S *), __m256i (*narrow)(__m512)>
void round_into(const float *sums, float beta, S *c, int64_t n) {
    int64_t i = 0;
    if (beta == 0.0f) {
        for (; i + 2 * width <= n; i += 2 * width)
            store_pair<S, narrow>(c + i, _mm512_loadu_ps(sums + i), _mm512_loadu_ps(sums + i + width));
        for (; i + width <= n; i += width)
            _mm256_storeu_si256(reinterpret_cast<__m256i *>(c + i), narrow(_mm512_loadu_ps(sums + i)));
        for (; i < n; ++i) c[i] = S(sums[i]);
        return;
    }
    const __m512 vb = _mm512_set1_ps(beta);
    auto with_beta = [&](int64_t at) { return _mm512_add_ps(_mm512_loadu_ps(sums + at), _mm512_mul_ps(vb, load(c + at))); };
    for (; i + 2 * width <= n; i += 2 * width) store_pair<S, narrow>(c + i, with_beta(i), with_beta(i + width));
    for (; i + width <= n; i += width) _mm256_storeu_si256(reinterpret_cast<__m256i *>(c + i), narrow(with_beta(i)));
    for (; i < n; ++i) {
        const float scaled = beta * float(c[i]);
        c[i] = S(sums[i] + scaled);
    }
}

}  // namespace

const conversion_kernels<half> conversions_avx512_f16 = {
    widen<half, widen_f16_vector>, round_into<half, widen_f16_vector, narrow_f16_vector>,
    round_each_column<half, round_into<half, widen_f16_vector, narrow_f16_vector>>};
const conversion_kernels<bfloat16> conversions_avx512_bf16 = {
    widen<bfloat16, widen_bf16_vector>, round_into<bfloat16, widen_bf16_vector, narrow_bf16_vector>,
    round_each_column<bfloat16, round_into<bfloat16, widen_bf16_vector, narrow_bf16_vector>>};

}  // namespace gemm::cpu_omp_detail
