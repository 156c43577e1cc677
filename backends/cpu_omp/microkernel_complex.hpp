// microkernel_complex.hpp: the complex kernel on split planes (the 4M method), written once
// for the vector types of the ISA files that include it.
#pragma once

#include <immintrin.h>

#include <complex>
#include <cstdint>

namespace gemm::cpu_omp_detail {

// V is one ISA's vector of the real type: width, zero, set, load, loadu, storeu, broadcast,
// fmadd (a*b+c), fnmadd (c-a*b), fmsub (a*b-c), and
//   deinterleave(lo, hi, re, im): 2 * width reals of C (width complex values) into planes;
//   interleave(re, im, lo, hi):   the other way.
// Each ISA file passes its own (unnamed-namespace) V, so instantiations never collide.
//
// One step of k loads the real and the imaginary plane of MV vectors of A and broadcasts the
// real and imaginary part of each of the NR values of B; four real FMAs per pair add the four
// plane products, Cr += Ar Br - Ai Bi and Ci += Ar Bi + Ai Br. Every FMA does useful work
// (no shuffles in the loop, conjugation was done by packing), so the kernel runs at the real
// kernels' rate: 2 * MV * NR accumulators, each updated twice per step. The products with the
// real parts of B come first and those with the imaginary parts second, so that the two
// dependent updates of an accumulator are half a step apart instead of back to back.
template <class V, int MV, int NR>
void multiply_complex_tile(int64_t kc, const typename V::real *__restrict ap, const typename V::real *__restrict bp,
                           std::complex<typename V::real> *__restrict c, int64_t ldc,
                           std::complex<typename V::real> alpha, std::complex<typename V::real> beta) {
    using R = typename V::real;
    using vec = typename V::type;
    constexpr int W = V::width;
    constexpr int MR = MV * W;
    vec re[NR][MV], im[NR][MV];
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
        for (int i = 0; i < MV; ++i) re[j][i] = im[j][i] = V::zero();

    // The C tile is needed at the end; ask for it now so the stores do not wait on memory.
    constexpr int column_bytes = MR * int(sizeof(std::complex<R>));
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 8
        for (int byte = 0; byte < column_bytes; byte += 64)
            _mm_prefetch(reinterpret_cast<const char *>(c + j * ldc) + byte, _MM_HINT_T0);

#pragma GCC unroll 2
    for (int64_t l = 0; l < kc; ++l) {
        vec ar[MV], ai[MV];
#pragma GCC unroll 4
        for (int i = 0; i < MV; ++i) {
            ar[i] = V::load(ap + i * W);
            ai[i] = V::load(ap + MR + i * W);
        }
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) {
            const vec br = V::broadcast(bp + j);
#pragma GCC unroll 4
            for (int i = 0; i < MV; ++i) {
                re[j][i] = V::fmadd(ar[i], br, re[j][i]);
                im[j][i] = V::fmadd(ai[i], br, im[j][i]);
            }
        }
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) {
            const vec bi = V::broadcast(bp + NR + j);
#pragma GCC unroll 4
            for (int i = 0; i < MV; ++i) {
                re[j][i] = V::fnmadd(ai[i], bi, re[j][i]);
                im[j][i] = V::fmadd(ar[i], bi, im[j][i]);
            }
        }
        ap += 2 * MR;
        bp += 2 * NR;
    }

    // C = alpha * acc + beta * C in planes, C read only when beta != 0.
    const vec alpha_re = V::set(alpha.real()), alpha_im = V::set(alpha.imag());
    const bool read_c = beta != std::complex<R>(0);
    const vec beta_re = V::set(beta.real()), beta_im = V::set(beta.imag());
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
        for (int i = 0; i < MV; ++i) {
            R *cij = reinterpret_cast<R *>(c + j * ldc + i * W);
            vec out_re = V::fmsub(alpha_re, re[j][i], V::mul(alpha_im, im[j][i]));
            vec out_im = V::fmadd(alpha_re, im[j][i], V::mul(alpha_im, re[j][i]));
            if (read_c) {
                vec c_re, c_im;
                V::deinterleave(V::loadu(cij), V::loadu(cij + W), c_re, c_im);
                out_re = V::fnmadd(beta_im, c_im, V::fmadd(beta_re, c_re, out_re));
                out_im = V::fmadd(beta_im, c_re, V::fmadd(beta_re, c_im, out_im));
            }
            vec lo, hi;
            V::interleave(out_re, out_im, lo, hi);
            V::storeu(cij, lo);
            V::storeu(cij + W, hi);
        }
}

}  // namespace gemm::cpu_omp_detail
