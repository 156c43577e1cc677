// pack.hpp: copies blocks of A and B into the contiguous, zero-padded panels the
// microkernels read.
#pragma once

#include <algorithm>
#include <cstdint>

#include "conversions.hpp"
#include "dispatch/problem.hpp"
#include "microkernel.hpp"

namespace gemm::cpu_omp_detail {

// One step of k of a packed micro-panel `width` values wide. A real value goes to slot r; a
// complex one is split into the two planes (microkernel.hpp), its imaginary part times
// `sign`: -1 conjugates it here, so conjugation costs the kernel nothing.
template <class T> inline void put(real_t<T> *__restrict d, int r, int width, const T &v, real_t<T> sign) {
    if constexpr (parts_v<T> == 1) {
        d[r] = v;
    } else {
        d[r] = v.real();
        d[width + r] = sign * v.imag();
    }
}

// -1 for an operand to conjugate (op c, complex types only), else 1.
template <class T> real_t<T> imag_sign(transpose op) { return op == transpose::c ? real_t<T>(-1) : real_t<T>(1); }

// Rows [i0, i0+mc) and columns [l0, l0+kc) of op(A) become ceil(mc/MR) micro-panels; panel p
// holds kc steps of MR values (rows past mc are zero), at dst + p * MR * kc * parts_v<T>.
// A(i, l) is a[i + l*lda] for op n and a[l + i*lda] for op t or c. A is stored as S, converted
// to T value by value (pack_a widens 16-bit values instead a run at a time, after copy_a has
// copied them as they are, T = S).
template <class T, int MR, class S>
void copy_a(const S *a, int64_t lda, transpose op, int64_t i0, int64_t mc, int64_t l0, int64_t kc,
            real_t<T> *__restrict dst) {
    constexpr int step = MR * parts_v<T>;
    const real_t<T> sign = imag_sign<T>(op);
    for (int64_t ir = 0; ir < mc; ir += MR) {
        const int mr = int(std::min<int64_t>(MR, mc - ir));
        real_t<T> *__restrict d = dst + ir * kc * parts_v<T>;
        if (op == transpose::n) {
            // Columns of A are contiguous: each step of l copies MR neighbours.
            // Each step's column found by l * lda: a pointer stepped past the last one could leave
            // the address range (lda may be near 2^63 / the element size).
            const S *s = a + (i0 + ir) + l0 * lda;
            if (mr == MR) {
                for (int64_t l = 0; l < kc; ++l, d += step)
                    for (int r = 0; r < MR; ++r) put(d, r, MR, T(s[l * lda + r]), sign);
            } else {
                for (int64_t l = 0; l < kc; ++l, d += step) {
                    for (int r = 0; r < mr; ++r) put(d, r, MR, T(s[l * lda + r]), sign);
                    for (int r = mr; r < MR; ++r) put(d, r, MR, T(0), sign);
                }
            }
        } else {
            // Rows of op(A) are contiguous: read MR rows side by side, one value of each.
            const S *s = a + l0 + (i0 + ir) * lda;
            const S *row[MR];
            for (int r = 0; r < MR; ++r) row[r] = s + std::min(r, mr - 1) * lda;
            if (mr == MR) {
                for (int64_t l = 0; l < kc; ++l, d += step)
                    for (int r = 0; r < MR; ++r) put(d, r, MR, T(row[r][l]), sign);
            } else {
                for (int64_t l = 0; l < kc; ++l, d += step) {
                    for (int r = 0; r < mr; ++r) put(d, r, MR, T(row[r][l]), sign);
                    for (int r = mr; r < MR; ++r) put(d, r, MR, T(0), sign);
                }
            }
        }
    }
}

// Rows [l0, l0+kc) and columns [j0, j0+nc) of op(B) become ceil(nc/NR) micro-panels; panel q
// holds kc steps of NR values (columns past nc are zero), at dst + q * NR * kc * parts_v<T>.
// B(l, j) is b[l + j*ldb] for op n and b[j + l*ldb] for op t or c; stored as S, as in copy_a.
template <class T, int NR, class S>
void copy_b(const S *b, int64_t ldb, transpose op, int64_t l0, int64_t kc, int64_t j0, int64_t nc,
            real_t<T> *__restrict dst) {
    constexpr int step = NR * parts_v<T>;
    const real_t<T> sign = imag_sign<T>(op);
    for (int64_t jr = 0; jr < nc; jr += NR) {
        const int nr = int(std::min<int64_t>(NR, nc - jr));
        real_t<T> *__restrict d = dst + jr * kc * parts_v<T>;
        if (op == transpose::n) {
            // Columns of B are contiguous: read NR columns side by side, one value of each.
            const S *s = b + l0 + (j0 + jr) * ldb;
            const S *col[NR];
            for (int q = 0; q < NR; ++q) col[q] = s + std::min(q, nr - 1) * ldb;
            if (nr == NR) {
                for (int64_t l = 0; l < kc; ++l, d += step)
                    for (int q = 0; q < NR; ++q) put(d, q, NR, T(col[q][l]), sign);
            } else {
                for (int64_t l = 0; l < kc; ++l, d += step) {
                    for (int q = 0; q < nr; ++q) put(d, q, NR, T(col[q][l]), sign);
                    for (int q = nr; q < NR; ++q) put(d, q, NR, T(0), sign);
                }
            }
        } else {
            // Rows of op(B) are contiguous: each step of l copies NR neighbours.
            // Each step's row found by l * ldb, as in pack_a.
            const S *s = b + (j0 + jr) + l0 * ldb;
            if (nr == NR) {
                for (int64_t l = 0; l < kc; ++l, d += step)
                    for (int q = 0; q < NR; ++q) put(d, q, NR, T(s[l * ldb + q]), sign);
            } else {
                for (int64_t l = 0; l < kc; ++l, d += step) {
                    for (int q = 0; q < nr; ++q) put(d, q, NR, T(s[l * ldb + q]), sign);
                    for (int q = nr; q < NR; ++q) put(d, q, NR, T(0), sign);
                }
            }
        }
    }
}

// 16-bit values (gemm::half, gemm::bfloat16) stored as A or B: widened to f32 while packing.
template <class S> constexpr bool is_16bit = std::is_same_v<S, half> || std::is_same_v<S, bfloat16>;

// Values of a micro-panel staged in 16 bits before they are widened: 8 KiB, in L1 beside the
// panel they are widened into.
constexpr int64_t stage_values = 4096;

// One micro-panel of `width` values a step of k, for steps [0, kc): copy(l0, steps, stage)
// puts steps of it in 16 bits, as stored, into the stage (the f32 layout, so that the copy
// moves 16-bit values where the f32 packing moves f32 ones), and the conversions widen them a
// run at a time, a vector of values an instruction; widening each value as it is copied, one
// at a time through gemm::half, made f16 several times slower than f32
// (backends/cpu_omp/NOTES.md, "16-bit operands and C").
template <class S, int Width, class Copy> void widen_panel(int64_t kc, float *__restrict d, const Copy &copy) {
    constexpr int64_t steps = stage_values / Width;
    alignas(64) S stage[steps * Width];
    const widen_fn<S> widen = conversions<S>().widen;
    for (int64_t l = 0; l < kc; l += steps) {
        const int64_t n = std::min(steps, kc - l);
        copy(l, n, stage);
        widen(stage, d + l * Width, n * Width);
    }
}

// pack_a and pack_b: copy_a and copy_b, for A and B stored as 16-bit values through a stage a
// micro-panel at a time (widen_panel).
template <class T, int MR, class S>
void pack_a(const S *a, int64_t lda, transpose op, int64_t i0, int64_t mc, int64_t l0, int64_t kc,
            real_t<T> *__restrict dst) {
    if constexpr (is_16bit<S>) {
        for (int64_t ir = 0; ir < mc; ir += MR) {
            const int64_t mr = std::min<int64_t>(MR, mc - ir);
            widen_panel<S, MR>(kc, dst + ir * kc, [&](int64_t l, int64_t steps, S *stage) {
                copy_a<S, MR>(a, lda, op, i0 + ir, mr, l0 + l, steps, stage);
            });
        }
    } else {
        copy_a<T, MR>(a, lda, op, i0, mc, l0, kc, dst);
    }
}

template <class T, int NR, class S>
void pack_b(const S *b, int64_t ldb, transpose op, int64_t l0, int64_t kc, int64_t j0, int64_t nc,
            real_t<T> *__restrict dst) {
    if constexpr (is_16bit<S>) {
        for (int64_t jr = 0; jr < nc; jr += NR) {
            const int64_t nr = std::min<int64_t>(NR, nc - jr);
            widen_panel<S, NR>(kc, dst + jr * kc, [&](int64_t l, int64_t steps, S *stage) {
                copy_b<S, NR>(b, ldb, op, l0 + l, steps, j0 + jr, nr, stage);
            });
        }
    } else {
        copy_b<T, NR>(b, ldb, op, l0, kc, j0, nc, dst);
    }
}

}  // namespace gemm::cpu_omp_detail
