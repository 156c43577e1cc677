/* raw_enum_calls.c: entry points called with enum arguments given as plain ints, as any C
 * caller may pass them; C++ cannot form such out-of-range enum values without undefined
 * behaviour, so test_errors.cpp makes these calls through here. */
#include "raw_enum_calls.h"

gemm_status_t raw_sgemm(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                        const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                        int64_t ldc) {
    return gemm_sgemm((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A, lda, B,
                      ldb, beta, C, ldc);
}

gemm_status_t raw_gemm_ex(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                          const void *alpha, const void *A, int a_type, int64_t lda, const void *B, int b_type,
                          int64_t ldb, const void *beta, void *C, int c_type, int64_t ldc, int compute_type) {
    return gemm_ex((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A,
                   (gemm_dtype_t)a_type, lda, B, (gemm_dtype_t)b_type, ldb, beta, C, (gemm_dtype_t)c_type, ldc,
                   (gemm_dtype_t)compute_type);
}

gemm_status_t raw_gemm_ex_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                          const void *alpha, const void *A, int a_type, int64_t lda,
                                          int64_t stride_a, const void *B, int b_type, int64_t ldb,
                                          int64_t stride_b, const void *beta, void *C, int c_type, int64_t ldc,
                                          int64_t stride_c, int64_t batch_count, int compute_type) {
    return gemm_ex_strided_batched((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha,
                                   A, (gemm_dtype_t)a_type, lda, stride_a, B, (gemm_dtype_t)b_type, ldb,
                                   stride_b, beta, C, (gemm_dtype_t)c_type, ldc, stride_c, batch_count,
                                   (gemm_dtype_t)compute_type);
}

const char *raw_status_string(int status) { return gemm_status_string((gemm_status_t)status); }
