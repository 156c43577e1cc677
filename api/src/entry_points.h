/* entry_points.h: what the C entry points (gemm_entry.c) hand to the C++ implementation.
 * Enum arguments travel as int: C reads any int a caller passes without undefined behaviour,
 * and the implementation validates them before treating them as enumerators. */
#ifndef GEMM_API_ENTRY_POINTS_H
#define GEMM_API_ENTRY_POINTS_H

#include "gemm/gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which entry point made the call: it decides how parameters are numbered in messages. */
enum api_entry {
    api_entry_typed = 0,
    api_entry_typed_batched = 1,
    api_entry_ex = 2,
    api_entry_ex_batched = 3,
    api_entry_desc = 4,           /* a gemm_desc_t checked as a call: messages name its fields */
    api_entry_typed_pointers = 5, /* gemm_sgemm_batched ...: arrays of pointers */
    api_entry_ex_pointers = 6,    /* gemm_ex_batched */
    api_entry_grouped = 7,        /* gemm_ex_grouped(_scaled): one group's arguments */
    api_entry_ex_epilogue = 8,    /* gemm_ex_epilogue */
    api_entry_plan_epilogue = 9,  /* gemm_plan_run_epilogue's operands */
    api_entry_ex_scaled = 10,     /* gemm_ex_scaled */
    api_entry_plan_scaled = 11,   /* gemm_plan_run_scaled's operands */
    api_entry_masked = 12         /* gemm_ex_masked_scaled: one matrix's arguments, as a group */
};

/* gemm_epilogue_t with its enum fields as int, read once its struct_size passed. */
typedef struct api_epilogue {
    int activation, bias_axis;
    const void *bias;
    void *bias_grad;
    void *aux;
    int64_t ld_aux;
} api_epilogue;

/* gemm_scaling_t with its enum field as int, read once its struct_size passed. */
typedef struct api_scaling {
    int mode;
    const float *a_scale, *b_scale;
    int64_t ld_a_scale, ld_b_scale;
    const float *d_scale;
    float *amax_d;
} api_scaling;

typedef struct api_call {
    int layout, transa, transb;
    int64_t m, n, k;
    const void *alpha;
    const void *a;
    int a_type;
    int64_t lda, stride_a;
    const void *b;
    int b_type;
    int64_t ldb, stride_b;
    const void *beta;
    void *c;
    int c_type;
    int64_t ldc, stride_c;
    int64_t batch;
    int compute;
    int entry; /* enum api_entry */
    /* One matrix of a pointer-array batch or a group, for messages ("A[3]", "group 2: "):
     * has_item / has_group 0 when the call is no such part. Indices count from 0. */
    int has_item, has_group;
    int64_t item, group;
    /* The caller's epilogue as read (api_entry_ex_epilogue, api_entry_plan_epilogue: NULL when
     * the caller passed NULL), or a desc's with placeholder pointers (api_entry_desc). */
    const api_epilogue *epilogue;
    /* The caller's scaling as read (api_entry_ex_scaled, api_entry_plan_scaled: NULL when the
     * caller passed NULL), or a desc's mode with NULL pointers (api_entry_desc). */
    const api_scaling *scaling;
} api_call;

/* A pointer-array batch (gemm_*_batched) or a grouped call (gemm_ex_grouped): per group the
 * arguments of one GEMM (entry api_entry_*_pointers or api_entry_grouped; its batch is the
 * group's size, its a, b, c unused), and the arrays of all matrices' pointers, group after
 * group. Enum arrays are read as int arrays (an enum's values fit an int). A masked batch
 * (gemm_ex_masked_scaled) is a group per matrix (entry api_entry_masked, batch 1, m the most
 * rows) with rows its row counts; NULL for every other call. */
typedef struct api_pointer_call {
    const api_call *groups;
    int64_t group_count;
    const void *const *a;
    const void *const *b;
    void *const *c;
    const int32_t *rows;
} api_pointer_call;

/* gemm_tune_request_t with its enum fields as int. */
typedef struct api_tune_request {
    int ab_type, c_type, layout, transa, transb;
    int64_t m, n, k, batch_count, ld_padding;
    int misaligned, beta_zero, device;
    double budget_ms;
    const char *backends;
} api_tune_request;

/* gemm_desc_t with its enum fields as int: the fields this library knows, read once the
 * caller's struct_size passed the rule in gemm.h (api_check_desc_size). */
