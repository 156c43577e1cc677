// conversions_avx512.cpp: 16-bit conversions 16 values at a time with AVX-512F (this file alone
// is compiled with -mavx512f; the caller checks the CPU first). The last n % 16 values go
// through gemm::half and gemm::bfloat16, which round the same way.
#include "conversions_avx512.hpp"

#include "conversions.hpp"

namespace gemm::cpu_omp_detail {
namespace {

using namespace avx512;

constexpr int width = 16;

template <class S> void widen(const S *src, float *dst, int64_t n) {
    int64_t i = 0;
    for (; i + width <= n; i += width) _mm512_storeu_ps(dst + i, widen_vector(src + i));
    for (; i < n; ++i) dst[i] = float(src[i]);
}

template <class S> void round_into(const float *sums, float beta, S *c, int64_t n) {
    int64_t i = 0;
    if (beta == 0.0f) {
        for (; i + 2 * width <= n; i += 2 * width)
            store_pair(c + i, _mm512_loadu_ps(sums + i), _mm512_loadu_ps(sums + i + width));
        for (; i + width <= n; i += width) store_one(c + i, _mm512_loadu_ps(sums + i));
        for (; i < n; ++i) c[i] = S(sums[i]);
        return;
    }
    const __m512 vb = _mm512_set1_ps(beta);
    auto with_beta = [&](int64_t at) { return add_scaled(_mm512_loadu_ps(sums + at), vb, c + at); };
    for (; i + 2 * width <= n; i += 2 * width) store_pair(c + i, with_beta(i), with_beta(i + width));
    for (; i + width <= n; i += width) store_one(c + i, with_beta(i));
    for (; i < n; ++i) {
        const float scaled = beta * float(c[i]);
        c[i] = S(sums[i] + scaled);
    }
}

}  // namespace

const conversion_kernels<half> conversions_avx512_f16 = {widen<half>, round_into<half>,
                                                         round_each_column<half, round_into<half>>};
const conversion_kernels<bfloat16> conversions_avx512_bf16 = {widen<bfloat16>, round_into<bfloat16>,
                                                              round_each_column<bfloat16, round_into<bfloat16>>};

}  // namespace gemm::cpu_omp_detail
