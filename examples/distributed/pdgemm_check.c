/* pdgemm_check.c: a distributed GEMM through ScaLAPACK, checked. Every local multiply PBLAS
 * makes is a BLAS dgemm_/zgemm_ call, so under gemm's drop-in BLAS
 * (LD_PRELOAD=libgemm_blas.so) gemm serves each rank's share:
 *
 *   mpirun -np 4 env LD_PRELOAD=/path/to/libgemm_blas.so ./pdgemm_check [N [NB]]
 *
 * On a P x Q process grid (the squarest that uses every rank), C = alpha * op(A) * op(B) +
 * beta * C in block-cyclic layout with NB x NB blocks, by PDGEMM (A transposed) and PZGEMM
 * (B conjugate-transposed). The matrices' entries are functions of their global indices, so
 * each rank checks its own part of C against the sums it computes directly (every element, or
 * for large N an even sample of about 2^27 / K of them). Prints one line per product on rank 0,
 * with its time (the slowest rank's, after one untimed run) and rate; exits 1 when any rank's
 * C is wrong. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { double re, im; } dcomplex;

/* ScaLAPACK's C BLACS interface and its Fortran routines (all arguments by reference). */
void Cblacs_pinfo(int *rank, int *size);
void Cblacs_get(int context, int what, int *value);
void Cblacs_gridinit(int *context, const char *order, int rows, int cols);
void Cblacs_gridinfo(int context, int *rows, int *cols, int *row, int *col);
void Cblacs_gridexit(int context);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
               const int *icsrc, const int *context, const int *lld, int *info);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta, double *c,
             const int *ic, const int *jc, const int *descc);
void pzgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const dcomplex *alpha, const dcomplex *a, const int *ia, const int *ja, const int *desca,
             const dcomplex *b, const int *ib, const int *jb, const int *descb, const dcomplex *beta,
             dcomplex *c, const int *ic, const int *jc, const int *descc);

/* Entries in [-1, 1] from the global (0-based) row and column; `which` tells the matrices
 * apart, the imaginary part is a second such function. */
static double entry(int which, int i, int j) { return (double)((i * (7 + which) + j * (13 + 2 * which)) % 23 - 11) / 11.0; }
static dcomplex centry(int which, int i, int j) {
    dcomplex z = {entry(which, i, j), entry(which + 5, j, i)};
    return z;
}

/* One process's part of a rows x cols matrix in blocks of nb: its local size and the global
 * index of local row (or column) l. */
typedef struct { int rows, cols, nb, prow, pcol, nprow, npcol, lrows, lcols; } local_part;

static local_part part_of(int rows, int cols, int nb, int prow, int pcol, int nprow, int npcol) {
    const int zero = 0;
    local_part p = {rows, cols, nb, prow, pcol, nprow, npcol, 0, 0};
    p.lrows = numroc_(&rows, &nb, &prow, &zero, &nprow);
    p.lcols = numroc_(&cols, &nb, &pcol, &zero, &npcol);
    return p;
}
static int global_of(int l, int nb, int proc, int nprocs) { return (l / nb * nprocs + proc) * nb + l % nb; }

static int lld_of(const local_part *p) { return p->lrows > 1 ? p->lrows : 1; }

typedef struct {
    const char *ta, *tb;
    const int *m, *n, *k, *one, *da, *db, *dc;
    const void *alpha, *a, *b, *beta;
    void *c;
} gemm_args;

/* Every stride-th local element of C is checked, at O(k) each: all of them unless that would
 * take more than about 2^27 multiply-adds. */
static long check_stride(const local_part *c, int k) {
    const double work = (double)c->lrows * (double)c->lcols * (double)k;
    return work > 134217728.0 ? (long)(work / 134217728.0) + 1 : 1;
}

/* The seconds the slowest rank spent in product(), all ranks starting together, after one
 * untimed run of it on warmup_c, a copy of C (a process's first BLAS calls set up threads and,
 * under gemm's drop-in, measure the machine's rates once). */
