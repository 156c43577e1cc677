// fp8_scales.hpp: the per-tensor scales, output scale and amax of an FP8 gemm.matmul or plan
// run, as the pointers gemm_scaling_t takes.
#pragma once

#include "blas_call.hpp"
#include "operand.hpp"

#include <gemm/gemm.h>

#include <nanobind/nanobind.h>

#include <vector>

namespace gemm_python {

bool is_fp8_result_type(gemm_dtype_t t);

// What a_scale, b_scale, d_scale and amax point at, in the operands' memory: arrays the caller
// passed (or copies of block scales stored otherwise than they are read) or, for host
// operands, numbers held here. The pointers in `scales` point into this object: it lives until
// the call returns, and is not copied.
struct scale_arguments {
    scale_arguments() = default;
    scale_arguments(const scale_arguments &) = delete;
    scale_arguments &operator=(const scale_arguments &) = delete;

    float numbers[3] = {1, 1, 1};
    std::vector<operand> arrays;  // held through the call
    fp8_scales scales;            // mode TENSOR or BLOCK where a_scale and b_scale were given
};

// The sizes of the one product whose operands the scales scale: a is m x k, b k x n.
struct product_sizes {
    int64_t m = 0, n = 0, k = 0;
};

// Fills s from the arguments (None: not given) for operands of type ab in memory `device`
// (-1: host). a_scale and b_scale are per tensor (numbers, or float32 arrays of one element)
// or block scales (float32 arrays, a_scale (m, ceil(k / 128)): one per row of a and 128 of k,
// b_scale (ceil(k / 128), ceil(n / 128)): one per 128 x 128 of b); block scales stored
// otherwise than gemm_scaling_t reads them are copied (said at GEMM_VERBOSE=1). Refused,
// naming the argument: any of them for types other than FP8, one of a_scale and b_scale
// without the other or of another kind, a number for device operands, an array of another
// type, shape or memory.
void fill_scales(scale_arguments &s, gemm_dtype_t ab, int device, const product_sizes &sizes, nanobind::handle a_scale,
                 nanobind::handle b_scale, nanobind::handle d_scale, nanobind::handle amax);

}  // namespace gemm_python
