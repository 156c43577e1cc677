/* gemm.h: the public C API of the gemm library (C99, no C++ or CUDA types). */
#ifndef GEMM_GEMM_H
#define GEMM_GEMM_H

#include <stdint.h>

#if defined(GEMM_BUILDING_LIBRARY)
#define GEMM_API __attribute__((visibility("default")))
#else
#define GEMM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define GEMM_VERSION_MAJOR 0
#define GEMM_VERSION_MINOR 1
#define GEMM_VERSION_PATCH 0

/* Values equal CBLAS's, so callers may pass CBLAS constants. */
typedef enum gemm_layout { GEMM_ROW_MAJOR = 101, GEMM_COL_MAJOR = 102 } gemm_layout_t;

typedef enum gemm_op {
    GEMM_OP_N = 111, /* op(X) = X */
    GEMM_OP_T = 112, /* op(X) = X^T */
    GEMM_OP_C = 113  /* op(X) = X^H (conjugate transpose); equal to X^T for real types */
} gemm_op_t;

typedef enum gemm_dtype {
    GEMM_F32 = 0,
    GEMM_F64 = 1,
    GEMM_F16 = 2,  /* IEEE binary16, stored as 16 bits */
    GEMM_BF16 = 3, /* bfloat16, stored as 16 bits */
    GEMM_C32 = 4,  /* complex: real then imaginary part, two floats (C99 float _Complex,
                      std::complex<float>, cuComplex) */
    GEMM_C64 = 5,  /* complex: two doubles (double _Complex, std::complex<double>) */
    /* 8-bit floating point (OCP FP8), for A and B only (C in f32, f16 or bf16; compute f32);
     * see "FP8" below and docs/FP8.md. */
    GEMM_F8_E4M3 = 6, /* 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, NaN is
                         S.1111.111, largest finite 448; subnormals down to 2^-9 */
    GEMM_F8_E5M2 = 7  /* 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like: S.11111.00
                         is infinity, S.11111.xx (xx != 0) NaN, largest finite 57344;
                         subnormals down to 2^-16 */
} gemm_dtype_t;

/* Append-only: a code keeps its value forever; retired codes leave a gap.
 * 1-19: the caller passed something invalid (C untouched, nothing computed).
 * 20-29: valid call the chosen backend or configuration cannot serve.
 * 30-: failures while computing. */
typedef enum gemm_status {
    GEMM_STATUS_SUCCESS = 0,
    GEMM_STATUS_INVALID_LAYOUT = 1,
    GEMM_STATUS_INVALID_OP = 2,
    GEMM_STATUS_INVALID_SIZE = 3,         /* m, n, k or batch count < 0, or an operand that
                                             would span more than 2^63 - 1 bytes (the message
                                             names the size, leading dimension or stride that
                                             makes it so) */
    GEMM_STATUS_INVALID_LEADING_DIM = 4,  /* lda, ldb or ldc too small */
    GEMM_STATUS_INVALID_STRIDE = 5,       /* batch stride negative or C batches overlap */
    GEMM_STATUS_INVALID_POINTER = 6,      /* NULL where data or a scalar is needed */
    GEMM_STATUS_INVALID_DTYPE = 7,        /* not a gemm_dtype_t value */
    GEMM_STATUS_INVALID_VALUE = 8,        /* any other invalid argument */
    GEMM_STATUS_MIXED_MEMORY_SPACES = 9,  /* A, B and C not all host or all on one device (only
                                             those the call reads or writes count: not A and B
                                             where k = 0 or alpha = 0, none where C is empty) */
    GEMM_STATUS_NOT_SUPPORTED = 20,       /* the chosen backend cannot serve this problem */
    GEMM_STATUS_UNKNOWN_BACKEND = 21,     /* no backend of that name in this build */
    GEMM_STATUS_BACKEND_UNAVAILABLE = 22, /* backend exists but cannot run on this machine */
    GEMM_STATUS_INVALID_CONFIG = 23,      /* a GEMM_* environment variable has a bad value */
    GEMM_STATUS_ALLOC_FAILED = 30,
    GEMM_STATUS_EXECUTION_FAILED = 31, /* the backend failed while computing */
    GEMM_STATUS_INTERNAL_ERROR = 99
} gemm_status_t;

/* Library version as "major.minor.patch". */
GEMM_API const char *gemm_version(void);

/* Constant text naming a status ("GEMM_STATUS_INVALID_LEADING_DIM: ..."). Never NULL. */
GEMM_API const char *gemm_status_string(gemm_status_t status);

/* Short constant name of a dtype, as the library prints it in traces, messages, variant ids
 * and tune-cache keys: "f32", "f64", "f16", "bf16", "c32", "c64", "e4m3", "e5m2". NULL for a
 * value that is not a gemm_dtype_t. */
GEMM_API const char *gemm_dtype_name(gemm_dtype_t type);

/* Message of the last call made on this thread: why it failed, or "" after a success.
 * Argument errors name the parameter by its position, counting as cblas_sgemm does. */
GEMM_API const char *gemm_last_error(void);

/* Position (cblas_sgemm numbering, 1 = layout) of the parameter that made the last call on
 * this thread fail, or 0 when it did not fail on a parameter. Functions of other signatures
 * count their own parameters from 1; a refused gemm_desc_t is named by the desc's position
 * (gemm_plan_create and gemm_measure: 1; gemm_backend_supports and gemm_backend_variants: 2),
 * its message naming the field ("gemm_desc_t: k = -1 must be >= 0"). */
GEMM_API int gemm_last_error_parameter(void);

/* C = alpha * op(A) * op(B) + beta * C. op(A) is m x k, op(B) is k x n, C is m x n.
 * Parameters are those of cblas_sgemm, in the same order. Host pointers are computed
 * synchronously. When beta == 0, C is written without being read. */
GEMM_API gemm_status_t gemm_sgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                  int64_t k, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                                  float beta, float *C, int64_t ldc);

GEMM_API gemm_status_t gemm_dgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                  int64_t k, double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                                  double beta, double *C, int64_t ldc);

/* Strided batches: matrix i of A starts at A + i * stride_a elements (likewise B and C).
 * stride_a or stride_b may be 0 to reuse one matrix; C matrices must not overlap. */
GEMM_API gemm_status_t gemm_sgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                                  int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                                                  int64_t stride_a, const float *B, int64_t ldb, int64_t stride_b,
                                                  float beta, float *C, int64_t ldc, int64_t stride_c,
                                                  int64_t batch_count);

GEMM_API gemm_status_t gemm_dgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                                  int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                                                  int64_t stride_a, const double *B, int64_t ldb, int64_t stride_b,
                                                  double beta, double *C, int64_t ldc, int64_t stride_c,
                                                  int64_t batch_count);

/* Complex GEMM, as cblas_cgemm and cblas_zgemm take it: alpha and beta point to a complex
 * value (two floats for c, two doubles for z), A, B and C to complex elements (GEMM_C32,
 * GEMM_C64). GEMM_OP_C takes the conjugate transpose. */
GEMM_API gemm_status_t gemm_cgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                  int64_t k, const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                                  const void *beta, void *C, int64_t ldc);

GEMM_API gemm_status_t gemm_zgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                  int64_t k, const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                                  const void *beta, void *C, int64_t ldc);

/* Strides count complex elements. */
GEMM_API gemm_status_t gemm_cgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                                  int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                                                  int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b,
                                                  const void *beta, void *C, int64_t ldc, int64_t stride_c,
                                                  int64_t batch_count);

GEMM_API gemm_status_t gemm_zgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                                  int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                                                  int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b,
                                                  const void *beta, void *C, int64_t ldc, int64_t stride_c,
                                                  int64_t batch_count);

/* Generic form. Supported (A and B, C, compute) types:
 *   f32, f32, f32 | f64, f64, f64 | f16, f16 or f32, f32 | bf16, bf16 or f32, f32 |
 *   c32, c32, c32 | c64, c64, c64 | e4m3 or e5m2, f32 or f16 or bf16, f32.
 * alpha and beta point to a value of the compute type (float, double, or a complex pair of
 * either). f16, bf16 and FP8 products accumulate in f32; an FP8 call here has scales of 1
 * (gemm_ex_scaled takes scales). FP8 takes one matrix, or groups of them (gemm_ex_grouped,
 * gemm_ex_grouped_scaled): the strided and pointer-array batched forms and gemm_ex_epilogue
 * refuse it (GEMM_STATUS_NOT_SUPPORTED). */
