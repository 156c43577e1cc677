// problem_class.hpp: a class of calls without their data, as the measurement engine and the
// tuner take it: the engine makes its own operands for it.
#pragma once

#include <cstdint>

#include "dispatch/problem.hpp"

namespace gemm {

struct problem_class {
    dtype ab_type = dtype::f32;
    dtype c_type = dtype::f32;
    transpose op_a = transpose::n;  // column-major, as every layer below the API
    transpose op_b = transpose::n;
    int64_t m = 0, n = 0, k = 0;
    int64_t batch = 1;
    int64_t ld_padding = 0;  // elements added to every leading dimension; -1: the least
                             // padding that keeps them 16-byte aligned (a padded key class)
    int64_t lda = 0, ldb = 0, ldc = 0;  // given leading dimensions (0: rows plus ld_padding)
    bool aligned = true;     // false: operands start one element past a 64-byte boundary
    double alpha = 1.0;
    double beta = 0.0;
    memory_space space = memory_space::host;
    int device = 0;          // CUDA ordinal of device problems
    bool pinned = false;     // host operands page-locked (host problems, CUDA builds only)
};

}  // namespace gemm
