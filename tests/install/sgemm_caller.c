/* sgemm_caller.c: a program that links no BLAS: it finds sgemm_ where the loader put it,
 * calls it once and prints which library served the call and C. Modes:
 *   preload  sgemm_ from the libraries already loaded (LD_PRELOAD=libgemm_blas.so)
 *   libblas  sgemm_ from libblas.so.3 as the loader finds it (gemm's, when its folder is
 *            first on the search path, as after update-alternatives)
 * Output: "sgemm_ from PATH", then C = A (2x3) B (3x2) as "4 5" and "10 11". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef void sgemm_fn(const char *, const char *, const int *, const int *, const int *, const float *, const float *,
                      const int *, const float *, const int *, const float *, float *, const int *, size_t, size_t);

/* The address of the sgemm_ that MODE names, or NULL with the loader's reason printed. */
static void *find_sgemm(const char *mode) {
    void *handle = RTLD_DEFAULT;
    void *symbol;
    if (strcmp(mode, "libblas") == 0 && !(handle = dlopen("libblas.so.3", RTLD_NOW))) {
        fprintf(stderr, "dlopen libblas.so.3: %s\n", dlerror());
        return NULL;
    }
    if (!(symbol = dlsym(handle, "sgemm_"))) {
        fprintf(stderr, "no sgemm_ (%s)\n", mode);
        return NULL;
    }
    return symbol;
}

int main(int argc, char **argv) {
    const float A[2 * 3] = {1, 4, 2, 5, 3, 6}; /* column-major: rows 1 2 3 / 4 5 6 */
    const float B[3 * 2] = {1, 0, 1, 0, 1, 1}; /* rows 1 0 / 0 1 / 1 1 */
    float C[2 * 2] = {-1, -1, -1, -1};
    const int m = 2, n = 2, k = 3, lda = 2, ldb = 3, ldc = 2;
    const float alpha = 1, beta = 0;
    Dl_info where;
    void *symbol;
    sgemm_fn *sgemm;

    if (argc != 2 || (strcmp(argv[1], "preload") != 0 && strcmp(argv[1], "libblas") != 0)) {
        fprintf(stderr, "usage: sgemm_caller preload|libblas\n");
        return 2;
    }
    if (!(symbol = find_sgemm(argv[1]))) return 1;
    if (!dladdr(symbol, &where) || !where.dli_fname) {
        fprintf(stderr, "dladdr found no library for sgemm_\n");
        return 1;
    }
    /* POSIX guarantees that a function's address survives the trip through void *. */
    memcpy(&sgemm, &symbol, sizeof sgemm);
    printf("sgemm_ from %s\n", where.dli_fname);
    sgemm("N", "N", &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
    printf("%g %g\n%g %g\n", C[0], C[2], C[1], C[3]);
    return 0;
}
