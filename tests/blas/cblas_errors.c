/* cblas_errors.c: invalid arguments to cblas_sgemm/dgemm/cgemm/zgemm, written against the system
 * CBLAS header. The program defines cblas_xerbla (as the CBLAS test suite does), and with
 * WITH_XERBLA also the Fortran xerbla_ (as a program that uses LAPACK may), and prints what
 * they received and whether C changed, to compare reference CBLAS with libgemm_blas. */
#include <cblas.h>
#include <stddef.h>
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

/* x[i] = i for the 128 scalars (64 complex elements) of the type, the rest of x zero. */
static void fill(char type, double x[128]) {
    memset(x, 0, 128 * sizeof x[0]);
    for (int i = 0; i < 128; ++i) {
        if (type == 's' || type == 'c') ((float *)x)[i] = (float)i;
        else ((double *)x)[i] = i;
    }
}

#ifdef WITH_XERBLA
/* Reference CBLAS's Fortran routines report the errors their own checks find here. */
void xerbla_(const char *name, const int *info, size_t name_length) {
    last_position = *info;
    snprintf(last_routine, sizeof last_routine, "xerbla_:%.*s", (int)(name_length < 6 ? name_length : 6), name);
}
#endif

int main(void) {
    static const char types[] = "sdcz";
    double a[128], b[128], c[128], c0[128];
    for (size_t i = 0; i < bad_call_count; ++i) {
        const struct bad_call *p = &bad_calls[i];
        for (const char *type = types; *type; ++type) {
            fill(*type, a), fill(*type, b), fill(*type, c), fill(*type, c0);
            last_position = 0, last_routine[0] = 0;
            bad_call_run(*type, p, a, b, c);
            printf("%s %s -> %d C %s\n", p->what, last_routine, last_position,
                   memcmp(c, c0, sizeof c) ? "CHANGED" : "unchanged");
        }
    }
    return 0;
}
