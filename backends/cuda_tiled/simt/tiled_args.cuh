// tiled_args.cuh: the arguments the textbook and register-tiled kernels take.
#pragma once

#include <cstdint>

namespace gemm::cuda_tiled {

// One canonical column-major problem in the element type T. Sizes fit int (supports() checks);
// leading dimensions and batch strides stay 64-bit because products like k * lda need it.
template <typename T> struct tiled_args {
    const T *a;
    const T *b;
    T *c;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c;  // elements between batch matrices, may be 0
    int m, n, k;
    int batch;
    T alpha, beta;
};

}  // namespace gemm::cuda_tiled
