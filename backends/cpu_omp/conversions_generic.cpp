// conversions_generic.cpp: 16-bit conversions in portable C++, for CPUs without F16C or AVX2.
#include "conversions.hpp"

namespace gemm::cpu_omp_detail {
namespace {

template <class S> void widen_generic(const S *src, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = float(src[i]);
}

template <class S> void round_generic(const float *sums, float beta, S *c, int64_t n) {
    if (beta == 0.0f)
        for (int64_t i = 0; i < n; ++i) c[i] = S(sums[i]);
    else
        for (int64_t i = 0; i < n; ++i) {
            const float scaled = beta * float(c[i]);
            c[i] = S(sums[i] + scaled);
        }
}

}  // namespace

const conversion_kernels<half> conversions_generic_f16 = {widen_generic<half>, round_generic<half>,
                                                          round_each_column<half, round_generic<half>>};
const conversion_kernels<bfloat16> conversions_generic_bf16 = {widen_generic<bfloat16>, round_generic<bfloat16>,
                                                               round_each_column<bfloat16, round_generic<bfloat16>>};

}  // namespace gemm::cpu_omp_detail