GEMM_API gemm_status_t gemm_ex(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                               int64_t k, const void *alpha, const void *A, gemm_dtype_t a_type, int64_t lda,
                               const void *B, gemm_dtype_t b_type, int64_t ldb, const void *beta, void *C,
                               gemm_dtype_t c_type, int64_t ldc, gemm_dtype_t compute_type);

GEMM_API gemm_status_t gemm_ex_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                               int64_t n, int64_t k, const void *alpha, const void *A,
                                               gemm_dtype_t a_type, int64_t lda, int64_t stride_a, const void *B,
                                               gemm_dtype_t b_type, int64_t ldb, int64_t stride_b, const void *beta,
                                               void *C, gemm_dtype_t c_type, int64_t ldc, int64_t stride_c,
                                               int64_t batch_count, gemm_dtype_t compute_type);

/* Pointer-array batches: matrix i of the batch is A[i], B[i], C[i] (i < batch_count), all of
 * one shape, as cuBLAS's GemmBatchedEx and MKL's gemm_batch take them. The arrays of pointers
 * may be host memory, read as they are, or device or managed memory as cuBLAS takes them:
 * those the library copies to the host on the calling thread's stream, after the work queued
 * there before, and waits for that copy, so such a call returns with the stream drained up to
 * it (and is GEMM_STATUS_NOT_SUPPORTED while the stream is captured into a CUDA graph; an
 * array that ends past its allocation is GEMM_STATUS_INVALID_POINTER). Host arrays keep a
 * device batch asynchronous. The matrices they point to are host memory or
 * memory of one CUDA device, all in one space (else GEMM_STATUS_MIXED_MEMORY_SPACES). Every
 * matrix is checked as a call of its own would be, messages naming it ("parameter 8: A[3] is
 * NULL"), and no two C matrices' extents (first element to last, the padding between their
 * lines included) may overlap (GEMM_STATUS_INVALID_VALUE, "C[2] and C[5] overlap"), before
 * anything is computed. The backend is chosen once for the batch, by a
 * tune key of its own (its matrix count and "form=pointers"). Its matrices may run in any
 * order or at once, as in cuBLAS's batched calls: a C that overlaps an A or B of the batch
 * gives undefined results. The typed forms take alpha and beta as gemm_sgemm/gemm_cgemm do. */
GEMM_API gemm_status_t gemm_sgemm_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                          int64_t n, int64_t k, float alpha, const float *const *A, int64_t lda,
                                          const float *const *B, int64_t ldb, float beta, float *const *C, int64_t ldc,
                                          int64_t batch_count);

GEMM_API gemm_status_t gemm_dgemm_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                          int64_t n, int64_t k, double alpha, const double *const *A, int64_t lda,
                                          const double *const *B, int64_t ldb, double beta, double *const *C,
                                          int64_t ldc, int64_t batch_count);

GEMM_API gemm_status_t gemm_cgemm_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                          int64_t n, int64_t k, const void *alpha, const void *const *A, int64_t lda,
                                          const void *const *B, int64_t ldb, const void *beta, void *const *C,
                                          int64_t ldc, int64_t batch_count);

GEMM_API gemm_status_t gemm_zgemm_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                          int64_t n, int64_t k, const void *alpha, const void *const *A, int64_t lda,
                                          const void *const *B, int64_t ldb, const void *beta, void *const *C,
                                          int64_t ldc, int64_t batch_count);

GEMM_API gemm_status_t gemm_ex_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                       int64_t k, const void *alpha, const void *const *A, gemm_dtype_t a_type,
                                       int64_t lda, const void *const *B, gemm_dtype_t b_type, int64_t ldb,
                                       const void *beta, void *const *C, gemm_dtype_t c_type, int64_t ldc,
                                       int64_t batch_count, gemm_dtype_t compute_type);

/* Grouped batches: group g (g < group_count) holds group_size[g] matrices of its own shape
 * (transa[g], transb[g], m[g], n[g], k[g], lda[g], ldb[g], ldc[g]) and scalars: alpha and beta
 * point to arrays of group_count values of the compute type (pairs for complex types). A, B
 * and C hold the matrices' pointers group after group, as MKL's cblas_?gemm_batch takes them
 * (in host, device or managed memory, as for gemm_ex_batched; the other arrays are host
 * memory, as in cuBLAS's GemmGroupedBatchedEx); the types are shared. Rules and checks as for gemm_ex_batched, every
 * group checked before anything is computed, messages naming the group ("group 2: parameter 6: k = -1 must be
 * >= 0"); the backend is chosen once per group, a group of several matrices by the key of a
 * pointer-array batch of its shape and size. FP8 types are taken with scales of 1
 * (gemm_ex_grouped_scaled, in the FP8 section, takes scales per group). */
GEMM_API gemm_status_t gemm_ex_grouped(gemm_layout_t layout, const gemm_op_t *transa, const gemm_op_t *transb,
                                       const int64_t *m, const int64_t *n, const int64_t *k, const void *alpha,
                                       const void *const *A, gemm_dtype_t a_type, const int64_t *lda,
                                       const void *const *B, gemm_dtype_t b_type, const int64_t *ldb, const void *beta,
                                       void *const *C, gemm_dtype_t c_type, const int64_t *ldc, int64_t group_count,
                                       const int64_t *group_size, gemm_dtype_t compute_type);

/* ---- Transposes ------------------------------------------------------------------------ */

/* B = alpha * op(A), out of place, as OpenBLAS's and MKL's omatcopy (cuBLAS's geam with
 * beta = 0): A is rows x cols in layout with leading dimension lda; op(A) is A (GEMM_OP_N),
 * A^T (GEMM_OP_T) or A^H (GEMM_OP_C, the conjugate transpose; A^T for real types); B receives
 * op(A), rows x cols for N and cols x rows for T and C, in the same layout with leading
 * dimension ldb. dtype is A's and B's: f32, f64, f16, bf16, c32 or c64 (an FP8 type is
 * GEMM_STATUS_NOT_SUPPORTED). alpha
 * points to a value of the compute type gemm_ex takes for dtype: a float for f32, f16 and
 * bf16 (a 16-bit result is computed in f32 and rounded once), a double for f64, a complex
 * pair of floats or doubles for c32 and c64. Rules:
 *  - lda >= max(1, rows) in column-major, max(1, cols) in row-major; ldb >= max(1, B's rows)
 *    in column-major, max(1, B's columns) in row-major; rows, cols >= 0.
 *  - rows or cols 0: nothing is written (A and B may be NULL); alpha must not be NULL.
 *  - alpha = 0 writes zeros into B without reading A (A may be NULL; NaN in A does not reach
 *    B). alpha = 1 makes B exactly op(A), bit for bit.
 *  - A (where it is read) and B must not overlap, judged on the bytes from each one's first
 *    element to its last: GEMM_STATUS_INVALID_VALUE; there is no in-place form.
 *  - Host pointers are computed synchronously; device pointers are stream-ordered on the
 *    thread's stream (gemm_set_stream) and asynchronous, as a GEMM's. A and B in different
 *    spaces: GEMM_STATUS_MIXED_MEMORY_SPACES. GPU backends take device (or managed) memory
 *    only: host operands are not staged, they run on a host backend.
 *  - The backend: GEMM_BACKEND or gemm_set_backend forces one, which computes the call or
 *    fails it (GEMM_STATUS_NOT_SUPPORTED, saying why: cblas has no transpose, cublas's geam
 *    no f16 or bf16), never another; a pinned variant names a GEMM kernel and does not apply.
 *    auto takes cpu_omp for host memory and cuda_tiled's kernel for device memory
 *    (docs/ARCHITECTURE.md, "Transposes") unless the tune cache holds a choice for the call's
 *    class ("omatcopy f32 T 4096 1024 space=host", canonical column-major; gemm_tune_key
 *    tunes one) whose backend can serve it.
 *    GEMM_VERBOSE=1 traces each call ("call=omatcopy ... gbs=...").
 * On any error B is untouched. Parameters are numbered as listed, layout 1 to dtype 10. */
GEMM_API gemm_status_t gemm_omatcopy(gemm_layout_t layout, gemm_op_t trans, int64_t rows, int64_t cols,
                                     const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb,
                                     gemm_dtype_t dtype);

/* ---- Sparse x dense products ---------------------------------------------------------- */

/* The width of a sparse matrix's index arrays (row offsets, row and column indices). */
typedef enum gemm_index_type { GEMM_INDEX_I32 = 0, GEMM_INDEX_I64 = 1 } gemm_index_type_t;

