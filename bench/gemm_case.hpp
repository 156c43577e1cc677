// gemm_case.hpp: one benchmarked problem (dtype, layout, ops, sizes, batch, scalars) and the
// sizes derived from it: leading dimensions, matrix elements, flops and bytes moved.
#pragma once

#include <cstdint>
#include <string>

#include "gemm/gemm.h"

namespace gemm_cli {

struct gemm_shape {
    int64_t m = 0, n = 0, k = 0;
};

// The type of A and B, and that of C.
struct dtype_pair {
    gemm_dtype_t ab = GEMM_F32, c = GEMM_F32;
};

struct gemm_case {
    dtype_pair dtype;  // f16/bf16 compute in f32
    gemm_layout_t layout = GEMM_ROW_MAJOR;
    gemm_op_t op_a = GEMM_OP_N, op_b = GEMM_OP_N;
    gemm_shape shape;
    int64_t batch = 1;
    double alpha = 1.0, beta = 0.0;
    gemm_scale_mode_t scale = GEMM_SCALE_NONE;  // FP8: how A and B are scaled
};

// A matrix as stored: rows x cols in the case's layout (gemm_case_ld gives the tightest ld).
struct stored_matrix {
    int64_t rows = 0, cols = 0;
    int64_t elements() const { return rows * cols; }
};

stored_matrix gemm_case_stored_a(const gemm_case &c);
stored_matrix gemm_case_stored_b(const gemm_case &c);
stored_matrix gemm_case_stored_c(const gemm_case &c);
int64_t gemm_case_ld(const gemm_case &c, const stored_matrix &x);

std::size_t dtype_size(gemm_dtype_t t);
// "bf16", or "bf16>f32" when C's type differs.
std::string dtype_pair_name(dtype_pair t);

const char *layout_name(gemm_layout_t l);  // "row" / "col"
// "N", "T" or "C".
const char *op_letter(gemm_op_t o);
std::string ops_name(const gemm_case &c);  // "NT": op(A) then op(B)
// "none", "tensor" or "block".
const char *scale_name(gemm_scale_mode_t s);
// "f32 row NT 1x4096x4096", with " x8" after it for a batch of 8 and " scale=block" for
// scaled FP8.
std::string gemm_case_text(const gemm_case &c);

double gemm_case_flops(const gemm_case &c);
// Least traffic: A and B read once, C written (and read too when beta != 0), FP8 scales read.
double gemm_case_bytes(const gemm_case &c);

}  // namespace gemm_cli
