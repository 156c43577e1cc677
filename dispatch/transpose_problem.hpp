// transpose_problem.hpp: the canonical out-of-place scaled copy or transpose (gemm_omatcopy)
// every layer below the API speaks in.
#pragma once

#include <cstdint>

#include "problem.hpp"

namespace gemm {

// B = alpha * op(A), column-major: A is rows x cols with leading dimension lda, B is
// b_rows() x b_cols() with ldb. A row-major call is its column-major transpose, B^T =
// alpha * op(A^T), so canonicalization swaps rows and cols and keeps the op. op is c only for
// complex types (the API makes it t for real ones). A and B do not overlap (the API refuses
// that), and every argument was checked; the problem is not empty.
// Fields are zero-initialized so problems compare reproducibly.
struct transpose_problem {
    transpose op = transpose::n;
    int64_t rows = 0;
    int64_t cols = 0;
    dtype type = dtype::f32;  // A's and B's; alpha is compute_type_for(type)'s value

    const void *a = nullptr;  // not read (and may be NULL) when alpha is 0
    int64_t lda = 0;
    void *b = nullptr;
    int64_t ldb = 0;

    // Exact for every type: every float is a double. alpha_imag is 0 for real types.
    double alpha = 1.0;
    double alpha_imag = 0.0;

    memory_space space = memory_space::host;
    int device = -1;         // CUDA ordinal when space != host
    void *stream = nullptr;  // cudaStream_t of the caller, device problems only

    int64_t b_rows() const { return op == transpose::n ? rows : cols; }
    int64_t b_cols() const { return op == transpose::n ? cols : rows; }

    // alpha = 0: B is written with zeros and A is not read (NaN in A must not leak).
    bool alpha_zero() const { return alpha == 0.0 && alpha_imag == 0.0; }
    // alpha = 1: B is op(A) exactly, bit for bit (a conjugate flips the imaginary part's sign).
    bool alpha_one() const { return alpha == 1.0 && alpha_imag == 0.0; }

    // Bytes read and written, as a copy's bandwidth counts them (A not read when alpha is 0).
    double bytes() const {
        const double elements = double(rows) * double(cols) * double(dtype_size(type));
        return alpha_zero() ? elements : 2.0 * elements;
    }
};

}  // namespace gemm