/* A sparse matrix in compressed sparse rows (CSR): rows x cols with nnz stored entries; the
 * entries of row i are values[p] in column col_indices[p] - index_base for p from
 * row_offsets[i] - index_base to row_offsets[i + 1] - index_base (row_offsets has rows + 1
 * elements, col_indices and values nnz). values are in the call's dtype; every array lies in
 * the memory the call's dense operands lie in. Within a row the columns may come in any order
 * and a column may repeat (its entries add up): cpu_ref, cpu_omp and cuda_tiled compute such a
 * matrix as stored; cusparse assumes the sorted form without repeats. validate = 1 asks the
 * call to check, in one pass over the arrays before anything is computed, that row_offsets
 * starts at index_base, never decreases and ends at nnz + index_base, that every column lies in
 * [index_base, cols + index_base), and that each row's columns increase strictly (sorted, no
 * repeats), the form cuSPARSE assumes; a failure is GEMM_STATUS_INVALID_VALUE naming the array
 * and the index. Without it (0, the default) the arrays are trusted: an index out of bounds is
 * undefined behaviour. Start from gemm_csr_init (the struct_size rule at gemm_desc_t). */
typedef struct gemm_csr {
    int64_t struct_size; /* sizeof(gemm_csr_t) (the rule at gemm_desc_t) */
    int64_t rows, cols, nnz;
    gemm_index_type_t index_type; /* of row_offsets and col_indices */
    int32_t index_base;           /* 0 (C) or 1 (Fortran) */
    const void *row_offsets;      /* rows + 1 indices */
    const void *col_indices;      /* nnz indices */
    const void *values;           /* nnz values of the call's dtype */
    int32_t validate;             /* 1: check bounds and sorted rows first (a pass) */
} gemm_csr_t;

/* A sparse matrix in coordinates (COO): entry p is values[p] at row row_indices[p] -
 * index_base, column col_indices[p] - index_base. The entries may come in any order, and
 * entries at one position add up (duplicates are summed). validate = 1 checks that every index
 * lies in bounds and that the entries are sorted by row, then column, strictly (no
 * duplicates), the form cuSPARSE assumes; a failure is GEMM_STATUS_INVALID_VALUE naming the
 * array and the index. Otherwise as gemm_csr_t. Start from gemm_coo_init. */
typedef struct gemm_coo {
    int64_t struct_size; /* sizeof(gemm_coo_t) (the rule at gemm_desc_t) */
    int64_t rows, cols, nnz;
    gemm_index_type_t index_type; /* of row_indices and col_indices */
    int32_t index_base;           /* 0 or 1 */
    const void *row_indices;      /* nnz indices */
    const void *col_indices;      /* nnz indices */
    const void *values;           /* nnz values of the call's dtype */
    int32_t validate;             /* 1: check bounds and sorted entries first (a pass) */
} gemm_coo_t;

/* A descriptor of the arrays given, index base 0, no validation. */
GEMM_API void gemm_csr_init(gemm_csr_t *A, int64_t rows, int64_t cols, int64_t nnz, gemm_index_type_t index_type,
                            const void *row_offsets, const void *col_indices, const void *values);
GEMM_API void gemm_coo_init(gemm_coo_t *A, int64_t rows, int64_t cols, int64_t nnz, gemm_index_type_t index_type,
                            const void *row_indices, const void *col_indices, const void *values);

/* C = alpha * op(A) * op(B) + beta * C with a sparse A (SpMM; n = 1 is SpMV): op(A) is m x k,
 * so A is m x k for op_a GEMM_OP_N and k x m for GEMM_OP_T and GEMM_OP_C (the conjugate
 * transpose for complex types); op(B) is k x n and C m x n, dense, in layout with leading
 * dimensions ldb and ldc, as gemm_ex's. One entry point per format, so that the compiler checks
 * the descriptor's type. dtype is A's values', B's, C's and the computation's: GEMM_F32,
 * GEMM_F64, GEMM_C32 or GEMM_C64 (the others are GEMM_STATUS_NOT_SUPPORTED); alpha and beta
 * point to values of it. Rules:
 *  - m, n, k >= 0; A's rows and cols must be op(A)'s shape (GEMM_STATUS_INVALID_SIZE naming
 *    the field); nnz >= 0; ldb and ldc as gemm_ex's; the descriptor's struct_size, index_type,
 *    index_base (0 or 1) and validate (0 or 1) are checked (GEMM_STATUS_INVALID_VALUE).
 *  - m or n 0: nothing is written. beta = 0: C is written without being read (NaN in C does
 *    not leak). alpha = 0, k = 0 or nnz = 0: C = beta * C, A's arrays and B not read (they may
 *    be NULL).
 *  - C must not overlap B or A's arrays.
 *  - Host pointers are computed synchronously. A's arrays, B and C in different spaces:
 *    GEMM_STATUS_MIXED_MEMORY_SPACES. validate = 1 reads host arrays only (device ones:
 *    GEMM_STATUS_NOT_SUPPORTED).
 *  - The backend: GEMM_BACKEND or gemm_set_backend forces one, which computes the call or
 *    fails it (GEMM_STATUS_NOT_SUPPORTED, saying why), never another. auto takes cpu_omp for
 *    host memory and cuda_tiled for device memory (docs/ARCHITECTURE.md, "Sparse
 *    products"); cusparse (sorted input only) runs when forced or tuned; the tune cache's
 *    choice for the call's class ("spmm_csr f32 col NN 4096 64 4096 density=1e-2 space=host
 *    beta=0", density the decade nearest nnz / (rows * cols); gemm_tune_key tunes one) is taken
 *    where its backend can serve the call. GEMM_VERBOSE=1 traces each call ("call=spmm_csr
 *    ... gflops=..."). cuda_tiled's COO and transposed-CSR sums use atomics: their order,
 *    and so their last bits, vary from run to run.
 * On any error C is untouched. Parameters are numbered as listed, layout 1 to dtype 14. */
GEMM_API gemm_status_t gemm_spmm_csr(gemm_layout_t layout, gemm_op_t op_a, gemm_op_t op_b, int64_t m, int64_t n,
                                     int64_t k, const void *alpha, const gemm_csr_t *A, const void *B, int64_t ldb,
                                     const void *beta, void *C, int64_t ldc, gemm_dtype_t dtype);
GEMM_API gemm_status_t gemm_spmm_coo(gemm_layout_t layout, gemm_op_t op_a, gemm_op_t op_b, int64_t m, int64_t n,
                                     int64_t k, const void *alpha, const gemm_coo_t *A, const void *B, int64_t ldb,
                                     const void *beta, void *C, int64_t ldc, gemm_dtype_t dtype);

/* Backends compiled into this build, available or not. */
typedef struct gemm_backend_info {
    const char *name;   /* stable lower_snake name, as GEMM_BACKEND takes it */
    int available;      /* 1 if it can run on this machine */
    const char *reason; /* why not, when available == 0; "" otherwise */
    const char *detail; /* what it runs on when available (library, device); may be "" */
} gemm_backend_info_t;

GEMM_API int64_t gemm_backend_count(void);

/* Fills *info for backend index (0 <= index < gemm_backend_count()). Strings live as long
 * as the process. */
GEMM_API gemm_status_t gemm_backend_get_info(int64_t index, gemm_backend_info_t *info);

/* The GEMM_* variables this build reads: the library's own and each backend's. Strings live
 * as long as the process. */
typedef struct gemm_option_info {
    const char *name;     /* "GEMM_CBLAS_LIB" */
    const char *owner;    /* "library", "GPU offload", "drop-in BLAS", or the backend that reads it */
    const char *value;    /* as set in the environment when first read; NULL when unset */
    const char *values;   /* what it takes ("a path or soname") */
    const char *fallback; /* what holds when it is unset */
    const char *meaning;
} gemm_option_info_t;

GEMM_API int64_t gemm_option_count(void);

/* Fills *info for option index (0 <= index < gemm_option_count()). */
GEMM_API gemm_status_t gemm_option_get_info(int64_t index, gemm_option_info_t *info);

/* Forces a backend for every later call of this process, like GEMM_BACKEND and taking
 * precedence over it: "auto" (or ""), a backend name, or "name:variant" to pin a variant too
 * ("name:" is the default variant, as "name" is, so that "name:" + id serves every id that
 * gemm_backend_variants lists, "" among them). auto takes no variant ("auto:" is "auto";
 * "auto:x" is GEMM_STATUS_INVALID_VALUE). NULL returns to what GEMM_BACKEND says. An
 * unknown or unavailable backend is refused here and leaves the previous choice in place. */
GEMM_API gemm_status_t gemm_set_backend(const char *name);

