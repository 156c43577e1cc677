// microkernel_small.hpp: the kernel for a small product on one thread, which reads B where it
// lies and A too where its columns are contiguous, written once for the vector types of the
// ISA files that include them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "microkernel_dot.hpp"

namespace gemm::cpu_omp_detail {

// V is one ISA's vector of the real type as microkernel_dot.hpp uses it, and also: mask (the
// lanes of a partial vector), first(count) (the first count lanes), load_first and
// store_first (those lanes; the others read as zero and are not written), index (a vector
// of W lane offsets), strides(s) (offsets 0, s, 2s, ...) and gather(p, offsets, mask).
//
// The tiles are the packed micro-kernels' (MR = 2 W rows, NR columns), but nothing is packed
// for a whole product, whose packing would cost as much as its multiplying (blocked_gemm.hpp):
// a column of A's MR rows at step l is read at a + l * a_k (the matrix itself when its columns
// are contiguous, else a panel of MR rows gathered for the row tile and reused for every
// column tile) and B's value (l, j) at b + l * b_k + j * b_j, broadcast, whatever its op.

// A read in place is fetched this many steps of k ahead: its columns lie lda apart, a stride
// the hardware's prefetchers follow too late when A comes from memory; 8 steps ahead were
// slower (backends/cpu_omp/NOTES.md, "Small kernel: prefetch distance").
constexpr int64_t prefetch_steps = 16;

// C[0:rows, 0:NR] = alpha * A_tile * B_tile + beta * C, rows <= MV * W: MV vectors of A and
// NR broadcasts of B a step of k, MV x NR accumulators. in_place: A is the matrix itself, its
// partial last vector read through a mask; else a panel, read whole (a partial row tile comes
// packed with zeros); MaskedA says which (in place and partial). C's partial vector through
// masks.
template <class V, int MV, int NR, bool MaskedA>
void small_tile(int64_t k, const typename V::real *__restrict a, int64_t a_k, bool in_place, int rows,
                const typename V::real *__restrict b, int64_t b_k, int64_t b_j, typename V::real *__restrict c,
                int64_t ldc, typename V::real alpha, typename V::real beta) {
    using T = typename V::real;
    using vec = typename V::type;
    constexpr int W = V::width;
    vec acc[NR][MV];
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
        for (int i = 0; i < MV; ++i) acc[j][i] = V::zero();
    const bool whole = rows == MV * W;
    const typename V::mask last = V::first(rows - (MV - 1) * W);
#pragma GCC unroll 2
    for (int64_t l = 0; l < k; ++l) {
        vec av[MV];
#pragma GCC unroll 4
        for (int i = 0; i < MV - 1; ++i) av[i] = V::loadu(a + l * a_k + i * W);
        if constexpr (MaskedA) av[MV - 1] = V::load_first(a + l * a_k + (MV - 1) * W, last);
        else av[MV - 1] = V::loadu(a + l * a_k + (MV - 1) * W);
        if (in_place) {
            // (An address, not a pointer: it may lie past A, and a prefetch never faults.)
            const std::uintptr_t ahead =
                reinterpret_cast<std::uintptr_t>(a + l * a_k) + prefetch_steps * a_k * sizeof(T);
#pragma GCC unroll 4
            for (int i = 0; i < MV; ++i) __builtin_prefetch(reinterpret_cast<const void *>(ahead + i * W * sizeof(T)));
        }
        const T *bl = b + l * b_k;
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) {
            const vec bv = V::broadcast(bl + j * b_j);
#pragma GCC unroll 4
            for (int i = 0; i < MV; ++i) acc[j][i] = V::fmadd(av[i], bv, acc[j][i]);
        }
    }
    const vec va = V::set(alpha), vb = V::set(beta);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
#pragma GCC unroll 4
        for (int i = 0; i < MV; ++i) {
            T *p = c + j * ldc + i * W;
            vec r = V::mul(acc[j][i], va);
            if (whole || i < MV - 1) {
                if (beta != T(0)) r = V::fmadd(V::loadu(p), vb, r);
                V::storeu(p, r);
            } else {
                if (beta != T(0)) r = V::fmadd(V::load_first(p, last), vb, r);
                V::store_first(p, last, r);
            }
        }
}

