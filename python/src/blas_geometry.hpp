// blas_geometry.hpp: how strided arrays map onto one BLAS call (layout, ops, leading
// dimensions, batch form), without Python: the rules gemm.matmul and gemm.Plan share.
#pragma once

#include <gemm/gemm.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gemm_python {

// A shape or strides as Python writes a tuple: "(4, 3)", "(4,)".
std::string shape_text(const std::vector<int64_t> &shape);

// An array as its shape and strides in elements (DLPack's units).
struct strided_shape {
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
};

// One matrix of an operand: rows x cols, element (i, j) at i * row_stride + j * col_stride.
struct matrix_shape {
    int64_t rows = 0, cols = 0;
    int64_t row_stride = 0, col_stride = 0;
};

// How BLAS reads a matrix in a given layout: op(X) = X for N, X^T for T.
struct blas_operand {
    gemm_op_t op = GEMM_OP_N;
    int64_t ld = 1;
};

// The matrix as BLAS stores it in layout without a copy: one stride the element (or the
// dimension 1, whose stride is never used), the other at least the matching dimension.
std::optional<blas_operand> blas_operand_of(const matrix_shape &matrix, gemm_layout_t layout);

// The layout in which C is stored as BLAS writes it (op N), if one is.
std::optional<gemm_layout_t> layout_of_result(const matrix_shape &c);

// Where the matrices of a batch start, in elements from each operand's first element.
struct batch_offsets {
    std::vector<int64_t> a, b, c;
};

// A batch as one call takes it: uniform strides (a strided batch) or one offset per matrix.
struct batch_form {
    int64_t count = 1;
    bool uniform = true;
    int64_t stride_a = 0, stride_b = 0, stride_c = 0;
    batch_offsets offsets;  // filled when !uniform
};

// The batch of numpy.matmul's broadcast: batch_shape is the broadcast shape, the *_strides
// each operand's stride along it (0 where the operand is broadcast). Dimensions of one
// element are dropped and neighbours whose strides agree for all three are merged; what is
// left as one dimension with strides >= 0 is a strided batch.
batch_form batch_form_of(const std::vector<int64_t> &batch_shape, const std::vector<int64_t> &a_strides,
                         const std::vector<int64_t> &b_strides, const std::vector<int64_t> &c_strides);

// numpy.matmul's operands and result: a is [..., m, k] (or [k]), b [..., k, n] (or [k]).
struct matmul_shape {
    int64_t m = 0, n = 0, k = 0;
    matrix_shape a, b;
    std::vector<int64_t> batch_shape;
    std::vector<int64_t> a_batch_strides, b_batch_strides;  // along batch_shape
    std::vector<int64_t> result_shape;
    bool a_vector = false, b_vector = false;  // 1-D operands: their dimension leaves the result
};

// The shapes as numpy.matmul combines them, or the message saying why they do not.
struct matmul_shape_result {
    std::optional<matmul_shape> shape;
    std::string error;
    const char *argument = "b";
};
matmul_shape_result matmul_shape_of(const strided_shape &a, const strided_shape &b);

// C's matrix and batch strides: out's own, out having the result's shape.
struct result_strides {
    matrix_shape c;
    std::vector<int64_t> batch_strides;
};
result_strides result_strides_of(const matmul_shape &shape, const strided_shape &out);

// Whether the byte ranges the two arrays span meet (an empty array spans none): a C that
// meets A or B is computed apart and copied in, as numpy.matmul does.
bool extents_overlap(const strided_shape &x, uintptr_t x_data, const strided_shape &y, uintptr_t y_data,
                     int64_t itemsize);

}  // namespace gemm_python
