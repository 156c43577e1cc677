/* bad_cblas_calls.h: invalid calls of cblas_sgemm/cblas_dgemm, one per checked argument and
 * layout, shared by the programs that compare their error reports with reference CBLAS. */
#ifndef GEMM_TESTS_BAD_CBLAS_CALLS_H
#define GEMM_TESTS_BAD_CBLAS_CALLS_H

#include <cblas.h>

struct bad_call { const char *what; int order, ta, tb, m, n, k, lda, ldb, ldc; };

static const struct bad_call bad_calls[] = {
    {"order", 7, CblasNoTrans, CblasNoTrans, 2, 2, 2, 2, 2, 2},
    {"transa", CblasColMajor, 1, CblasNoTrans, 2, 2, 2, 2, 2, 2},
    {"transb", CblasRowMajor, CblasNoTrans, 0, 2, 2, 2, 2, 2, 2},
    {"col_m", CblasColMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2, 2},
    {"col_n", CblasColMajor, CblasNoTrans, CblasNoTrans, 2, -1, 2, 2, 2, 2},
    {"col_k", CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, -1, 2, 2, 2},
    {"col_m_and_n", CblasColMajor, CblasNoTrans, CblasNoTrans, -1, -1, 2, 2, 2, 2},
    {"col_lda", CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 2, 2, 2, 2, 3},
    {"col_lda_t", CblasColMajor, CblasTrans, CblasNoTrans, 3, 2, 4, 3, 4, 3},
    {"col_ldb", CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 2, 2, 2},
    {"col_lda_and_ldb", CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 3, 3, 1, 1, 3},
    {"col_ldc", CblasColMajor, CblasNoTrans, CblasNoTrans, 3, 2, 2, 3, 2, 2},
    {"row_m", CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 2, 2, 2},
    {"row_n", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, -1, 2, 2, 2, 2},
    {"row_m_and_n", CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, -1, 2, 2, 2, 2},
    {"row_k", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, -1, 2, 2, 2},
    {"row_lda", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 2, 2, 2},
    {"row_lda_t", CblasRowMajor, CblasTrans, CblasNoTrans, 3, 2, 2, 2, 2, 2},
    {"row_ldb", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 3, 2, 3, 2, 3},
    {"row_lda_and_ldb", CblasRowMajor, CblasNoTrans, CblasNoTrans, 3, 3, 3, 1, 1, 3},
    {"row_ldc", CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 3, 2, 2, 3, 2},
    {"conj_ok", CblasRowMajor, CblasConjTrans, CblasConjTrans, 2, 2, 2, 2, 2, 2},
};

enum { bad_call_count = sizeof bad_calls / sizeof bad_calls[0] };

#endif
