/* cblas_default_handler.c: one invalid call of cblas_sgemm or cblas_dgemm, in a program that
 * defines no error handler, so the system CBLAS's own cblas_xerbla reports it (reference
 * CBLAS's prints the parameter and stops the program). Run once per case, its stderr compared
 * between reference CBLAS and libgemm_blas. usage: cblas_default_handler s|d CASE */
#include <stdio.h>
#include <string.h>

#include "bad_cblas_calls.h"

int main(int argc, char **argv) {
    if (argc != 3) return fprintf(stderr, "usage: cblas_default_handler s|d CASE\n"), 2;
    float a[64] = {0}, b[64] = {0}, c[64] = {0};
    double ad[64] = {0}, bd[64] = {0}, cd[64] = {0};
    for (size_t i = 0; i < bad_call_count; ++i) {
        const struct bad_call *p = &bad_calls[i];
        if (strcmp(p->what, argv[2]) != 0) continue;
        if (argv[1][0] == 's')
            cblas_sgemm(p->order, p->ta, p->tb, p->m, p->n, p->k, 1.0f, a, p->lda, b, p->ldb, 0.0f, c, p->ldc);
        else
            cblas_dgemm(p->order, p->ta, p->tb, p->m, p->n, p->k, 1.0, ad, p->lda, bd, p->ldb, 0.0, cd, p->ldc);
        return 0;
    }
    return fprintf(stderr, "cblas_default_handler: no case '%s'\n", argv[2]), 2;
}
