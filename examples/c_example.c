/* c_example.c: multiplying two matrices with gemm from C: a row-major sgemm, checking its
 * status, and what a failed call tells you. Build: cc -std=c99 c_example.c -lgemm */
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
    const float A[2 * 3] = {1, 2, 3,
                            4, 5, 6};
    const float B[3 * 2] = {7, 8,
                            9, 10,
                            11, 12};
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

    printf("served by GEMM_BACKEND=%s; backends in this build:\n", gemm_get_backend());
    for (i = 0; i < (int)gemm_backend_count(); ++i) {
        gemm_backend_info_t info;
        if (gemm_backend_get_info(i, &info) == GEMM_STATUS_SUCCESS)
            printf("  %-10s %s%s\n", info.name, info.available ? "available " : "unavailable: ",
                   info.available ? info.detail : info.reason);
    }
    return 0;
}
