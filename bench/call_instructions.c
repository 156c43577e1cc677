/* call_instructions.c: calls of a 4x4x4 SGEMM on host memory and nothing else, for an
 * instruction counter: the host cost of a call, which wall clocks on a shared machine blur.
 * usage: gemm_call_instructions BACKEND COUNT [plan]
 * COUNT calls of gemm_sgemm with BACKEND forced (gemm_set_backend), or with "plan" COUNT runs
 * of a plan made with it forced. Run it under callgrind at two counts; the difference of the
 * totals over the extra calls is a call's cost, the backend's own work included:
 *   valgrind --tool=callgrind --callgrind-out-file=cg.1 ./build/bench/gemm_call_instructions cblas 100000
 *   valgrind --tool=callgrind --callgrind-out-file=cg.2 ./build/bench/gemm_call_instructions cblas 200000
 *   callgrind_annotate cg.1 | grep TOTALS; callgrind_annotate cg.2 | grep TOTALS */
#include <gemm/gemm.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 3 || (argc == 4 && strcmp(argv[3], "plan") != 0) || argc > 4) {
        fprintf(stderr, "usage: %s BACKEND COUNT [plan]\n", argv[0]);
        return 2;
    }
    float a[16] = {0}, b[16] = {0}, c[16] = {0};
    const float alpha = 1.0f, beta = 0.0f;
    const long count = atol(argv[2]);
    gemm_plan_t plan = NULL;
    if (gemm_set_backend(argv[1]) != GEMM_STATUS_SUCCESS) {
        fprintf(stderr, "%s\n", gemm_last_error());
        return 1;
    }
    if (argc == 4) {
        gemm_desc_t d;
        gemm_desc_init(&d, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 4, 4);
        if (gemm_plan_create(&d, &plan) != GEMM_STATUS_SUCCESS) {
            fprintf(stderr, "%s\n", gemm_last_error());
            return 1;
        }
    }
    for (long i = 0; i < count; ++i) {
        const gemm_status_t s =
            plan ? gemm_plan_run(plan, &alpha, a, b, &beta, c)
                 : gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 4, 4, alpha, a, 4, b, 4, beta, c, 4);
        if (s != GEMM_STATUS_SUCCESS) {
            fprintf(stderr, "%s\n", gemm_last_error());
            return 1;
        }
    }
    gemm_plan_destroy(plan);
    return 0;
}
