/* test_c99_header.c: gemm.h compiles as strict C99 (-std=c99 -pedantic -Werror) and every
 * declaration in it is usable from C: each function is bound to a pointer of the type the
 * header promises (a changed prototype fails to compile), every constant and field is used. */
#include <stdio.h>
#include <string.h>

#include "gemm/gemm.h"

/* The exact types the documentation gives; assigning the functions checks the prototypes. */
typedef const char *(*version_fn)(void);
typedef const char *(*status_string_fn)(gemm_status_t);
typedef const char *(*dtype_name_fn)(gemm_dtype_t);
typedef const char *(*last_error_fn)(void);
typedef int (*last_error_parameter_fn)(void);
typedef gemm_status_t (*sgemm_fn)(gemm_layout_t, gemm_op_t, gemm_op_t, int64_t, int64_t, int64_t, float, const float *,
                                  int64_t, const float *, int64_t, float, float *, int64_t);
typedef gemm_status_t (*dgemm_fn)(gemm_layout_t, gemm_op_t, gemm_op_t, int64_t, int64_t, int64_t, double,
                                  const double *, int64_t, const double *, int64_t, double, double *, int64_t);
typedef gemm_status_t (*sgemm_batched_fn)(gemm_layout_t, gemm_op_t, gemm_op_t, int64_t, int64_t, int64_t, float,
                                          const float *, int64_t, int64_t, const float *, int64_t, int64_t, float,
                                          float *, int64_t, int64_t, int64_t);
typedef gemm_status_t (*dgemm_batched_fn)(gemm_layout_t, gemm_op_t, gemm_op_t, int64_t, int64_t, int64_t, double,
                                          const double *, int64_t, int64_t, const double *, int64_t, int64_t, double,
                                          double *, int64_t, int64_t, int64_t);
typedef gemm_status_t (*ex_fn)(gemm_layout_t, gemm_op_t, gemm_op_t, int64_t, int64_t, int64_t, const void *,
                               const void *, gemm_dtype_t, int64_t, const void *, gemm_dtype_t, int64_t, const void *,
                               void *, gemm_dtype_t, int64_t, gemm_dtype_t);
typedef gemm_status_t (*ex_batched_fn)(gemm_layout_t, gemm_op_t, gemm_op_t, int64_t, int64_t, int64_t, const void *,
                                       const void *, gemm_dtype_t, int64_t, int64_t, const void *, gemm_dtype_t,
                                       int64_t, int64_t, const void *, void *, gemm_dtype_t, int64_t, int64_t, int64_t,
                                       gemm_dtype_t);
typedef int64_t (*backend_count_fn)(void);
typedef gemm_status_t (*backend_get_info_fn)(int64_t, gemm_backend_info_t *);
typedef gemm_status_t (*set_backend_fn)(const char *);
typedef gemm_status_t (*set_stream_fn)(void *);
typedef void *(*get_stream_fn)(void);
typedef const char *(*get_backend_fn)(void);
typedef gemm_status_t (*tune_fn)(const gemm_tune_request_t *, int, gemm_tune_report_t *);
typedef const char *(*tune_cache_path_fn)(void);

static int failures = 0;

static void expect(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "FAILED: %s\n", what);
        ++failures;
    }
}

