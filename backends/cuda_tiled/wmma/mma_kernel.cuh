// mma_kernel.cuh: the tensor-core kernel for f16 and bf16 inputs (f32 accumulation, C in the
// input type or f32), through the warp-level matrix API (wmma): 64x64 tiles of C, four warps of
// 32x32, k in steps of 32 staged in shared memory in the operand's own majorness (so that
// global reads and shared writes are 16-byte vectors wherever the operand allows), the next
// step's reads in flight while the tensor cores work on this one. One launch serves a list of
// GEMMs of their own shapes (a grouped batch, each with its own leading dimensions and scalars,
// all of the launch's ops) or one strided batch: the items travel in the kernel's parameters,
// so a launch reads nothing the host must copy first.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda_common/kernels/device_elements.cuh"
#include "mma_items.hpp"

namespace gemm::cuda_tiled {

namespace mma_tiling {
constexpr int bm = 64, bn = 64, bk = 32, threads = 128;
constexpr int vector = 8;  // elements of 16 bytes
// Shared rows padded by 16 bytes: wmma wants 32-byte aligned rows of a multiple of 16 bytes,
// and the padding spreads a column's elements over the banks. An operand tile is stored along
// its contiguous dimension: A (m x k) as k rows of m (op N) or m rows of k (op T), B (k x n)
// as n rows of k (op N) or k rows of n (op T).
constexpr int rows_m = bm + vector, rows_k = bk + vector, rows_n = bn + vector;
constexpr int a_elements = bm * rows_k > bk *rows_m ? bm *rows_k : bk *rows_m;
constexpr int b_elements = bn * rows_k > bk *rows_n ? bn *rows_k : bk *rows_n;
constexpr int ldc_s = bn + 4;
constexpr int slots = bm * bk / vector / threads;  // vectors per thread per operand tile: 2
static_assert(bm == bn && slots * vector * threads == bm * bk, "tiling");
}  // namespace mma_tiling

// The kernel compiles to nothing below compute capability 8.0 (no bf16 wmma there); the host
// refuses such devices before launching (mma_batch.cu).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define GEMM_MMA_KERNEL_BODY 1
#endif

// Eight consecutive elements of an operand tile, as read from global memory.
template <class T> struct mma_vector {
    union {
        uint4 bits;
        T e[mma_tiling::vector];
    };
};

// Slot s of this thread in a tile of `outer` lines of `inner` = 64 or 32 contiguous elements
// (A op N: k lines of 64 m; op T: 64 m lines of 32 k; likewise B): the line and the first
// element along it.
template <int INNER> __device__ inline void slot_position(int s, int &line, int &along) {
    const int q = int(threadIdx.x) + s * mma_tiling::threads;
    constexpr int per_line = INNER / mma_tiling::vector;
    line = q / per_line;
    along = (q % per_line) * mma_tiling::vector;
}

// Reads the vector at element `along` of `line` of an operand whose lines start ld apart at
// p: one 16-byte read when `vec` (16-byte aligned operand) and all 8 lie inside (along <
// extent, line < lines), else element by element with zeros outside.
template <class T>
__device__ inline mma_vector<T> read_vector(const T *p, int64_t ld, int line, int lines, int along, int extent,
                                            bool vec) {
    mma_vector<T> v;
    const T *at = p + int64_t(line) * ld + along;
    if (vec && line < lines && along + mma_tiling::vector <= extent) {
        v.bits = *reinterpret_cast<const uint4 *>(at);
        return v;
    }
    for (int e = 0; e < mma_tiling::vector; ++e)
        v.e[e] = line < lines && along + e < extent ? at[e] : cuda::from_compute<T>(0.0f);
    return v;
}

// Tile (tm, tn) of matrix z of item `it`: C = alpha * op(A) * op(B) + beta * C (beta == 0:
// C is written without being read).
template <class T, class TC, bool A_T, bool B_T>
__device__ void mma_tile(const mma_item &it, int tm, int tn, int64_t z, unsigned char *shared) {
#ifdef GEMM_MMA_KERNEL_BODY
    using namespace nvcuda;
    using namespace mma_tiling;
    T *as = reinterpret_cast<T *>(shared);
    T *bs = as + a_elements;
    float *cs = reinterpret_cast<float *>(shared);  // after the last k step: the tiles are done
    const T *a = static_cast<const T *>(it.a) + z * it.stride_a;
    const T *b = static_cast<const T *>(it.b) + z * it.stride_b;
    TC *c = static_cast<TC *>(it.c) + z * it.stride_c;
    const int row0 = tm * bm, col0 = tn * bn;
    const int warp = int(threadIdx.x) / 32, wm = warp / 2, wn = warp % 2;
    // A op N: lines are k (ld lda), along m; op T: lines are m, along k. B op N: lines n,
    // along k; op T: lines k, along n. Offsets put the tile's origin at line 0, element 0.
    constexpr int a_inner = A_T ? bk : bm, b_inner = B_T ? bn : bk;
    const T *a0 = A_T ? a + int64_t(row0) * it.lda : a + row0;
    const T *b0 = B_T ? b + col0 : b + int64_t(col0) * it.ldb;
    const int a_lines = A_T ? it.m - row0 : 0, b_lines = B_T ? 0 : it.n - col0;  // the k side varies per step
    mma_vector<T> ra[slots], rb[slots];
    auto read = [&](int k0) {
        for (int s = 0; s < slots; ++s) {
            int line, along;
            slot_position<a_inner>(s, line, along);
            ra[s] = A_T ? read_vector(a0 + k0, it.lda, line, a_lines, along, it.k - k0, it.vec_a)
                        : read_vector(a0 + int64_t(k0) * it.lda, it.lda, line, it.k - k0, along, it.m - row0, it.vec_a);
            slot_position<b_inner>(s, line, along);
            rb[s] = B_T ? read_vector(b0 + int64_t(k0) * it.ldb, it.ldb, line, it.k - k0, along, it.n - col0, it.vec_b)
                        : read_vector(b0 + k0, it.ldb, line, b_lines, along, it.k - k0, it.vec_b);
        }
    };
    auto write = [&] {
        for (int s = 0; s < slots; ++s) {
            int line, along;
            slot_position<a_inner>(s, line, along);
            *reinterpret_cast<uint4 *>(as + line * (A_T ? rows_k : rows_m) + along) = ra[s].bits;
            slot_position<b_inner>(s, line, along);
            *reinterpret_cast<uint4 *>(bs + line * (B_T ? rows_n : rows_k) + along) = rb[s].bits;
        }
    };
    using a_layout = std::conditional_t<A_T, wmma::row_major, wmma::col_major>;
    using b_layout = std::conditional_t<B_T, wmma::row_major, wmma::col_major>;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (auto &r : acc)
        for (auto &f : r) wmma::fill_fragment(f, 0.0f);
    read(0);
    for (int k0 = 0; k0 < it.k; k0 += bk) {
        write();
        __syncthreads();
        if (k0 + bk < it.k) read(k0 + bk);  // in flight during the mma below
        for (int kk = 0; kk < bk; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, a_layout> fa[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, T, b_layout> fb[2];
            for (int i = 0; i < 2; ++i) {
                const int m = wm * 32 + i * 16;
                if constexpr (A_T) wmma::load_matrix_sync(fa[i], as + m * rows_k + kk, rows_k);
                else wmma::load_matrix_sync(fa[i], as + kk * rows_m + m, rows_m);
            }
            for (int j = 0; j < 2; ++j) {
                const int n = wn * 32 + j * 16;
                if constexpr (B_T) wmma::load_matrix_sync(fb[j], bs + kk * rows_n + n, rows_n);
                else wmma::load_matrix_sync(fb[j], bs + n * rows_k + kk, rows_k);
            }
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(cs + (wm * 32 + i * 16) * ldc_s + wn * 32 + j * 16, acc[i][j], ldc_s,
                                    wmma::mem_row_major);
    __syncthreads();
    for (int idx = int(threadIdx.x); idx < bm * bn; idx += threads) {
        const int i = idx % bm, j = idx / bm;  // down C's columns: coalesced
        const int gi = row0 + i, gj = col0 + j;
        if (gi >= it.m || gj >= it.n) continue;
        TC *p = c + gi + int64_t(gj) * it.ldc;
        float v = it.alpha * cs[i * ldc_s + j];
        if (it.beta != 0.0f) v += it.beta * cuda::to_compute(*p);
        *p = cuda::from_compute<TC>(v);
    }
    __syncthreads();  // the next matrix of a batch reuses shared memory
#endif
}

// Block x is tile (x - first_tile) of the last item whose first_tile <= x, in column-major
// order of its tiles; block y walks the matrices of a strided batch.
template <class T, class TC, bool A_T, bool B_T, int N>
__global__ void __launch_bounds__(mma_tiling::threads, 4) mma_kernel(const __grid_constant__ mma_launch<N> launch) {
    using namespace mma_tiling;
    constexpr int tile_bytes = (a_elements + b_elements) * int(sizeof(T));
    constexpr int c_bytes = bm * ldc_s * int(sizeof(float));
    __shared__ __align__(128) unsigned char shared[tile_bytes > c_bytes ? tile_bytes : c_bytes];
    const int x = int(blockIdx.x);
    int lo = 0, hi = launch.count - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (launch.items[mid].first_tile <= x) lo = mid;
        else hi = mid - 1;
    }
    const mma_item &it = launch.items[lo];
    const int t = x - it.first_tile;
    for (int64_t z = blockIdx.y; z < it.batch; z += gridDim.y)
        mma_tile<T, TC, A_T, B_T>(it, t % it.tiles_m, t / it.tiles_m, z, shared);
}

}  // namespace gemm::cuda_tiled
