// conversions.hpp: widening 16-bit operands to f32 and rounding f32 sums into a 16-bit C, a run
// of contiguous values at a time, one set of functions per instruction set.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gemm/gemm.hpp"

namespace gemm::cpu_omp_detail {

// dst[0:n] = src[0:n] as f32 (exact: every f16 and bf16 value is an f32 value).
template <class S> using widen_fn = void (*)(const S *src, float *dst, int64_t n);

// c[0:n] = sums[0:n] + beta * c[0:n], computed in f32 (the product, then the sum) and rounded
// once to nearest even; beta == 0 writes c without reading it, so NaN in c cannot leak.
template <class S> using round_fn = void (*)(const float *sums, float beta, S *c, int64_t n);

// round_fn on each of `cols` columns of `rows` values: sums' column j at sums + j * lds, C's at
// c + j * ldc. One call for a microkernel's tile, where a call a column cost as much as the
// tile's product at k = 16 (rounded_from_stack in blocked_gemm.hpp, for the kernels that do
// not round their tile themselves).
template <class S>
using round_block_fn = void (*)(const float *sums, int64_t lds, float beta, S *c, int64_t ldc, int64_t rows,
                                int64_t cols);

// The round_block_fn of a round_fn `column`: column on each column of the block. Each
// conversions_*.cpp passes its own column function, whose internal linkage keeps every
// instantiation in its file (built for its instruction set).
template <class S, void (*column)(const float *, float, S *, int64_t)>
void round_each_column(const float *sums, int64_t lds, float beta, S *c, int64_t ldc, int64_t rows, int64_t cols) {
    for (int64_t j = 0; j < cols; ++j) column(sums + j * lds, beta, c + j * ldc, rows);
}

template <class S> struct conversion_kernels {
    widen_fn<S> widen;
    round_fn<S> round;
    round_block_fn<S> round_block;
};

// Portable C++ through gemm::half and gemm::bfloat16 (conversions_generic.cpp).
extern const conversion_kernels<half> conversions_generic_f16;
extern const conversion_kernels<bfloat16> conversions_generic_bf16;
// AVX2 with F16C (conversions_avx2.cpp); call only when the CPU has both.
extern const conversion_kernels<half> conversions_avx2_f16;
extern const conversion_kernels<bfloat16> conversions_avx2_bf16;
// AVX-512F (conversions_avx512.cpp); call only when the CPU and OS enable it.
extern const conversion_kernels<half> conversions_avx512_f16;
extern const conversion_kernels<bfloat16> conversions_avx512_bf16;

// The best set this CPU runs (cpu_omp.cpp chooses it once, as it chooses the microkernels).
const conversion_kernels<half> &f16_conversions();
const conversion_kernels<bfloat16> &bf16_conversions();

template <class S> const conversion_kernels<S> &conversions() {
    if constexpr (std::is_same_v<S, half>) return f16_conversions();
    else return bf16_conversions();
}

}  // namespace gemm::cpu_omp_detail
