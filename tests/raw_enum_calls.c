/* raw_enum_calls.c: entry points called with enum arguments given as plain ints, as any C
 * caller may pass them; C++ cannot form such out-of-range enum values without undefined
 * behaviour, so the tests and the fuzzers make these calls through here. */
#include "raw_enum_calls.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

gemm_status_t raw_sgemm(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                        const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    return gemm_sgemm((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A, lda, B, ldb, beta,
                      C, ldc);
}

gemm_status_t raw_gemm_ex(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                          const void *A, int a_type, int64_t lda, const void *B, int b_type, int64_t ldb,
                          const void *beta, void *C, int c_type, int64_t ldc, int compute_type) {
    return gemm_ex((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A, (gemm_dtype_t)a_type,
                   lda, B, (gemm_dtype_t)b_type, ldb, beta, C, (gemm_dtype_t)c_type, ldc, (gemm_dtype_t)compute_type);
}

gemm_status_t raw_gemm_ex_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                          const void *alpha, const void *A, int a_type, int64_t lda, int64_t stride_a,
                                          const void *B, int b_type, int64_t ldb, int64_t stride_b, const void *beta,
                                          void *C, int c_type, int64_t ldc, int64_t stride_c, int64_t batch_count,
                                          int compute_type) {
    return gemm_ex_strided_batched((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A,
                                   (gemm_dtype_t)a_type, lda, stride_a, B, (gemm_dtype_t)b_type, ldb, stride_b, beta, C,
                                   (gemm_dtype_t)c_type, ldc, stride_c, batch_count, (gemm_dtype_t)compute_type);
}

const char *raw_status_string(int status) { return gemm_status_string((gemm_status_t)status); }

const char *raw_dtype_name(int type) { return gemm_dtype_name((gemm_dtype_t)type); }

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
    return gemm_dgemm((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A, lda, B, ldb, beta,
                      C, ldc);
}

gemm_status_t raw_sgemm_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        float alpha, const float *A, int64_t lda, int64_t stride_a, const float *B,
                                        int64_t ldb, int64_t stride_b, float beta, float *C, int64_t ldc,
                                        int64_t stride_c, int64_t batch_count) {
    return gemm_sgemm_strided_batched((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A,
                                      lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch_count);
}

gemm_status_t raw_dgemm_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        double alpha, const double *A, int64_t lda, int64_t stride_a, const double *B,
                                        int64_t ldb, int64_t stride_b, double beta, double *C, int64_t ldc,
                                        int64_t stride_c, int64_t batch_count) {
    return gemm_dgemm_strided_batched((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A,
                                      lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch_count);
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

/* An epilogue with its enum fields given as ints, in room for a newer header's larger struct,
 * its tail zero. */
typedef union raw_epilogue {
    gemm_epilogue_t e;
    unsigned char bytes[sizeof(gemm_epilogue_t) + 64];
} raw_epilogue;

static void raw_epilogue_fill(raw_epilogue *u, int64_t struct_size, int activation, int bias_axis, const void *bias,
                              void *bias_grad, void *aux, int64_t ld_aux) {
    memset(u, 0, sizeof *u);
    u->e.struct_size = struct_size;
    u->e.activation = (gemm_activation_t)activation;
    u->e.bias_axis = (gemm_bias_t)bias_axis;
    u->e.bias = bias;
    u->e.bias_grad = bias_grad;
    u->e.aux = aux;
    u->e.ld_aux = ld_aux;
}

gemm_status_t raw_gemm_ex_epilogue(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                   const void *alpha, const void *A, int a_type, int64_t lda, const void *B, int b_type,
                                   int64_t ldb, const void *beta, void *C, int c_type, int64_t ldc, int compute_type,
                                   int with_epilogue, int64_t struct_size, int activation, int bias_axis,
                                   const void *bias, void *bias_grad, void *aux, int64_t ld_aux) {
    raw_epilogue u;
    raw_epilogue_fill(&u, struct_size, activation, bias_axis, bias, bias_grad, aux, ld_aux);
    return gemm_ex_epilogue((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A,
                            (gemm_dtype_t)a_type, lda, B, (gemm_dtype_t)b_type, ldb, beta, C, (gemm_dtype_t)c_type, ldc,
                            (gemm_dtype_t)compute_type, with_epilogue ? &u.e : NULL);
}

gemm_status_t raw_plan_run_epilogue(gemm_plan_t plan, const void *alpha, const void *A, const void *B, const void *beta,
                                    void *C, int with_epilogue, int64_t struct_size, int activation, int bias_axis,
                                    const void *bias, void *bias_grad, void *aux, int64_t ld_aux) {
    raw_epilogue u;
    raw_epilogue_fill(&u, struct_size, activation, bias_axis, bias, bias_grad, aux, ld_aux);
    return gemm_plan_run_epilogue(plan, alpha, A, B, beta, C, with_epilogue ? &u.e : NULL);
}

gemm_status_t raw_cgemm(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                        const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc) {
    return gemm_cgemm((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A, lda, B, ldb, beta,
                      C, ldc);
}

gemm_status_t raw_zgemm(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                        const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc) {
    return gemm_zgemm((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A, lda, B, ldb, beta,
                      C, ldc);
}

gemm_status_t raw_cgemm_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        const void *alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                                        int64_t ldb, int64_t stride_b, const void *beta, void *C, int64_t ldc,
                                        int64_t stride_c, int64_t batch_count) {
    return gemm_cgemm_strided_batched((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A,
                                      lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch_count);
}

gemm_status_t raw_zgemm_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        const void *alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                                        int64_t ldb, int64_t stride_b, const void *beta, void *C, int64_t ldc,
                                        int64_t stride_c, int64_t batch_count) {
    return gemm_zgemm_strided_batched((gemm_layout_t)layout, (gemm_op_t)transa, (gemm_op_t)transb, m, n, k, alpha, A,
                                      lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch_count);
}

gemm_status_t raw_gemm_batched(char type_letter, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                               const void *alpha, const void *const *A, int a_type, int64_t lda, const void *const *B,
                               int b_type, int64_t ldb, const void *beta, void *const *C, int c_type, int64_t ldc,
                               int64_t batch_count, int compute_type) {
    gemm_layout_t l = (gemm_layout_t)layout;
    gemm_op_t ta = (gemm_op_t)transa, tb = (gemm_op_t)transb;
    switch (type_letter) {
    case 's':
        return gemm_sgemm_batched(l, ta, tb, m, n, k, *(const float *)alpha, (const float *const *)A, lda,
                                  (const float *const *)B, ldb, *(const float *)beta, (float *const *)C, ldc,
                                  batch_count);
    case 'd':
        return gemm_dgemm_batched(l, ta, tb, m, n, k, *(const double *)alpha, (const double *const *)A, lda,
                                  (const double *const *)B, ldb, *(const double *)beta, (double *const *)C, ldc,
                                  batch_count);
    case 'c': return gemm_cgemm_batched(l, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch_count);
    case 'z': return gemm_zgemm_batched(l, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch_count);
    default:
        return gemm_ex_batched(l, ta, tb, m, n, k, alpha, A, (gemm_dtype_t)a_type, lda, B, (gemm_dtype_t)b_type, ldb,
                               beta, C, (gemm_dtype_t)c_type, ldc, batch_count, (gemm_dtype_t)compute_type);
    }
}

/* The ops as gemm_op_t values in memory of their own (NULL for NULL). */
static gemm_op_t *raw_ops(const int *ops, int64_t count) {
    gemm_op_t *out;
    int64_t i;
    if (!ops || count <= 0) return NULL;
    out = (gemm_op_t *)malloc((size_t)count * sizeof *out);
    if (!out) return NULL;
    for (i = 0; i < count; ++i) out[i] = (gemm_op_t)ops[i];
    return out;
}

gemm_status_t raw_gemm_ex_grouped(int layout, const int *transa, const int *transb, const int64_t *m, const int64_t *n,
                                  const int64_t *k, const void *alpha, const void *const *A, int a_type,
                                  const int64_t *lda, const void *const *B, int b_type, const int64_t *ldb,
                                  const void *beta, void *const *C, int c_type, const int64_t *ldc, int64_t group_count,
                                  const int64_t *group_size, int compute_type) {
    gemm_op_t *ta = raw_ops(transa, group_count), *tb = raw_ops(transb, group_count);
    gemm_status_t s = gemm_ex_grouped((gemm_layout_t)layout, ta, tb, m, n, k, alpha, A, (gemm_dtype_t)a_type, lda, B,
                                      (gemm_dtype_t)b_type, ldb, beta, C, (gemm_dtype_t)c_type, ldc, group_count,
                                      group_size, (gemm_dtype_t)compute_type);
    free(ta);
    free(tb);
    return s;
}

static void raw_desc_fill(const raw_desc *r, gemm_desc_t *d) {
    gemm_desc_init(d, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, r->m, r->n, r->k);
    d->layout = (gemm_layout_t)r->layout;
    d->transa = (gemm_op_t)r->transa;
    d->transb = (gemm_op_t)r->transb;
    d->a_type = (gemm_dtype_t)r->a_type;
    d->b_type = (gemm_dtype_t)r->b_type;
    d->c_type = (gemm_dtype_t)r->c_type;
    d->compute_type = (gemm_dtype_t)r->compute_type;
    d->lda = r->lda;
    d->ldb = r->ldb;
    d->ldc = r->ldc;
    d->batch_count = r->batch_count;
    d->stride_a = r->stride_a;
    d->stride_b = r->stride_b;
    d->stride_c = r->stride_c;
    d->device = r->device;
    d->alignment = r->alignment;
    d->beta_zero = r->beta_zero;
    d->activation = (gemm_activation_t)r->activation;
    d->bias_axis = (gemm_bias_t)r->bias_axis;
    d->aux = r->aux;
    d->ld_aux = r->ld_aux;
}

gemm_status_t raw_plan_create_desc(const raw_desc *desc, gemm_plan_t *plan) {
    gemm_desc_t d;
    if (!desc) return gemm_plan_create(NULL, plan);
    raw_desc_fill(desc, &d);
    return gemm_plan_create(&d, plan);
}

gemm_status_t raw_measure(const raw_desc *desc, const char *const *backends, int64_t count,
                          const gemm_measure_options_t *options, gemm_measurement_t *reports) {
    gemm_desc_t d;
    if (!desc) return gemm_measure(NULL, backends, count, options, reports);
    raw_desc_fill(desc, &d);
    return gemm_measure(&d, backends, count, options, reports);
}

gemm_status_t raw_omatcopy(int layout, int trans, int64_t rows, int64_t cols, const void *alpha, const void *A,
                           int64_t lda, void *B, int64_t ldb, int dtype) {
    return gemm_omatcopy((gemm_layout_t)layout, (gemm_op_t)trans, rows, cols, alpha, A, lda, B, ldb,
                         (gemm_dtype_t)dtype);
}

gemm_status_t raw_spmm(int coo, int layout, int op_a, int op_b, int64_t m, int64_t n, int64_t k, const void *alpha,
                       const void *A, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc, int dtype) {
    if (coo)
        return gemm_spmm_coo((gemm_layout_t)layout, (gemm_op_t)op_a, (gemm_op_t)op_b, m, n, k, alpha,
                             (const gemm_coo_t *)A, B, ldb, beta, C, ldc, (gemm_dtype_t)dtype);
    return gemm_spmm_csr((gemm_layout_t)layout, (gemm_op_t)op_a, (gemm_op_t)op_b, m, n, k, alpha, (const gemm_csr_t *)A,
                         B, ldb, beta, C, ldc, (gemm_dtype_t)dtype);
}

void raw_csr_index_type(gemm_csr_t *A, int index_type) { A->index_type = (gemm_index_type_t)index_type; }

void raw_coo_index_type(gemm_coo_t *A, int index_type) { A->index_type = (gemm_index_type_t)index_type; }
