/* pdgemm_check.c: a distributed GEMM through ScaLAPACK, checked. Every local multiply PBLAS
 * makes is a BLAS dgemm_/zgemm_ call, so under gemm's drop-in BLAS
 * (LD_PRELOAD=libgemm_blas.so) gemm serves each rank's share:
 *
 *   mpirun -np 4 env LD_PRELOAD=/path/to/libgemm_blas.so ./pdgemm_check [N [NB [TN|NN]]]
 *
 * On a P x Q process grid (the squarest that uses every rank), C = alpha * op(A) * op(B) +
 * beta * C in block-cyclic layout with NB x NB blocks, by PDGEMM (A transposed, or with NN
 * not) and PZGEMM (B conjugate-transposed). The matrices' entries are functions of their global indices, so
 * each rank checks its own part of C against the sums it computes directly (every element, or
 * for large N an even sample of about 2^27 / K of them). Prints one line per product on rank 0,
 * with its time (the slowest rank's, after one untimed run) and rate; exits 1 when any rank's
 * C is wrong. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double re, im;
} dcomplex;

/* ScaLAPACK's C BLACS interface and its Fortran routines (all arguments by reference). */
void Cblacs_pinfo(int *rank, int *size);
void Cblacs_get(int context, int what, int *value);
void Cblacs_gridinit(int *context, const char *order, int rows, int cols);
void Cblacs_gridinfo(int context, int *rows, int *cols, int *row, int *col);
void Cblacs_gridexit(int context);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc, const int *icsrc,
               const int *context, const int *lld, int *info);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc);
void pzgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const dcomplex *alpha,
             const dcomplex *a, const int *ia, const int *ja, const int *desca, const dcomplex *b, const int *ib,
             const int *jb, const int *descb, const dcomplex *beta, dcomplex *c, const int *ic, const int *jc,
             const int *descc);

/* Entries in [-1, 1] from the global (0-based) row and column; `which` tells the matrices
 * apart, the imaginary part is a second such function. */
static double entry(int which, int i, int j) {
    return (double)((i * (7 + which) + j * (13 + 2 * which)) % 23 - 11) / 11.0;
}
static dcomplex centry(int which, int i, int j) {
    dcomplex z = {entry(which, i, j), entry(which + 5, j, i)};
    return z;
}

/* The process grid and this rank's place in it; matrices in blocks of nb x nb. */
typedef struct {
    int context, nb, prow, pcol, nprow, npcol;
} grid;

/* One matrix: this rank's part of it (lrows x lcols, column-major, leading dimension lld),
 * and its ScaLAPACK descriptor. */
typedef struct {
    int rows, cols, lrows, lcols, lld, desc[9];
    size_t element;
    void *data;
} local_matrix;

/* The global (0-based) index of local row or column l, on process proc of nprocs. */
static int global_of(int l, int nb, int proc, int nprocs) { return (l / nb * nprocs + proc) * nb + l % nb; }
static int global_row(const grid *g, int li) { return global_of(li, g->nb, g->prow, g->nprow); }
static int global_col(const grid *g, int lj) { return global_of(lj, g->nb, g->pcol, g->npcol); }

