/* bad_cblas_calls.h: invalid calls of cblas_sgemm/dgemm/cgemm/zgemm, one per checked argument
 * and layout, shared by the programs that compare their error reports with reference CBLAS. */
#ifndef GEMM_TESTS_BAD_CBLAS_CALLS_H
#define GEMM_TESTS_BAD_CBLAS_CALLS_H

#include <cblas.h>

struct bad_call {
    const char *what;
    int order, ta, tb, m, n, k, lda, ldb, ldc;
};

static const struct bad_call bad_calls[] = {
    {"order", 7, CblasNoTrans, CblasNoTrans, 2, 2, 2, 2, 2, 2},
    {"transa", CblasColMajor, 1, CblasNoTrans, 2, 2, 2, 2, 2, 2},
    {"transb", CblasRowMajor, CblasNoTrans, 0, 2, 2, 2, 2, 2, 2},
    {"row_transa", CblasRowMajor, 1, CblasNoTrans, 2, 2, 2, 2, 2, 2},
    {"col_transb", CblasColMajor, CblasNoTrans, 0, 2, 2, 2, 2, 2, 2},
    {"conj_no_trans", CblasColMajor, 114, CblasNoTrans, 2, 2, 2, 2, 2, 2}, /* OpenBLAS's extension */
    {"col_m", CblasColMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2, 2},
    {"col_n", CblasColMajor, CblasNoTrans, CblasNoTrans, 2, -1, 2, 2, 2, 2},
    {"col_k", CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, -1, 2, 2, 2},
    {"col_m_and_n", CblasColMajor, CblasNoTrans, CblasNoTrans, -1, -1, 2, 2, 2, 2},
    {"col_lda", CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 2, 2, 2, 2, 3},
    {"col_lda_t", CblasColMajor, CblasTrans, CblasNoTrans, 3, 2, 4, 3, 4, 3},
    {"col_lda_c", CblasColMajor, CblasConjTrans, CblasNoTrans, 3, 2, 4, 3, 4, 3},
    {"col_ldb", CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 2, 2, 2},
    {"col_ldb_c", CblasColMajor, CblasNoTrans, CblasConjTrans, 2, 3, 2, 2, 2, 2},
    {"col_lda_and_ldb", CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 3, 3, 1, 1, 3},
    {"col_ldc", CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 2, 2, 3, 2, 2},
    {"row_m", CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2, 2},
    {"row_n", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, -1, 2, 2, 2, 2},
    {"row_m_and_n", CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, -1, 2, 2, 2, 2},
    {"row_k", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, -1, 2, 2, 2},
    {"row_lda", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 2, 2, 2},
    {"row_lda_t", CblasRowMajor, CblasTrans, CblasNoTrans, 3, 2, 2, 2, 2, 2},
    {"row_lda_c", CblasRowMajor, CblasConjTrans, CblasNoTrans, 3, 2, 2, 2, 2, 2},
    {"row_ldb", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 3, 2, 3, 2, 3},
    {"row_ldb_c", CblasRowMajor, CblasNoTrans, CblasConjTrans, 2, 3, 2, 2, 1, 3},
    {"row_lda_and_ldb", CblasRowMajor, CblasNoTrans, CblasNoTrans, 3, 3, 3, 1, 1, 3},
    {"row_ldc", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 3, 2, 2, 3, 2},
    {"conj_ok", CblasRowMajor, CblasConjTrans, CblasConjTrans, 2, 2, 2, 2, 2, 2},
};

enum { bad_call_count = sizeof bad_calls / sizeof bad_calls[0] };

/* Calls p through cblas_<type>gemm (type s, d, c or z) with alpha = 1 and beta = 0; a, b and c
 * hold elements of that type. */
static void bad_call_run(char type, const struct bad_call *p, const void *a, const void *b, void *c) {
    static const float one_c[2] = {1, 0}, zero_c[2] = {0, 0};
    static const double one_z[2] = {1, 0}, zero_z[2] = {0, 0};
    if (type == 's') cblas_sgemm(p->order, p->ta, p->tb, p->m, p->n, p->k, 1.0f, a, p->lda, b, p->ldb, 0.0f, c, p->ldc);
    if (type == 'd') cblas_dgemm(p->order, p->ta, p->tb, p->m, p->n, p->k, 1.0, a, p->lda, b, p->ldb, 0.0, c, p->ldc);
    if (type == 'c')
        cblas_cgemm(p->order, p->ta, p->tb, p->m, p->n, p->k, one_c, a, p->lda, b, p->ldb, zero_c, c, p->ldc);
    if (type == 'z')
        cblas_zgemm(p->order, p->ta, p->tb, p->m, p->n, p->k, one_z, a, p->lda, b, p->ldb, zero_z, c, p->ldc);
}

#endif
