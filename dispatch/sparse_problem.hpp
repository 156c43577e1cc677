// sparse_problem.hpp: the canonical sparse x dense product (gemm_spmm_csr, gemm_spmm_coo) every
// layer below the API speaks in.
#pragma once

#include <cstdint>

#include "problem.hpp"

namespace gemm {

enum class sparse_format : int { csr = 0, coo = 1 };

// C = alpha * op(A) * op(B) + beta * C with a sparse A stored as the caller gave it (rows x cols,
// nnz entries, CSR or COO, 32- or 64-bit indices counted from index_base) and dense B and C
// reached through element steps, which hold the layout and op_b: op(B)(l, j) is
// b[l * b_row_step + j * b_col_step] (conjugated when b_conj), C(i, j) is c[i * c_row_step +
// j * c_col_step]. op(A) is m x k: A itself for op_a n, its transpose for t, its conjugate
// transpose for c (c only for complex types; the API makes it t for real ones). Every argument
// was checked, validation (when asked) passed, and m, n > 0.
// Fields are zero-initialized so problems compare reproducibly.
struct sparse_problem {
    sparse_format format = sparse_format::csr;
    transpose op_a = transpose::n;
    int64_t m = 0, n = 0, k = 0;
    dtype type = dtype::f32;  // A's values', B's, C's and the computation's: f32, f64, c32, c64

    int64_t rows = 0, cols = 0, nnz = 0;  // A as stored
    bool index64 = false;                 // int64_t indices, else int32_t
    int64_t index_base = 0;
    const void *row_offsets = nullptr;  // CSR: rows + 1
    const void *row_indices = nullptr;  // COO: nnz
    const void *col_indices = nullptr;
    const void *values = nullptr;

    const void *b = nullptr;  // nullptr, with A's arrays, when the product is not read
    int64_t b_row_step = 0, b_col_step = 0;
    bool b_conj = false;
    void *c = nullptr;
    int64_t c_row_step = 0, c_col_step = 0;

    // Exact for every type: every float is a double. The imaginary parts are 0 for real types.
    double alpha = 1.0, alpha_imag = 0.0;
    double beta = 0.0, beta_imag = 0.0;

    memory_space space = memory_space::host;
    int device = -1;         // CUDA ordinal when space != host
    void *stream = nullptr;  // cudaStream_t of the caller, device problems only

    // The product is not read (A's arrays and B may be NULL): C = beta * C.
    bool scales_only() const { return (alpha == 0.0 && alpha_imag == 0.0) || k == 0 || nnz == 0; }
    // beta = 0: C is written, never read (NaN in C must not leak).
    bool beta_zero() const { return beta == 0.0 && beta_imag == 0.0; }
    // Whether B and C are column-major after the steps: their rows are contiguous.
    bool b_rows_contiguous() const { return b_row_step == 1; }
    bool c_rows_contiguous() const { return c_row_step == 1; }

    // Floating-point operations of the product, as SpMM counts them: 2 per stored entry and
    // column of C (complex: 8).
    double flops() const { return (is_complex(type) ? 8.0 : 2.0) * double(nnz) * double(n); }
};

}  // namespace gemm
