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

// What a_scale, b_scale, d_scale and amax point at: one float32 each in the operands' memory,
// arrays the caller passed or, for host operands, numbers held here. The pointers in `scales`
// point into this object: it lives until the call returns, and is not copied.
struct scale_arguments {
    scale_arguments() = default;
    scale_arguments(const scale_arguments &) = delete;
    scale_arguments &operator=(const scale_arguments &) = delete;

    float numbers[3] = {1, 1, 1};
    std::vector<operand> arrays;  // held through the call
    fp8_scales scales;            // mode TENSOR where a_scale and b_scale were given
};

// Fills s from the arguments (None: not given) for operands of type ab in memory `device`
// (-1: host). Refused, naming the argument: any of them for types other than FP8, one of
// a_scale and b_scale without the other, a number for device operands, an array that is not
// one float32 element in the operands' memory.
void fill_scales(scale_arguments &s, gemm_dtype_t ab, int device, nanobind::handle a_scale, nanobind::handle b_scale,
                 nanobind::handle d_scale, nanobind::handle amax);

}  // namespace gemm_python
