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
    bool pointers = false;   // the batch run as a pointer-array batch (problem::pointer_batch)
    int64_t ld_padding = 0;  // elements added to every leading dimension; -1: the least
                             // padding that keeps them 16-byte aligned (a padded key class)
    int64_t lda = 0, ldb = 0, ldc = 0;  // given leading dimensions (0: rows plus ld_padding)
    bool aligned = true;     // false: operands start one element past a 64-byte boundary
    double alpha = 1.0;
    double beta = 0.0;
    memory_space space = memory_space::host;
    int device = 0;          // CUDA ordinal of device problems
    bool pinned = false;     // host operands page-locked (host problems, CUDA builds only)
    // The epilogue's kind (epilogue_spec without pointers): the engine makes a bias (forward
    // with an axis), a bias gradient (backward with an axis) and an aux matrix (backward, or
    // saves_aux) for every set; ld_aux 0: C's leading dimension.
    epilogue_act act = epilogue_act::none;
    epilogue_axis axis = epilogue_axis::none;
    bool saves_aux = false;
    int64_t ld_aux = 0;

    bool has_epilogue() const { return act != epilogue_act::none || axis != epilogue_axis::none || saves_aux; }
    bool backward() const { return act == epilogue_act::relu_backward || act == epilogue_act::gelu_backward; }
};

}  // namespace gemm
