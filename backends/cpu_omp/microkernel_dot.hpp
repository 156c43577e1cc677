// microkernel_dot.hpp: the kernels that read the operands where they lie, for a C with few
// rows or columns: dot products for operands both stored along k (a linear layer's X·Wᵀ for
// a few rows of X), sums of columns for A stored along m (x·W), written once for the vector
// types of the ISA files that include them.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gemm::cpu_omp_detail {

// V is one ISA's vector of the real type: width, zero, load, loadu, storeu, broadcast, fmadd
// and sum (of the lanes). The operands A and B are stored as E: the real type itself, or for
// f32 a 16-bit type (gemm::half, gemm::bfloat16) that V's loadu and broadcast widen in
// registers, so that a 16-bit product reads its operands where they lie as f32 does, at half
// the bytes, and sums in f32 (C is f32).
//
// Each element of C is a dot product of a row of op(A) and a column of op(B), both contiguous
// along k, so nothing is packed: the operands are read where they lie, the wide one once.
// An R x S tile keeps R x S vector accumulators over k, W values of k at a time (R + S loads
// for R x S FMAs), then adds each one's lanes; the last k % W values are added one by one.
template <class V, int R, int S, class E = typename V::real>
void dot_tile(int64_t k, const E *__restrict a, int64_t lda, const E *__restrict b, int64_t ldb,
              typename V::real *__restrict c, int64_t ldc, typename V::real alpha, typename V::real beta) {
    using T = typename V::real;
    using vec = typename V::type;
    constexpr int W = V::width;
    vec acc[R][S];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < S; ++j) acc[i][j] = V::zero();
    const int64_t whole = k / W * W;
    for (int64_t l = 0; l < whole; l += W) {
        vec bv[S];
#pragma GCC unroll 8
        for (int j = 0; j < S; ++j) bv[j] = V::loadu(b + j * ldb + l);
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i) {
            const vec av = V::loadu(a + i * lda + l);
#pragma GCC unroll 8
            for (int j = 0; j < S; ++j) acc[i][j] = V::fmadd(av, bv[j], acc[i][j]);
        }
    }
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < S; ++j) {
            T s = V::sum(acc[i][j]);
            for (int64_t l = whole; l < k; ++l) s += T(a[i * lda + l]) * T(b[j * ldb + l]);
            T &cij = c[i + j * ldc];
            cij = beta == T(0) ? alpha * s : alpha * s + beta * cij;
        }
}

// C[0:rows, 0:cols] = alpha * op(A) op(B) + beta * C: row i of op(A) at a + i * lda, column j
// of op(B) at b + j * ldb, C column-major (ldc); beta == 0 writes C without reading it. The
// wide side is walked outside: each R (or S) of its lines is read once while the narrow
// side's lines, reused for every one of them, stay in cache.
template <class V, int R, int S, class E = typename V::real>
void dot_block(int64_t rows, int64_t cols, int64_t k, const E *a, int64_t lda, const E *b, int64_t ldb,
               typename V::real *c, int64_t ldc, typename V::real alpha, typename V::real beta) {
    auto tile = [&](int64_t i, int64_t j, bool full_rows, bool full_cols) {
        const auto *ai = a + i * lda;
        const auto *bj = b + j * ldb;
        auto *cij = c + i + j * ldc;
        if (full_rows && full_cols) dot_tile<V, R, S, E>(k, ai, lda, bj, ldb, cij, ldc, alpha, beta);
        else if (full_rows) dot_tile<V, R, 1, E>(k, ai, lda, bj, ldb, cij, ldc, alpha, beta);
        else if (full_cols) dot_tile<V, 1, S, E>(k, ai, lda, bj, ldb, cij, ldc, alpha, beta);
        else dot_tile<V, 1, 1, E>(k, ai, lda, bj, ldb, cij, ldc, alpha, beta);
    };
    // Lines of the narrow side: in steps of S (R) while whole, then one at a time.
    auto sweep = [&](int64_t count, int step, auto &&at) {
        int64_t x = 0;
        for (; x + step <= count; x += step) at(x, true);
        for (; x < count; ++x) at(x, false);
    };
    if (rows >= cols)
        sweep(rows, R, [&](int64_t i, bool full_rows) {
            sweep(cols, S, [&](int64_t j, bool full_cols) { tile(i, j, full_rows, full_cols); });
        });
    else
        sweep(cols, S, [&](int64_t j, bool full_cols) {
            sweep(rows, R, [&](int64_t i, bool full_rows) { tile(i, j, full_rows, full_cols); });
        });
}

