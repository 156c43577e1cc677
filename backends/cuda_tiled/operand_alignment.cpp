// operand_alignment.cpp: whether operands allow 16-byte accesses.
#include "backends/cuda_tiled/operand_alignment.hpp"

namespace gemm::cuda_tiled {

bool aligned_16_bytes(const void *ptr, int64_t ld, int64_t stride, int64_t batch, std::size_t element_bytes) {
    const int64_t per_16 = int64_t(16 / element_bytes);
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % per_16 == 0 && (batch == 1 || stride % per_16 == 0);
}

bool vectors_aligned(const problem &dp) {
    const std::size_t size = dtype_size(dp.ab_type);
    const int64_t elements = 16 / int64_t(size);
    auto fits = [&](const void *ptr, int64_t ld, int64_t stride) {
        return aligned_16_bytes(ptr, ld, stride, dp.batch, size);
    };
    // A straight operand's vectors run along m (A) or n (B): an extent that is not a multiple
    // of the vector would leave one straddling the edge.
    return (dp.op_a == transpose::t || (fits(dp.a, dp.lda, dp.stride_a) && dp.m % elements == 0)) &&
           (dp.op_b == transpose::n || (fits(dp.b, dp.ldb, dp.stride_b) && dp.n % elements == 0)) &&
           fits(dp.c, dp.ldc, dp.stride_c);
}

}  // namespace gemm::cuda_tiled
