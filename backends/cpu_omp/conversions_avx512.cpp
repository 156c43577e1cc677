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

void store_f16_vector(half *p, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// Round to nearest even by adding 0x7fff plus the lowest kept bit, then keep the high half; a
// NaN keeps its high half with the quiet bit set instead (the carry could turn it into inf).
void store_bf16_vector(bfloat16 *p, __m512 v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
    const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512i result = _mm512_mask_blend_epi32(nan, rounded, quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), _mm512_cvtepi32_epi16(result));
}

template <class S, __m512 (*load)(const S *)> void widen(const S *src, float *dst, int64_t n) {
    int64_t i = 0;
    for (; i + width <= n; i += width) _mm512_storeu_ps(dst + i, load(src + i));
    for (; i < n; ++i) dst[i] = float(src[i]);
}

template <class S, __m512 (*load)(const S *), void (*store)(S *, __m512)>
void round_into(const float *sums, float beta, S *c, int64_t n) {
    int64_t i = 0;
    if (beta == 0.0f) {
        for (; i + width <= n; i += width) store(c + i, _mm512_loadu_ps(sums + i));
        for (; i < n; ++i) c[i] = S(sums[i]);
        return;
    }
    const __m512 vb = _mm512_set1_ps(beta);
    for (; i + width <= n; i += width)
        store(c + i, _mm512_add_ps(_mm512_loadu_ps(sums + i), _mm512_mul_ps(vb, load(c + i))));
    for (; i < n; ++i) {
        const float scaled = beta * float(c[i]);
        c[i] = S(sums[i] + scaled);
    }
}

}  // namespace

const conversion_kernels<half> conversions_avx512_f16 = {
    widen<half, widen_f16_vector>, round_into<half, widen_f16_vector, store_f16_vector>};
const conversion_kernels<bfloat16> conversions_avx512_bf16 = {
    widen<bfloat16, widen_bf16_vector>, round_into<bfloat16, widen_bf16_vector, store_bf16_vector>};

}  // namespace gemm::cpu_omp_detail
