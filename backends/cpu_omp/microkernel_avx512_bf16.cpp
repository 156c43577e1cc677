// microkernel_avx512_bf16.cpp: the AVX-512 f32 kernel rounding its tile into a bf16 C by
// AVX512-BF16's conversion (this file alone is compiled with -mavx512f -mavx512bf16
// -mavx512dq; the caller checks the CPU for all three first).
#include "microkernel_avx512.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// vcvtne2ps2bf16 rounds two vectors to nearest even in one instruction, and keeps a NaN's high
// half with the quiet bit set, as narrow_bf16_vector does with about ten integer operations a
// vector, on the ports the FMAs need (backends/cpu_omp/NOTES.md, "16-bit operands and C",
// has what it costs). But it reads an f32 subnormal as zero (whatever MXCSR says), where
// gemm::bfloat16 rounds it to a bf16 subnormal: a column holding one takes narrow_bf16_vector
// instead.
struct pair_by_avx512bf16 {
    static void store(bfloat16 *p, __m512 lo, __m512 hi) {
        constexpr int subnormal = 0x20;  // vfpclassps: denormal
        const __mmask16 any = _mm512_kor(_mm512_fpclass_ps_mask(lo, subnormal), _mm512_fpclass_ps_mask(hi, subnormal));
        if (__builtin_expect(any != 0, 0)) {
            avx512::store_pair(p, lo, hi);
            return;
        }
        _mm512_storeu_si512(p, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo)));
    }
};

}  // namespace

void microkernel_avx512bf16_f32_32x12_into_bf16(int64_t kc, const float *ap, const float *bp, bfloat16 *c, int64_t ldc,
                                                float alpha, float beta) {
    multiply_tile<zmm<float>, 2, 12, bfloat16, rounded_store<pair_by_avx512bf16>>(kc, ap, bp, c, ldc, alpha, beta);
}

}  // namespace gemm::cpu_omp_detail
