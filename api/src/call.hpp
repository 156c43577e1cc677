// call.hpp: a GEMM call as the caller made it, its argument checks and canonicalization.
#pragma once

#include <cstdint>
#include <string>

#include "dispatch/dispatch.hpp"
#include "dispatch/problem.hpp"
#include "entry_points.h"
#include "gemm/gemm.h"

namespace gemm {

// Where each parameter sits in the entry point's signature (1 = layout), for messages.
// 0 means the entry point has no such parameter.
struct param_positions {
    int alpha, a, a_type, lda, stride_a, b, b_type, ldb, stride_b, beta, c, c_type, ldc, stride_c, batch, compute;
};

// The call as an entry point received it (enum arguments as int, not yet validated).
using user_call = api_call;

// alpha or beta as the library reads it: the value of the compute type p points to (for a
// complex type its real and imaginary parts; im is 0 for real types).
struct scalar {
    double re = 0, im = 0;
    bool zero() const { return re == 0.0 && im == 0.0; }
};
scalar scalar_value(const void *p, int compute);

// The canonical op of a valid gemm_op_t: GEMM_OP_C stays the conjugate transpose for complex
// types and is the plain transpose for real ones.
transpose canonical_op(int op, int ab_type);

// Whether an int names a gemm_op_t / gemm_dtype_t. Shared with gemm_tune.
bool valid_op(int o);
bool valid_dtype(int t);

// BLAS rules in reference BLAS order (layout, transa, transb, m, n, k, lda, ldb, ldc), then
// batch count and strides, types, pointers, and last the operands' spans (the bytes they
// cover, and C matrices of a batch not overlapping). On failure sets the thread's error
// (naming the parameter) and returns its status.
gemm_status_t check_call(const user_call &call);

// check_call in two halves: the arguments of the shape, batch, types and scalars; then the
// operands' pointers and spans (for a pointer-array batch, once per matrix).
gemm_status_t check_arguments(const user_call &call);
gemm_status_t check_operands(const user_call &call);

// The arguments of a grouped call that belong to no group, layout and the types, checked as
// check_arguments checks them: a call of no group is checked for them too, as a call of no
// matrix is for all of its arguments.
gemm_status_t check_shared_arguments(const user_call &call);

// Where the call's entry point has each parameter, and its error for one of them ("group 2:
// parameter 8: ..."), as the checks report theirs.
const param_positions &positions_of(const user_call &call);
gemm_status_t call_error(const user_call &call, gemm_status_t status, int position, const std::string &what);

// The bytes [begin, begin + bytes) an operand covers, named as messages name it, for the
// overlap checks; empty (bytes 0) for a NULL pointer.
struct byte_range {
    std::string name;
    std::uintptr_t begin = 0;
    int64_t bytes = 0;
};
bool overlap(const byte_range &x, const byte_range &y);

// What a call's scaling reads (a_scale, b_scale, d_scale) and writes (amax_d), for a call
// with a scaling whose checks passed: "scaling->a_scale", a group's "scalings[2].a_scale".
struct scaling_ranges {
    byte_range read[3];
    byte_range amax;
};
scaling_ranges scaling_bytes(const user_call &call);

// gemm_ex_grouped_scaled's position of scalings, after gemm_ex_grouped's 20 parameters.
constexpr int grouped_scalings_position = 21;
// gemm_ex_masked_scaled's positions of rows and scalings.
constexpr int masked_rows_position = 22;
constexpr int masked_scalings_position = 24;

// Bytes of one alpha or beta of a valid compute type.
std::size_t scalar_bytes(int compute);

// The column-major problem equal to a checked call (row-major by C^T = op(B)^T op(A)^T).
problem canonicalize(const user_call &call);

call_shape shape_of(const user_call &call);

// check, quick return, canonicalize, dispatch: the body of every entry point.
gemm_status_t run_call(const user_call &call);

}  // namespace gemm
