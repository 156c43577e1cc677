/* gemm_entry.c: the exported entry points that take enum arguments. They are written in C
 * because a C caller may pass any int where gemm.h says gemm_dtype_t (say), and only C reads
 * such a value without undefined behaviour; the C++ implementation receives plain ints and
 * answers a value that names no enumerator with GEMM_STATUS_INVALID_*. */
#include <stddef.h>
#include <string.h>

#include "entry_points.h"

/* The typed forms (gemm_[sdcz]gemm and their strided batches): one type for A, B, C and the
 * scalars, gemm_sgemm's parameter positions, scalars by pointer. */
static gemm_status_t typed_call(int type, gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                                int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda, int64_t stride_a,
                                const void *B, int64_t ldb, int64_t stride_b, const void *beta, void *C, int64_t ldc,
                                int64_t stride_c, int64_t batch_count, int entry) {
    api_call call = {.layout = (int)layout,
                     .transa = (int)transa,
                     .transb = (int)transb,
                     .m = m,
                     .n = n,
                     .k = k,
                     .alpha = alpha,
                     .a = A,
                     .a_type = type,
                     .lda = lda,
                     .stride_a = stride_a,
                     .b = B,
                     .b_type = type,
                     .ldb = ldb,
                     .stride_b = stride_b,
                     .beta = beta,
                     .c = C,
                     .c_type = type,
                     .ldc = ldc,
                     .stride_c = stride_c,
                     .batch = batch_count,
                     .compute = type,
                     .entry = entry};
    return api_run(&call);
}

gemm_status_t gemm_sgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                         float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                         int64_t ldc) {
    return typed_call(GEMM_F32, layout, transa, transb, m, n, k, &alpha, A, lda, 0, B, ldb, 0, &beta, C, ldc, 0, 1,
                      api_entry_typed);
}

gemm_status_t gemm_dgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                         double alpha, const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                         double *C, int64_t ldc) {
    return typed_call(GEMM_F64, layout, transa, transb, m, n, k, &alpha, A, lda, 0, B, ldb, 0, &beta, C, ldc, 0, 1,
                      api_entry_typed);
}

gemm_status_t gemm_sgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                         int64_t k, float alpha, const float *A, int64_t lda, int64_t stride_a,
                                         const float *B, int64_t ldb, int64_t stride_b, float beta, float *C,
                                         int64_t ldc, int64_t stride_c, int64_t batch_count) {
    return typed_call(GEMM_F32, layout, transa, transb, m, n, k, &alpha, A, lda, stride_a, B, ldb, stride_b, &beta, C,
                      ldc, stride_c, batch_count, api_entry_typed_batched);
}

gemm_status_t gemm_dgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                         int64_t k, double alpha, const double *A, int64_t lda, int64_t stride_a,
                                         const double *B, int64_t ldb, int64_t stride_b, double beta, double *C,
                                         int64_t ldc, int64_t stride_c, int64_t batch_count) {
    return typed_call(GEMM_F64, layout, transa, transb, m, n, k, &alpha, A, lda, stride_a, B, ldb, stride_b, &beta, C,
                      ldc, stride_c, batch_count, api_entry_typed_batched);
}

gemm_status_t gemm_cgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                         const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                         void *C, int64_t ldc) {
    return typed_call(GEMM_C32, layout, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1,
                      api_entry_typed);
}

gemm_status_t gemm_zgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                         const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                         void *C, int64_t ldc) {
    return typed_call(GEMM_C64, layout, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1,
                      api_entry_typed);
}

gemm_status_t gemm_cgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                         int64_t k, const void *alpha, const void *A, int64_t lda, int64_t stride_a,
                                         const void *B, int64_t ldb, int64_t stride_b, const void *beta, void *C,
                                         int64_t ldc, int64_t stride_c, int64_t batch_count) {
    return typed_call(GEMM_C32, layout, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C,
                      ldc, stride_c, batch_count, api_entry_typed_batched);
}