/* Matrix `which` (0: A, 1: B, 2: C), rows x cols of real (element 8) or complex (16) entries. */
static local_matrix make_matrix(const grid *g, int which, int rows, int cols, size_t element) {
    const int zero = 0;
    local_matrix x = {rows, cols, 0, 0, 1, {0}, element, NULL};
    x.lrows = numroc_(&rows, &g->nb, &g->prow, &zero, &g->nprow);
    x.lcols = numroc_(&cols, &g->nb, &g->pcol, &zero, &g->npcol);
    x.lld = x.lrows > 1 ? x.lrows : 1;
    x.data = malloc(element * (size_t)x.lld * (size_t)(x.lcols + 1));
    for (int lj = 0; lj < x.lcols; ++lj)
        for (int li = 0; li < x.lrows; ++li) {
            const size_t at = (size_t)li + (size_t)lj * (size_t)x.lld;
            const int i = global_row(g, li), j = global_col(g, lj);
            if (element == sizeof(double)) ((double *)x.data)[at] = entry(which, i, j);
            else ((dcomplex *)x.data)[at] = centry(which, i, j);
        }
    int info = 0;
    descinit_(x.desc, &rows, &cols, &g->nb, &g->nb, &zero, &zero, &g->context, &x.lld, &info);
    if (info != 0) {
        fprintf(stderr, "descinit_ failed: info %d\n", info);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return x;
}

static size_t bytes_of(const local_matrix *x) { return x->element * (size_t)x->lld * (size_t)(x->lcols + 1); }

/* One product: C = alpha * op(A) * op(B) + beta * C by pdgemm_ or pzgemm_. */
typedef struct {
    int complex_type;
    const char *ta, *tb;
    int m, n, k;
    const void *alpha, *beta;
    const local_matrix *a, *b;
    local_matrix *c;
} product;

static void run(const product *p, void *c) {
    const int one = 1;
    if (p->complex_type)
        pzgemm_(p->ta, p->tb, &p->m, &p->n, &p->k, p->alpha, p->a->data, &one, &one, p->a->desc, p->b->data, &one, &one,
                p->b->desc, p->beta, c, &one, &one, p->c->desc);
    else
        pdgemm_(p->ta, p->tb, &p->m, &p->n, &p->k, p->alpha, p->a->data, &one, &one, p->a->desc, p->b->data, &one, &one,
                p->b->desc, p->beta, c, &one, &one, p->c->desc);
}

/* The seconds the slowest rank spent in the product, all ranks starting together, after one
 * untimed run of it on a copy of C (a process's first BLAS calls set up threads and, under
 * gemm's drop-in, measure the machine's rates once). */
static double timed(const product *p) {
    void *scratch = memcpy(malloc(bytes_of(p->c)), p->c->data, bytes_of(p->c));
    run(p, scratch);
    free(scratch);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    run(p, p->c->data);
    double mine = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* Whether local element (li, lj) of C is checked, at O(k) each: every one unless that would
 * take more than about 2^27 multiply-adds, else an even sample of them. */
static int checked(const local_matrix *c, int k, int li, int lj) {
    const double work = (double)c->lrows * (double)c->lcols * (double)k;
    const long stride = work > 134217728.0 ? (long)(work / 134217728.0) + 1 : 1;
    return ((long)lj * c->lrows + li) % stride == 0;
}

/* A's entry (i, l) of op(A): A stored k x m when transposed, else m x k. */
static double a_entry(int transposed, int i, int l) { return transposed ? entry(0, l, i) : entry(0, i, l); }

/* PDGEMM: C (m x n) = alpha * op(A) * B + beta * C, op(A) = A^T (A stored k x m) or A (m x k),
 * B k x n. Returns the largest error over this rank's part of C, relative to the sum of the
 * products' magnitudes. */
static double check_pdgemm(const grid *g, int transposed, int m, int n, int k, double *seconds) {
    local_matrix a = transposed ? make_matrix(g, 0, k, m, sizeof(double)) : make_matrix(g, 0, m, k, sizeof(double));
    local_matrix b = make_matrix(g, 1, k, n, sizeof(double)), c = make_matrix(g, 2, m, n, sizeof(double));
    const double alpha = 0.75, beta = -0.5;
    const product p = {0, transposed ? "T" : "N", "N", m, n, k, &alpha, &beta, &a, &b, &c};
    *seconds = timed(&p);
    double worst = 0;
    for (int lj = 0; lj < c.lcols; ++lj)
        for (int li = 0; li < c.lrows; ++li) {
            if (!checked(&c, k, li, lj)) continue;
            const int i = global_row(g, li), j = global_col(g, lj);
            double sum = 0, size = 0;
            for (int l = 0; l < k; ++l) {
                sum += a_entry(transposed, i, l) * entry(1, l, j);
                size += fabs(a_entry(transposed, i, l) * entry(1, l, j));
            }
            const double want = alpha * sum + beta * entry(2, i, j);
            const double got = ((const double *)c.data)[(size_t)li + (size_t)lj * (size_t)c.lld];
            const double err = fabs(got - want) / (fabs(alpha) * size + fabs(beta) + 1e-300);
            if (!(err <= worst)) worst = err; /* a NaN counts as the worst */
        }
    free(a.data);
    free(b.data);
    free(c.data);
    return worst;
}

/* PZGEMM: C (m x n) = alpha * A * B^H + beta * C, A stored m x k, B n x k. */
static double check_pzgemm(const grid *g, int m, int n, int k, double *seconds) {
    local_matrix a = make_matrix(g, 0, m, k, sizeof(dcomplex)), b = make_matrix(g, 1, n, k, sizeof(dcomplex)),
                 c = make_matrix(g, 2, m, n, sizeof(dcomplex));
    const dcomplex alpha = {0.5, -0.25}, beta = {0.25, 1.0};
    const product p = {1, "N", "C", m, n, k, &alpha, &beta, &a, &b, &c};
    *seconds = timed(&p);
    double worst = 0;
    for (int lj = 0; lj < c.lcols; ++lj)
        for (int li = 0; li < c.lrows; ++li) {
            if (!checked(&c, k, li, lj)) continue;
            const int i = global_row(g, li), j = global_col(g, lj);
            double re = 0, im = 0, size = 0;
            for (int l = 0; l < k; ++l) {
                const dcomplex x = centry(0, i, l), y = centry(1, j, l); /* x * conj(y) */
                re += x.re * y.re + x.im * y.im;
                im += x.im * y.re - x.re * y.im;
                size += hypot(x.re, x.im) * hypot(y.re, y.im);
            }
            const dcomplex c0 = centry(2, i, j);
            const double want_re = alpha.re * re - alpha.im * im + beta.re * c0.re - beta.im * c0.im;
            const double want_im = alpha.re * im + alpha.im * re + beta.re * c0.im + beta.im * c0.re;
            const dcomplex got = ((const dcomplex *)c.data)[(size_t)li + (size_t)lj * (size_t)c.lld];
            const double err =
                hypot(got.re - want_re, got.im - want_im) /
                (hypot(alpha.re, alpha.im) * size + hypot(beta.re, beta.im) * hypot(c0.re, c0.im) + 1e-300);
            if (!(err <= worst)) worst = err;
        }
    free(a.data);
    free(b.data);
    free(c.data);
    return worst;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const int n = argc > 1 ? atoi(argv[1]) : 301, nb = argc > 2 ? atoi(argv[2]) : 32;
    const char *ops = argc > 3 ? argv[3] : "TN";
    const int transposed = strcmp(ops, "TN") == 0;
    int rank = 0, size = 1;
    Cblacs_pinfo(&rank, &size);
    if (n < 1 || nb < 1 || (!transposed && strcmp(ops, "NN") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: pdgemm_check [N [NB [TN|NN]]] (N, NB >= 1; PDGEMM's op(A) op(B), TN by default)\n");
        MPI_Finalize();
        return 2;
    }
    int nprow = 1;
    for (int p = 1; p * p <= size; ++p)
        if (size % p == 0) nprow = p;
    grid g = {0, nb, 0, 0, nprow, size / nprow};
    Cblacs_get(-1, 0, &g.context);
    Cblacs_gridinit(&g.context, "Row", g.nprow, g.npcol);
    Cblacs_gridinfo(g.context, &g.nprow, &g.npcol, &g.prow, &g.pcol);
    /* m, n and k differ, none a multiple of the block size, so that every rank holds ragged
     * blocks. */
    const int m = n, cols = n + 10, k = n - 7 > 1 ? n - 7 : 1;
    double seconds[2];
    const double errors[2] = {check_pdgemm(&g, transposed, m, cols, k, &seconds[0]),
                              check_pzgemm(&g, m, cols, k, &seconds[1])};
    double worst[2];
    MPI_Allreduce(errors, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double tolerance = 64 * 2.2e-16 * sqrt((double)k);
    int wrong = 0;
    for (int x = 0; x < 2; ++x) {
        const int ok = worst[x] <= tolerance;
        wrong |= !ok;
        if (rank == 0)
            printf("%s %dx%dx%d, blocks of %d, on a %dx%d grid: %.4g s, %.4g GFLOP/s; largest relative error "
                   "%.3g (tolerance %.3g): %s\n",
                   x == 1       ? "pzgemm N C"
                   : transposed ? "pdgemm T N"
                                : "pdgemm N N",
                   m, cols, k, nb, g.nprow, g.npcol, seconds[x], (x == 0 ? 2.0 : 8.0) * m * cols * k / seconds[x] / 1e9,
                   worst[x], tolerance, ok ? "ok" : "WRONG");
    }
    Cblacs_gridexit(g.context);
    MPI_Finalize();
    return wrong ? 1 : 0;
}