// Operands along m and along k (op(A) = n: column l of op(A) at a + l * lda; column j of
// op(B) at b + j * ldb, contiguous along k): a row-major x·W for a few rows of x. C's rows
// are taken a chunk of 4 KB of a column at a time, their sums held in L1: each step of k adds
// the chunk of U columns of op(A), read where they lie in runs of 4 KB, times the columns'
// values of op(B). (With the sums in registers, at most 1 KB of a column a step, the reads
// ran at half the memory's speed: each step lies lda values further on.)
template <class V, int S, class E = typename V::real>
void axpy_columns(int64_t rows, int64_t k, const E *a, int64_t lda, const E *b, int64_t ldb, typename V::real *c,
                  int64_t ldc, typename V::real alpha, typename V::real beta) {
    using T = typename V::real;
    using vec = typename V::type;
    constexpr int W = V::width, U = 4;
    constexpr int64_t chunk = 4096 / int64_t(sizeof(T));
    alignas(64) T sums[S][chunk];
    for (int64_t i0 = 0; i0 < rows; i0 += chunk) {
        const int64_t n = std::min(chunk, rows - i0), whole = n / W * W;
        for (int j = 0; j < S; ++j)
            for (int64_t i = 0; i < n; ++i) sums[j][i] = T(0);
        int64_t l = 0;
        for (; l + U <= k; l += U) {
            vec bv[S][U];
#pragma GCC unroll 4
            for (int j = 0; j < S; ++j)
#pragma GCC unroll 4
                for (int u = 0; u < U; ++u) bv[j][u] = V::broadcast(b + j * ldb + l + u);
            const E *al = a + i0 + l * lda;
            for (int64_t i = 0; i < whole; i += W) {
                vec av[U];
#pragma GCC unroll 4
                for (int u = 0; u < U; ++u) av[u] = V::loadu(al + u * lda + i);
#pragma GCC unroll 4
                for (int j = 0; j < S; ++j) {
                    vec y = V::load(sums[j] + i);
#pragma GCC unroll 4
                    for (int u = 0; u < U; ++u) y = V::fmadd(av[u], bv[j][u], y);
                    V::storeu(sums[j] + i, y);
                }
            }
            for (int64_t i = whole; i < n; ++i)
                for (int j = 0; j < S; ++j)
                    for (int u = 0; u < U; ++u) sums[j][i] += T(al[u * lda + i]) * T(b[j * ldb + l + u]);
        }
        for (; l < k; ++l)
            for (int j = 0; j < S; ++j)
                for (int64_t i = 0; i < n; ++i) sums[j][i] += T(a[i0 + i + l * lda]) * T(b[j * ldb + l]);
        for (int j = 0; j < S; ++j)
            for (int64_t i = 0; i < n; ++i) {
                T &cij = c[i0 + i + j * ldc];
                cij = beta == T(0) ? alpha * sums[j][i] : alpha * sums[j][i] + beta * cij;
            }
    }
}

// C[0:rows, 0:cols] for axpy_columns's operands: a sweep of op(A) for every 4 columns.
template <class V, class E = typename V::real>
void axpy_block(int64_t rows, int64_t cols, int64_t k, const E *a, int64_t lda, const E *b, int64_t ldb,
                typename V::real *c, int64_t ldc, typename V::real alpha, typename V::real beta) {
    for (int64_t j = 0; j < cols; j += 4) {
        const auto *bj = b + j * ldb;
        auto *cj = c + j * ldc;
        switch (std::min<int64_t>(cols - j, 4)) {
        case 1: axpy_columns<V, 1, E>(rows, k, a, lda, bj, ldb, cj, ldc, alpha, beta); break;
        case 2: axpy_columns<V, 2, E>(rows, k, a, lda, bj, ldb, cj, ldc, alpha, beta); break;
        case 3: axpy_columns<V, 3, E>(rows, k, a, lda, bj, ldb, cj, ldc, alpha, beta); break;
        default: axpy_columns<V, 4, E>(rows, k, a, lda, bj, ldb, cj, ldc, alpha, beta); break;
        }
    }
}

}  // namespace gemm::cpu_omp_detail
