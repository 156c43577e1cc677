/* c_example.c: multiplying two matrices with gemm from C: a row-major sgemm, checking its
 * status, what a failed call tells you, and a plan for a multiplication made again and
 * again. Build: cc -std=c99 c_example.c -lgemm */
#include <stdio.h>

#include <gemm/gemm.h>

/* Prints a rows x cols row-major matrix. */
static void print_matrix(const char *name, const float *x, int rows, int cols) {
    int i, j;
    printf("%s =\n", name);
    for (i = 0; i < rows; ++i) {
        for (j = 0; j < cols; ++j) printf(" %8.2f", x[i * cols + j]);
        printf("\n");
    }
}

int main(void) {
    /* C (2 x 2) = 1.0 * A (2 x 3) * B (3 x 2) + 0.0 * C, all row-major as C arrays are. */
    const float A[2 * 3] = {1, 2, 3, 4, 5, 6};
    const float B[3 * 2] = {7, 8, 9, 10, 11, 12};
    float C[2 * 2] = {0, 0, 0, 0};
    const float expected[2 * 2] = {58, 64, 139, 154};
    gemm_status_t status;
    int i;

    /* Same parameters, in the same order, as cblas_sgemm. Leading dimensions of row-major
     * matrices are their row lengths: lda = 3 (columns of A), ldb = 2, ldc = 2. */
    status = gemm_sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 3, 1.0f, A, 3, B, 2, 0.0f, C, 2);
    if (status != GEMM_STATUS_SUCCESS) {
        fprintf(stderr, "gemm_sgemm failed: %s\n  %s\n", gemm_status_string(status), gemm_last_error());
        return 1;
    }
    print_matrix("C = A * B", C, 2, 2);
    for (i = 0; i < 4; ++i)
        if (C[i] != expected[i]) {
            fprintf(stderr, "unexpected C[%d] = %g (expected %g)\n", i, C[i], expected[i]);
            return 1;
        }

    /* A mistake: lda = 2 is too small for a row-major A with 3 columns. The call returns
     * an error status, leaves C untouched, and gemm_last_error() says which parameter. */
    status = gemm_sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 3, 1.0f, A, 2, B, 2, 0.0f, C, 2);
    if (status == GEMM_STATUS_SUCCESS) {
        fprintf(stderr, "a call with lda = 2 should have failed\n");
        return 1;
    }
    printf("expected failure: %s\n  %s (parameter %d)\n", gemm_status_string(status), gemm_last_error(),
           gemm_last_error_parameter());
    if (status != GEMM_STATUS_INVALID_LEADING_DIM || gemm_last_error_parameter() != 9) return 1;

    /* The same class of multiplication many times (a layer in a loop): a plan decides the
     * backend once, and each run checks only its pointers and scalars. */
    {
        gemm_desc_t desc;
        gemm_plan_t plan;
        const char *backend = "", *why = "";
        const float alpha = 1.0f, beta = 0.0f;
        int run;
        gemm_desc_init(&desc, GEMM_F32, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 3);
        desc.alignment = (int)sizeof(float); /* plain float arrays: 4-byte aligned, no more */
        desc.beta_zero = 1;                  /* every run passes beta = 0 */
        status = gemm_plan_create(&desc, &plan);
        if (status != GEMM_STATUS_SUCCESS) {
            fprintf(stderr, "gemm_plan_create failed: %s\n  %s\n", gemm_status_string(status), gemm_last_error());
            return 1;
        }
        for (run = 0; run < 3 && status == GEMM_STATUS_SUCCESS; ++run) {
            C[0] = C[1] = C[2] = C[3] = 0;
            status = gemm_plan_run(plan, &alpha, A, B, &beta, C);
        }
        gemm_plan_get_backend(plan, &backend, NULL, &why);
        printf("plan: %s, chosen as \"%s\"\n", backend, why);
        gemm_plan_destroy(plan);
        if (status != GEMM_STATUS_SUCCESS) {
            fprintf(stderr, "gemm_plan_run failed: %s\n  %s\n", gemm_status_string(status), gemm_last_error());
            return 1;
        }
        for (i = 0; i < 4; ++i)
            if (C[i] != expected[i]) return fprintf(stderr, "plan: unexpected C[%d] = %g\n", i, C[i]), 1;
    }

    printf("served by GEMM_BACKEND=%s; backends in this build:\n", gemm_get_backend());
    for (i = 0; i < (int)gemm_backend_count(); ++i) {
        gemm_backend_info_t info;
        if (gemm_backend_get_info(i, &info) == GEMM_STATUS_SUCCESS)
            printf("  %-10s %s%s\n", info.name,
                   info.available ? "available " : "unavailable: ", info.available ? info.detail : info.reason);
    }
    return 0;
}
