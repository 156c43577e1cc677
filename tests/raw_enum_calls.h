/* raw_enum_calls.h: entry points taking their enum arguments as plain ints (see the .c). */
#ifndef GEMM_TESTS_RAW_ENUM_CALLS_H
#define GEMM_TESTS_RAW_ENUM_CALLS_H

#include "gemm/gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

gemm_status_t raw_sgemm(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                        const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

gemm_status_t raw_gemm_ex(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                          const void *A, int a_type, int64_t lda, const void *B, int b_type, int64_t ldb,
                          const void *beta, void *C, int c_type, int64_t ldc, int compute_type);

gemm_status_t raw_gemm_ex_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                          const void *alpha, const void *A, int a_type, int64_t lda, int64_t stride_a,
                                          const void *B, int b_type, int64_t ldb, int64_t stride_b, const void *beta,
                                          void *C, int c_type, int64_t ldc, int64_t stride_c, int64_t batch_count,
                                          int compute_type);

gemm_status_t raw_dgemm(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, double alpha,
                        const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

gemm_status_t raw_sgemm_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        float alpha, const float *A, int64_t lda, int64_t stride_a, const float *B,
                                        int64_t ldb, int64_t stride_b, float beta, float *C, int64_t ldc,
                                        int64_t stride_c, int64_t batch_count);

gemm_status_t raw_dgemm_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        double alpha, const double *A, int64_t lda, int64_t stride_a, const double *B,
                                        int64_t ldb, int64_t stride_b, double beta, double *C, int64_t ldc,
                                        int64_t stride_c, int64_t batch_count);

/* gemm_tune with the request's enum fields given as ints. */
typedef struct raw_tune_request {
    int ab_type, c_type, layout, transa, transb;
    int64_t m, n, k, batch_count, ld_padding;
    int misaligned, beta_zero, device;
    double budget_ms;
    const char *backends;
} raw_tune_request;

gemm_status_t raw_tune(const raw_tune_request *request, int store, gemm_tune_report_t *report);

const char *raw_status_string(int status);
const char *raw_dtype_name(int type);

/* gemm_ex_epilogue with an epilogue whose enum fields are given as ints, in a buffer of
 * struct_size bytes (zero past the struct); with_epilogue 0 passes NULL. */
gemm_status_t raw_gemm_ex_epilogue(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                   const void *alpha, const void *A, int a_type, int64_t lda, const void *B, int b_type,
                                   int64_t ldb, const void *beta, void *C, int c_type, int64_t ldc, int compute_type,
                                   int with_epilogue, int64_t struct_size, int activation, int bias_axis,
                                   const void *bias, void *bias_grad, void *aux, int64_t ld_aux);

/* gemm_plan_create on a desc from gemm_desc_init with every field then set from these ints. */
gemm_status_t raw_plan_create(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, int a_type,
                              int b_type, int c_type, int compute_type, int64_t lda, int64_t ldb, int64_t ldc,
                              int64_t batch_count, int64_t stride_a, int64_t stride_b, int64_t stride_c, int device,
                              int alignment, int beta_zero, gemm_plan_t *plan);

gemm_status_t raw_cgemm(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                        const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc);

gemm_status_t raw_zgemm(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                        const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc);

gemm_status_t raw_cgemm_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        const void *alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                                        int64_t ldb, int64_t stride_b, const void *beta, void *C, int64_t ldc,
                                        int64_t stride_c, int64_t batch_count);

gemm_status_t raw_zgemm_strided_batched(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                                        const void *alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                                        int64_t ldb, int64_t stride_b, const void *beta, void *C, int64_t ldc,
                                        int64_t stride_c, int64_t batch_count);

/* The pointer-array batches: type_letter 's', 'd', 'c' or 'z' for gemm_<x>gemm_batched (s and d
 * read alpha and beta through the pointers, as the other two take them), 'x' for gemm_ex_batched
 * (with the types given). */
gemm_status_t raw_gemm_batched(char type_letter, int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                               const void *alpha, const void *const *A, int a_type, int64_t lda, const void *const *B,
                               int b_type, int64_t ldb, const void *beta, void *const *C, int c_type, int64_t ldc,
                               int64_t batch_count, int compute_type);

/* gemm_ex_grouped with transa and transb as arrays of ints (NULL passes NULL). */
gemm_status_t raw_gemm_ex_grouped(int layout, const int *transa, const int *transb, const int64_t *m, const int64_t *n,
                                  const int64_t *k, const void *alpha, const void *const *A, int a_type,
                                  const int64_t *lda, const void *const *B, int b_type, const int64_t *ldb,
                                  const void *beta, void *const *C, int c_type, const int64_t *ldc, int64_t group_count,
                                  const int64_t *group_size, int compute_type);

/* A gemm_desc_t with its enum fields given as ints. */
typedef struct raw_desc {
    int layout, transa, transb;
    int64_t m, n, k;
    int a_type, b_type, c_type, compute_type;
    int64_t lda, ldb, ldc, batch_count, stride_a, stride_b, stride_c;
    int device, alignment, beta_zero;
    int activation, bias_axis, aux;
    int64_t ld_aux;
} raw_desc;

gemm_status_t raw_plan_create_desc(const raw_desc *desc, gemm_plan_t *plan);

/* gemm_plan_run_epilogue with an epilogue made as raw_gemm_ex_epilogue makes it. */
gemm_status_t raw_plan_run_epilogue(gemm_plan_t plan, const void *alpha, const void *A, const void *B, const void *beta,
                                    void *C, int with_epilogue, int64_t struct_size, int activation, int bias_axis,
                                    const void *bias, void *bias_grad, void *aux, int64_t ld_aux);

/* gemm_measure on a desc given as ints (NULL passes NULL). */
gemm_status_t raw_measure(const raw_desc *desc, const char *const *backends, int64_t count,
                          const gemm_measure_options_t *options, gemm_measurement_t *reports);

/* gemm_omatcopy with layout, trans and dtype given as ints. */
gemm_status_t raw_omatcopy(int layout, int trans, int64_t rows, int64_t cols, const void *alpha, const void *A,
                           int64_t lda, void *B, int64_t ldb, int dtype);

/* gemm_spmm_csr (coo 0, A a gemm_csr_t) or gemm_spmm_coo (coo 1, A a gemm_coo_t) with layout,
 * the ops and dtype given as ints. */
gemm_status_t raw_spmm(int coo, int layout, int op_a, int op_b, int64_t m, int64_t n, int64_t k, const void *alpha,
                       const void *A, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc, int dtype);

/* A descriptor's index_type set from an int. */
void raw_csr_index_type(gemm_csr_t *A, int index_type);
void raw_coo_index_type(gemm_coo_t *A, int index_type);

#ifdef __cplusplus
}
#endif

#endif