typedef struct api_desc {
    int layout, transa, transb;
    int64_t m, n, k;
    int a_type, b_type, c_type, compute;
    int64_t lda, ldb, ldc, batch, stride_a, stride_b, stride_c;
    int device, alignment, beta_zero;
    int activation, bias_axis, aux;
    int64_t ld_aux;
    int check_pointers;
    int scale_mode;
} api_desc;

gemm_status_t api_run(const api_call *call);
gemm_status_t api_run_pointers(const api_pointer_call *call);
/* gemm_ex_grouped's arguments, read on the C++ side (the group arrays need storage), and
 * gemm_ex_grouped_scaled's scalings (NULL for gemm_ex_grouped): group_count structs, each
 * read once its struct_size passed the rule in gemm.h, its mode as an int. */
gemm_status_t api_run_grouped(int layout, const int *transa, const int *transb, const int64_t *m, const int64_t *n,
                              const int64_t *k, const void *alpha, const void *const *A, int a_type, const int64_t *lda,
                              const void *const *B, int b_type, const int64_t *ldb, const void *beta, void *const *C,
                              int c_type, const int64_t *ldc, int64_t group_count, const int64_t *group_size,
                              int compute, const gemm_scaling_t *scalings);
/* gemm_ex_masked_scaled's arguments, enums as int; scalings as api_run_grouped's, one a matrix. */
gemm_status_t api_run_masked(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                             const void *A, int a_type, int64_t lda, int64_t stride_a, const void *B, int b_type,
                             int64_t ldb, int64_t stride_b, const void *beta, void *C, int c_type, int64_t ldc,
                             int64_t stride_c, int64_t batch_count, const int32_t *rows, int compute,
                             const gemm_scaling_t *scalings);
/* gemm_omatcopy's arguments, enums as int. */
gemm_status_t api_omatcopy(int layout, int trans, int64_t rows, int64_t cols, const void *alpha, const void *A,
                           int64_t lda, void *B, int64_t ldb, int dtype);
/* gemm_spmm_csr (coo 0, A a gemm_csr_t) and gemm_spmm_coo (coo 1, A a gemm_coo_t), enums as int. */
gemm_status_t api_spmm(int coo, int layout, int op_a, int op_b, int64_t m, int64_t n, int64_t k, const void *alpha,
                       const void *A, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc, int dtype);
gemm_status_t api_backend_supports(const char *backend, const api_desc *desc);
gemm_status_t api_plan_create(const api_desc *desc, gemm_plan_t *plan);
/* gemm_plan_run (entry api_entry_ex), gemm_plan_run_epilogue (api_entry_plan_epilogue;
 * epilogue NULL when the caller passed NULL) and gemm_plan_run_scaled
 * (api_entry_plan_scaled; scaling NULL when the caller passed NULL). */
gemm_status_t api_plan_run(gemm_plan_t plan, const void *alpha, const void *A, const void *B, const void *beta, void *C,
                           int entry, const api_epilogue *epilogue, const api_scaling *scaling);
gemm_status_t api_backend_variants(const char *backend, const api_desc *desc, const char *const **ids, int64_t *count);
gemm_status_t api_backend_get_traits(const char *spec, gemm_backend_traits_t *traits);
gemm_status_t api_measure(const api_desc *desc, const char *const *backends, int64_t count,
                          const gemm_measure_options_t *options, gemm_measurement_t *reports);
/* For a desc whose struct_size is not this library's sizeof(gemm_desc_t): GEMM_STATUS_SUCCESS
 * when the rule in gemm.h accepts it, else GEMM_STATUS_INVALID_VALUE with the reason set,
 * naming parameter `position` (the desc's in its entry point). */
gemm_status_t api_check_desc_size(const gemm_desc_t *desc, int position);
/* The same for a gemm_epilogue_t, parameter `position` of its entry point. */
gemm_status_t api_check_epilogue_size(const gemm_epilogue_t *epilogue, int position);
/* The same for a gemm_scaling_t. */
gemm_status_t api_check_scaling_size(const gemm_scaling_t *scaling, int position);
const char *api_status_text(int status);
/* gemm_dtype_name's answer for a dtype passed as int: NULL when no gemm_dtype_t has it. */
const char *api_dtype_name(int type);
gemm_status_t api_tune(const api_tune_request *request, int store, gemm_tune_report_t *report);

#ifdef __cplusplus
}
#endif

#endif
