// conversions_avx2.cpp: 16-bit conversions 8 values at a time with AVX2 and F16C (this file
// alone is compiled with -mavx2 -mf16c; the caller checks the CPU first). The last n % 8
// values go through gemm::half and gemm::bfloat16, which round the same way.
#include <immintrin.h>

#include "conversions.hpp"

namespace gemm::cpu_omp_detail {
namespace {

constexpr int width = 8;

__m256 widen_f16_vector(const half *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}

// A bf16 value is the high half of the f32 with the same bits.
__m256 widen_bf16_vector(const bfloat16 *p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

void store_f16_vector(half *p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// Round to nearest even by adding 0x7fff plus the lowest kept bit, then keep the high half; a
// NaN keeps its high half with the quiet bit set instead (the carry could turn it into inf).
void store_bf16_vector(bfloat16 *p, __m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i result = _mm256_blendv_epi8(rounded, quiet, nan);
    // Every lane is below 2^16, so the unsigned saturation keeps it; packing works within each
    // 128-bit half, so the two halves' first quadwords are brought together.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(result, result), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), _mm256_castsi256_si128(packed));
}

template <class S, __m256 (*load)(const S *)> void widen(const S *src, float *dst, int64_t n) {
    int64_t i = 0;
    for (; i + width <= n; i += width) _mm256_storeu_ps(dst + i, load(src + i));
    for (; i < n; ++i) dst[i] = float(src[i]);
}

template <class S, __m256 (*load)(const S *), void (*store)(S *, __m256)>
void round_into(const float *sums, float beta, S *c, int64_t n) {
    int64_t i = 0;
    if (beta == 0.0f) {
        for (; i + width <= n; i += width) store(c + i, _mm256_loadu_ps(sums + i));
        for (; i < n; ++i) c[i] = S(sums[i]);
        return;
    }
    const __m256 vb = _mm256_set1_ps(beta);
    for (; i + width <= n; i += width)
        store(c + i, _mm256_add_ps(_mm256_loadu_ps(sums + i), _mm256_mul_ps(vb, load(c + i))));
    for (; i < n; ++i) {
        const float scaled = beta * float(c[i]);
        c[i] = S(sums[i] + scaled);
    }
}

}  // namespace

const conversion_kernels<half> conversions_avx2_f16 = {
    widen<half, widen_f16_vector>, round_into<half, widen_f16_vector, store_f16_vector>,
    round_each_column<half, round_into<half, widen_f16_vector, store_f16_vector>>};
const conversion_kernels<bfloat16> conversions_avx2_bf16 = {
    widen<bfloat16, widen_bf16_vector>, round_into<bfloat16, widen_bf16_vector, store_bf16_vector>,
    round_each_column<bfloat16, round_into<bfloat16, widen_bf16_vector, store_bf16_vector>>};

}  // namespace gemm::cpu_omp_detail
