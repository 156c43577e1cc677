// pack.hpp: copies blocks of A and B into the contiguous, zero-padded panels the
// microkernels read.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gemm::cpu_omp_detail {

// Rows [i0, i0+mc) and columns [l0, l0+kc) of op(A) become ceil(mc/MR) micro-panels; panel p
// holds kc columns of MR contiguous values (rows past mc are zero), at dst + p * MR * kc.
// A(i, l) is a[i + l*lda] when not transposed and a[l + i*lda] when transposed.
template <class T, int MR>
void pack_a(const T *a, int64_t lda, bool transposed, int64_t i0, int64_t mc, int64_t l0,
            int64_t kc, T *__restrict dst) {
    for (int64_t ir = 0; ir < mc; ir += MR) {
        const int mr = int(std::min<int64_t>(MR, mc - ir));
        T *__restrict d = dst + ir * kc;
        if (!transposed) {
            // Columns of A are contiguous: each step of l copies MR neighbours.
            const T *s = a + (i0 + ir) + l0 * lda;
            if (mr == MR) {
                for (int64_t l = 0; l < kc; ++l, s += lda, d += MR)
                    for (int r = 0; r < MR; ++r) d[r] = s[r];
            } else {
                for (int64_t l = 0; l < kc; ++l, s += lda, d += MR) {
                    for (int r = 0; r < mr; ++r) d[r] = s[r];
                    for (int r = mr; r < MR; ++r) d[r] = T(0);
                }
            }
        } else {
            // Rows of op(A) are contiguous: read MR rows side by side, one value of each.
            const T *s = a + l0 + (i0 + ir) * lda;
            const T *row[MR];
            for (int r = 0; r < MR; ++r) row[r] = s + std::min(r, mr - 1) * lda;
            if (mr == MR) {
                for (int64_t l = 0; l < kc; ++l, d += MR)
                    for (int r = 0; r < MR; ++r) d[r] = row[r][l];
            } else {
                for (int64_t l = 0; l < kc; ++l, d += MR) {
                    for (int r = 0; r < mr; ++r) d[r] = row[r][l];
                    for (int r = mr; r < MR; ++r) d[r] = T(0);
                }
            }
        }
    }
}

// Rows [l0, l0+kc) and columns [j0, j0+nc) of op(B) become ceil(nc/NR) micro-panels; panel q
// holds kc rows of NR contiguous values (columns past nc are zero), at dst + q * NR * kc.
// B(l, j) is b[l + j*ldb] when not transposed and b[j + l*ldb] when transposed.
template <class T, int NR>
void pack_b(const T *b, int64_t ldb, bool transposed, int64_t l0, int64_t kc, int64_t j0,
            int64_t nc, T *__restrict dst) {
    for (int64_t jr = 0; jr < nc; jr += NR) {
        const int nr = int(std::min<int64_t>(NR, nc - jr));
        T *__restrict d = dst + jr * kc;
        if (!transposed) {
            // Columns of B are contiguous: read NR columns side by side, one value of each.
            const T *s = b + l0 + (j0 + jr) * ldb;
            const T *col[NR];
            for (int q = 0; q < NR; ++q) col[q] = s + std::min(q, nr - 1) * ldb;
            if (nr == NR) {
                for (int64_t l = 0; l < kc; ++l, d += NR)
                    for (int q = 0; q < NR; ++q) d[q] = col[q][l];
            } else {
                for (int64_t l = 0; l < kc; ++l, d += NR) {
                    for (int q = 0; q < nr; ++q) d[q] = col[q][l];
                    for (int q = nr; q < NR; ++q) d[q] = T(0);
                }
            }
        } else {
            // Rows of op(B) are contiguous: each step of l copies NR neighbours.
            const T *s = b + (j0 + jr) + l0 * ldb;
            if (nr == NR) {
                for (int64_t l = 0; l < kc; ++l, s += ldb, d += NR)
                    for (int q = 0; q < NR; ++q) d[q] = s[q];
            } else {
                for (int64_t l = 0; l < kc; ++l, s += ldb, d += NR) {
                    for (int q = 0; q < nr; ++q) d[q] = s[q];
                    for (int q = nr; q < NR; ++q) d[q] = T(0);
                }
            }
        }
    }
}

}  // namespace gemm::cpu_omp_detail
