/* blas_compare.c: compares two outputs of `blas_caller values` entry by entry. A line is
 * "routine case entry value [imaginary part]"; values may differ by the rounding of a different
 * summation order (single precision, s and c: 1e-4; double, d and z: 1e-12; relative to
 * 1 + |reference|), and NaN matches only NaN (C entries a routine must leave as they were).
 * Prints the first differences and exits non-zero on any. */
#include <math.h>
#include <stdio.h>
#include <string.h>

/* What a routine name tells: sgemm_, cblas_cgemm:row, ... */
static int single_precision(const char *routine) {
    char type = routine[strncmp(routine, "cblas_", 6) ? 0 : 6];
    return type == 's' || type == 'c';
}

static int same(double r, double o, double tolerance) {
    if (isnan(r) || isnan(o)) return isnan(r) && isnan(o);
    return fabs(r - o) <= tolerance * (1 + fabs(r));
}

int main(int argc, char **argv) {
    if (argc != 3) return fprintf(stderr, "usage: blas_compare REFERENCE OTHER\n"), 2;
    FILE *ref = fopen(argv[1], "r"), *other = fopen(argv[2], "r");
    if (!ref || !other) return fprintf(stderr, "blas_compare: cannot open inputs\n"), 2;
    long entries = 0, bad = 0;
    char line1[256], line2[256];
    for (;;) {
        char *got1 = fgets(line1, sizeof line1, ref), *got2 = fgets(line2, sizeof line2, other);
        if (!got1 != !got2)
            return fprintf(stderr, "blas_compare: outputs differ in length after %ld entries\n", entries), 1;
        if (!got1) break;
        char routine1[64], routine2[64];
        unsigned long s1, i1, s2, i2;
        double r[2], o[2];
        int n1 = sscanf(line1, "%63s %lu %lu %lf %lf", routine1, &s1, &i1, &r[0], &r[1]);
        int n2 = sscanf(line2, "%63s %lu %lu %lf %lf", routine2, &s2, &i2, &o[0], &o[1]);
        if (n1 < 4 || n1 != n2 || strcmp(routine1, routine2) || s1 != s2 || i1 != i2)
            return fprintf(stderr, "blas_compare: entry %ld differs in form:\n  %s  %s", entries, line1, line2), 1;
        ++entries;
        double tolerance = single_precision(routine1) ? 1e-4 : 1e-12;
        for (int part = 0; part < n1 - 3; ++part) {
            if (same(r[part], o[part], tolerance)) continue;
            if (++bad <= 10)
                fprintf(stderr, "case %lu entry %lu %s%s: reference %.17g, other %.17g\n", s1, i1, routine1,
                        n1 == 5 ? (part ? " (imaginary)" : " (real)") : "", r[part], o[part]);
        }
    }
    printf("blas_compare: %ld entries, %ld differ\n", entries, bad);
    return entries == 0 || bad != 0;
}
