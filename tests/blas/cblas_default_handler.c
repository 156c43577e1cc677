/* cblas_default_handler.c: one invalid call of cblas_sgemm, dgemm, cgemm or zgemm, in a program
 * that defines no error handler, so the system CBLAS's own cblas_xerbla reports it (reference
 * CBLAS's prints the parameter and stops the program). Run once per case, its stderr compared
 * between reference CBLAS and libgemm_blas. usage: cblas_default_handler s|d|c|z CASE */
#include <stdio.h>
#include <string.h>

#include "bad_cblas_calls.h"

int main(int argc, char **argv) {
    if (argc != 3 || !argv[1][0] || !strchr("sdcz", argv[1][0]))
        return fprintf(stderr, "usage: cblas_default_handler s|d|c|z CASE\n"), 2;
    double a[128] = {0}, b[128] = {0}, c[128] = {0}; /* room for 64 elements of any type */
    for (size_t i = 0; i < bad_call_count; ++i) {
        const struct bad_call *p = &bad_calls[i];
        if (strcmp(p->what, argv[2]) != 0) continue;
        bad_call_run(argv[1][0], p, a, b, c);
        return 0;
    }
    return fprintf(stderr, "cblas_default_handler: no case '%s'\n", argv[2]), 2;
}
