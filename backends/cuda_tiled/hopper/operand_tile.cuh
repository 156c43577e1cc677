// operand_tile.cuh: one operand's tile in shared memory as TMA writes it and wgmma reads it
// (the 128-byte swizzle): its copy from a tensor map and its wgmma descriptor.
#pragma once

#include <cuda.h>  // CUtensorMap

#include <cstdint>

#include "backends/cuda_tiled/hopper/mbarrier_tma.cuh"

namespace gemm::cuda_tiled::hopper {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// One operand's tile in shared memory: R rows (along m or n) by 128 bytes of k (64 f16/bf16,
// 32 f32, 128 e4m3/e5m2), in the 128-byte swizzle, as TMA writes it and wgmma reads it, for an operand stored
// along k (MN = false) or along its rows (MN = true, 16-bit types only). A slice of 64 rows
// begins 8 KB * slice in both.
//  - k-major: boxes of 128 bytes of k x 128 rows (R rows for a tile of fewer); each row 128
//    bytes, groups of 8 rows 1024 bytes apart (the descriptor's stride offset; its leading
//    offset is unused), an instruction's k step (16 elements, tf32 8, FP8 32) 32 bytes further:
//    the layout and the descriptor count bytes, so they are the same for every element size.
//  - MN-major: boxes of 64 rows x 64 k, 8 KB apart (the leading offset: the next 64 rows);
//    each k a 128-byte row of 64 elements, groups of 8 k 1024 bytes apart (the stride
//    offset), a k step of 16 two such groups further.
template <bool MN> struct operand_tile {
    template <int R> static constexpr int box_rows = MN ? 64 : R >= 128 ? 128 : R;
    static constexpr uint64_t leading = MN ? 8192 : 16, stride = 1024;
    static constexpr uint64_t k_step = (MN ? 2048 : 32) >> 4;  // in the descriptor's 16-byte units

    __device__ static uint64_t descriptor(const void *tile) {
        const uint64_t address = shared_address(tile);
        return ((address & 0x3FFFF) >> 4) | ((leading >> 4) << 16) | ((stride >> 4) << 32) | (uint64_t(1) << 62);
    }

    // Rows row0 .. row0 + R - 1 and the stage's k from k0 of the matrix into dst.
    template <int R, class T>
    __device__ static void copy(T *dst, const CUtensorMap *map, uint64_t *bar, int k0, int row0, int matrix) {
        constexpr int row_elements = 128 / sizeof(T);
#pragma unroll
        for (int r = 0; r < R; r += box_rows<R>) {
            if constexpr (MN) copy_box(dst + r * row_elements, map, bar, row0 + r, k0, matrix);
            else copy_box(dst + r * row_elements, map, bar, k0, row0 + r, matrix);
        }
    }
};

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace gemm::cuda_tiled::hopper
