// mma_items.hpp: what one launch of the tensor-core kernel computes, as the host fills it and
// the kernel reads it from its parameters.
#pragma once

#include <cstdint>

namespace gemm::cuda_tiled {

// One GEMM (or strided batch of batch GEMMs) of column-major operands; the kernel computes
// C = alpha * op(A) * op(B) + beta * C with op T where a_t / b_t (a real type's op C).
struct mma_item {
    const void *a = nullptr, *b = nullptr;
    void *c = nullptr;
    int64_t lda = 0, ldb = 0, ldc = 0;
    int64_t stride_a = 0, stride_b = 0, stride_c = 0;
    int64_t batch = 1;
    int m = 0, n = 0, k = 0;
    int tiles_m = 0;     // 64-row tiles of C
    int first_tile = 0;  // its first block of the launch's grid
    float alpha = 1.0f, beta = 0.0f;
    bool a_t = false, b_t = false;      // the launch's ops (its kernel is compiled for them)
    bool vec_a = false, vec_b = false;  // 16-byte aligned base, leading dimension and stride
};

// The items of one launch: one for a plain problem or strided batch, up to 128 for a batch of
// GEMMs of their own shapes (then under 15 KB of parameters, within the 32 KB a kernel takes
// since CUDA 12.1 on Volta and later).
template <int N> struct mma_launch {
    mma_item items[N];
    int count = 0;
};
constexpr int mma_items_per_launch = 128;
static_assert(sizeof(mma_launch<mma_items_per_launch>) <= 32764, "kernel parameters above CUDA's limit");

}  // namespace gemm::cuda_tiled
