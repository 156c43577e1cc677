/* blas_caller.c: a program written against the system BLAS, as users' programs are. It calls
 * sgemm_/dgemm_/cgemm_/zgemm_ (Fortran convention) and their cblas_ forms and prints every
 * result, so that runs against reference BLAS, under LD_PRELOAD=libgemm_blas.so and linked to
 * libgemm_blas can be compared entry by entry (blas_compare.c). Modes:
 *   values    print C after each case of a fixed list, through every routine
 *   fortran   invalid arguments to the Fortran routines: print what xerbla_ received, check C
 *   threads   8 threads calling cblas_sgemm at once, each checked against a plain loop
 *   other     a non-GEMM routine (sdot_), which must keep coming from the system BLAS
 *   unchanged one valid call of each routine; exits 1 if C changed (for a run whose backend
 *             cannot serve it: C must stay as it was)
 * The cblas error cases live in cblas_errors.c: reference CBLAS reports through xerbla_ when
 * the program does not define its own, which this program does. */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *, const float *,
            const int *, const float *, const int *, const float *, float *, const int *, size_t, size_t);
void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *, const double *,
            const int *, const double *, const int *, const double *, double *, const int *, size_t, size_t);
/* Complex arguments: interleaved real and imaginary parts. */
void cgemm_(const char *, const char *, const int *, const int *, const int *, const void *, const void *, const int *,
            const void *, const int *, const void *, void *, const int *, size_t, size_t);
void zgemm_(const char *, const char *, const int *, const int *, const int *, const void *, const void *, const int *,
            const void *, const int *, const void *, void *, const int *, size_t, size_t);

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

/* One product, computed by every routine: alpha and beta are complex, the real routines take
 * their real parts ('C' is 'T' to them). */
struct shape {
    char ta, tb;
    int m, n, k, pad;
    double alpha[2], beta[2];
};

static const struct shape shapes[] = {
    {'N', 'N', 1, 1, 1, 0, {1, 0}, {0, 0}},
    {'N', 'N', 7, 5, 3, 0, {1, 0}, {0, 0}},
    {'T', 'N', 17, 31, 13, 2, {-1.5, 0}, {0.5, 0}},
    {'N', 'T', 33, 16, 65, 1, {2, 0}, {1, 0}},
    {'T', 'T', 64, 65, 31, 0, {1, 0}, {-1, 0}},
    {'C', 'n', 97, 13, 131, 3, {0.5, 0}, {0, 0}},
    {'n', 'c', 129, 127, 57, 0, {1, 0}, {2, 0}},
    {'t', 't', 5, 9, 0, 0, {1, 0}, {0.5, 0}},
    {'N', 'N', 19, 23, 29, 4, {0, 0}, {0.5, 0}},
    {'N', 'N', 200, 150, 170, 0, {1, 0}, {0, 0}},
    /* Complex scalars, a zero real part among them (zero to the real routines: C = 0 or C
     * scaled), and every pair of transposes with C in it. */
    {'C', 'N', 11, 7, 9, 1, {0, 1}, {0, -1}},
    {'N', 'C', 6, 13, 5, 2, {0.5, -2}, {1.5, 0.25}},
    {'C', 'C', 9, 8, 10, 0, {-1, 1}, {0, 0}},
    {'C', 'T', 13, 3, 17, 1, {0, -0.75}, {1, 0}},
    {'T', 'C', 4, 15, 6, 3, {2, 0.5}, {0, 2}},
    {'N', 'N', 10, 12, 11, 0, {1, 0}, {0, 1}},
    /* Nothing to compute or nothing to read: m or n = 0 (C untouched), k = 0 and alpha = 0
     * (C = beta C, C = 0 for beta = 0), alpha = 0 with beta = 1 (C untouched). */
    {'N', 'N', 0, 5, 3, 1, {1, 0}, {0, 0}},
    {'C', 'N', 6, 0, 3, 0, {1, 0}, {0, 0}},
    {'N', 'C', 5, 4, 0, 2, {0, 1}, {0, 0}},
    {'T', 'C', 8, 6, 0, 0, {1, 1}, {0, 1}},
    {'N', 'N', 7, 9, 4, 1, {0, 0}, {0, 0}},
    {'C', 'N', 5, 6, 7, 0, {0, 0}, {1, 0}},
};

