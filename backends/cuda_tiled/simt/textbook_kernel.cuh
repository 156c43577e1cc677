// textbook_kernel.cuh: the classic shared-memory tile kernel, one output element per thread.
#pragma once

#include "tiled_args.cuh"

namespace gemm::cuda_tiled {

// Each step of K stages a TILE x TILE tile of op(A) and of op(B) in shared memory (zero outside
// the matrices), then every thread takes one dot product of length TILE out of them; two
// barriers per step. threadIdx.x runs along m so that neighbouring threads write neighbouring
// elements of the column-major C. The loads swap the roles of x and y where the stored operand
// runs along k, so that neighbouring threads always read neighbouring global addresses.
// Both tiles get one column of padding: the transposed shared stores and the reads of
// a_tile[x][l] then fall in distinct banks.
template <typename T, int TILE, bool A_T, bool B_T>
__global__ void __launch_bounds__(TILE *TILE) textbook_kernel(tiled_args<T> p) {
    __shared__ T a_tile[TILE][TILE + 1];  // a_tile[i][l] = op(A)(m0 + i, l0 + l)
    __shared__ T b_tile[TILE][TILE + 1];  // b_tile[l][j] = op(B)(l0 + l, n0 + j)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tiles_n = (p.n + TILE - 1) / TILE;

    for (int z = blockIdx.z; z < p.batch; z += gridDim.z) {
        const T *a = p.a + z * p.stride_a;
        const T *b = p.b + z * p.stride_b;
        T *c = p.c + z * p.stride_c;
        for (int tile_n = blockIdx.y; tile_n < tiles_n; tile_n += gridDim.y) {
            const int m0 = blockIdx.x * TILE, n0 = tile_n * TILE;
            T sum = 0;
            for (int l0 = 0; l0 < p.k; l0 += TILE) {
                if (!A_T) {  // A(i, l) = a[i + l * lda]: contiguous along m, tx walks i
                    const int i = m0 + tx, l = l0 + ty;
                    a_tile[tx][ty] = (i < p.m && l < p.k) ? a[i + l * p.lda] : T(0);
                } else {  // A(i, l) = a[l + i * lda]: contiguous along k, tx walks l
                    const int i = m0 + ty, l = l0 + tx;
                    a_tile[ty][tx] = (i < p.m && l < p.k) ? a[l + i * p.lda] : T(0);
                }
                if (!B_T) {  // B(l, j) = b[l + j * ldb]: contiguous along k, tx walks l
                    const int l = l0 + tx, j = n0 + ty;
                    b_tile[tx][ty] = (l < p.k && j < p.n) ? b[l + j * p.ldb] : T(0);
                } else {  // B(l, j) = b[j + l * ldb]: contiguous along n, tx walks j
                    const int l = l0 + ty, j = n0 + tx;
                    b_tile[ty][tx] = (l < p.k && j < p.n) ? b[j + l * p.ldb] : T(0);
                }
                __syncthreads();
#pragma unroll
                for (int l = 0; l < TILE; ++l) sum += a_tile[tx][l] * b_tile[l][ty];
                __syncthreads();
            }
            const int i = m0 + tx, j = n0 + ty;
            if (i < p.m && j < p.n) {
                T *out = c + i + j * p.ldc;
                // beta == 0: C is written without being read, so NaN in C cannot leak.
                *out = p.beta == T(0) ? p.alpha * sum : p.alpha * sum + p.beta * *out;
            }
        }
    }
}

}  // namespace gemm::cuda_tiled