/* The same for the calling thread alone, over the process's selection (gemm_set_backend,
 * GEMM_BACKEND): later calls, plans made and gemm_backend_supports(NULL, ...) on this thread
 * follow it, other threads do not see it. NULL returns the thread to the process's selection.
 * Checked as gemm_set_backend checks a name; a refused one leaves the thread's choice. */
GEMM_API gemm_status_t gemm_set_thread_backend(const char *name);

/* CUDA stream (a cudaStream_t) for later calls made by this thread with device pointers;
 * NULL (the default) is the legacy default stream. Device-pointer calls are stream-ordered
 * and asynchronous, like cuBLAS: they are enqueued on this stream and may return before
 * the result is ready; synchronize the stream before reading C. Host-pointer calls are
 * synchronous whatever the stream. The caller owns the stream and must keep it alive
 * while calls on it are in flight. */
GEMM_API gemm_status_t gemm_set_stream(void *stream);
GEMM_API void *gemm_get_stream(void);

/* The selection in force on this thread: what gemm_set_thread_backend set, else what
 * gemm_set_backend set, else GEMM_BACKEND, else "auto". */
GEMM_API const char *gemm_get_backend(void);

/* Where that selection comes from: "gemm_set_thread_backend", "gemm_set_backend",
 * "GEMM_BACKEND" or "default". */
GEMM_API const char *gemm_get_backend_source(void);

/* ---- Epilogues ------------------------------------------------------------------------- */

/* What follows the product, on Z = alpha * op(A) * op(B) + beta * C (+ the bias). */
typedef enum gemm_activation {
    GEMM_ACTIVATION_NONE = 0,          /* C = Z */
    GEMM_ACTIVATION_RELU = 1,          /* C = max(Z, 0) */
    GEMM_ACTIVATION_GELU = 2,          /* C = Z/2 (1 + tanh(sqrt(2/pi) (Z + 0.044715 Z^3))), the
                                          tanh form cuBLASLt and PyTorch's approximate GELU use */
    GEMM_ACTIVATION_RELU_BACKWARD = 3, /* C = Z where aux > 0, else 0: ReLU's gradient */
    GEMM_ACTIVATION_GELU_BACKWARD = 4  /* C = Z * gelu'(aux): GELU's gradient */
} gemm_activation_t;

typedef enum gemm_bias {
    GEMM_BIAS_NONE = 0,
    GEMM_BIAS_ROWS = 1,   /* one value per row of C (m values): value i joins row i */
    GEMM_BIAS_COLUMNS = 2 /* one value per column of C (n values) */
} gemm_bias_t;

/* An epilogue for gemm_ex_epilogue: C = act(Z + bias) in one call, fused into the GEMM where
 * the backend can (cpu_omp: each block of C as its threads finish it, all but the bias
 * gradient; cuBLASLt on device memory: a bias per row of column-major C, or per column
 * of row-major C; ReLU without aux; GELU for f16 and bf16 C, its tanh being too coarse for
 * f32 and f64; GELU's backward form without the bias gradient, its own being slower than the
 * pass), else applied by the library in one more pass over C on the memory C lives in
 * (GEMM_VERBOSE's trace says epilogue=...:fused or :pass). auto's tune key includes the
 * epilogue's kind (gemm_tune_key tunes such a class); untuned, auto prefers a backend that
 * fuses the call's epilogue.
 * bias, bias_grad and aux have C's type and lie in C's memory; aux is a matrix of C's shape
 * and layout with leading dimension ld_aux. For a layer Y = act(X W^T + b) in training:
 *   forward:  activation RELU or GELU, bias = b, aux = a buffer that receives Z + bias (the
 *             activation's input, which the backward pass needs; NULL when not training);
 *   backward: dZ = act'(Z) * (dY_next W_next) is one call with activation *_BACKWARD, aux =
 *             the forward's saved Z, and with bias_axis set bias_grad receives db, the sums
 *             of dZ along the bias axis (for ReLU the forward's output Y serves as aux too).
 * Start from gemm_epilogue_init. */
typedef struct gemm_epilogue {
    int64_t struct_size; /* sizeof(gemm_epilogue_t) (the rule at gemm_desc_t) */
    gemm_activation_t activation;
    gemm_bias_t bias_axis; /* forward: bias's axis; backward: bias_grad's */
    const void *bias;      /* forward with a bias axis: m or n values, added to Z before
                              the activation; must be NULL otherwise */
    void *bias_grad;       /* backward with a bias axis: receives the m or n sums of the
                              new C along the axis; must be NULL otherwise */
    void *aux;             /* forward: NULL, or receives Z + bias; backward: required, read */
    int64_t ld_aux;        /* aux's leading dimension, as ldc is C's */
} gemm_epilogue_t;

/* No activation, no bias, no aux. */
GEMM_API void gemm_epilogue_init(gemm_epilogue_t *epilogue);

/* gemm_ex followed by the epilogue (parameter 19), for real types (f32, f64, f16, bf16; a
 * complex type is GEMM_STATUS_NOT_SUPPORTED) and one matrix. Checked before anything runs:
 * the struct, its enums, the pointers the activation needs and no others, ld_aux, and that
 * bias, bias_grad and aux overlap neither C nor one another (GEMM_STATUS_INVALID_VALUE);
 * messages name the field ("parameter 19: epilogue->aux is NULL ..."). m, n or k 0, and alpha
 * 0, follow gemm_ex: with m or n 0 nothing is written (bias_grad included); with k 0 or
 * alpha 0 Z is beta * C. */
GEMM_API gemm_status_t gemm_ex_epilogue(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                        int64_t k, const void *alpha, const void *A, gemm_dtype_t a_type, int64_t lda,
                                        const void *B, gemm_dtype_t b_type, int64_t ldb, const void *beta, void *C,
                                        gemm_dtype_t c_type, int64_t ldc, gemm_dtype_t compute_type,
                                        const gemm_epilogue_t *epilogue);

/* ---- FP8 ------------------------------------------------------------------------------ */

/* FP8 (GEMM_F8_E4M3, GEMM_F8_E5M2 A and B; docs/FP8.md) computes
 *   D = d_scale * (alpha * sum_l sa(i, l) op(A)(i, l) * sb(l, j) op(B)(l, j) + beta * C)
 * into C (f32, f16 or bf16), every FP8 value decoded exactly, the products summed in f32,
 * where sa and sb are A's and B's scales as the scaling mode says and d_scale the optional
 * output scale. amax_d, when asked for, receives max |D| over the m x n elements before
 * d_scale is applied (cuBLASLt's AMAX_D). Values: an FP8 NaN input makes the elements it
 * reaches NaN, an e5m2 infinity Inf (or NaN, as IEEE arithmetic says); the library never
 * saturates. A result beyond the range of C's type becomes +-Inf when it is rounded to C, as
 * any f32 -> f16 or bf16 conversion does (f16's largest finite value is 65504: a product of
 * two 448s summed a few times passes it). With beta = 0, C is written without being read.
 * Only the CPU backends, cublaslt and cuda_tiled compute FP8; every other backend refuses it.
 * FP8 takes one matrix per scaling: gemm_ex, gemm_ex_scaled and plans of batch_count 1, or one
 * group of gemm_ex_grouped_scaled. */

/* How A and B are scaled. */
typedef enum gemm_scale_mode {
    GEMM_SCALE_NONE = 0,   /* scales of 1: a_scale and b_scale must be NULL */
    GEMM_SCALE_TENSOR = 1, /* one f32 each: *a_scale for every element of A, *b_scale of B */
    GEMM_SCALE_BLOCK = 2   /* block scales (DeepSeek-V3's): A one f32 per row of op(A) and
                              block of 128 along k, B one f32 per block of 128 x 128 of op(B)
                              (128 along k, 128 along n); layouts at gemm_scaling_t */
} gemm_scale_mode_t;

/* The scales of an FP8 call. Every pointer lies in the memory the operands lie in: host
 * pointers for host operands, device pointers of the operands' device for device operands
 * (as cuBLASLt's scale pointers are device pointers), read and written in the call's stream
 * order. Block scales count in op(A) (m x k) and op(B) (k x n), whatever the layout and
 * transposes, with kb = ceil(k / 128) blocks of k (the last one ragged when 128 does not
 * divide k, its scale applying to the values there are), as DeepSeek-V3's checkpoints and
 * DeepGEMM store them:
 *   a_scale[i + (l / 128) * ld_a_scale] scales op(A)(i, l): an m x kb column-major array,
 *     the row fastest, ld_a_scale >= max(1, m);
 *   b_scale[l / 128 + (j / 128) * ld_b_scale] scales op(B)(l, j): a kb x ceil(n / 128)
 *     column-major array, the block of k fastest, ld_b_scale >= max(1, kb) (a row-major
 *     (out, in) weight W, used as op(B) = W^T, has its scales as a row-major
 *     ceil(out / 128) x ceil(in / 128) array: ld_b_scale = ceil(in / 128)).
 * (Row-major callers store them the same way: the library swaps A's and B's scales when it
 * turns the call into its column-major transpose.) ld_a_scale and ld_b_scale are 0 for the
 * least valid value, and ignored outside GEMM_SCALE_BLOCK. Start from gemm_scaling_init. */