// Every column of C for one row tile: tiles of NR columns, then one of the columns left;
// masked_a: A is read in place and the tile is partial.
template <class V, int MV, int NR, int... Edge>
void small_columns(bool masked_a, int64_t cols, int64_t k, const typename V::real *a, int64_t a_k, bool in_place,
                   int rows, const typename V::real *b, int64_t b_k, int64_t b_j, typename V::real *c, int64_t ldc,
                   typename V::real alpha, typename V::real beta, std::integer_sequence<int, Edge...>) {
    // tiles[masked][n - 1]: small_tile<V, MV, n, masked> for n = 1 ... NR columns.
    using tile_fn = decltype(&small_tile<V, MV, 1, false>);
    static constexpr tile_fn tiles[2][NR] = {{small_tile<V, MV, Edge + 1, false>..., small_tile<V, MV, NR, false>},
                                             {small_tile<V, MV, Edge + 1, true>..., small_tile<V, MV, NR, true>}};
    const tile_fn *tile = tiles[masked_a ? 1 : 0];
    int64_t j = 0;
    for (; j + NR <= cols; j += NR)
        tile[NR - 1](k, a, a_k, in_place, rows, b + j * b_j, b_k, b_j, c + j * ldc, ldc, alpha, beta);
    if (const int64_t left = cols - j; left > 0)
        tile[left - 1](k, a, a_k, in_place, rows, b + j * b_j, b_k, b_j, c + j * ldc, ldc, alpha, beta);
}

// The rows left after a small product's whole tiles (rows % MR), when at most this many, are
// multiplied a row of C at a time (tail_rows) instead of in a tile of whole vectors of A,
// which costs as much for one row as for W. One thread, row-major f32, tiled against a row at
// a time (gemm bench, ms): NN 32x33x32 0.00099 / 0.00082, 96x97x96 0.026-0.028 /
// 0.019-0.021; TN 32x33x32 0.00095 / 0.00073, 32x36x256 0.0074 / 0.0054, 32x39x32 (7 rows)
// 0.00099-0.0010 / 0.00098-0.0010, 32x40x32 (8) 0.00097 / 0.0010.
template <class V> constexpr int tail_rows_max = V::width * 3 / 8;

// C[0:R, 0:cols] (cols <= NV W, more than (NV - 1) W) where op(B) is stored along n (b_j == 1):
// row i of C is the sum over k of op(A)'s (i, l) times op(B)'s row l, W columns a vector. The
// row's elements lie ldc apart in C, so they are written one by one.
template <class V, int R, int NV>
void row_tile(int64_t k, const typename V::real *__restrict a, int64_t a_m, int64_t a_k,
              const typename V::real *__restrict b, int64_t b_k, int cols, typename V::real *__restrict c, int64_t ldc,
              typename V::real alpha, typename V::real beta) {
    using T = typename V::real;
    using vec = typename V::type;
    constexpr int W = V::width;
    vec acc[R][NV];
#pragma GCC unroll 8
    for (int t = 0; t < R; ++t)
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[t][v] = V::zero();
    const bool whole = cols == NV * W;
    const typename V::mask last = V::first(cols - (NV - 1) * W);
    for (int64_t l = 0; l < k; ++l) {
        vec bv[NV];
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v)
            bv[v] = whole || v < NV - 1 ? V::loadu(b + l * b_k + v * W) : V::load_first(b + l * b_k + v * W, last);
#pragma GCC unroll 8
        for (int t = 0; t < R; ++t) {
            const vec av = V::broadcast(a + t * a_m + l * a_k);
#pragma GCC unroll 2
            for (int v = 0; v < NV; ++v) acc[t][v] = V::fmadd(bv[v], av, acc[t][v]);
        }
    }
    for (int t = 0; t < R; ++t)
        for (int v = 0; v < NV; ++v) {
            T lane[W];
            V::storeu(lane, acc[t][v]);
            for (int e = 0; e < std::min(W, cols - v * W); ++e) {
                T &cij = c[t + int64_t(v * W + e) * ldc];
                cij = beta == T(0) ? alpha * lane[e] : alpha * lane[e] + beta * cij;
            }
        }
}

