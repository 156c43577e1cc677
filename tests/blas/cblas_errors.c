/* cblas_errors.c: invalid arguments to cblas_sgemm/cblas_dgemm, written against the system
 * CBLAS header. The program defines cblas_xerbla (as the CBLAS test suite does) and prints
 * what it received and whether C changed, to compare reference CBLAS with libgemm_blas. */
#include <cblas.h>
#include <stdio.h>
#include <string.h>

#include "bad_cblas_calls.h"

static int last_position;
static char last_routine[32];

void cblas_xerbla(blasint p, char *rout, char *form, ...) {
    (void)form;
    last_position = (int)p;
    strncpy(last_routine, rout, sizeof last_routine - 1);
}

int main(void) {
    float a[64], b[64], c[64], c0[64];
    double ad[64], bd[64], cd[64], cd0[64];
    for (int i = 0; i < 64; ++i) a[i] = b[i] = c0[i] = c[i] = (float)i, ad[i] = bd[i] = cd0[i] = cd[i] = i;
    for (size_t i = 0; i < bad_call_count; ++i) {
        const struct bad_call *p = &bad_calls[i];
        last_position = 0, last_routine[0] = 0;
        cblas_sgemm(p->order, p->ta, p->tb, p->m, p->n, p->k, 1.0f, a, p->lda, b, p->ldb, 0.0f, c, p->ldc);
        printf("%s %s -> %d C %s\n", p->what, last_routine, last_position, memcmp(c, c0, sizeof c) ? "CHANGED" : "unchanged");
        last_position = 0, last_routine[0] = 0;
        cblas_dgemm(p->order, p->ta, p->tb, p->m, p->n, p->k, 1.0, ad, p->lda, bd, p->ldb, 0.0, cd, p->ldc);
        printf("%s %s -> %d C %s\n", p->what, last_routine, last_position, memcmp(cd, cd0, sizeof cd) ? "CHANGED" : "unchanged");
        memcpy(c, c0, sizeof c), memcpy(cd, cd0, sizeof cd);
    }
    return 0;
}
