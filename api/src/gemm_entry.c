/* gemm_entry.c: the exported entry points that take enum arguments. They are written in C
 * because a C caller may pass any int where gemm.h says gemm_dtype_t (say), and only C reads
 * such a value without undefined behaviour; the C++ implementation receives plain ints and
 * answers a value that names no enumerator with GEMM_STATUS_INVALID_*. */
#include <stddef.h>

#include "entry_points.h"

gemm_status_t gemm_sgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                         int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                         const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    api_call call = {(int)layout, (int)transa, (int)transb, m, n, k, &alpha, A, GEMM_F32, lda, 0,
                     B, GEMM_F32, ldb, 0, &beta, C, GEMM_F32, ldc, 0, 1, GEMM_F32, api_entry_typed};
    return api_run(&call);
}

gemm_status_t gemm_dgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                         int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                         const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
    api_call call = {(int)layout, (int)transa, (int)transb, m, n, k, &alpha, A, GEMM_F64, lda, 0,
                     B, GEMM_F64, ldb, 0, &beta, C, GEMM_F64, ldc, 0, 1, GEMM_F64, api_entry_typed};
    return api_run(&call);
}

gemm_status_t gemm_sgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa,
                                         gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                                         float alpha, const float *A, int64_t lda,
                                         int64_t stride_a, const float *B, int64_t ldb,
                                         int64_t stride_b, float beta, float *C, int64_t ldc,
                                         int64_t stride_c, int64_t batch_count) {
    api_call call = {(int)layout, (int)transa, (int)transb, m, n, k, &alpha, A, GEMM_F32, lda,
                     stride_a, B, GEMM_F32, ldb, stride_b, &beta, C, GEMM_F32, ldc, stride_c,
                     batch_count, GEMM_F32, api_entry_typed_batched};
    return api_run(&call);
}

gemm_status_t gemm_dgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa,
                                         gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                                         double alpha, const double *A, int64_t lda,
                                         int64_t stride_a, const double *B, int64_t ldb,
                                         int64_t stride_b, double beta, double *C, int64_t ldc,
                                         int64_t stride_c, int64_t batch_count) {
    api_call call = {(int)layout, (int)transa, (int)transb, m, n, k, &alpha, A, GEMM_F64, lda,
                     stride_a, B, GEMM_F64, ldb, stride_b, &beta, C, GEMM_F64, ldc, stride_c,
                     batch_count, GEMM_F64, api_entry_typed_batched};
    return api_run(&call);
}

gemm_status_t gemm_ex(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                      int64_t n, int64_t k, const void *alpha, const void *A,
                      gemm_dtype_t a_type, int64_t lda, const void *B, gemm_dtype_t b_type,
                      int64_t ldb, const void *beta, void *C, gemm_dtype_t c_type, int64_t ldc,
                      gemm_dtype_t compute_type) {
    api_call call = {(int)layout, (int)transa, (int)transb, m, n, k, alpha, A, (int)a_type, lda,
                     0, B, (int)b_type, ldb, 0, beta, C, (int)c_type, ldc, 0, 1,
                     (int)compute_type, api_entry_ex};
    return api_run(&call);
}

gemm_status_t gemm_ex_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb,
                                      int64_t m, int64_t n, int64_t k, const void *alpha,
                                      const void *A, gemm_dtype_t a_type, int64_t lda,
                                      int64_t stride_a, const void *B, gemm_dtype_t b_type,
                                      int64_t ldb, int64_t stride_b, const void *beta, void *C,
                                      gemm_dtype_t c_type, int64_t ldc, int64_t stride_c,
                                      int64_t batch_count, gemm_dtype_t compute_type) {
    api_call call = {(int)layout, (int)transa, (int)transb, m, n, k, alpha, A, (int)a_type, lda,
                     stride_a, B, (int)b_type, ldb, stride_b, beta, C, (int)c_type, ldc,
                     stride_c, batch_count, (int)compute_type, api_entry_ex_batched};
    return api_run(&call);
}

const char *gemm_status_string(gemm_status_t status) { return api_status_text((int)status); }

gemm_status_t gemm_tune(const gemm_tune_request_t *request, int store, gemm_tune_report_t *report) {
    api_tune_request r;
    if (!request) return api_tune(NULL, store, report);
    r.ab_type = (int)request->ab_type;
    r.c_type = (int)request->c_type;
    r.layout = (int)request->layout;
    r.transa = (int)request->transa;
    r.transb = (int)request->transb;
    r.m = request->m;
    r.n = request->n;
    r.k = request->k;
    r.batch_count = request->batch_count;
    r.ld_padding = request->ld_padding;
    r.misaligned = request->misaligned;
    r.beta_zero = request->beta_zero;
    r.device = request->device;
    r.budget_ms = request->budget_ms;
    r.backends = request->backends;
    return api_tune(&r, store, report);
}
