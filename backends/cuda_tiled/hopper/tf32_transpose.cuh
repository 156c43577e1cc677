// tf32_transpose.cuh: the kernel that copies an f32 operand stored along m or n along k, the
// form in which the TF32 wgmma reads it.
#pragma once

#include <cstdint>

namespace gemm::cuda_tiled::hopper {

// dst (cols x rows, column-major, leading dimension ld_dst, matrices stride_dst apart) = the
// transpose of src (rows x cols, column-major): f32 operands stored along m or n, copied
// along k for the TF32 kernels (wgmma reads tf32 only along k). A block of 32 x 8 threads moves
// 64 x 64 tiles through shared memory, read and written down columns; a thread issues its 16
// loads before any store (constant trip counts, bounds as predicates), so that a copy keeps
// enough bytes in flight to run near the memory's speed. blockIdx.z walks the matrices.
constexpr int transpose_tile = 64;

__global__ void transpose_f32(const float *src, int64_t ld_src, int64_t stride_src, float *dst, int64_t ld_dst,
                              int64_t stride_dst, int rows, int cols, int matrices) {
    constexpr int tile = transpose_tile, per_thread = tile / 8;
    __shared__ float staged[tile][tile + 1];
    const int x = threadIdx.x, y = threadIdx.y;
    const int64_t r0 = int64_t(blockIdx.x) * tile;
    for (int matrix = blockIdx.z; matrix < matrices; matrix += gridDim.z)
        for (int64_t c0 = int64_t(blockIdx.y) * tile; c0 < cols; c0 += int64_t(gridDim.y) * tile) {
            const float *from = src + matrix * stride_src;
            float *to = dst + matrix * stride_dst;
            float v[2][per_thread];
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int i = 0; i < per_thread; ++i) {
                    const int64_t r = r0 + 32 * h + x, c = c0 + y + 8 * i;
                    v[h][i] = r < rows && c < cols ? from[c * ld_src + r] : 0.0f;
                }
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int i = 0; i < per_thread; ++i) staged[y + 8 * i][32 * h + x] = v[h][i];
            __syncthreads();
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int i = 0; i < per_thread; ++i) {
                    const int64_t c = c0 + 32 * h + x, r = r0 + y + 8 * i;
                    if (c < cols && r < rows) to[r * ld_dst + c] = staged[32 * h + x][y + 8 * i];
                }
            __syncthreads();
        }
}

}  // namespace gemm::cuda_tiled::hopper