static int rows_of(char op, int rows, int cols) { return (op == 'N' || op == 'n') ? rows : cols; }
static int at_least_1(int v) { return v > 1 ? v : 1; }

static enum CBLAS_TRANSPOSE cblas_op(char op) {
    if (op == 'N' || op == 'n') return CblasNoTrans;
    return (op == 'T' || op == 't') ? CblasTrans : CblasConjTrans;
}

/* The four types the routines take, their values interleaved (real, imaginary) for c and z. */
struct type {
    const char *fortran, *cblas;
    int single, parts;
};

static const struct type types[] = {
    {"sgemm_", "cblas_sgemm", 1, 1},
    {"dgemm_", "cblas_dgemm", 0, 1},
    {"cgemm_", "cblas_cgemm", 1, 2},
    {"zgemm_", "cblas_zgemm", 0, 2},
};

static size_t typed_size(const struct type *t, size_t count) {
    return count * (size_t)t->parts * (t->single ? sizeof(float) : sizeof(double));
}

/* count elements of x (interleaved complex) as type t holds them: real types keep the real parts. */
static void *typed_copy(const struct type *t, const double *x, size_t count) {
    size_t values = count * (size_t)t->parts;
    void *y = malloc(count ? typed_size(t, count) : 1);
    for (size_t i = 0; i < values; ++i) {
        double v = x[t->parts == 2 ? i : 2 * i];
        if (t->single) ((float *)y)[i] = (float)v;
        else ((double *)y)[i] = v;
    }
    return y;
}

/* Sets the count elements of y to NaN. */
static void fill_nan(const struct type *t, void *y, size_t count) {
    for (size_t i = 0; i < count * (size_t)t->parts; ++i) {
        if (t->single) ((float *)y)[i] = NAN;
        else ((double *)y)[i] = NAN;
    }
}

static double typed_value(const struct type *t, const void *y, size_t i) {
    return t->single ? ((const float *)y)[i] : ((const double *)y)[i];
}

enum { fortran_entry = 0 }; /* a layout argument that means "call the Fortran routine" */

/* The Fortran call, or the CBLAS call in the given layout. Row-major computes the same C
 * memory: C^T = op(B)^T op(A)^T, and op(X)^T = op(X^T) for 'C' as for 'N' and 'T'. */
static void call_gemm(const struct type *t, int layout, const struct shape *p, const void *alpha, const void *a,
                      int lda, const void *b, int ldb, const void *beta, void *c, int ldc) {
    enum CBLAS_TRANSPOSE ta = cblas_op(p->ta), tb = cblas_op(p->tb);
    const void *first = a, *second = b;
    int m = p->m, n = p->n, ld_first = lda, ld_second = ldb;
    if (layout == CblasRowMajor) {
        enum CBLAS_TRANSPOSE swapped = ta;
        ta = tb, tb = swapped, m = p->n, n = p->m;
        first = b, second = a, ld_first = ldb, ld_second = lda;
    }
    char which = t->fortran[0];
    if (layout == fortran_entry) {
        if (which == 's') sgemm_(&p->ta, &p->tb, &p->m, &p->n, &p->k, alpha, a, &lda, b, &ldb, beta, c, &ldc, 1, 1);
        if (which == 'd') dgemm_(&p->ta, &p->tb, &p->m, &p->n, &p->k, alpha, a, &lda, b, &ldb, beta, c, &ldc, 1, 1);
        if (which == 'c') cgemm_(&p->ta, &p->tb, &p->m, &p->n, &p->k, alpha, a, &lda, b, &ldb, beta, c, &ldc, 1, 1);
        if (which == 'z') zgemm_(&p->ta, &p->tb, &p->m, &p->n, &p->k, alpha, a, &lda, b, &ldb, beta, c, &ldc, 1, 1);
        return;
    }
    if (which == 's')
        cblas_sgemm(layout, ta, tb, m, n, p->k, *(const float *)alpha, first, ld_first, second, ld_second,
                    *(const float *)beta, c, ldc);
    if (which == 'd')
        cblas_dgemm(layout, ta, tb, m, n, p->k, *(const double *)alpha, first, ld_first, second, ld_second,
                    *(const double *)beta, c, ldc);
    if (which == 'c') cblas_cgemm(layout, ta, tb, m, n, p->k, alpha, first, ld_first, second, ld_second, beta, c, ldc);
    if (which == 'z') cblas_zgemm(layout, ta, tb, m, n, p->k, alpha, first, ld_first, second, ld_second, beta, c, ldc);
}