typedef struct gemm_scaling {
    int64_t struct_size; /* sizeof(gemm_scaling_t) (the rule at gemm_desc_t) */
    gemm_scale_mode_t mode;
    const float *a_scale; /* TENSOR: 1 value; BLOCK: the array above; NONE: NULL */
    const float *b_scale;
    int64_t ld_a_scale, ld_b_scale;
    const float *d_scale; /* NULL: 1; else one f32 that multiplies D (any mode) */
    float *amax_d;        /* NULL: not computed; else receives max |D| before d_scale (NaN
                             when an element of D is NaN; 0 when C is empty) */
} gemm_scaling_t;

/* Mode GEMM_SCALE_NONE, every pointer NULL. */
GEMM_API void gemm_scaling_init(gemm_scaling_t *scaling);

/* gemm_ex with scales (parameter 19): a_type = b_type = GEMM_F8_E4M3 or GEMM_F8_E5M2, c_type
 * f32, f16 or bf16, compute_type f32; a scaling with other types is
 * GEMM_STATUS_NOT_SUPPORTED; scaling NULL means scales of 1.
 * Refused before anything is computed, C untouched, messages naming the field: a refused
 * struct_size or mode (GEMM_STATUS_INVALID_VALUE), a NULL a_scale or b_scale that the mode
 * needs or a set one it does not (GEMM_STATUS_INVALID_POINTER, GEMM_STATUS_INVALID_VALUE),
 * ld_a_scale or ld_b_scale too small (GEMM_STATUS_INVALID_LEADING_DIM). The scale arrays and
 * amax_d must overlap neither C nor one another. With m or n 0 nothing is written (amax_d
 * included); with k 0 or alpha 0, D = d_scale * beta * C. */
GEMM_API gemm_status_t gemm_ex_scaled(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                      int64_t k, const void *alpha, const void *A, gemm_dtype_t a_type, int64_t lda,
                                      const void *B, gemm_dtype_t b_type, int64_t ldb, const void *beta, void *C,
                                      gemm_dtype_t c_type, int64_t ldc, gemm_dtype_t compute_type,
                                      const gemm_scaling_t *scaling);

/* gemm_ex_grouped with scales per group, for mixture-of-experts layers (parameter 21):
 * scalings is NULL (scales of 1 everywhere) or an array of group_count gemm_scaling_t,
 * scalings[g] applying to every matrix of group g (matrices with scales of their own go in
 * groups of one; the elements lie scalings[0].struct_size bytes apart, and each one's
 * struct_size must equal the first's). Types as gemm_ex_scaled's; scalings with other types is
 * GEMM_STATUS_NOT_SUPPORTED. Each scalings[g] is checked as gemm_ex_scaled checks its scaling,
 * against group g's m, n and k, before anything is computed, every C untouched, messages
 * naming the group and field ("group 2: parameter 21: scalings[2].ld_a_scale = ...").
 * scalings[g].amax_d receives max |D| over every matrix of group g (before d_scale; NaN when
 * any element is NaN; not written when the group writes no C). No group's amax_d may share a
 * byte with another's, with any C or with any group's scales, and no C with any group's scales
 * (GEMM_STATUS_INVALID_VALUE). Groups are computed by cpu_ref and cpu_omp on host memory,
 * by cuda_tiled and cublaslt (a launch per matrix, as their gemm_ex_scaled) on device
 * memory; a group a GPU backend cannot serve whole (say a later matrix's A misaligned for its
 * kernel) is refused before any of its matrices is computed. */
GEMM_API gemm_status_t gemm_ex_grouped_scaled(gemm_layout_t layout, const gemm_op_t *transa, const gemm_op_t *transb,
                                              const int64_t *m, const int64_t *n, const int64_t *k, const void *alpha,
                                              const void *const *A, gemm_dtype_t a_type, const int64_t *lda,
                                              const void *const *B, gemm_dtype_t b_type, const int64_t *ldb,
                                              const void *beta, void *const *C, gemm_dtype_t c_type, const int64_t *ldc,
                                              int64_t group_count, const int64_t *group_size, gemm_dtype_t compute_type,
                                              const gemm_scaling_t *scalings);

/* A masked batch of FP8 products, for the experts of a mixture-of-experts layer whose token
 * counts are known only on the device (a CUDA graph then captures one call for any counts):
 * batch_count matrices of m x n x k at strides, as gemm_ex_strided_batched's (0 shares one A
 * or B; the C matrices must not overlap), of which matrix i computes only the first rows[i]
 * rows of its C (m is the most any matrix computes): rows[i] rows of op(A) are multiplied, and
 * C's other rows are neither read nor written. rows holds batch_count int32 values (parameter
 * 22) in the operands' memory, read in the call's stream order as the scales are. On host
 * memory they are checked before anything is computed: a value outside [0, m] is
 * GEMM_STATUS_INVALID_VALUE ("rows[3] = 9 must be in [0, m = 8]"). On device memory the
 * library does not read them on the host (that would wait for the stream): the kernels read
 * them, and take a value outside [0, m] as the nearer bound. scalings is NULL (scales of 1) or
 * batch_count gemm_scaling_t, scalings[i] matrix i's, laid out and checked as
 * gemm_ex_grouped_scaled's are (messages "matrix 2: parameter 24: scalings[2].a_scale ...");
 * its amax_d receives max |D| over the rows computed, 0 when rows[i] is 0. rows must share no
 * byte with any C or amax_d. Types as gemm_ex_scaled's. Computed by cpu_ref and cpu_omp on
 * host memory (each matrix as a call of rows[i] rows) and by cuda_tiled's wgmma FP8 kernels on
 * device memory (a launch per matrix, its tiles past rows[i] skipped), which need k > 0 and
 * alpha != 0 there; cublaslt, which cannot read a row count on the device, refuses it. */
GEMM_API gemm_status_t gemm_ex_masked_scaled(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                             int64_t n, int64_t k, const void *alpha, const void *A,
                                             gemm_dtype_t a_type, int64_t lda, int64_t stride_a, const void *B,
                                             gemm_dtype_t b_type, int64_t ldb, int64_t stride_b, const void *beta,
                                             void *C, gemm_dtype_t c_type, int64_t ldc, int64_t stride_c,
                                             int64_t batch_count, const int32_t *rows, gemm_dtype_t compute_type,
                                             const gemm_scaling_t *scalings);

/* ---- Problem descriptions and capability queries ------------------------------------ */

/* Structs with a struct_size (gemm_desc_t, gemm_backend_traits_t, gemm_measure_options_t)
 * only ever gain fields at the end, each new field's 0 meaning what the library did without
 * it. struct_size is the struct's sizeof as the caller was compiled, and the library uses the
 * fields it knows: a struct_size smaller than this library's sizeof is refused; a larger one
 * (a newer gemm.h's) is accepted only when every byte past this library's sizeof is 0 (the
 * fields this library does not know, left at 0); a struct_size above 4096 is refused as never
 * set. A refused struct_size is GEMM_STATUS_INVALID_VALUE, the message naming the struct.
 * Start from the struct's init function, or zero the struct and set struct_size. A flag field
 * of these structs and of gemm_tune_request_t ("1: ...") is 0 or 1; any other value is
 * GEMM_STATUS_INVALID_VALUE. */

/* A class of calls without their data: types, layout, shape, leading dimensions, batch and the
 * memory the operands live in. Start from gemm_desc_init, then change what differs. */
