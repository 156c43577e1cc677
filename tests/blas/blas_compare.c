/* blas_compare.c: compares two outputs of `blas_caller values` entry by entry, allowing the
 * rounding differences of a different summation order (f32: 1e-4, f64: 1e-12, relative to
 * 1 + |reference|). Prints the first differences and exits non-zero on any. */
#include <math.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 3) return fprintf(stderr, "usage: blas_compare REFERENCE OTHER\n"), 2;
    FILE *ref = fopen(argv[1], "r"), *other = fopen(argv[2], "r");
    if (!ref || !other) return fprintf(stderr, "blas_compare: cannot open inputs\n"), 2;
    const double tolerance[4] = {1e-4, 1e-12, 1e-4, 1e-12};
    const char *column[4] = {"sgemm_", "dgemm_", "cblas_sgemm", "cblas_dgemm"};
    long entries = 0, bad = 0;
    unsigned long s1, i1, s2, i2;
    double r[4], o[4];
    for (;;) {
        int got1 = fscanf(ref, "%lu %lu %lf %lf %lf %lf", &s1, &i1, &r[0], &r[1], &r[2], &r[3]);
        int got2 = fscanf(other, "%lu %lu %lf %lf %lf %lf", &s2, &i2, &o[0], &o[1], &o[2], &o[3]);
        if (got1 != got2) return fprintf(stderr, "blas_compare: outputs differ in length after %ld entries\n", entries), 1;
        if (got1 != 6) break;
        if (s1 != s2 || i1 != i2) return fprintf(stderr, "blas_compare: entry order differs at %ld\n", entries), 1;
        ++entries;
        for (int c = 0; c < 4; ++c) {
            if (fabs(r[c] - o[c]) <= tolerance[c] * (1 + fabs(r[c]))) continue;  /* NaN fails */
            if (++bad <= 10)
                fprintf(stderr, "case %lu entry %lu %s: reference %.17g, other %.17g\n", s1, i1, column[c], r[c], o[c]);
        }
    }
    printf("blas_compare: %ld entries, %ld differ\n", entries, bad);
    return entries == 0 || bad != 0;
}