gemm_status_t gemm_zgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                         int64_t k, const void *alpha, const void *A, int64_t lda, int64_t stride_a,
                                         const void *B, int64_t ldb, int64_t stride_b, const void *beta, void *C,
                                         int64_t ldc, int64_t stride_c, int64_t batch_count) {
    return typed_call(GEMM_C64, layout, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C,
                      ldc, stride_c, batch_count, api_entry_typed_batched);
}

/* A pointer-array batch: one group of the call's arguments and the arrays as given. */
static gemm_status_t pointer_batch(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                   const void *alpha, const void *const *A, int a_type, int64_t lda,
                                   const void *const *B, int b_type, int64_t ldb, const void *beta, void *const *C,
                                   int c_type, int64_t ldc, int64_t batch_count, int compute, int entry) {
    api_call group = {layout, transa, transb, m,   n, k,           alpha,   NULL,  a_type, lda, 0, NULL, b_type, ldb, 0,
                      beta,   NULL,   c_type, ldc, 0, batch_count, compute, entry, 0,      0,   0, 0,    NULL,   NULL};
    api_pointer_call call = {&group, 1, A, B, C, NULL};
    return api_run_pointers(&call);
}

gemm_status_t gemm_sgemm_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                 int64_t k, float alpha, const float *const *A, int64_t lda, const float *const *B,
                                 int64_t ldb, float beta, float *const *C, int64_t ldc, int64_t batch_count) {
    return pointer_batch((int)layout, (int)transa, (int)transb, m, n, k, &alpha, (const void *const *)A, GEMM_F32, lda,
                         (const void *const *)B, GEMM_F32, ldb, &beta, (void *const *)C, GEMM_F32, ldc, batch_count,
                         GEMM_F32, api_entry_typed_pointers);
}

gemm_status_t gemm_dgemm_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                 int64_t k, double alpha, const double *const *A, int64_t lda, const double *const *B,
                                 int64_t ldb, double beta, double *const *C, int64_t ldc, int64_t batch_count) {
    return pointer_batch((int)layout, (int)transa, (int)transb, m, n, k, &alpha, (const void *const *)A, GEMM_F64, lda,
                         (const void *const *)B, GEMM_F64, ldb, &beta, (void *const *)C, GEMM_F64, ldc, batch_count,
                         GEMM_F64, api_entry_typed_pointers);
}

gemm_status_t gemm_cgemm_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                 int64_t k, const void *alpha, const void *const *A, int64_t lda, const void *const *B,
                                 int64_t ldb, const void *beta, void *const *C, int64_t ldc, int64_t batch_count) {
    return pointer_batch((int)layout, (int)transa, (int)transb, m, n, k, alpha, A, GEMM_C32, lda, B, GEMM_C32, ldb,
                         beta, C, GEMM_C32, ldc, batch_count, GEMM_C32, api_entry_typed_pointers);
}

gemm_status_t gemm_zgemm_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                 int64_t k, const void *alpha, const void *const *A, int64_t lda, const void *const *B,
                                 int64_t ldb, const void *beta, void *const *C, int64_t ldc, int64_t batch_count) {
    return pointer_batch((int)layout, (int)transa, (int)transb, m, n, k, alpha, A, GEMM_C64, lda, B, GEMM_C64, ldb,
                         beta, C, GEMM_C64, ldc, batch_count, GEMM_C64, api_entry_typed_pointers);
}

gemm_status_t gemm_ex_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                              const void *alpha, const void *const *A, gemm_dtype_t a_type, int64_t lda,
                              const void *const *B, gemm_dtype_t b_type, int64_t ldb, const void *beta, void *const *C,
                              gemm_dtype_t c_type, int64_t ldc, int64_t batch_count, gemm_dtype_t compute_type) {
    return pointer_batch((int)layout, (int)transa, (int)transb, m, n, k, alpha, A, (int)a_type, lda, B, (int)b_type,
                         ldb, beta, C, (int)c_type, ldc, batch_count, (int)compute_type, api_entry_ex_pointers);
}

/* The enum arrays are read as int arrays: a C enum whose values fit an int has an int's size
 * and representation (unsigned int for GCC's non-negative enums, which int may alias). */