typedef struct gemm_desc {
    int64_t struct_size; /* sizeof(gemm_desc_t) as the caller was compiled (the rule above) */
    gemm_layout_t layout;
    gemm_op_t transa;
    gemm_op_t transb;
    int64_t m, n, k;
    gemm_dtype_t a_type; /* the types as gemm_ex takes them */
    gemm_dtype_t b_type;
    gemm_dtype_t c_type;
    gemm_dtype_t compute_type;
    int64_t lda, ldb, ldc; /* 0: the least valid leading dimension */
    int64_t batch_count;   /* 1: a plain GEMM */
    int64_t stride_a;      /* elements between batch matrices, as the strided-batched */
    int64_t stride_b;      /* calls take them (0 shares one A or B; negative is refused */
    int64_t stride_c;      /* whatever batch_count is), or GEMM_DESC_TIGHT: one matrix's
                              span, the matrices back to back */
    int device;            /* -1: host memory; >= 0: memory of that CUDA device */
    int alignment;         /* bytes every operand pointer is a multiple of */
    int beta_zero;         /* 1: beta is 0 (C is written, never read) */
    /* The epilogue of the class (see gemm_epilogue_t): a plan made with one is run with
     * gemm_plan_run_epilogue, whose epilogue must match these fields; gemm_measure applies it
     * to every measured call. */
    gemm_activation_t activation; /* GEMM_ACTIVATION_NONE: none */
    gemm_bias_t bias_axis;        /* GEMM_BIAS_NONE: none */
    int aux;                      /* 1: forward runs save the activation's input (backward
                                     activations read one whatever this says) */
    int64_t ld_aux;               /* 0: the least valid leading dimension */
    int check_pointers;           /* 1: every run of a plan made from the desc asks the driver
                                     where A, B and C lie and refuses other memory than device
                                     says; 0: runs trust device (gemm_plan_run says what a
                                     wrong pointer then does). GEMM_CHECK_POINTERS=1 checks
                                     every plan's runs. Calls always check. */
    gemm_scale_mode_t scale_mode; /* FP8 types only: the scaling mode of the class; a plan made
                                     with one other than GEMM_SCALE_NONE is run with
                                     gemm_plan_run_scaled. gemm_measure measures with scales of
                                     this mode (values in [1/2, 2), block scales at their least
                                     leading dimensions). The tune cache keys block scales
                                     apart ("scales=" in the key: gemm_tune_key tunes such a
                                     class); per-tensor scales only multiply alpha, and their
                                     calls share the unscaled class's choice */
} gemm_desc_t;

#define GEMM_DESC_TIGHT (-1)

/* A plain GEMM of one type (f16 and bf16 compute in f32, C of the same type): column-major
 * unless layout says otherwise, least leading dimensions, host memory, 16-byte alignment,
 * beta not known to be 0. */
GEMM_API void gemm_desc_init(gemm_desc_t *desc, gemm_dtype_t type, gemm_layout_t layout, gemm_op_t transa,
                             gemm_op_t transb, int64_t m, int64_t n, int64_t k);

/* What a backend computes on. */
typedef enum gemm_backend_kind {
    GEMM_BACKEND_HOST = 1,        /* the host CPU */
    GEMM_BACKEND_DEVICE = 2,      /* one CUDA device (host pointers are staged) */
    GEMM_BACKEND_MULTI_DEVICE = 3 /* several CUDA devices at once, from host memory */
} gemm_backend_kind_t;

typedef struct gemm_backend_traits {
    int64_t struct_size; /* sizeof(gemm_backend_traits_t): the caller sets it (the rule at
                            gemm_desc_t); the library fills only the fields it knows */
    gemm_backend_kind_t kind;
    int reference;    /* 1: the oracle (cpu_ref): correct on every problem, never fast;
                         the tuner and gemm bench time it only when named */
    int builtin_rank; /* its place in the built-in rule's order among the backends of its
                         kind (0: tried first); -1: the built-in rule never picks it */
} gemm_backend_traits_t;

/* What backend ("name", a variant after ':' is ignored) is, whether or not it can run here. */
GEMM_API gemm_status_t gemm_backend_get_traits(const char *backend, gemm_backend_traits_t *traits);

/* Whether backend ("name" or "name:variant") serves calls of desc on this machine:
 * GEMM_STATUS_SUCCESS, or what a call forced onto it would return, with the reason in
 * gemm_last_error(): GEMM_STATUS_UNKNOWN_BACKEND (this build), GEMM_STATUS_BACKEND_UNAVAILABLE
 * (this machine), GEMM_STATUS_INVALID_VALUE (a variant it does not have), then the argument
 * status an invalid desc is, GEMM_STATUS_INVALID_CONFIG (an invalid GEMM_* setting, which
 * fails every call), GEMM_STATUS_NOT_SUPPORTED (this problem). A variant that needs what the
 * problem lacks (an instruction set, an alignment) may still refuse a call. With backend
 * NULL: whether a call of desc would be served by the selection in force (gemm_set_backend,
 * GEMM_BACKEND or auto), checked in the same order. */
GEMM_API gemm_status_t gemm_backend_supports(const char *backend, const gemm_desc_t *desc);

/* The variant ids of backend ("name"; NULL is GEMM_STATUS_INVALID_POINTER, parameter 1):
 * with a desc, those worth timing for it (what gemm tune times; "" is the backend's default),
 * the desc first checked as gemm_backend_supports does; with desc NULL, every id this build
 * of the backend has, whether or not this machine can run it (none: only its default), or
 * GEMM_STATUS_NOT_SUPPORTED for a backend whose ids are made for a problem (cuBLASLt's, from
 * its heuristic). *ids points to *count strings that live until the next call of this
 * function on this thread. */
GEMM_API gemm_status_t gemm_backend_variants(const char *backend, const gemm_desc_t *desc, const char *const **ids,
                                             int64_t *count);

/* ---- Measurement ----------------------------------------------------------------------- */

/* How gemm_measure times. Start from gemm_measure_options_init. */
typedef struct gemm_measure_options {
    int64_t struct_size; /* sizeof(gemm_measure_options_t), set by gemm_measure_options_init (the
                            rule at gemm_desc_t) */
    double budget_ms;    /* per backend, for its timed samples over every round (1000); its
                            checked call, warm-ups and min_samples come on top */
    int min_samples;     /* per backend, taken whatever the budget, unless one call alone
                            outlasts it: then one sample of one call (3) */
    int max_samples;     /* (100) */
    int rounds;          /* the backends take turns this many times (3) */
    int warmup_samples;  /* untimed samples before each round's (1); on the host warm-up also
                            lasts 150 ms, while another runtime's idle threads spin down */
    int check;           /* 1: each backend's first result is checked (1) */
    int pinned;          /* 1: host operands page-locked, as cudaHostRegister makes them (0) */
    double alpha, beta;  /* the scalars of the measured calls (1, 0) */
} gemm_measure_options_t;

GEMM_API void gemm_measure_options_init(gemm_measure_options_t *options);

/* One backend as gemm_measure found it. Strings live until the next gemm_measure on this
 * thread. */
typedef struct gemm_measurement {
    const char *backend;      /* as asked: "cpu_omp", "cuda_tiled:<variant>", "auto" */
    gemm_status_t status;     /* GEMM_STATUS_SUCCESS, or what its run failed with */
    const char *error;        /* the failure's message, or "" */
    int checked;              /* 1 when its result was checked */
    int correct;              /* 1 when checked and within the tolerance */
    const char *check_method; /* "reference" (every element), "vector" (C*t), "sampled" (512
                                 elements, for a large desc with an epilogue), or "" */
    double check_ratio;       /* largest |error| / tolerance seen (<= 1 passes) */
    const char *note;         /* where a wrong result is wrong, or a remark on the timing */
    int timed;                /* 1 when it ran correctly (or unchecked) and was timed */
    double median_us;         /* per call */
    double best_us;
    double spread;           /* median over the fastest sample, minus 1 */
    double round_spread;     /* the slowest round's median over the fastest's, minus 1; -1
                                with fewer than two timed rounds */
    int64_t samples;         /* timed samples */
    int64_t runs_per_sample; /* short calls are timed back to back in one sample */
} gemm_measurement_t;

/* Measures each of count backends ("name", "name:variant" or "auto", the selection a call
 * makes without gemm_set_backend; a NULL name is GEMM_STATUS_INVALID_POINTER) on operands
 * the library makes for desc: random values in
 * [-1, 1], in as many sets as it takes to exceed twice the cache of what computes, each
 * timed call taking the next. The operands have the desc's leading dimensions (0: the least);
 * desc->alignment places them: 16 or more, each starts on a 64-byte boundary; less, one
 * element past such a boundary, as a misaligned caller's would. A batch (batch_count > 1)
 * must have GEMM_DESC_TIGHT strides, others are GEMM_STATUS_NOT_SUPPORTED; a desc with an
 * epilogue (activation, bias_axis, aux) is one matrix, measured with a bias, aux and bias
 * gradient the library makes as well (aux with desc->ld_aux, 0: the least), each call applying
 * the epilogue as a gemm_ex_epilogue call would, fused or in a pass. The calls take
 * options' alpha and beta; desc->beta_zero = 1 with options->beta != 0 is
 * GEMM_STATUS_INVALID_VALUE. options may be NULL: gemm_measure_options_init's defaults.
 * Each backend's first call is checked against a double-precision reference (every element
 * when m*n*k*batch <= 2^27, else C*t against alpha*A*(B*t) + beta*C0*t for a random vector t,
 * C0 being C before the call, or with an epilogue 512 random elements of C and aux, and a bias
 * gradient against the sums of the C written; with beta = 0 C starts as NaN, so a backend
 * reading it shows); a wrong one is not timed. Then the backends take turns: in each round a warm-up and a share
 * of the samples, the order of the round starting one further on. Device problems
 * (desc->device >= 0) run on a stream of the library's and are timed with CUDA events, host
 * problems with a steady clock around the call (staging included for GPU backends). A
 * backend that cannot run the problem gets its status in its report; the call fails only for
 * its own arguments (desc, options, an invalid GEMM_* setting) or when the operands cannot be
 * made. */