/* Every shape through every routine (Fortran, CBLAS column- and row-major), C printed one entry
 * a line: "routine case entry value [imaginary part]". Operands are rounded to float, so that
 * every type computes the same product. With beta = 0, C starts as NaN: reference BLAS does not
 * read it, and entries outside the m x n result (ldc > m) must stay NaN. With alpha = 0, A and
 * B are NaN: reference BLAS does not read them either. */
static void run_values(void) {
    static const int layouts[] = {fortran_entry, CblasColMajor, CblasRowMajor};
    static const char *const layout_names[] = {"", ":col", ":row"};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        const struct shape *p = &shapes[s];
        int lda = at_least_1(rows_of(p->ta, p->m, p->k)) + p->pad;
        int ldb = at_least_1(rows_of(p->tb, p->k, p->n)) + p->pad, ldc = at_least_1(p->m) + p->pad;
        int acols = rows_of(p->ta, p->k, p->m), bcols = rows_of(p->tb, p->n, p->k);
        size_t na = (size_t)lda * (size_t)at_least_1(acols), nb = (size_t)ldb * (size_t)at_least_1(bcols);
        size_t nc = (size_t)ldc * (size_t)p->n;
        double *a = malloc(2 * na * 8), *b = malloc(2 * nb * 8), *c = malloc((2 * nc + 1) * 8);
        for (size_t i = 0; i < 2 * na; ++i) a[i] = (float)next_random();
        for (size_t i = 0; i < 2 * nb; ++i) b[i] = (float)next_random();
        for (size_t i = 0; i < 2 * nc; ++i) c[i] = (float)next_random();
        for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
            const struct type *ty = &types[t];
            int alpha_zero = p->alpha[0] == 0 && (ty->parts == 1 || p->alpha[1] == 0);
            int beta_zero = p->beta[0] == 0 && (ty->parts == 1 || p->beta[1] == 0);
            void *ta = typed_copy(ty, a, na), *tb = typed_copy(ty, b, nb);
            void *alpha = typed_copy(ty, p->alpha, 1), *beta = typed_copy(ty, p->beta, 1);
            if (alpha_zero) fill_nan(ty, ta, na), fill_nan(ty, tb, nb);
            for (size_t l = 0; l < 3; ++l) {
                void *tc = typed_copy(ty, c, nc);
                if (beta_zero) fill_nan(ty, tc, nc);
                call_gemm(ty, layouts[l], p, alpha, ta, lda, tb, ldb, beta, tc, ldc);
                const char *name = layouts[l] ? ty->cblas : ty->fortran;
                int digits = ty->single ? 9 : 17;
                for (size_t i = 0; i < nc; ++i) {
                    printf("%s%s %zu %zu %.*g", name, layout_names[l], s, i, digits,
                           typed_value(ty, tc, i * (size_t)ty->parts));
                    if (ty->parts == 2) printf(" %.*g", digits, typed_value(ty, tc, 2 * i + 1));
                    printf("\n");
                }
                free(tc);
            }
            free(ta);
            free(tb);
            free(alpha);
            free(beta);
        }
        free(a);
        free(b);
        free(c);
    }
}

