// skinny_along_m_kernel.cuh: the kernel for C of at most 32 columns with op(A) stored along m
// and op(B) along k (column-major op(A) = op(B) = N: a linear layer's X W for up to 32 rows of
// X, row-major, with W stored (in, out) as JAX/Flax and Keras keep it). Like skinny_kernel.cuh
// it streams op(A) from memory into the registers of tensor-core instructions (mma.sync
// m16n8k16), with no shared-memory stages and no split of k across blocks; since op(A) lies
// along m, each lane loads a run of rows at one k and byte permutes turn the runs of
// neighbouring k into the instruction's pairs along k. The same kernel computes the mirror
// C^T = op(B)^T op(A)^T of a problem whose C has few rows (MIRRORED: its C stored row-major,
// skinny_view.hpp), and reads op(B) stored along n as well as along k (X_ALONG_N,
// skinny_kernel.cuh's load_x). Compiled for sm_90a.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/cuda_common/kernels/device_elements.cuh"
#include "backends/cuda_tiled/skinny/skinny_kernel.cuh"

namespace gemm::cuda_tiled::skinny {

// The chunks a warp loads before it multiplies: as many as keep op(A)'s loads within 64
// registers a thread (8 loads of TILES words a chunk), halved for C of 32 columns, whose sums
// take up to 64 registers.
template <int TILES, int COLS> constexpr int along_m_in_flight = (8 / TILES) / (COLS == 4 ? 2 : 1);

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// WORDS (1, 2 or 4) 32-bit words (2 WORDS elements of one k, along m) at p where `load`, else
// zeros; through L2 only, volatile for the reason load_16 gives.
template <int WORDS> struct run_of_rows { uint32_t w[WORDS]; };

template <int WORDS> __device__ inline run_of_rows<WORDS> load_run(const void *p, bool load) {
    run_of_rows<WORDS> v{};
    if constexpr (WORDS == 4)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %5, 0;\n@p ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];\n}"
                     : "+r"(v.w[0]), "+r"(v.w[1]), "+r"(v.w[2]), "+r"(v.w[3])
                     : "l"(p), "r"(int(load)));
    else if constexpr (WORDS == 2)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %3, 0;\n@p ld.global.cg.v2.u32 {%0, %1}, [%2];\n}"
                     : "+r"(v.w[0]), "+r"(v.w[1])
                     : "l"(p), "r"(int(load)));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n@p ld.global.cg.u32 %0, [%1];\n}"
                     : "+r"(v.w[0])
                     : "l"(p), "r"(int(load)));
    return v;
}