GEMM_API gemm_status_t gemm_measure(const gemm_desc_t *desc, const char *const *backends, int64_t count,
                                    const gemm_measure_options_t *options, gemm_measurement_t *reports);

/* ---- Plans ----------------------------------------------------------------------------- */

/* A class of calls (a gemm_desc_t) with its backend and variant decided once: what the
 * selection in force (gemm_set_backend, GEMM_BACKEND or auto, the tune cache included)
 * chooses for desc when the plan is made. Later changes of the selection or the cache do not
 * change a plan. A run checks only what depends on its operands, then runs the decided
 * backend: no lookup, no allocation. Any number of threads may run one plan at once.
 * Every function taking a plan checks that it is live (made by gemm_plan_create, not yet
 * destroyed) without reading through it: a destroyed plan is GEMM_STATUS_INVALID_VALUE
 * ("parameter 1: plan is not a live gemm_plan_t (destroyed?)"), unless a later
 * gemm_plan_create returned the same address, which the handle then names. */
typedef struct gemm_plan *gemm_plan_t;

/* Decides and stores the plan for desc in *plan; desc is checked as gemm_backend_supports
 * checks it, and a backend the selection forces that cannot serve desc fails here with the
 * status a call would get. On failure *plan is left unchanged. */
GEMM_API gemm_status_t gemm_plan_create(const gemm_desc_t *desc, gemm_plan_t *plan);

/* C = alpha * op(A) * op(B) + beta * C for the plan's class, on the operands of this run:
 * alpha and beta point to a value of desc's compute type (float, double, or a complex pair
 * of either); A, B
 * and C, and for a batch the matrices the desc's strides place after them, as a call takes
 * them. Refused, C untouched: a NULL pointer the run needs (A and B when k > 0 and alpha !=
 * 0, C when the class is not empty), a pointer that is not a multiple of desc->alignment,
 * beta != 0 for a plan made with desc->beta_zero = 1 (GEMM_STATUS_INVALID_VALUE).
 * The operands must lie in the memory desc->device names (managed memory serves a device
 * plan). A run trusts that, as cuBLAS trusts its pointers, because asking the CUDA driver
 * where each pointer lies costs more than the rest of a run's host work. A plan made with
 * desc->check_pointers = 1, or any plan under GEMM_CHECK_POINTERS=1, asks on every run and
 * refuses other memory (GEMM_STATUS_MIXED_MEMORY_SPACES, C untouched). Without the check a
 * wrong pointer's effect is undefined, as with cuBLAS: a device plan's kernels typically
 * fault on host memory (a CUDA illegal-address error, after which the CUDA context and
 * every later call on it fail), and a host plan's CPU code on device memory (a
 * segmentation fault). Device plans are enqueued on the calling thread's stream
 * (gemm_set_stream) and return before the result is ready, as calls do. Positions in
 * messages: plan 1, alpha 2, A 3, B 4, beta 5, C 6. */
GEMM_API gemm_status_t gemm_plan_run(gemm_plan_t plan, const void *alpha, const void *A, const void *B,
                                     const void *beta, void *C);

/* gemm_plan_run for a plan made with an epilogue (desc->activation, bias_axis or aux): the
 * run's epilogue (parameter 7) must have the desc's activation, bias_axis and ld_aux (the
 * least when desc->ld_aux was 0), and an aux exactly when the desc has one or the activation
 * is a backward one; its pointers are checked as gemm_ex_epilogue checks them (a plan made
 * without one takes only an epilogue that adds nothing). gemm_plan_run refuses a plan made
 * with an epilogue (GEMM_STATUS_INVALID_VALUE). */
GEMM_API gemm_status_t gemm_plan_run_epilogue(gemm_plan_t plan, const void *alpha, const void *A, const void *B,
                                              const void *beta, void *C, const gemm_epilogue_t *epilogue);

/* gemm_plan_run with an FP8 plan's scales (parameter 7, checked as gemm_ex_scaled checks
 * them): scaling->mode must be the desc's scale_mode (NULL stands for GEMM_SCALE_NONE), and
 * d_scale and amax_d may be set in any mode. gemm_plan_run refuses a plan whose scale_mode is
 * not GEMM_SCALE_NONE (GEMM_STATUS_INVALID_VALUE); a plan of other types refuses a scaling
 * that is not NULL. */
GEMM_API gemm_status_t gemm_plan_run_scaled(gemm_plan_t plan, const void *alpha, const void *A, const void *B,
                                            const void *beta, void *C, const gemm_scaling_t *scaling);

/* The backend and variant ("" = its default) the plan runs, and why it was chosen ("auto:
 * tune cache hit (plan)", ...). The strings live as long as the plan; any pointer may be NULL.
 * An empty class (m, n or batch_count 0) has no backend: "" and "". */
GEMM_API gemm_status_t gemm_plan_get_backend(gemm_plan_t plan, const char **backend, const char **variant,
                                             const char **why);

/* Frees the plan; NULL is allowed and does nothing, and so does a plan that is not live. It
 * leaves gemm_last_error() as it was (a failed run's reason may be read after it). No run of
 * it may be in flight on a host thread (device work it enqueued may be: it holds nothing the
 * plan owns). */
GEMM_API void gemm_plan_destroy(gemm_plan_t plan);

/* ---- Tuning ---------------------------------------------------------------------------- */

/* A problem class to tune: the tuner allocates and fills its own operands. */
typedef struct gemm_tune_request {
    gemm_dtype_t ab_type; /* A and B */
    gemm_dtype_t c_type;
    gemm_layout_t layout;
    gemm_op_t transa;
    gemm_op_t transb;
    int64_t m, n, k;
    int64_t batch_count;  /* 1 for a plain GEMM */
    int64_t ld_padding;   /* elements added to every leading dimension (0: tight; -1: the
                             least padding that keeps them 16-byte aligned, which is what a
                             GEMM_RECORD line's "ld=padded align=16" stands for) */
    int misaligned;       /* 1: operands start one element past a 16-byte boundary */
    int beta_zero;        /* 1: tune for beta = 0 (C not read); 0: beta != 0 */
    int device;           /* -1: host pointers; >= 0: device pointers on that CUDA device */
    double budget_ms;     /* shared by the timed samples of this shape's candidates; their
                             checks, warm-ups and least samples come on top; <= 0: 2000 */
    const char *backends; /* comma-separated names to consider; NULL or "": all */
} gemm_tune_request_t;

/* One candidate the tuner ran. Strings live until the next gemm_tune on this thread. */
typedef struct gemm_tune_candidate {
    const char *backend;
    const char *variant; /* "" = the backend's default */
    double median_us;    /* 0 when it failed or was rejected */
    int correct;         /* 0: failed, or its result was wrong (see note) */
    const char *note;
    double spread; /* median over the fastest sample, minus 1: how much the timings
                      of this candidate disagreed (0.05: 5 %) */
} gemm_tune_candidate_t;

typedef struct gemm_tune_report {
    const char *backend; /* the winner */
    const char *variant;
    double median_us;
    const char *default_backend; /* the built-in rule's choice, always a candidate */
    double default_median_us;
    int64_t candidate_count;
    const gemm_tune_candidate_t *candidates;
    int stored;    /* 1 when written to the tune cache */
    int disturbed; /* 1 when the winner's or the default's spread exceeds
                      0.25 in each of the 3 timings gemm_tune made:
                      something else had the CPU or GPU, and the choice
                      may be wrong, so it is not stored; tune again on a
                      quiet machine */
} gemm_tune_report_t;

