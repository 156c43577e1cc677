// call.hpp: a GEMM call as the caller made it, its argument checks and canonicalization.
#pragma once

#include "dispatch/dispatch.hpp"
#include "dispatch/problem.hpp"
#include "gemm/gemm.h"

namespace gemm {

// Where each parameter sits in the entry point's signature (1 = layout), for messages.
// 0 means the entry point has no such parameter.
struct param_positions {
    int alpha, a, a_type, lda, stride_a, b, b_type, ldb, stride_b, beta, c, c_type, ldc,
        stride_c, batch, compute;
};

extern const param_positions sgemm_positions;
extern const param_positions sgemm_batched_positions;
extern const param_positions ex_positions;
extern const param_positions ex_batched_positions;

struct user_call {
    gemm_layout_t layout;
    gemm_op_t transa, transb;
    int64_t m, n, k;
    const void *alpha;
    const void *a;
    gemm_dtype_t a_type;
    int64_t lda, stride_a;
    const void *b;
    gemm_dtype_t b_type;
    int64_t ldb, stride_b;
    const void *beta;
    void *c;
    gemm_dtype_t c_type;
    int64_t ldc, stride_c;
    int64_t batch;
    gemm_dtype_t compute;
    const param_positions *pos;
};

// BLAS rules, in reference BLAS order, then types, strides and pointers. On failure sets
// the thread's error (naming the parameter) and returns its status.
gemm_status_t check_call(const user_call &call);

// The column-major problem equal to a checked call (row-major by C^T = op(B)^T op(A)^T).
problem canonicalize(const user_call &call);

call_shape shape_of(const user_call &call);

// check, quick return, canonicalize, dispatch: the body of every entry point.
gemm_status_t run_call(const user_call &call);

}  // namespace gemm