gemm_status_t gemm_ex_grouped(gemm_layout_t layout, const gemm_op_t *transa, const gemm_op_t *transb, const int64_t *m,
                              const int64_t *n, const int64_t *k, const void *alpha, const void *const *A,
                              gemm_dtype_t a_type, const int64_t *lda, const void *const *B, gemm_dtype_t b_type,
                              const int64_t *ldb, const void *beta, void *const *C, gemm_dtype_t c_type,
                              const int64_t *ldc, int64_t group_count, const int64_t *group_size,
                              gemm_dtype_t compute_type) {
    return api_run_grouped((int)layout, (const int *)transa, (const int *)transb, m, n, k, alpha, A, (int)a_type, lda,
                           B, (int)b_type, ldb, beta, C, (int)c_type, ldc, group_count, group_size, (int)compute_type,
                           NULL);
}

gemm_status_t gemm_ex_grouped_scaled(gemm_layout_t layout, const gemm_op_t *transa, const gemm_op_t *transb,
                                     const int64_t *m, const int64_t *n, const int64_t *k, const void *alpha,
                                     const void *const *A, gemm_dtype_t a_type, const int64_t *lda,
                                     const void *const *B, gemm_dtype_t b_type, const int64_t *ldb, const void *beta,
                                     void *const *C, gemm_dtype_t c_type, const int64_t *ldc, int64_t group_count,
                                     const int64_t *group_size, gemm_dtype_t compute_type,
                                     const gemm_scaling_t *scalings) {
    return api_run_grouped((int)layout, (const int *)transa, (const int *)transb, m, n, k, alpha, A, (int)a_type, lda,
                           B, (int)b_type, ldb, beta, C, (int)c_type, ldc, group_count, group_size, (int)compute_type,
                           scalings);
}

gemm_status_t gemm_ex_masked_scaled(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                    int64_t k, const void *alpha, const void *A, gemm_dtype_t a_type, int64_t lda,
                                    int64_t stride_a, const void *B, gemm_dtype_t b_type, int64_t ldb, int64_t stride_b,
                                    const void *beta, void *C, gemm_dtype_t c_type, int64_t ldc, int64_t stride_c,
                                    int64_t batch_count, const int32_t *rows, gemm_dtype_t compute_type,
                                    const gemm_scaling_t *scalings) {
    return api_run_masked((int)layout, (int)transa, (int)transb, m, n, k, alpha, A, (int)a_type, lda, stride_a, B,
                          (int)b_type, ldb, stride_b, beta, C, (int)c_type, ldc, stride_c, batch_count, rows,
                          (int)compute_type, scalings);
}

/* The call of gemm_ex's parameters (one matrix) through entry point `entry` (enum api_entry),
 * which gemm_ex_epilogue and gemm_ex_scaled complete with their structs. */
static api_call ex_call(int entry, gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                        int64_t k, const void *alpha, const void *A, gemm_dtype_t a_type, int64_t lda, const void *B,
                        gemm_dtype_t b_type, int64_t ldb, const void *beta, void *C, gemm_dtype_t c_type, int64_t ldc,
                        gemm_dtype_t compute_type) {
    api_call call = {.layout = (int)layout,
                     .transa = (int)transa,
                     .transb = (int)transb,
                     .m = m,
                     .n = n,
                     .k = k,
                     .alpha = alpha,
                     .a = A,
                     .a_type = (int)a_type,
                     .lda = lda,
                     .b = B,
                     .b_type = (int)b_type,
                     .ldb = ldb,
                     .beta = beta,
                     .c = C,
                     .c_type = (int)c_type,
                     .ldc = ldc,
                     .batch = 1,
                     .compute = (int)compute_type,
                     .entry = entry};
    return call;
}

gemm_status_t gemm_ex(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                      const void *alpha, const void *A, gemm_dtype_t a_type, int64_t lda, const void *B,
                      gemm_dtype_t b_type, int64_t ldb, const void *beta, void *C, gemm_dtype_t c_type, int64_t ldc,
                      gemm_dtype_t compute_type) {
    api_call call = ex_call(api_entry_ex, layout, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta,
                            C, c_type, ldc, compute_type);
    return api_run(&call);
}