struct bad_call {
    const char *what;
    char ta, tb;
    int m, n, k, lda, ldb, ldc;
};

static const struct bad_call bad_calls[] = {
    {"transa", 'X', 'N', 2, 2, 2, 2, 2, 2},     {"transb", 'N', '?', 2, 2, 2, 2, 2, 2},
    {"m", 'N', 'N', -1, 2, 2, 2, 2, 2},         {"n", 'N', 'N', 2, -1, 2, 2, 2, 2},
    {"k", 'N', 'N', 2, 2, -1, 2, 2, 2},         {"lda", 'N', 'N', 3, 2, 2, 2, 2, 3},
    {"lda_t", 'T', 'N', 3, 2, 4, 3, 4, 3},      {"ldb", 'N', 'N', 2, 2, 3, 2, 2, 2},
    {"ldb_t", 'N', 't', 2, 3, 2, 2, 2, 2},      {"ldc", 'N', 'N', 3, 2, 2, 3, 2, 2},
    {"m_and_lda", 'N', 'N', -1, 2, 2, 0, 2, 2}, {"lda_and_ldb", 'N', 'N', 3, 3, 3, 1, 1, 3},
    {"zero_ld", 'N', 'N', 0, 0, 0, 0, 1, 1},    {"lda_c", 'C', 'N', 3, 2, 4, 3, 4, 3},
    {"ldb_c", 'N', 'c', 2, 3, 2, 2, 2, 2},
};

static void run_fortran_errors(void) {
    double values[128];
    for (int i = 0; i < 128; ++i) values[i] = i;
    static const double one[2] = {1, 0}, zero[2] = {0, 0};
    for (size_t i = 0; i < sizeof bad_calls / sizeof bad_calls[0]; ++i) {
        const struct bad_call *p = &bad_calls[i];
        const struct shape call = {p->ta, p->tb, p->m, p->n, p->k, 0, {1, 0}, {0, 0}};
        for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
            const struct type *ty = &types[t];
            void *a = typed_copy(ty, values, 64), *b = typed_copy(ty, values, 64), *c = typed_copy(ty, values, 64);
            void *c0 = typed_copy(ty, values, 64), *alpha = typed_copy(ty, one, 1), *beta = typed_copy(ty, zero, 1);
            last_info = 0, last_name[0] = 0;
            call_gemm(ty, fortran_entry, &call, alpha, a, p->lda, b, p->ldb, beta, c, p->ldc);
            printf("%.5s %s -> %s %d C %s\n", ty->fortran, p->what, last_name, last_info,
                   memcmp(c, c0, typed_size(ty, 64)) ? "CHANGED" : "unchanged");
            free(a);
            free(b);
            free(c);
            free(c0);
            free(alpha);
            free(beta);
        }
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
    free(a);
    free(b);
    free(c);
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
    static const double a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, c0[8] = {7, 7, 7, 7, 7, 7, 7, 7};
    static const double one[2] = {1, 0}, zero[2] = {0, 0};
    static const int entries[] = {fortran_entry, CblasColMajor, CblasRowMajor};
    const struct shape call = {'N', 'N', 2, 2, 2, 0, {1, 0}, {0, 0}};
    int changed = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t)
        for (size_t e = 0; e < 3; ++e) {
            const struct type *ty = &types[t];
            void *at = typed_copy(ty, a, 4), *c = typed_copy(ty, c0, 4), *c_before = typed_copy(ty, c0, 4);
            void *alpha = typed_copy(ty, one, 1), *beta = typed_copy(ty, zero, 1);
            call_gemm(ty, entries[e], &call, alpha, at, 2, at, 2, beta, c, 2);
            changed |= memcmp(c, c_before, typed_size(ty, 4)) != 0;
            free(at);
            free(c);
            free(c_before);
            free(alpha);
            free(beta);
        }
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
