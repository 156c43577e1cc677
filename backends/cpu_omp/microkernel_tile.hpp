// microkernel_tile.hpp: the packed real kernels' register tile (multiply_tile), written once for
// the vector types of the ISA files that include it (ymm in microkernel_avx2.cpp, zmm in
// microkernel_avx512.hpp).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace gemm::cpu_omp_detail {

// V is one ISA's vector of the real type: width, zero, set, load (aligned), loadu, storeu,
// broadcast, fmadd (a*b+c), mul. Each ISA file passes its own (unnamed-namespace) V, so that
// every instantiation has internal linkage and is built with that file's ISA flags alone: none
// can be merged into, or linked from, a file built for another ISA.

// C = alpha * acc + beta * C in V's type; beta == 0 means C is written and never read.
struct scaled_store {
    template <class V, int MV, int NR>
    static void store(const typename V::type (&acc)[NR][MV], typename V::real *__restrict c, int64_t ldc,
                      typename V::real alpha, typename V::real beta) {
        using R = typename V::real;
        constexpr int W = V::width;
        const typename V::type va = V::set(alpha);
        if (beta == R(0)) {
#pragma GCC unroll 16
            for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
                for (int i = 0; i < MV; ++i) V::storeu(c + j * ldc + i * W, V::mul(acc[j][i], va));
        } else {
            const typename V::type vb = V::set(beta);
#pragma GCC unroll 16
            for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
                for (int i = 0; i < MV; ++i) {
                    R *cij = c + j * ldc + i * W;
                    V::storeu(cij, V::fmadd(V::loadu(cij), vb, V::mul(acc[j][i], va)));
                }
        }
    }
};

// One step of k: MV vectors of A loaded, each of the NR values of B broadcast against them.
template <class V, int MV, int NR>
[[gnu::always_inline]] inline void multiply_step(const typename V::real *__restrict ap,
                                                 const typename V::real *__restrict bp,
                                                 typename V::type (&acc)[NR][MV]) {
    typename V::type a[MV];
#pragma GCC unroll 4
    for (int i = 0; i < MV; ++i) a[i] = V::load(ap + i * V::width);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        const typename V::type b = V::broadcast(bp + j);
#pragma GCC unroll 4
        for (int i = 0; i < MV; ++i) acc[j][i] = V::fmadd(a[i], b, acc[j][i]);
    }
}

// C[0:MR, 0:NR] from the packed panels (microkernel.hpp's microkernel), MR = MV * width. C is
// column-major, so a column of the C tile is MV vectors: MV vectors of A are loaded per step of
// k and each of the NR values of B is broadcast against them, MV * NR accumulators that stay in
// registers for the whole of kc (the ISA files pick MV and NR to fill their register file and
// cover the FMA latency). Store puts the tile into C: scaled_store, or a rounding into a 16-bit
// C (microkernel_avx512.hpp's rounded_store).
template <class V, int MV, int NR, class C = typename V::real, class Store = scaled_store>
void multiply_tile(int64_t kc, const typename V::real *__restrict ap, const typename V::real *__restrict bp,
                   C *__restrict c, int64_t ldc, typename V::real alpha, typename V::real beta) {
    constexpr int MR = MV * V::width;
    typename V::type acc[NR][MV];
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
        for (int i = 0; i < MV; ++i) acc[j][i] = V::zero();

            // The C tile is needed at the end; ask for it now so the stores do not wait on memory.
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        _mm_prefetch(reinterpret_cast<const char *>(c + j * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char *>(c + j * ldc + MR - 1), _MM_HINT_T0);
    }

    // k unrolled so that one pass of the loop holds 48 FMAs: 4 steps of a 2 x 6 tile (AVX2), 2
    // of a 2 x 12 tile (AVX-512). Two loops because GCC 12's unroll pragma takes no template
    // argument.
    constexpr int steps_per_pass = 48 / (MV * NR);
    static_assert(steps_per_pass == 2 || steps_per_pass == 4, "a tile of 12 or 24 accumulators");
    if constexpr (steps_per_pass == 4) {
#pragma GCC unroll 4
        for (int64_t l = 0; l < kc; ++l) {
            multiply_step<V, MV, NR>(ap, bp, acc);
            ap += MR;
            bp += NR;
        }
    } else {
#pragma GCC unroll 2
        for (int64_t l = 0; l < kc; ++l) {
            multiply_step<V, MV, NR>(ap, bp, acc);
            ap += MR;
            bp += NR;
        }
    }

    Store::template store<V, MV, NR>(acc, c, ldc, alpha, beta);
}

}  // namespace gemm::cpu_omp_detail
