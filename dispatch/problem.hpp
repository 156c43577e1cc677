// problem.hpp: the canonical GEMM problem every layer below the API speaks in.
#pragma once

#include <cstdint>
#include <string>

namespace gemm {

// c32 and c64: complex, each element its real then its imaginary part (float or double).
enum class dtype : int { f32 = 0, f64 = 1, f16 = 2, bf16 = 3, c32 = 4, c64 = 5 };

// c (conjugate transpose) only with complex types: for real types the API makes it t.
enum class transpose : int { n = 0, t = 1, c = 2 };

enum class memory_space : int { host = 0, device = 1, managed = 2 };

// C = alpha * op(A) * op(B) + beta * C, column-major, for batch matrices.
// Fields are zero-initialized so problems compare and hash reproducibly.
struct problem {
    transpose op_a = transpose::n;
    transpose op_b = transpose::n;
    int64_t m = 0;
    int64_t n = 0;
    int64_t k = 0;

    dtype ab_type = dtype::f32;       // A and B share one type
    dtype c_type = dtype::f32;
    dtype compute_type = dtype::f32;  // also the type of alpha and beta

    const void *a = nullptr;
    int64_t lda = 0;
    int64_t stride_a = 0;  // elements between batch matrices
    const void *b = nullptr;
    int64_t ldb = 0;
    int64_t stride_b = 0;
    void *c = nullptr;
    int64_t ldc = 0;
    int64_t stride_c = 0;
    int64_t batch = 1;

    // Exact for every compute type: every float is a double. The imaginary parts are 0 for
    // real types.
    double alpha = 1.0;
    double beta = 0.0;
    double alpha_imag = 0.0;
    double beta_imag = 0.0;

    memory_space space = memory_space::host;
    int device = -1;           // CUDA ordinal when space != host
    void *stream = nullptr;    // cudaStream_t of the caller, device problems only

    // Rows and columns of A and B as stored (before op).
    int64_t a_rows() const { return op_a == transpose::n ? m : k; }
    int64_t a_cols() const { return op_a == transpose::n ? k : m; }
    int64_t b_rows() const { return op_b == transpose::n ? k : n; }
    int64_t b_cols() const { return op_b == transpose::n ? n : k; }

    // alpha = 0: A and B are not read; beta = 0: C is written without being read.
    bool alpha_zero() const { return alpha == 0.0 && alpha_imag == 0.0; }
    bool beta_zero() const { return beta == 0.0 && beta_imag == 0.0; }
    // k = 0 or alpha = 0: C = beta * C, A and B not read (and may be NULL).
    bool scales_only() const { return k == 0 || alpha_zero(); }

    // A complex multiply-add is 8 real operations, as BLAS benchmarks count them.
    double flops() const;
};

const char *dtype_name(dtype t);      // "f32"
std::size_t dtype_size(dtype t);      // bytes per element
bool is_complex(dtype t);

// The library's type rules, one place for the API's checks and the backends' promises:
// inputs accumulate in f64 for f64, in c32 for c32 and c64 for c64, and in f32 otherwise
// (f16 and bf16 included), and C has the inputs' type, or f32 for f16/bf16 inputs.
dtype compute_type_for(dtype ab);
bool c_type_allowed(dtype ab, dtype c);
const char *op_name(transpose o);            // "N" / "T" / "C"
const char *memory_space_name(memory_space s);

}  // namespace gemm