/* Reads the caller's epilogue into *out once the struct_size rule accepts it. 1: read; 0:
 * NULL; -1: refused, *status says why. */
static int read_epilogue(const gemm_epilogue_t *e, int position, api_epilogue *out, gemm_status_t *status) {
    if (!e) return 0;
    if (e->struct_size != (int64_t)sizeof *e) {
        *status = api_check_epilogue_size(e, position);
        if (*status != GEMM_STATUS_SUCCESS) return -1;
    }
    out->activation = (int)e->activation;
    out->bias_axis = (int)e->bias_axis;
    out->bias = e->bias;
    out->bias_grad = e->bias_grad;
    out->aux = e->aux;
    out->ld_aux = e->ld_aux;
    return 1;
}

gemm_status_t gemm_ex_epilogue(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                               const void *alpha, const void *A, gemm_dtype_t a_type, int64_t lda, const void *B,
                               gemm_dtype_t b_type, int64_t ldb, const void *beta, void *C, gemm_dtype_t c_type,
                               int64_t ldc, gemm_dtype_t compute_type, const gemm_epilogue_t *epilogue) {
    api_epilogue e;
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    int read = read_epilogue(epilogue, 19, &e, &s);
    if (read < 0) return s;
    api_call call = ex_call(api_entry_ex_epilogue, layout, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type,
                            ldb, beta, C, c_type, ldc, compute_type);
    call.epilogue = read ? &e : NULL;
    return api_run(&call);
}

/* Reads the caller's scaling into *out once the struct_size rule accepts it. 1: read; 0:
 * NULL; -1: refused, *status says why. */
static int read_scaling(const gemm_scaling_t *x, int position, api_scaling *out, gemm_status_t *status) {
    if (!x) return 0;
    if (x->struct_size != (int64_t)sizeof *x) {
        *status = api_check_scaling_size(x, position);
        if (*status != GEMM_STATUS_SUCCESS) return -1;
    }
    out->mode = (int)x->mode;
    out->a_scale = x->a_scale;
    out->b_scale = x->b_scale;
    out->ld_a_scale = x->ld_a_scale;
    out->ld_b_scale = x->ld_b_scale;
    out->d_scale = x->d_scale;
    out->amax_d = x->amax_d;
    return 1;
}

gemm_status_t gemm_ex_scaled(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                             const void *alpha, const void *A, gemm_dtype_t a_type, int64_t lda, const void *B,
                             gemm_dtype_t b_type, int64_t ldb, const void *beta, void *C, gemm_dtype_t c_type,
                             int64_t ldc, gemm_dtype_t compute_type, const gemm_scaling_t *scaling) {
    api_scaling x;
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    int read = read_scaling(scaling, 19, &x, &s);
    if (read < 0) return s;
    api_call call = ex_call(api_entry_ex_scaled, layout, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type, ldb,
                            beta, C, c_type, ldc, compute_type);
    call.scaling = read ? &x : NULL;
    return api_run(&call);
}

void gemm_scaling_init(gemm_scaling_t *scaling) {
    if (!scaling) return;
    memset(scaling, 0, sizeof *scaling);
    scaling->struct_size = (int64_t)sizeof *scaling;
}

void gemm_epilogue_init(gemm_epilogue_t *epilogue) {
    if (!epilogue) return;
    memset(epilogue, 0, sizeof *epilogue);
    epilogue->struct_size = (int64_t)sizeof *epilogue;
}

gemm_status_t gemm_ex_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m, int64_t n,
                                      int64_t k, const void *alpha, const void *A, gemm_dtype_t a_type, int64_t lda,
                                      int64_t stride_a, const void *B, gemm_dtype_t b_type, int64_t ldb,
                                      int64_t stride_b, const void *beta, void *C, gemm_dtype_t c_type, int64_t ldc,
                                      int64_t stride_c, int64_t batch_count, gemm_dtype_t compute_type) {
    api_call call = {.layout = (int)layout,
                     .transa = (int)transa,
                     .transb = (int)transb,
                     .m = m,
                     .n = n,
                     .k = k,
                     .alpha = alpha,
                     .a = A,
                     .a_type = (int)a_type,
                     .lda = lda,
                     .stride_a = stride_a,
                     .b = B,
                     .b_type = (int)b_type,
                     .ldb = ldb,
                     .stride_b = stride_b,
                     .beta = beta,
                     .c = C,
                     .c_type = (int)c_type,
                     .ldc = ldc,
                     .stride_c = stride_c,
                     .batch = batch_count,
                     .compute = (int)compute_type,
                     .entry = api_entry_ex_batched};
    return api_run(&call);
}

