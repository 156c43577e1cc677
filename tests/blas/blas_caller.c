/* blas_caller.c: a program written against the system BLAS, as users' programs are. It calls
 * sgemm_/dgemm_ (Fortran convention) and cblas_sgemm/cblas_dgemm and prints every result, so
 * that runs against reference BLAS, under LD_PRELOAD=libgemm_blas.so and linked to
 * libgemm_blas can be compared entry by entry (blas_compare.c). Modes:
 *   values    print C after each case of a fixed list
 *   fortran   invalid arguments to sgemm_/dgemm_: print what xerbla_ received, check C
 *   threads   8 threads calling cblas_sgemm at once, each checked against a plain loop
 *   other     a non-GEMM routine (sdot_), which must keep coming from the system BLAS
 *   unchanged one valid call of each routine; exits 1 if C changed (for a run whose backend
 *             cannot serve it: C must stay as it was)
 * The cblas error cases live in cblas_errors.c: reference CBLAS reports through xerbla_ when
 * the program does not define its own, which this program does. */
#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *,
            const float *, const int *, const float *, const int *, const float *, float *,
            const int *, size_t, size_t);
void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *, size_t, size_t);

float sdot_(const int *, const float *, const int *, const float *, const int *);

/* The program's own xerbla_, as test suites define it: record, don't stop. */
static char last_name[8];
static int last_info;
void xerbla_(const char *name, const int *info, size_t len) {
    memset(last_name, 0, sizeof last_name);
    memcpy(last_name, name, len < 6 ? len : 6);
    last_info = *info;
}

static unsigned seed = 12345;
static double next_random(void) { /* [-1, 1), same sequence on every run */
    seed = seed * 1103515245u + 12345u;
    return (double)((seed >> 8) & 0xffff) / 32768.0 - 1.0;
}

struct shape { char ta, tb; int m, n, k, pad; double alpha, beta; };

static const struct shape shapes[] = {
    {'N', 'N', 1, 1, 1, 0, 1.0, 0.0},     {'N', 'N', 7, 5, 3, 0, 1.0, 0.0},
    {'T', 'N', 17, 31, 13, 2, -1.5, 0.5}, {'N', 'T', 33, 16, 65, 1, 2.0, 1.0},
    {'T', 'T', 64, 65, 31, 0, 1.0, -1.0}, {'C', 'n', 97, 13, 131, 3, 0.5, 0.0},
    {'n', 'c', 129, 127, 57, 0, 1.0, 2.0}, {'t', 't', 5, 9, 0, 0, 1.0, 0.5},
    {'N', 'N', 19, 23, 29, 4, 0.0, 0.5},  {'N', 'N', 200, 150, 170, 0, 1.0, 0.0},
};

static int rows_of(char op, int rows, int cols) { return (op == 'N' || op == 'n') ? rows : cols; }
static int at_least_1(int v) { return v > 1 ? v : 1; }

static void run_values(void) {
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        const struct shape *p = &shapes[s];
        int lda = at_least_1(rows_of(p->ta, p->m, p->k)) + p->pad;
        int ldb = at_least_1(rows_of(p->tb, p->k, p->n)) + p->pad, ldc = at_least_1(p->m) + p->pad;
        int acols = rows_of(p->ta, p->k, p->m), bcols = rows_of(p->tb, p->n, p->k);
        size_t na = (size_t)lda * (size_t)(acols > 0 ? acols : 1), nb = (size_t)ldb * (size_t)(bcols > 0 ? bcols : 1);
        size_t nc = (size_t)ldc * (size_t)p->n;
        float *af = malloc(na * 4), *bf = malloc(nb * 4), *cf = malloc(nc * 4);
        double *ad = malloc(na * 8), *bd = malloc(nb * 8), *cd = malloc(nc * 8);
        float *cr = malloc(nc * 4);
        double *crd = malloc(nc * 8);
        for (size_t i = 0; i < na; ++i) ad[i] = af[i] = (float)next_random();
        for (size_t i = 0; i < nb; ++i) bd[i] = bf[i] = (float)next_random();
        for (size_t i = 0; i < nc; ++i) crd[i] = cd[i] = cr[i] = cf[i] = (float)next_random();
        float alpha = (float)p->alpha, beta = (float)p->beta;

        sgemm_(&p->ta, &p->tb, &p->m, &p->n, &p->k, &alpha, af, &lda, bf, &ldb, &beta, cf, &ldc, 1, 1);
        dgemm_(&p->ta, &p->tb, &p->m, &p->n, &p->k, &p->alpha, ad, &lda, bd, &ldb, &p->beta, cd, &ldc, 1, 1);
        /* The same product through CBLAS, row-major: C^T = op(B)^T op(A)^T. */
        enum CBLAS_TRANSPOSE ta = (p->ta == 'N' || p->ta == 'n') ? CblasNoTrans : CblasTrans;
        enum CBLAS_TRANSPOSE tb = (p->tb == 'N' || p->tb == 'n') ? CblasNoTrans : CblasTrans;
        cblas_sgemm(CblasRowMajor, tb, ta, p->n, p->m, p->k, alpha, bf, ldb, af, lda, beta, cr, ldc);
        cblas_dgemm(CblasColMajor, ta, tb, p->m, p->n, p->k, p->alpha, ad, lda, bd, ldb, p->beta, crd, ldc);

        for (size_t i = 0; i < nc; ++i)
            printf("%zu %zu %.9g %.17g %.9g %.17g\n", s, i, cf[i], cd[i], cr[i], crd[i]);
        free(af); free(bf); free(cf); free(ad); free(bd); free(cd); free(cr); free(crd);
    }
}