static double timed(void (*product)(void *), gemm_args *args, void *warmup_c) {
    void *c = args->c;
    args->c = warmup_c;
    product(args);
    args->c = c;
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    product(args);
    double mine = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static void describe(int *desc, const local_part *p, int context) {
    const int zero = 0, lld = lld_of(p);
    int info = 0;
    descinit_(desc, &p->rows, &p->cols, &p->nb, &p->nb, &zero, &zero, &context, &lld, &info);
    if (info != 0) {
        fprintf(stderr, "descinit_ failed: info %d\n", info);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* PDGEMM: C (m x n) = alpha * A^T * B + beta * C, A stored k x m, B k x n. Returns the largest
 * error over this rank's part of C, relative to the sum of the products' magnitudes. */
static void run_pdgemm(void *p) {
    const gemm_args *g = p;
    pdgemm_(g->ta, g->tb, g->m, g->n, g->k, g->alpha, g->a, g->one, g->one, g->da, g->b, g->one, g->one, g->db,
            g->beta, g->c, g->one, g->one, g->dc);
}

static void run_pzgemm(void *p) {
    const gemm_args *g = p;
    pzgemm_(g->ta, g->tb, g->m, g->n, g->k, g->alpha, g->a, g->one, g->one, g->da, g->b, g->one, g->one, g->db,
            g->beta, g->c, g->one, g->one, g->dc);
}

static double check_pdgemm(int context, int m, int n, int k, int nb, int prow, int pcol, int nprow, int npcol,
                           double *seconds) {
    const local_part pa = part_of(k, m, nb, prow, pcol, nprow, npcol);
    const local_part pb = part_of(k, n, nb, prow, pcol, nprow, npcol);
    const local_part pc = part_of(m, n, nb, prow, pcol, nprow, npcol);
    double *a = malloc(sizeof(double) * (size_t)lld_of(&pa) * (size_t)(pa.lcols + 1));
    double *b = malloc(sizeof(double) * (size_t)lld_of(&pb) * (size_t)(pb.lcols + 1));
    double *c = malloc(sizeof(double) * (size_t)lld_of(&pc) * (size_t)(pc.lcols + 1));
    const local_part *parts[3] = {&pa, &pb, &pc};
    double *data[3] = {a, b, c};
    for (int x = 0; x < 3; ++x)
        for (int lj = 0; lj < parts[x]->lcols; ++lj)
            for (int li = 0; li < parts[x]->lrows; ++li)
                data[x][li + (size_t)lj * (size_t)lld_of(parts[x])] =
                    entry(x, global_of(li, nb, prow, nprow), global_of(lj, nb, pcol, npcol));
    int da[9], db[9], dc[9];
    describe(da, &pa, context);
    describe(db, &pb, context);
    describe(dc, &pc, context);
    const int one = 1;
    const double alpha = 0.75, beta = -0.5;
    gemm_args args = {"T", "N", &m, &n, &k, &one, da, db, dc, &alpha, a, b, &beta, c};
    const size_t c_bytes = sizeof(double) * (size_t)lld_of(&pc) * (size_t)(pc.lcols + 1);
    double *scratch = memcpy(malloc(c_bytes), c, c_bytes);
    *seconds = timed(run_pdgemm, &args, scratch);
    free(scratch);
    double worst = 0;
    const long stride = check_stride(&pc, k);
    for (int lj = 0; lj < pc.lcols; ++lj)
        for (int li = 0; li < pc.lrows; ++li) {
            if (((long)lj * pc.lrows + li) % stride != 0) continue;
            const int i = global_of(li, nb, prow, nprow), j = global_of(lj, nb, pcol, npcol);
            double sum = 0, size = 0;
            for (int l = 0; l < k; ++l) {
                sum += entry(0, l, i) * entry(1, l, j);
                size += fabs(entry(0, l, i) * entry(1, l, j));
            }
            const double want = alpha * sum + beta * entry(2, i, j);
            const double err = fabs(c[li + (size_t)lj * (size_t)lld_of(&pc)] - want) / (fabs(alpha) * size + fabs(beta) + 1e-300);
            if (!(err <= worst)) worst = err; /* a NaN counts as the worst */
        }
    free(a);
    free(b);
    free(c);
    return worst;
}

/* PZGEMM: C (m x n) = alpha * A * B^H + beta * C, A stored m x k, B n x k. */
static double check_pzgemm(int context, int m, int n, int k, int nb, int prow, int pcol, int nprow, int npcol,
                           double *seconds) {
    const local_part pa = part_of(m, k, nb, prow, pcol, nprow, npcol);
    const local_part pb = part_of(n, k, nb, prow, pcol, nprow, npcol);
    const local_part pc = part_of(m, n, nb, prow, pcol, nprow, npcol);
    dcomplex *a = malloc(sizeof(dcomplex) * (size_t)lld_of(&pa) * (size_t)(pa.lcols + 1));
    dcomplex *b = malloc(sizeof(dcomplex) * (size_t)lld_of(&pb) * (size_t)(pb.lcols + 1));
    dcomplex *c = malloc(sizeof(dcomplex) * (size_t)lld_of(&pc) * (size_t)(pc.lcols + 1));
    const local_part *parts[3] = {&pa, &pb, &pc};
    dcomplex *data[3] = {a, b, c};
    for (int x = 0; x < 3; ++x)
        for (int lj = 0; lj < parts[x]->lcols; ++lj)
            for (int li = 0; li < parts[x]->lrows; ++li)
                data[x][li + (size_t)lj * (size_t)lld_of(parts[x])] =
                    centry(x, global_of(li, nb, prow, nprow), global_of(lj, nb, pcol, npcol));
    int da[9], db[9], dc[9];
    describe(da, &pa, context);
    describe(db, &pb, context);
    describe(dc, &pc, context);
    const int one = 1;
    const dcomplex alpha = {0.5, -0.25}, beta = {0.25, 1.0};
    gemm_args args = {"N", "C", &m, &n, &k, &one, da, db, dc, &alpha, a, b, &beta, c};
    const size_t c_bytes = sizeof(dcomplex) * (size_t)lld_of(&pc) * (size_t)(pc.lcols + 1);
    dcomplex *scratch = memcpy(malloc(c_bytes), c, c_bytes);
    *seconds = timed(run_pzgemm, &args, scratch);
    free(scratch);
    double worst = 0;
    const long stride = check_stride(&pc, k);
    for (int lj = 0; lj < pc.lcols; ++lj)
        for (int li = 0; li < pc.lrows; ++li) {
            if (((long)lj * pc.lrows + li) % stride != 0) continue;
            const int i = global_of(li, nb, prow, nprow), j = global_of(lj, nb, pcol, npcol);
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
            const dcomplex got = c[li + (size_t)lj * (size_t)lld_of(&pc)];
            const double err = hypot(got.re - want_re, got.im - want_im) /
                               (hypot(alpha.re, alpha.im) * size + hypot(beta.re, beta.im) * hypot(c0.re, c0.im) + 1e-300);
            if (!(err <= worst)) worst = err;
        }
    free(a);
    free(b);
    free(c);
    return worst;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const int n = argc > 1 ? atoi(argv[1]) : 301, nb = argc > 2 ? atoi(argv[2]) : 32;
    int rank = 0, size = 1;
    Cblacs_pinfo(&rank, &size);
    if (n < 1 || nb < 1) {
        if (rank == 0) fprintf(stderr, "usage: pdgemm_check [N [NB]] (N, NB >= 1)\n");
        MPI_Finalize();
        return 2;
    }
    int nprow = 1;
    for (int p = 1; p * p <= size; ++p)
        if (size % p == 0) nprow = p;
    int npcol = size / nprow, context = 0, prow = 0, pcol = 0;
    Cblacs_get(-1, 0, &context);
    Cblacs_gridinit(&context, "Row", nprow, npcol);
    Cblacs_gridinfo(context, &nprow, &npcol, &prow, &pcol);
    /* m, n and k differ, none a multiple of the block size, so that every rank holds ragged
     * blocks. */
    const int m = n, cols = n + 10, k = n - 7 > 1 ? n - 7 : 1;
    double seconds[2];
    const double errors[2] = {check_pdgemm(context, m, cols, k, nb, prow, pcol, nprow, npcol, &seconds[0]),
                              check_pzgemm(context, m, cols, k, nb, prow, pcol, nprow, npcol, &seconds[1])};
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
                   x == 0 ? "pdgemm T N" : "pzgemm N C", m, cols, k, nb, nprow, npcol, seconds[x],
                   (x == 0 ? 2.0 : 8.0) * m * cols * k / seconds[x] / 1e9, worst[x], tolerance, ok ? "ok" : "WRONG");
    }
    Cblacs_gridexit(context);
    MPI_Finalize();
    return wrong ? 1 : 0;
}