const char *gemm_status_string(gemm_status_t status) { return api_status_text((int)status); }

const char *gemm_dtype_name(gemm_dtype_t type) { return api_dtype_name((int)type); }

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

void gemm_desc_init(gemm_desc_t *desc, gemm_dtype_t type, gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb,
                    int64_t m, int64_t n, int64_t k) {
    if (!desc) return;
    memset(desc, 0, sizeof *desc);
    desc->struct_size = (int64_t)sizeof *desc;
    desc->layout = layout;
    desc->transa = transa;
    desc->transb = transb;
    desc->m = m;
    desc->n = n;
    desc->k = k;
    desc->a_type = desc->b_type = desc->c_type = type;
    desc->compute_type = type == GEMM_F64 || type == GEMM_C32 || type == GEMM_C64 ? type : GEMM_F32;
    desc->batch_count = 1;
    desc->stride_a = desc->stride_b = desc->stride_c = GEMM_DESC_TIGHT;
    desc->device = -1;
    desc->alignment = 16;
}

/* Reads the fields as ints (a C caller may have put any int in an enum field), once the
 * struct_size rule accepts the caller's struct. 1: read; 0: desc NULL; -1: refused, *status
 * says why (naming parameter `position`, the desc's). */
static int read_desc(const gemm_desc_t *d, int position, api_desc *out, gemm_status_t *status) {
    if (!d) return 0;
    if (d->struct_size != (int64_t)sizeof *d) {
        *status = api_check_desc_size(d, position);
        if (*status != GEMM_STATUS_SUCCESS) return -1;
    }
    out->layout = (int)d->layout;
    out->transa = (int)d->transa;
    out->transb = (int)d->transb;
    out->m = d->m;
    out->n = d->n;
    out->k = d->k;
    out->a_type = (int)d->a_type;
    out->b_type = (int)d->b_type;
    out->c_type = (int)d->c_type;
    out->compute = (int)d->compute_type;
    out->lda = d->lda;
    out->ldb = d->ldb;
    out->ldc = d->ldc;
    out->batch = d->batch_count;
    out->stride_a = d->stride_a;
    out->stride_b = d->stride_b;
    out->stride_c = d->stride_c;
    out->device = d->device;
    out->alignment = d->alignment;
    out->beta_zero = d->beta_zero;
    out->activation = (int)d->activation;
    out->bias_axis = (int)d->bias_axis;
    out->aux = d->aux;
    out->ld_aux = d->ld_aux;
    out->check_pointers = d->check_pointers;
    out->scale_mode = (int)d->scale_mode;
    return 1;
}

gemm_status_t gemm_backend_supports(const char *backend, const gemm_desc_t *desc) {
    api_desc d;
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    int read = read_desc(desc, 2, &d, &s);
    if (read < 0) return s;
    return api_backend_supports(backend, read ? &d : NULL);
}

gemm_status_t gemm_plan_create(const gemm_desc_t *desc, gemm_plan_t *plan) {
    api_desc d;
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    int read = read_desc(desc, 1, &d, &s);
    if (read < 0) return s;
    return api_plan_create(read ? &d : NULL, plan);
}

gemm_status_t gemm_plan_run(gemm_plan_t plan, const void *alpha, const void *A, const void *B, const void *beta,
                            void *C) {
    return api_plan_run(plan, alpha, A, B, beta, C, api_entry_ex, NULL, NULL);
}