struct bad_call { const char *what; char ta, tb; int m, n, k, lda, ldb, ldc; };

static const struct bad_call bad_calls[] = {
    {"transa", 'X', 'N', 2, 2, 2, 2, 2, 2}, {"transb", 'N', '?', 2, 2, 2, 2, 2, 2},
    {"m", 'N', 'N', -1, 2, 2, 2, 2, 2},     {"n", 'N', 'N', 2, -1, 2, 2, 2, 2},
    {"k", 'N', 'N', 2, 2, -1, 2, 2, 2},     {"lda", 'N', 'N', 3, 2, 2, 2, 2, 3},
    {"lda_t", 'T', 'N', 3, 2, 4, 3, 4, 3},  {"ldb", 'N', 'N', 2, 2, 3, 2, 2, 2},
    {"ldb_t", 'N', 't', 2, 3, 2, 2, 2, 2},  {"ldc", 'N', 'N', 3, 2, 2, 3, 2, 2},
    {"m_and_lda", 'N', 'N', -1, 2, 2, 0, 2, 2}, {"lda_and_ldb", 'N', 'N', 3, 3, 3, 1, 1, 3},
    {"zero_ld", 'N', 'N', 0, 0, 0, 0, 1, 1},
};

static void run_fortran_errors(void) {
    float a[64], b[64], c[64], c0[64];
    double ad[64], bd[64], cd[64], cd0[64];
    for (int i = 0; i < 64; ++i) a[i] = b[i] = c0[i] = c[i] = (float)i, ad[i] = bd[i] = cd0[i] = cd[i] = i;
    float alpha = 1, beta = 0;
    double alphad = 1, betad = 0;
    for (size_t i = 0; i < sizeof bad_calls / sizeof bad_calls[0]; ++i) {
        const struct bad_call *p = &bad_calls[i];
        last_info = 0, last_name[0] = 0;
        sgemm_(&p->ta, &p->tb, &p->m, &p->n, &p->k, &alpha, a, &p->lda, b, &p->ldb, &beta, c, &p->ldc, 1, 1);
        printf("sgemm %s -> %s %d C %s\n", p->what, last_name, last_info, memcmp(c, c0, sizeof c) ? "CHANGED" : "unchanged");
        last_info = 0, last_name[0] = 0;
        dgemm_(&p->ta, &p->tb, &p->m, &p->n, &p->k, &alphad, ad, &p->lda, bd, &p->ldb, &betad, cd, &p->ldc, 1, 1);
        printf("dgemm %s -> %s %d C %s\n", p->what, last_name, last_info, memcmp(cd, cd0, sizeof cd) ? "CHANGED" : "unchanged");
    }
}

enum { thread_count = 8 };

static void *thread_body(void *arg) {
    int t = (int)(size_t)arg, n = 40 + 7 * t, fails = 0;
    float *a = malloc((size_t)n * n * 4), *b = malloc((size_t)n * n * 4), *c = malloc((size_t)n * n * 4);
    for (int i = 0; i < n * n; ++i) a[i] = (float)((i * 7 + t) % 13) - 6, b[i] = (float)((i * 5 + t) % 11) - 5;
    for (int rep = 0; rep < 20; ++rep) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                float s = 0; /* small integers: exact in any order */
                for (int l = 0; l < n; ++l) s += a[i * n + l] * b[l * n + j];
                fails += s != c[i * n + j];
            }
    }
    free(a); free(b); free(c);
    return (void *)(size_t)fails;
}

static int run_threads(void) {
    pthread_t threads[thread_count];
    size_t fails = 0;
    for (size_t t = 0; t < thread_count; ++t) pthread_create(&threads[t], NULL, thread_body, (void *)t);
    for (size_t t = 0; t < thread_count; ++t) {
        void *r;
        pthread_join(threads[t], &r);
        fails += (size_t)r;
    }
    printf("threads: %zu wrong entries\n", fails);
    return fails != 0;
}

static void run_other(void) {
    float x[100], y[100];
    int n = 100, one = 1;
    for (int i = 0; i < n; ++i) x[i] = (float)next_random(), y[i] = (float)next_random();
    printf("sdot %.9g\n", sdot_(&n, x, &one, y, &one));
}

static int run_unchanged(void) {
    float a[4] = {1, 2, 3, 4}, c[4] = {7, 7, 7, 7};
    double ad[4] = {1, 2, 3, 4}, cd[4] = {7, 7, 7, 7};
    int two = 2;
    float one = 1, zero = 0;
    double oned = 1, zerod = 0;
    sgemm_("N", "N", &two, &two, &two, &one, a, &two, a, &two, &zero, c, &two, 1, 1);
    dgemm_("N", "N", &two, &two, &two, &oned, ad, &two, ad, &two, &zerod, cd, &two, 1, 1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, ad, 2, ad, 2, 0, cd, 2);
    int changed = 0;
    for (int i = 0; i < 4; ++i) changed |= c[i] != 7 || cd[i] != 7;
    printf("unchanged: C %s\n", changed ? "CHANGED" : "unchanged");
    return changed;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "values";
    if (!strcmp(mode, "values")) run_values();
    else if (!strcmp(mode, "fortran")) run_fortran_errors();
    else if (!strcmp(mode, "threads")) return run_threads();
    else if (!strcmp(mode, "unchanged")) return run_unchanged();
    else if (!strcmp(mode, "other")) run_other();
    else return fprintf(stderr, "usage: blas_caller values|fortran|threads|unchanged|other\n"), 2;
    return 0;
}