// The first `count` elements of the run at p, the rest zeros without reading them (the end of m).
template <int WORDS> __device__ inline run_of_rows<WORDS> load_run_part(const void *p, int count) {
    const uint16_t *e = static_cast<const uint16_t *>(p);
    run_of_rows<WORDS> v{};
#pragma unroll
    for (int i = 0; i < WORDS; ++i)
        v.w[i] = (2 * i < count ? uint32_t(e[2 * i]) : 0u) | (2 * i + 1 < count ? uint32_t(e[2 * i + 1]) << 16 : 0u);
    return v;
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// Block (x, y): 16 TILES rows of C from 16 TILES x and its 8 COLS columns, over matrices y,
// y + gridDim.y, ...; its warps each a range of k's whole chunks (the last warp also the part
// chunk at the end of k), added in warp order, so the result does not depend on timing.
// Lane 4 g + t loads rows 2 TILES g .. 2 TILES g + 2 TILES - 1 of the block at k 8 t .. 8 t + 7
// of a chunk (one 4-, 8- or 16-byte load a k; a warp's loads at one k are 32, 64 or 128
// contiguous bytes of a column of op(A)); tile q's instruction row g is the block's row 2 TILES g + 2 q and its
// row g + 8 the next one, so that word q of a load holds both, and the pair of words at k and
// k + 1 permutes into the two registers of rows g and g + 8 along k. Its op(B) column g and the
// k slots of its instructions are those of skinny_kernel: k 8 t .. 8 t + 7 of a chunk fill slots
// 2t, 2t + 1, 2t + 8, 2t + 9 of two instructions in order. MIRRORED: C (p.m x p.n) is stored
// row-major with p.ldc, the caller's C^T. X_ALONG_N: op(B)'s element (l, j) lies at b + l ldb + j
// (op(B) = T), else at b + j ldb + l.
template <class T, class TC, int TILES, int COLS, bool MIRRORED, bool X_ALONG_N>
__global__ void __launch_bounds__(32 * warps, COLS == 1 ? 2 : 1) skinny_along_m_kernel(skinny_params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // A programmatic dependent of the stream's previous kernel, as skinny_kernel.
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    constexpr int in_flight = along_m_in_flight<TILES, COLS>, run = 2 * TILES;
    // One piece of 8 columns at a time: every warp's sums of each tile's 4 elements a lane.
    __shared__ float sums[warps][TILES][4][32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const int full = p.k / chunk_k;
    const int begin = int(int64_t(full) * warp / warps), end = int(int64_t(full) * (warp + 1) / warps);
    const bool part = warp == warps - 1 && int64_t(full) * chunk_k < p.k;
    const int64_t first_row = int64_t(blockIdx.x) * 16 * TILES + run * g;
    // Of this lane's run; below `run` only in the last block.
    const int rows_left = int(p.m - first_row < run ? p.m - first_row : run);
    for (int matrix = blockIdx.y; matrix < p.batch; matrix += gridDim.y) {
        const T *a = static_cast<const T *>(p.a) + matrix * p.stride_a + first_row + int64_t(8 * t) * p.lda;
        const T *b = static_cast<const T *>(p.b) + matrix * p.stride_b;
        // Along k a column's k are 1 apart and columns ldb; along n the other way round.
        const int64_t k_step = X_ALONG_N ? p.ldb : 1, n_step = X_ALONG_N ? 1 : p.ldb;
        const T *columns[COLS];
#pragma unroll
        for (int j = 0; j < COLS; ++j)
            columns[j] = 8 * j + g < p.n ? b + int64_t(8 * j + g) * n_step + 8 * t * k_step : nullptr;
        float d[TILES][COLS][4] = {};
        // Chunk c's 8 runs of rows (k 32 c + 8 t + i), where it is in this warp's range and the
        // lane has rows, into va.
        auto load_chunk = [&](run_of_rows<TILES>(&va)[8], int c, bool in) {
            const T *at = a + int64_t(c) * chunk_k * p.lda;
            if (rows_left >= run) {
#pragma unroll
                for (int i = 0; i < 8; ++i) va[i] = load_run<TILES>(at + i * p.lda, in);
            } else {
#pragma unroll
                for (int i = 0; i < 8; ++i)
                    va[i] = in && rows_left > 0 ? load_run_part<TILES>(at + i * p.lda, rows_left) : run_of_rows<TILES>{};
            }
        };
        // The two instructions of a chunk for each tile and piece of columns.
        auto multiply = [&](const run_of_rows<TILES>(&va)[8], const uint4(&vx)[COLS]) {
#pragma unroll
            for (int q = 0; q < TILES; ++q)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const run_of_rows<TILES> &k0 = va[4 * h], &k1 = va[4 * h + 1], &k2 = va[4 * h + 2],
                                             &k3 = va[4 * h + 3];
                    const uint32_t lo01 = __byte_perm(k0.w[q], k1.w[q], 0x5410),
                                   hi01 = __byte_perm(k0.w[q], k1.w[q], 0x7632),
                                   lo23 = __byte_perm(k2.w[q], k3.w[q], 0x5410),
                                   hi23 = __byte_perm(k2.w[q], k3.w[q], 0x7632);
#pragma unroll
                    for (int j = 0; j < COLS; ++j)
                        mma_16x8x16<T>(d[q][j], lo01, hi01, lo23, hi23, h ? vx[j].z : vx[j].x, h ? vx[j].w : vx[j].y);
                }
        };
        for (int c0 = begin; c0 < end; c0 += in_flight) {
            run_of_rows<TILES> va[in_flight][8];
            uint4 vx[in_flight][COLS];
#pragma unroll
            for (int u = 0; u < in_flight; ++u) {
                const bool in = c0 + u < end;
                load_chunk(va[u], c0 + u, in);
#pragma unroll
                for (int j = 0; j < COLS; ++j)
                    vx[u][j] = load_x<X_ALONG_N>(columns[j], k_step, int64_t(c0 + u) * chunk_k, in);
            }
            __syncwarp();  // keeps the loads ahead of the multiplications, as in skinny_kernel
#pragma unroll
            for (int u = 0; u < in_flight; ++u) multiply(va[u], vx[u]);
        }
        if (part) {
            // k past p.k reads as zeros in both operands.
            const int64_t kk = int64_t(full) * chunk_k, left = p.k - kk - 8 * t;  // this lane's k there
            run_of_rows<TILES> va[8];
            const T *at = a + kk * p.lda;
#pragma unroll
            for (int i = 0; i < 8; ++i)
                va[i] =
                    i < left && rows_left > 0 ? load_run_part<TILES>(at + i * p.lda, rows_left) : run_of_rows<TILES>{};
            uint4 vx[COLS];
#pragma unroll
            for (int j = 0; j < COLS; ++j) vx[j] = load_x_part<X_ALONG_N>(columns[j], k_step, kk, left);
            multiply(va, vx);
        }
        TC *c = static_cast<TC *>(p.c) + matrix * p.stride_c;
        // Piece by piece: every warp's sums, then warp w adds elements w, w + warps, ... of the
        // block's TILES x 4 (tile q = e / 4, element e % 4: row g + 8 (e % 4 / 2), column
        // 2 t + e % 2 of the instruction) in warp order and stores them. beta = 0 never reads C.
        // As stored, a store instruction writes 4 columns, 8 elements each, one of each lane's run
        // of rows; mirrored, 4 elements 2 apart in each of 8 rows of the row-major C, and the
        // instruction of warp w + 1 the elements between (NOTES.md, Skinny kernels on C of few
        // rows).
#pragma unroll
        for (int j = 0; j < COLS; ++j) {
#pragma unroll
            for (int q = 0; q < TILES; ++q)
#pragma unroll
                for (int e = 0; e < 4; ++e) sums[warp][q][e][lane] = d[q][j][e];
            __syncthreads();
            for (int ce = warp; ce < TILES * 4; ce += warps) {
                const int q = ce / 4, e = ce % 4;
                float s = 0.0f;
#pragma unroll
                for (int w = 0; w < warps; ++w) s += sums[w][q][e][lane];
                const int64_t r = first_row + 2 * q + e / 2;
                const int col = 8 * j + 2 * t + e % 2;
                if (r < p.m && col < p.n) {
                    TC *out = c + skinny_c_offset(MIRRORED, r, col, p.ldc);
                    float v = p.alpha * s;
                    if (p.beta != 0.0f) v += p.beta * cuda::to_compute(*out);
                    *out = cuda::from_compute<TC>(v);
                }
            }
            __syncthreads();  // the next piece, or matrix, writes sums again
        }
    }
#endif
}

}  // namespace gemm::cuda_tiled::skinny