gemm_status_t gemm_plan_run_scaled(gemm_plan_t plan, const void *alpha, const void *A, const void *B, const void *beta,
                                   void *C, const gemm_scaling_t *scaling) {
    api_scaling x;
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    int read = read_scaling(scaling, 7, &x, &s);
    if (read < 0) return s;
    return api_plan_run(plan, alpha, A, B, beta, C, api_entry_plan_scaled, NULL, read ? &x : NULL);
}

gemm_status_t gemm_plan_run_epilogue(gemm_plan_t plan, const void *alpha, const void *A, const void *B,
                                     const void *beta, void *C, const gemm_epilogue_t *epilogue) {
    api_epilogue e;
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    int read = read_epilogue(epilogue, 7, &e, &s);
    if (read < 0) return s;
    return api_plan_run(plan, alpha, A, B, beta, C, api_entry_plan_epilogue, read ? &e : NULL, NULL);
}

gemm_status_t gemm_backend_variants(const char *backend, const gemm_desc_t *desc, const char *const **ids,
                                    int64_t *count) {
    api_desc d;
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    int read = read_desc(desc, 2, &d, &s);
    if (read < 0) return s;
    return api_backend_variants(backend, read ? &d : NULL, ids, count);
}

gemm_status_t gemm_backend_get_traits(const char *backend, gemm_backend_traits_t *traits) {
    return api_backend_get_traits(backend, traits);
}

gemm_status_t gemm_measure(const gemm_desc_t *desc, const char *const *backends, int64_t count,
                           const gemm_measure_options_t *options, gemm_measurement_t *reports) {
    api_desc d;
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    int read = read_desc(desc, 1, &d, &s);
    if (read < 0) return s;
    return api_measure(read ? &d : NULL, backends, count, options, reports);
}

gemm_status_t gemm_omatcopy(gemm_layout_t layout, gemm_op_t trans, int64_t rows, int64_t cols, const void *alpha,
                            const void *A, int64_t lda, void *B, int64_t ldb, gemm_dtype_t dtype) {
    return api_omatcopy((int)layout, (int)trans, rows, cols, alpha, A, lda, B, ldb, (int)dtype);
}

void gemm_csr_init(gemm_csr_t *A, int64_t rows, int64_t cols, int64_t nnz, gemm_index_type_t index_type,
                   const void *row_offsets, const void *col_indices, const void *values) {
    if (!A) return;
    memset(A, 0, sizeof *A);
    A->struct_size = (int64_t)sizeof *A;
    A->rows = rows;
    A->cols = cols;
    A->nnz = nnz;
    A->index_type = index_type;
    A->row_offsets = row_offsets;
    A->col_indices = col_indices;
    A->values = values;
}

void gemm_coo_init(gemm_coo_t *A, int64_t rows, int64_t cols, int64_t nnz, gemm_index_type_t index_type,
                   const void *row_indices, const void *col_indices, const void *values) {
    if (!A) return;
    memset(A, 0, sizeof *A);
    A->struct_size = (int64_t)sizeof *A;
    A->rows = rows;
    A->cols = cols;
    A->nnz = nnz;
    A->index_type = index_type;
    A->row_indices = row_indices;
    A->col_indices = col_indices;
    A->values = values;
}

gemm_status_t gemm_spmm_csr(gemm_layout_t layout, gemm_op_t op_a, gemm_op_t op_b, int64_t m, int64_t n, int64_t k,
                            const void *alpha, const gemm_csr_t *A, const void *B, int64_t ldb, const void *beta,
                            void *C, int64_t ldc, gemm_dtype_t dtype) {
    return api_spmm(0, (int)layout, (int)op_a, (int)op_b, m, n, k, alpha, A, B, ldb, beta, C, ldc, (int)dtype);
}

gemm_status_t gemm_spmm_coo(gemm_layout_t layout, gemm_op_t op_a, gemm_op_t op_b, int64_t m, int64_t n, int64_t k,
                            const void *alpha, const gemm_coo_t *A, const void *B, int64_t ldb, const void *beta,
                            void *C, int64_t ldc, gemm_dtype_t dtype) {
    return api_spmm(1, (int)layout, (int)op_a, (int)op_b, m, n, k, alpha, A, B, ldb, beta, C, ldc, (int)dtype);
}