/* Times every (backend, variant) that can serve the request, checks each result against a
 * reference (a wrong one is rejected), and reports the winner: the fastest correct
 * candidate, or the built-in default unless that is beaten by more than 2%. Timings that
 * disagree (disturbed) are taken again, twice at most, half a second apart. With store = 1
 * the winner is added to the tune cache (atomically; several processes may tune at once),
 * unless its timings stayed disturbed (report.stored 0, the call still succeeds);
 * store is 0 or 1 (another value is GEMM_STATUS_INVALID_VALUE, as for every flag argument).
 * The report's strings live until the next gemm_tune call on this thread. */
GEMM_API gemm_status_t gemm_tune(const gemm_tune_request_t *request, int store, gemm_tune_report_t *report);

/* gemm_tune for the class a tune key names, as GEMM_RECORD writes keys and
 * gemm_tune_cache_entries lists them: "bf16 bf16 TN 14336 4096 4096 batch=1 ld=tight align=16
 * space=device beta=0 epilogue=gelu+bias(rows)+aux". The classes a request cannot describe
 * are tuned this way:
 * - those with an epilogue (after the key's beta: its activation, then "+bias(rows|columns)"
 *   or for a backward one "+bias_grad(rows|columns)", then "+aux" when a forward one saves its
 *   input), each candidate timed as a gemm_ex_epilogue call runs it (fused or followed by the
 *   library's pass);
 * - pointer-array batches ("batch=64 ... beta=0 form=pointers": a gemm_*_batched call of 64
 *   matrices, or a group of 64 in gemm_ex_grouped), each candidate timed as such a call runs
 *   it (cublas's variants one_call and streams are its two ways of serving one);
 * - block-scaled FP8 classes ("... beta=0 scales=1x128,128x128": the block shapes of the
 *   canonical A and B), each candidate measured and checked with block scales.
 * device: the CUDA device for a key of device memory
 * (space=device); ignored for others. budget_ms, backends, store and the report as gemm_tune
 * takes them. The keys of the calls beside GEMM are tuned this way too: "omatcopy f32 T 4096
 * 1024 space=host" (gemm_omatcopy) and "spmm_csr f32 row NN 4096 64 4096 density=1e-2
 * space=host beta=0" (gemm_spmm_csr, gemm_spmm_coo), each backend that serves the call
 * checked against cpu_ref (a transpose bit for bit) and timed (docs/TUNING.md), a backend
 * that assumes sorted A without repeats (cusparse) only where backends names it; an empty
 * one (rows, cols, m or n 0) is GEMM_STATUS_INVALID_VALUE. The winner is stored under key
 * exactly as written (gemm_tune_verify finds it by that text). GEMM_STATUS_INVALID_VALUE: a
 * key that does not parse, and one that no call has: types no call has (C of A's type, or
 * f32 for f16 and bf16), or "align=16" with "ld=tight" where the tight leading dimensions or
 * batch strides are not multiples of 16 bytes (such calls are "align=elem"). */
GEMM_API gemm_status_t gemm_tune_key(const char *key, int device, double budget_ms, const char *backends, int store,
                                     gemm_tune_report_t *report);

/* Path of the tune cache file: GEMM_TUNE_CACHE, else under $XDG_CACHE_HOME or ~/.cache. */
GEMM_API const char *gemm_tune_cache_path(void);

/* Whether a store to the tune cache would be accepted, checked without tuning first:
 * GEMM_STATUS_SUCCESS, or GEMM_STATUS_EXECUTION_FAILED with gemm_last_error() naming the path
 * and why (not a tune cache, read-only, a folder or FIFO or device, a folder that cannot be
 * created or written). It makes the checks a store makes before writing, and creates and at
 * once removes a temporary file (or folder) where the store would create its own, since that
 * is the only test that holds for root. The cache is left as it was. */
GEMM_API gemm_status_t gemm_tune_cache_check(void);

/* One entry of the tune cache. */
typedef struct gemm_tune_entry {
    const char *key;             /* the class of calls, as GEMM_RECORD writes it: canonical
                                    (column-major) "f32 f32 NN 64 64 64 batch=1 ld=tight ..." */
    const char *backend;         /* the stored choice */
    const char *variant;         /* "" = the backend's default */
    double median_us;            /* its time when tuned */
    const char *default_backend; /* the built-in rule's choice then, and its time */
    double default_median_us;
} gemm_tune_entry_t;

/* The entries auto uses: this machine's section of the tune cache, without those this build
 * cannot run, ordered by key. *entries points to *count entries that live until the next call
 * of this function on this thread. */
GEMM_API gemm_status_t gemm_tune_cache_entries(const gemm_tune_entry_t **entries, int64_t *count);

/* One host backend's time model in a gemm_host_rates_t: fixed_us + the longer of
 * operations / gflops and operand bytes / gbs. */
typedef struct gemm_host_backend_rate {
    const char *backend;
    double gflops;
    double fixed_us; /* per call, beyond the arithmetic */
    double gbs;      /* operand bytes per second (1e9) on a matrix times a vector;
                        0 where arithmetic bounds that too */
} gemm_host_backend_rate_t;

/* This machine's rates for GEMMs on host memory, from which auto's built-in rule sends a
 * host-memory call that no entry covers to the host backend, or the GPU, whose estimate is
 * shortest (docs/TUNING.md). */
typedef struct gemm_host_rates {
    gemm_dtype_t type;        /* GEMM_F32 (standing for f32, f16, bf16 and c32) or GEMM_F64
                                 (f64 and c64) */
    const char *host_backend; /* the host backend of the highest rate, and that rate (the
                                 first of hosts) */
    double host_gflops;
    const char *gpu_backend;               /* the device backend timed, staging host operands; "" where
                                              the rates have no GPU part (the fields below are then 0) */
    double gpu_gflops;                     /* its rate on device memory */
    double link_gbs;                       /* operand bytes between host and device memory, GB/s (1e9) */
    double gpu_fixed_us;                   /* per call, beyond the traffic and the arithmetic */
    const gemm_host_backend_rate_t *hosts; /* every host backend timed, highest rate first */
    int64_t host_count;
    double measured_ms;     /* how long measuring these rates took; 0 when not recorded */
    double locked_link_gbs; /* the link and the fixed cost where every operand is page-locked
                               (cudaMallocHost, cudaHostRegister); 0 where not measured, and
                               link_gbs and gpu_fixed_us stand for them */
    double locked_fixed_us;
} gemm_host_rates_t;

/* The rates of this machine's section of the tune cache, f32's first: *count is 0, 1 or 2.
 * Auto measures a type's rates, briefly (docs/TUNING.md gives the times), the first time a
 * host-memory call needs them: the host part where more than one host backend (the reference
 * aside) could serve it, the GPU part where a GPU backend could (2^21 operations or more);
 * never with GEMM_TUNE=off. gemm_tune with store = 1 of a host-memory problem measures them
 * too. *rates points to entries that live until the next
 * call of this function on this thread. */
GEMM_API gemm_status_t gemm_tune_cache_rates(const gemm_host_rates_t **rates, int64_t *count);

/* What gemm_tune_verify found. Strings live until the next gemm_tune_verify on this thread. */
typedef struct gemm_tune_verdict {
    const char *default_backend; /* the built-in rule's choice now: what auto would run for
                                    the class without the entry */
    int measured;                /* 0: the entry is that choice (it holds), or its backend
                                    cannot serve the class here (it does not) */
    double median_us;            /* the stored choice, head to head with the default */
    double default_median_us;
    int holds;        /* 1: a correct result, at most 2 % slower than the default */
    int disturbed;    /* as in gemm_tune_report_t: measure again on a quiet machine */
    int removed;      /* 1: removed from the tune cache */
    const char *note; /* why it does not hold, or why it was not measured */
} gemm_tune_verdict_t;

/* Measures the stored choice for key (an entry's key, as gemm_tune_cache_entries gives it)
 * again against the built-in rule's choice, the two taking turns in 3 rounds within budget_ms
 * (<= 0: 2000; checks and warm-ups come on top), each first result checked against a
 * reference, on operands the library makes for the class: the calls a caller makes, timed
 * as gemm_measure times them. device: the CUDA device for a key of device memory
 * (space=device); ignored for others. With remove = 1 an entry that does not hold is removed
 * from the tune cache, in this process and in the file: auto then treats its class as any
 * untuned shape (a nearby entry, else the built-in rule); remove is 0 or 1. A key that does
 * not parse, that no call has (as gemm_tune_key refuses it), or that has no entry:
 * GEMM_STATUS_INVALID_VALUE. */
GEMM_API gemm_status_t gemm_tune_verify(const char *key, int device, double budget_ms, int remove,
                                        gemm_tune_verdict_t *verdict);

#ifdef __cplusplus
}
#endif

#endif /* GEMM_GEMM_H */
