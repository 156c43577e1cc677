/* raw_enum_calls.c: entry points called with enum arguments given as plain ints, as any C
 * caller may pass them; C++ cannot form such out-of-range enum values without undefined
 * behaviour, so the tests and the fuzzers make these calls through here. */
#include "raw_enum_calls.h"

#include <stddef.h>
#include <string.h>

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

gemm_status_t raw_plan_create(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, int a_type,
                              int b_type, int c_type, int compute_type, int64_t lda, int64_t ldb, int64_t ldc,
                              int64_t batch_count, int64_t stride_a, int64_t stride_b, int64_t stride_c, int device,
                              int alignment, int beta_zero, gemm_plan_t *plan) {
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k);
    d.layout = (gemm_layout_t)layout;
    d.transa = (gemm_op_t)transa;
    d.transb = (gemm_op_t)transb;
    d.a_type = (gemm_dtype_t)a_type;
    d.b_type = (gemm_dtype_t)b_type;
    d.c_type = (gemm_dtype_t)c_type;
    d.compute_type = (gemm_dtype_t)compute_type;
    d.lda = lda;
    d.ldb = ldb;
    d.ldc = ldc;
    d.batch_count = batch_count;
    d.stride_a = stride_a;
    d.stride_b = stride_b;
    d.stride_c = stride_c;
    d.device = device;
    d.alignment = alignment;
    d.beta_zero = beta_zero;
    return gemm_plan_create(&d, plan);
}

gemm_status_t raw_dgemm(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, double alpha,
                        const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                        int64_t ldc) {
    return gemm_dgemm((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A, lda, B,
                      ldb, beta, C, ldc);
}

gemm_status_t raw_sgemm_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        float alpha, const float *A, int64_t lda, int64_t stride_a,
                                        const float *B, int64_t ldb, int64_t stride_b, float beta, float *C,
                                        int64_t ldc, int64_t stride_c, int64_t batch_count) {
    return gemm_sgemm_strided_batched((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha,
                                      A, lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch_count);
}

gemm_status_t raw_dgemm_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        double alpha, const double *A, int64_t lda, int64_t stride_a,
                                        const double *B, int64_t ldb, int64_t stride_b, double beta, double *C,
                                        int64_t ldc, int64_t stride_c, int64_t batch_count) {
    return gemm_dgemm_strided_batched((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha,
                                      A, lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch_count);
}

gemm_status_t raw_tune(const raw_tune_request *r, int store, gemm_tune_report_t *report) {
    gemm_tune_request_t request;
    if (!r) return gemm_tune(NULL, store, report);
    request.ab_type = (gemm_dtype_t)r->ab_type;
    request.c_type = (gemm_dtype_t)r->c_type;
    request.layout = (gemm_layout_t)r->layout;
    request.transa = (gemm_op_t)r->transa;
    request.transb = (gemm_op_t)r->transb;
    request.m = r->m;
    request.n = r->n;
    request.k = r->k;
    request.batch_count = r->batch_count;
    request.ld_padding = r->ld_padding;
    request.misaligned = r->misaligned;
    request.beta_zero = r->beta_zero;
    request.device = r->device;
    request.budget_ms = r->budget_ms;
    request.backends = r->backends;
    return gemm_tune(&request, store, report);
}

gemm_status_t raw_gemm_ex_epilogue(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                   const void *alpha, const void *A, int a_type, int64_t lda, const void *B,
                                   int b_type, int64_t ldb, const void *beta, void *C, int c_type, int64_t ldc,
                                   int compute_type, int with_epilogue, int64_t struct_size, int activation,
                                   int bias_axis, const void *bias, void *bias_grad, void *aux, int64_t ld_aux) {
    /* Room for a newer header's larger struct, its tail zero. */
    union {
        gemm_epilogue_t e;
        unsigned char bytes[sizeof(gemm_epilogue_t) + 64];
    } u;
    memset(&u, 0, sizeof u);
    u.e.struct_size = struct_size;
    u.e.activation = (gemm_activation_t)activation;
    u.e.bias_axis = (gemm_bias_t)bias_axis;
    u.e.bias = bias;
    u.e.bias_grad = bias_grad;
    u.e.aux = aux;
    u.e.ld_aux = ld_aux;
    return gemm_ex_epilogue((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A,
                            (gemm_dtype_t)a_type, lda, B, (gemm_dtype_t)b_type, ldb, beta, C, (gemm_dtype_t)c_type,
                            ldc, (gemm_dtype_t)compute_type, with_epilogue ? &u.e : NULL);
}