// row_tile over every column, 2 W at a time.
template <class V, int R>
void row_tiles(int64_t cols, int64_t k, const typename V::real *a, int64_t a_m, int64_t a_k, const typename V::real *b,
               int64_t b_k, typename V::real *c, int64_t ldc, typename V::real alpha, typename V::real beta) {
    constexpr int W = V::width;
    int64_t j = 0;
    for (; j + 2 * W <= cols; j += 2 * W)
        row_tile<V, R, 2>(k, a, a_m, a_k, b + j, b_k, 2 * W, c + j * ldc, ldc, alpha, beta);
    const int left = int(cols - j);
    if (left > W) row_tile<V, R, 2>(k, a, a_m, a_k, b + j, b_k, left, c + j * ldc, ldc, alpha, beta);
    else if (left > 0) row_tile<V, R, 1>(k, a, a_m, a_k, b + j, b_k, left, c + j * ldc, ldc, alpha, beta);
}

// Whether the last r rows of a small product go a row at a time (tail_rows): at most
// tail_rows_max of them (half as many after a whole vector of the tile, see small_block), along op(B)'s rows where
// those are contiguous, else as dot products where its columns are, for at most W / 4 rows and k of at least 2 r W:
// each dot product ends in a sum of a vector's lanes, which only a long enough k pays for (f32 NN, tiled against dot
// products, ms: 32x33x32 0.00099 / 0.00082, 32x36x32 0.0010 / 0.0012, 32x36x256 0.0069 / 0.0058, 32x40x32 0.0010 /
// 0.0017; f64 32x35x32 0.0018 / 0.0020).
template <class V> bool rows_at_a_time(int r, bool after_vector, int64_t k, int64_t b_k, int64_t b_j) {
    if (r > (after_vector ? tail_rows_max<V> / 2 : tail_rows_max<V>)) return false;
    return b_j == 1 || (b_k == 1 && 4 * r <= V::width && k >= 2 * r * V::width);
}

// The last r rows of a small product, where rows_at_a_time says so (op(A)'s rows copied along
// k into the panel for the dot products when A is stored along m).
template <class V, int... R>
void tail_rows(int r, int64_t cols, int64_t k, const typename V::real *a, int64_t a_m, int64_t a_k,
               const typename V::real *b, int64_t b_k, int64_t b_j, typename V::real *c, int64_t ldc,
               typename V::real alpha, typename V::real beta, typename V::real *panel,
               std::integer_sequence<int, R...>) {
    using T = typename V::real;
    if (b_j == 1) {
        using rows_fn = decltype(&row_tiles<V, 1>);
        static constexpr rows_fn by_rows[] = {row_tiles<V, R + 1>...};
        by_rows[r - 1](cols, k, a, a_m, a_k, b, b_k, c, ldc, alpha, beta);
        return;
    }
    const T *rows = a;
    int64_t ld = a_m;
    if (a_k != 1) {
        for (int t = 0; t < r; ++t)
            for (int64_t l = 0; l < k; ++l) panel[t * k + l] = a[t * a_m + l * a_k];
        rows = panel, ld = k;
    }
    dot_block<V, 2, 4>(r, cols, k, rows, ld, b, b_j, c, ldc, alpha, beta);
}

