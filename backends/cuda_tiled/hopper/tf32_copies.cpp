// tf32_copies.cpp: the bytes of the TF32 kernels' copies of f32 operands along k.
#include "backends/cuda_tiled/hopper/tf32_copies.hpp"

#include <cmath>

namespace gemm::cuda_tiled::hopper {

double operand_copy_bytes(int64_t rows, int64_t k, int64_t batch, int64_t stride) {
    const double ld = std::ceil(double(k) / 4) * 4;  // copy_ld(k)
    return std::ceil(ld * double(rows) * double(stride == 0 ? 1 : batch) * sizeof(float) / 256) * 256;
}

double copy_bytes(const problem &dp) {
    return (copied_a(dp) ? operand_copy_bytes(dp.m, dp.k, dp.batch, dp.stride_a) : 0.0) +
           (copied_b(dp) ? operand_copy_bytes(dp.n, dp.k, dp.batch, dp.stride_b) : 0.0);
}

}  // namespace gemm::cuda_tiled::hopper