int main(void) {
    version_fn version = gemm_version;
    status_string_fn status_string = gemm_status_string;
    dtype_name_fn dtype_name = gemm_dtype_name;
    last_error_fn last_error = gemm_last_error;
    last_error_parameter_fn last_error_parameter = gemm_last_error_parameter;
    sgemm_fn sgemm = gemm_sgemm;
    dgemm_fn dgemm = gemm_dgemm;
    sgemm_batched_fn sgemm_batched = gemm_sgemm_strided_batched;
    dgemm_batched_fn dgemm_batched = gemm_dgemm_strided_batched;
    ex_fn ex = gemm_ex;
    ex_batched_fn ex_batched = gemm_ex_strided_batched;
    backend_count_fn backend_count = gemm_backend_count;
    backend_get_info_fn backend_get_info = gemm_backend_get_info;
    set_backend_fn set_backend = gemm_set_backend;
    set_stream_fn set_stream = gemm_set_stream;
    get_stream_fn get_stream = gemm_get_stream;
    get_backend_fn get_backend = gemm_get_backend;
    tune_fn tune = gemm_tune;
    tune_cache_path_fn tune_cache_path = gemm_tune_cache_path;

    const gemm_layout_t layouts[] = {GEMM_ROW_MAJOR, GEMM_COL_MAJOR};
    const gemm_op_t ops[] = {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C};
    const gemm_dtype_t dtypes[] = {GEMM_F32, GEMM_F64, GEMM_F16, GEMM_BF16};
    const gemm_status_t statuses[] = {GEMM_STATUS_SUCCESS,
                                      GEMM_STATUS_INVALID_LAYOUT,
                                      GEMM_STATUS_INVALID_OP,
                                      GEMM_STATUS_INVALID_SIZE,
                                      GEMM_STATUS_INVALID_LEADING_DIM,
                                      GEMM_STATUS_INVALID_STRIDE,
                                      GEMM_STATUS_INVALID_POINTER,
                                      GEMM_STATUS_INVALID_DTYPE,
                                      GEMM_STATUS_INVALID_VALUE,
                                      GEMM_STATUS_MIXED_MEMORY_SPACES,
                                      GEMM_STATUS_NOT_SUPPORTED,
                                      GEMM_STATUS_UNKNOWN_BACKEND,
                                      GEMM_STATUS_BACKEND_UNAVAILABLE,
                                      GEMM_STATUS_INVALID_CONFIG,
                                      GEMM_STATUS_ALLOC_FAILED,
                                      GEMM_STATUS_EXECUTION_FAILED,
                                      GEMM_STATUS_INTERNAL_ERROR};
    /* CBLAS's values, which callers may pass instead. */
    expect(layouts[0] == 101 && layouts[1] == 102, "layout values equal CBLAS's");
    expect(ops[0] == 111 && ops[1] == 112 && ops[2] == 113, "op values equal CBLAS's");
    expect(dtypes[0] == 0 && dtypes[3] == 3, "dtype values");
    {
        size_t i;
        for (i = 0; i < sizeof statuses / sizeof statuses[0]; ++i)
            expect(status_string(statuses[i]) != NULL && status_string(statuses[i])[0] != '\0', "status string");
        expect(strcmp(dtype_name(GEMM_F32), "f32") == 0 && strcmp(dtype_name(GEMM_BF16), "bf16") == 0 &&
                   strcmp(dtype_name(GEMM_C64), "c64") == 0 && strcmp(dtype_name(GEMM_F8_E4M3), "e4m3") == 0,
               "dtype names");
    }

    {
        /* FP8 from C: gemm_scaling_t and gemm_ex_scaled. 2 (e4m3 0x40) times 1 (0x38), scaled
         * by 0.5 and 3, k = 1: 3. */
        const unsigned char a = 0x40, b = 0x38;
        const float alpha = 1.0f, beta = 0.0f, sa = 0.5f, sb = 3.0f;
        float c = -1.0f, amax = 0.0f;
        gemm_scaling_t x;
        gemm_scaling_init(&x);
        x.mode = GEMM_SCALE_TENSOR;
        x.a_scale = &sa;
        x.b_scale = &sb;
        x.amax_d = &amax;
        expect(gemm_ex_scaled(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, 1, &alpha, &a, GEMM_F8_E4M3, 1, &b,
                              GEMM_F8_E4M3, 1, &beta, &c, GEMM_F32, 1, GEMM_F32, &x) == GEMM_STATUS_SUCCESS &&
                   c == 3.0f && amax == 3.0f,
               "gemm_ex_scaled from C");
    }

    {
        /* Grouped FP8 from C: two groups of one 1 x 1 x 1 matrix, 2 times 1 scaled by 0.5 and 3
         * in group 0 (3), scales of 1 in group 1 (2); group 0's amax_d. */
        const unsigned char a = 0x40, b = 0x38;
        const void *as[] = {&a, &a}, *bs[] = {&b, &b};
        const gemm_op_t ops[] = {GEMM_OP_N, GEMM_OP_N};
        const int64_t ones[] = {1, 1};
        const float alphas[] = {1.0f, 1.0f}, betas[] = {0.0f, 0.0f}, sa = 0.5f, sb = 3.0f;
        float c0 = -1.0f, c1 = -1.0f, amax = 0.0f;
        void *cs[] = {&c0, &c1};
        gemm_scaling_t x[2];
        gemm_scaling_init(&x[0]);
        gemm_scaling_init(&x[1]);
        x[0].mode = GEMM_SCALE_TENSOR;
        x[0].a_scale = &sa;
        x[0].b_scale = &sb;
        x[0].amax_d = &amax;
        expect(gemm_ex_grouped_scaled(GEMM_COL_MAJOR, ops, ops, ones, ones, ones, alphas, as, GEMM_F8_E4M3, ones, bs,
                                      GEMM_F8_E4M3, ones, betas, cs, GEMM_F32, ones, 2, ones, GEMM_F32,
                                      x) == GEMM_STATUS_SUCCESS &&
                   c0 == 3.0f && c1 == 2.0f && amax == 3.0f,
               "gemm_ex_grouped_scaled from C");
    }

    {
        /* A masked batch from C: two 2 x 1 x 1 matrices (2 times 1 scaled by 0.5 and 3: 3), the
         * first computing 1 row, the second none: its C stays, its amax_d is 0. */
        const unsigned char a[] = {0x40, 0x40, 0x40, 0x40}, b[] = {0x38, 0x38};
        const int32_t rows[] = {1, 0};
        const float one = 1.0f, zero = 0.0f, sa = 0.5f, sb = 3.0f;
        float c[] = {-1.0f, -1.0f, -1.0f, -1.0f}, amax[] = {-1.0f, -1.0f};
        gemm_scaling_t x[2];
        int i;
        for (i = 0; i < 2; ++i) {
            gemm_scaling_init(&x[i]);
            x[i].mode = GEMM_SCALE_TENSOR;
            x[i].a_scale = &sa;
            x[i].b_scale = &sb;
            x[i].amax_d = &amax[i];
        }
        expect(gemm_ex_masked_scaled(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 1, 1, &one, a, GEMM_F8_E4M3, 2, 2, b,
                                     GEMM_F8_E4M3, 1, 1, &zero, c, GEMM_F32, 2, 2, 2, rows, GEMM_F32,
                                     x) == GEMM_STATUS_SUCCESS &&
                   c[0] == 3.0f && c[1] == -1.0f && c[2] == -1.0f && c[3] == -1.0f && amax[0] == 3.0f && amax[1] == 0.0f,
               "gemm_ex_masked_scaled from C");
    }

    {
        /* A sparse product from C: the 2 x 2 CSR [[0, 2], [3, 0]] times (1, 10)^T is (20, 3); the
         * same matrix in COO. */
        const int32_t offsets[] = {0, 1, 2}, cols[] = {1, 0}, rows[] = {0, 1};
        const double values[] = {2.0, 3.0}, x[] = {1.0, 10.0}, alpha = 1.0, beta = 0.0;
        double y[2] = {-1.0, -1.0}, z[2] = {-1.0, -1.0};
        gemm_csr_t csr;
        gemm_coo_t coo;
        gemm_csr_init(&csr, 2, 2, 2, GEMM_INDEX_I32, offsets, cols, values);
        gemm_coo_init(&coo, 2, 2, 2, GEMM_INDEX_I32, rows, cols, values);
        csr.validate = 1;
        expect(gemm_spmm_csr(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 1, 2, &alpha, &csr, x, 2, &beta, y, 2,
                             GEMM_F64) == GEMM_STATUS_SUCCESS &&
                   y[0] == 20.0 && y[1] == 3.0,
               "gemm_spmm_csr from C");
        expect(gemm_spmm_coo(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 1, 2, &alpha, &coo, x, 2, &beta, z, 2,
                             GEMM_F64) == GEMM_STATUS_SUCCESS &&
                   z[0] == 20.0 && z[1] == 3.0,
               "gemm_spmm_coo from C");
    }

    {
        char want[32];
        snprintf(want, sizeof want, "%d.%d.%d", GEMM_VERSION_MAJOR, GEMM_VERSION_MINOR, GEMM_VERSION_PATCH);
        expect(strcmp(version(), want) == 0, "gemm_version matches the header's version macros");
    }

    {
        /* C = A B with A = [1 2; 3 4], B = I, through every entry point. */
        float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0, 0, 0, 0};
        double ad[4] = {1, 2, 3, 4}, bd[4] = {1, 0, 0, 1}, cd[4] = {0, 0, 0, 0};
        float one = 1.0f, zero = 0.0f;
        expect(sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2) ==
                       GEMM_STATUS_SUCCESS &&
                   c[1] == 2.0f && c[2] == 3.0f,
               "gemm_sgemm");
        expect(dgemm(GEMM_COL_MAJOR, GEMM_OP_T, GEMM_OP_N, 2, 2, 2, 1.0, ad, 2, bd, 2, 0.0, cd, 2) ==
                       GEMM_STATUS_SUCCESS &&
                   cd[1] == 3.0 && cd[2] == 2.0, /* col-major C = A^T */
               "gemm_dgemm");
        expect(sgemm_batched(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, 1.0f, a, 2, 0, b, 2, 0, 0.0f, c, 2, 4, 1) ==
                   GEMM_STATUS_SUCCESS,
               "gemm_sgemm_strided_batched");
        expect(dgemm_batched(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, 1.0, ad, 2, 0, bd, 2, 0, 0.0, cd, 2, 4,
                             1) == GEMM_STATUS_SUCCESS,
               "gemm_dgemm_strided_batched");
        expect(ex(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, &one, a, GEMM_F32, 2, b, GEMM_F32, 2, &zero, c,
                  GEMM_F32, 2, GEMM_F32) == GEMM_STATUS_SUCCESS,
               "gemm_ex");
        expect(ex_batched(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, &one, a, GEMM_F32, 2, 0, b, GEMM_F32, 2, 0,
                          &zero, c, GEMM_F32, 2, 4, 1, GEMM_F32) == GEMM_STATUS_SUCCESS,
               "gemm_ex_strided_batched");
        expect(last_error()[0] == '\0' && last_error_parameter() == 0, "no error after a success");
        expect(sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, 1.0f, a, 1, b, 2, 0.0f, c, 2) ==
                       GEMM_STATUS_INVALID_LEADING_DIM &&
                   last_error_parameter() == 9 && strncmp(last_error(), "parameter 9:", 12) == 0,
               "lda error names parameter 9");
    }

    {
        gemm_backend_info_t info;
        int64_t i, n = backend_count();
        expect(n >= 1, "at least one backend");
        for (i = 0; i < n; ++i) {
            expect(backend_get_info(i, &info) == GEMM_STATUS_SUCCESS, "gemm_backend_get_info");
            expect(info.name != NULL && info.reason != NULL && info.detail != NULL &&
                       (info.available == 0 || info.available == 1),
                   "backend info fields");
        }
    }

    expect(set_backend("cpu_ref") == GEMM_STATUS_SUCCESS && strcmp(get_backend(), "cpu_ref") == 0, "gemm_set_backend");
    expect(set_backend(NULL) == GEMM_STATUS_SUCCESS, "gemm_set_backend(NULL)");
    expect(set_stream(NULL) == GEMM_STATUS_SUCCESS && get_stream() == NULL, "gemm_set_stream");

    {
        /* The tuning structs, field by field (not run: tuning takes seconds). */
        gemm_tune_request_t request;
        gemm_tune_candidate_t candidate;
        gemm_tune_report_t report;
        memset(&request, 0, sizeof request);
        request.ab_type = GEMM_F32;
        request.c_type = GEMM_F32;
        request.layout = GEMM_COL_MAJOR;
        request.transa = GEMM_OP_N;
        request.transb = GEMM_OP_T;
        request.m = request.n = request.k = 64;
        request.batch_count = 1;
        request.ld_padding = 0;
        request.misaligned = 0;
        request.beta_zero = 1;
        request.device = -1;
        request.budget_ms = 0.0;
        request.backends = NULL;
        candidate.backend = "cpu_ref";
        candidate.variant = "";
        candidate.median_us = 0.0;
        candidate.correct = 1;
        candidate.note = "";
        report.backend = candidate.backend;
        report.variant = candidate.variant;
        report.median_us = candidate.median_us;
        report.default_backend = "";
        report.default_median_us = 0.0;
        report.candidate_count = 1;
        report.candidates = &candidate;
        report.stored = 0;
        expect(tune != NULL && report.candidates->correct == 1 && request.m == 64, "tuning declarations");
        expect(tune_cache_path() != NULL, "gemm_tune_cache_path");
    }

    if (failures) return 1;
    printf("gemm.h: every declaration usable from C99\n");
    return 0;
}