// A partial row tile of an A stored along m is read in place, its last vector through a mask,
// from this many steps of k; below, it is copied into the panel (zeros past its rows), where
// the column tiles read it from L1. One thread, row-major f32 NN, copied against in place (gemm
// bench, us): 32x24x32 0.71 / 0.74-0.77, 32x28x32 0.76 / 0.79-0.82; 32x24x64 1.48 / 1.42-1.48,
// 16x24x128 1.65-1.72 / 1.48, 32x24x192 4.05-4.14 / 3.61-3.70, 32x24x256 5.35-5.41 / 4.53-4.57.
constexpr int64_t partial_in_place_min_k = 64;

// C[0:rows, 0:cols] = alpha * op(A) * op(B) + beta * C for a block of k (the caller cuts k so
// that an MR x k panel fits `panel`), C column-major: op(A)'s value (i, l) at a + i * a_m + l
// * a_k, with a_m == 1 (A stored along m, read in place) or a_k == 1 (along k, each row tile
// gathered into the panel); op(B)'s (l, j) at b + l * b_k + j * b_j. beta == 0 writes C
// without reading it. MR = 2 W rows a tile, NR columns.
template <class V, int NR>
void small_block(int64_t rows, int64_t cols, int64_t k, const typename V::real *a, int64_t a_m, int64_t a_k,
                 const typename V::real *b, int64_t b_k, int64_t b_j, typename V::real *c, int64_t ldc,
                 typename V::real alpha, typename V::real beta, typename V::real *panel) {
    using T = typename V::real;
    constexpr int W = V::width, MR = 2 * W;
    const auto edges = std::make_integer_sequence<int, NR - 1>{};
    const typename V::index offsets = V::strides(int32_t(a_m));  // (used only where a_m != 1)
    for (int64_t i = 0; i < rows; i += MR) {
        int r = int(std::min<int64_t>(MR, rows - i));
        const T *ai = a + i * a_m;
        // A partial tile's rows past its whole vectors, a row at a time where that pays; the
        // whole vector before them (if any) as a tile of one vector, which saves half the
        // tile's cost, so that only half as many rows after it pay (f32, tile of 2 vectors
        // against 1 and rows, ms: TT 32x18x32 0.00071 / 0.00059, 32x19x32 0.00071 / 0.00062,
        // 32x20x32 0.00072 / 0.00066-0.00069, TN 32x20x32 0.00061 / 0.00061, 32x22x32 0.00062 /
        // 0.00074).
        const int whole = r < MR ? r / W * W : r;
        if (whole < r && rows_at_a_time<V>(r - whole, whole > 0, k, b_k, b_j)) {
            tail_rows<V>(r - whole, cols, k, ai + whole * a_m, a_m, a_k, b, b_k, b_j, c + i + whole, ldc, alpha, beta,
                         panel, std::make_integer_sequence<int, tail_rows_max<V>>{});
            if ((r = whole) == 0) continue;
        }
        const bool in_place = a_m == 1 && (r % W == 0 || k >= partial_in_place_min_k);
        if (!in_place) {
            // Rows along k are gathered W at a time (the offsets fit 32 bits: the caller
            // checks W * a_m); a partial tile along m is copied; zeros past the last row.
            for (int v = 0; v * W < r; ++v) {  // (a tile of at most W rows reads one vector)
                const typename V::mask lanes = V::first(std::min(r - v * W, W));
                const T *src = ai + int64_t(v) * W * a_m;
                for (int64_t l = 0; l < k; ++l)
                    V::storeu(panel + l * MR + v * W, a_m == 1 ? V::load_first(src + l * a_k, lanes)
                                                               : V::gather(src + l * a_k, offsets, lanes));
            }
        }
        const T *tile = in_place ? ai : panel;
        const int64_t tile_k = in_place ? a_k : MR;
        const bool masked = in_place && r % W != 0;
        if (r > W)
            small_columns<V, 2, NR>(masked, cols, k, tile, tile_k, in_place, r, b, b_k, b_j, c + i, ldc, alpha, beta,
                                    edges);
        else
            small_columns<V, 1, NR>(masked, cols, k, tile, tile_k, in_place, r, b, b_k, b_j, c + i, ldc, alpha, beta,
                                    edges);
    }
}

}  // namespace gemm::cpu_omp_detail
