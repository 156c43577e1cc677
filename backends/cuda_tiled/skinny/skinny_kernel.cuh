// skinny_kernel.cuh: the kernel for C of at most 32 columns with op(A) and op(B) stored along k
// (a linear layer's X W^T for up to 32 rows of X, row-major: the decode step of a language
// model). Such a call is a stream of op(A) from memory with almost no arithmetic, so the kernel
// reads op(A) straight into the registers of tensor-core instructions (mma.sync m16n8k16): no
// shared-memory stages, no tensor maps, no split of k across blocks and so no second kernel to
// add partial sums. The same kernel computes the mirror C^T = op(B)^T op(A)^T of a problem whose C
// has few rows (MIRRORED: its C stored row-major, skinny_view.hpp), and reads op(B) stored along
// n as well as along k (X_ALONG_N, load_x). FP8 (e4m3, e5m2) takes the same path with
// mma.sync m16n8k32, both operands along k, and the FP8 epilogue (scales per tensor, output
// scale, amax). Compiled for sm_90a.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda_common/kernels/device_elements.cuh"
#include "backends/cuda_tiled/hopper/c_store.cuh"
#include "backends/cuda_tiled/skinny/skinny_view.hpp"

namespace gemm::cuda_tiled::skinny {

// A block takes BM rows of C (one or two tiles of 16) over all of k, its `warps` warps each a
// range of k; it adds their sums in warp order, so the result does not depend on timing.
constexpr int warps = 8;
// A chunk is 32 k of a tile's 16 rows and of C's columns: lane 4 g + t loads k 8 t .. 8 t + 7
// of rows g and g + 8 (16 bytes each) and of columns g, g + 8, ... of op(B). For T of one
// byte (FP8) the same 16 bytes a lane are 16 k: lane_k<T> k a lane, chunk_of<T> k a chunk.
constexpr int chunk_k = 32;
template <class T> constexpr int lane_k = 16 / int(sizeof(T));
template <class T> constexpr int chunk_of = 4 * lane_k<T>;
template <class T> constexpr bool is_fp8_element = std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>;
// The chunks of a tile a warp loads before it multiplies (divided among the tiles of a block of
// two), for C of 8 COLS columns: 8 KB of op(A) in flight a warp with 8 columns, 4 with 16, 2
// with 32, as many as keep a thread within 128 registers, so that an SM holds two blocks (more
// chunks and one block an SM were slower: NOTES.md, Skinny kernel).
template <int COLS> constexpr int chunks_in_flight = COLS == 1 ? 8 : COLS == 2 ? 4 : 2;

struct skinny_params {
    const void *a, *b;
    void *c;
    int64_t lda, ldb, ldc, stride_a, stride_b, stride_c;
    int m, n, k, batch;
    float alpha, beta;
    // FP8 only, device pointers or null: the operands' scales per tensor, the output scale, and
    // amax (max |D| before d_scale; zeroed before the call's first matrix: clear_amax).
    const float *a_scale, *b_scale, *d_scale;
    float *amax;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

template <class T>
__device__ inline void mma_16x8x16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                   uint32_t b1) {
    if constexpr (std::is_same_v<T, __half>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                     "{%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    else
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// FP8: A 16 x 32, B 32 x 8, f32 sums. Lane 4 g + t holds k slots 4t .. 4t + 3 (a0, a1; b0) and
// 16 + 4t .. 16 + 4t + 3 (a2, a3; b1) of rows g (a0, a2) and g + 8 (a1, a3) and column g.
template <class T>
__device__ inline void mma_16x8x32(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                   uint32_t b1) {
    if constexpr (std::is_same_v<T, __nv_fp8_e4m3>)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, "
                     "%9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, "
                     "%9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// One chunk of a tile: rows g (lo) and g + 8 (hi) and column g (x), 8 k each, as two
// instructions. The instruction's A fragment gives lane 4 g + t k slots 2t, 2t + 1, 2t + 8 and
// 2t + 9 of rows g and g + 8, its B fragment the same slots of column g: which k a slot holds
// is free as long as both operands agree, so the 8 loaded k fill those slots of two
// instructions in order, and every lane's loads are whole 16-byte pieces. FP8: 16 k a lane,
// the same registers in the same slots of m16n8k32 (mma_16x8x32).
template <class T> __device__ inline void mma_chunk(float (&d)[4], const uint4 &lo, const uint4 &hi, const uint4 &x) {
    if constexpr (is_fp8_element<T>) {
        mma_16x8x32<T>(d, lo.x, hi.x, lo.y, hi.y, x.x, x.y);
        mma_16x8x32<T>(d, lo.z, hi.z, lo.w, hi.w, x.z, x.w);
    } else {
        mma_16x8x16<T>(d, lo.x, hi.x, lo.y, hi.y, x.x, x.y);
        mma_16x8x16<T>(d, lo.z, hi.z, lo.w, hi.w, x.z, x.w);
    }
}

// mma_chunk into d through partial sums of their own: FP8 products summed inside the tensor
// core over one chunk (64 k) only, then added into d in f32, as the wgmma FP8 kernel promotes
// every 128 k (NOTES.md, FP8 kernel); 16-bit types straight into d.
template <class T>
__device__ inline void mma_chunk_into(float (&d)[4], const uint4 &lo, const uint4 &hi, const uint4 &x) {
    if constexpr (is_fp8_element<T>) {
        float part[4] = {};
        mma_chunk<T>(part, lo, hi, x);
#pragma unroll
        for (int e = 0; e < 4; ++e) d[e] += part[e];
    } else {
        mma_chunk<T>(d, lo, hi, x);
    }
}

// The 8 elements at p, those from `count` on as zeros without reading them (the end of k).
__device__ inline uint4 load_part(const void *p, int64_t count) {
    const uint16_t *e = static_cast<const uint16_t *>(p);
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
        w[i] = (2 * i < count ? uint32_t(e[2 * i]) : 0u) | (2 * i + 1 < count ? uint32_t(e[2 * i + 1]) << 16 : 0u);
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// The same for elements of one byte (FP8): the 16 at p, those from `count` on as zeros.
__device__ inline uint4 load_part_bytes(const void *p, int64_t count) {
    const uint8_t *e = static_cast<const uint8_t *>(p);
    uint32_t w[4] = {};
#pragma unroll
    for (int i = 0; i < 16; ++i)
        if (i < count) w[i / 4] |= uint32_t(e[i]) << (8 * (i % 4));
    return make_uint4(w[0], w[1], w[2], w[3]);
}

template <class T> __device__ inline uint4 load_part_of(const T *p, int64_t count) {
    if constexpr (sizeof(T) == 1) return load_part_bytes(p, count);
    else return load_part(p, count);
}

// 16 bytes at p where `load`, else zeros; op(A) through L2 only (ld.global.cg: each byte is
// read once), op(B) through L1 too (every block reads it; not the non-coherent path, which
// asks that the bytes not change during the kernel's life, and this kernel may start while
// the previous one still writes them, griddepcontrol.wait). Volatile, as are the
// multiplications: without it the compiler moved each load next to its use, and a warp had
// one or two chunks in flight instead of all of them.
template <bool STREAMED> __device__ inline uint4 load_16(const void *p, bool load) {
    uint4 v = make_uint4(0, 0, 0, 0);
    if constexpr (STREAMED)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %5, 0;\n@p ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];\n}"
                     : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w)
                     : "l"(p), "r"(int(load)));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %5, 0;\n@p ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n}"
                     : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w)
                     : "l"(p), "r"(int(load)));
    return v;
}

// The elements at p, p + ld, ..., p + 7 ld, those from `count` on as zeros without reading them:
// 8 k of a column of op(B) stored along n. Plain loads through L1, as load_16<false>'s.
__device__ inline uint4 load_strided(const void *p, int64_t ld, int64_t count) {
    const uint16_t *e = static_cast<const uint16_t *>(p);
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
        w[i] = (2 * i < count ? uint32_t(e[2 * i * ld]) : 0u) |
               (2 * i + 1 < count ? uint32_t(e[(2 * i + 1) * ld]) << 16 : 0u);
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// The 8 k from kk of a column of op(B) (this lane's column from its first k), k apart by `step`
// (1 along k, ldb along n); zeros where `column` is null (past n) or !load. Along k (op(B) = N)
// one 16-byte load (load_16<false>). Along n (X_ALONG_N: op(B) = T, X of at most 32 columns
// stored n x k) 8 two-byte loads a lane, those of a warp's instruction 4 runs of 16 bytes (8
// columns at one k each): X is at most 32 x k and every block reads it, so it is served from L1
// and L2, and the fragments need no shared memory, no barrier and no change to the mma slots
// (NOTES.md, Skinny kernels on the narrow operand along n).
template <bool X_ALONG_N, class T>
__device__ inline uint4 load_x(const T *column, int64_t step, int64_t kk, bool load) {
    if constexpr (X_ALONG_N) return load && column ? load_strided(column + kk * step, step, 8) : make_uint4(0, 0, 0, 0);
    else return load_16<false>(column + kk, load && column);
}

// The same at the end of k: the first `count` of the 8 k, the rest zeros without reading them.
template <bool X_ALONG_N, class T>
__device__ inline uint4 load_x_part(const T *column, int64_t step, int64_t kk, int64_t count) {
    if (!column) return make_uint4(0, 0, 0, 0);
    if constexpr (X_ALONG_N) return load_strided(column + kk * step, step, count);
    else return load_part_of(column + kk, count);
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// Block (x, y): rows 16 TILES x .. of C and its 8 COLS columns, over matrices y, y + gridDim.y,
// ... Each warp multiplies its range of k's whole chunks (the last warp also the part chunk at
// the end of k), loading chunks_in_flight / TILES chunks of every tile before it multiplies them.
// MIRRORED: C (p.m x p.n) is stored row-major with p.ldc, the caller's C^T. X_ALONG_N: op(B)'s
// element (l, j) lies at b + l ldb + j (op(B) = T), else at b + j ldb + l. FP8 T: X along k
// only; D = d_scale (alpha a_scale b_scale sum + beta C), amax over the values before d_scale.
template <class T, class TC, int TILES, int COLS, bool MIRRORED, bool X_ALONG_N>
__global__ void __launch_bounds__(32 * warps) skinny_kernel(skinny_params p) {
    static_assert(!(X_ALONG_N && is_fp8_element<T>), "the FP8 skinny kernels read both operands along k");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Launched as the programmatic dependent of the stream's previous kernel (launch_typed): the
    // next kernel may launch now, and this one reads nothing before the previous grid has
    // completed and its writes are visible.
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    constexpr int in_flight = chunks_in_flight<COLS> / TILES;
    constexpr int chunk = chunk_of<T>, lk = lane_k<T>;
    __shared__ float sums[warps][TILES][COLS][4][32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const int full = p.k / chunk;
    const int begin = int(int64_t(full) * warp / warps), end = int(int64_t(full) * (warp + 1) / warps);
    const bool part = warp == warps - 1 && int64_t(full) * chunk < p.k;
    // FP8's scales fold into alpha (after griddepcontrol.wait: an earlier kernel may write them).
    float alpha = p.alpha, d_scale = 1.0f, amax = 0.0f;
    if constexpr (is_fp8_element<T>) {
        if (p.a_scale) alpha *= *p.a_scale;
        if (p.b_scale) alpha *= *p.b_scale;
        if (p.d_scale) d_scale = *p.d_scale;
    }
    const uint4 zero = make_uint4(0, 0, 0, 0);
    for (int matrix = blockIdx.y; matrix < p.batch; matrix += gridDim.y) {
        const T *a = static_cast<const T *>(p.a) + matrix * p.stride_a;
        const T *b = static_cast<const T *>(p.b) + matrix * p.stride_b;
        // This lane's rows of op(A) and column of op(B) from k = 8 t; null past m or n.
        const T *rows[TILES][2];
#pragma unroll
        for (int i = 0; i < TILES; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = blockIdx.x * 16 * TILES + 16 * i + 8 * h + g;
                rows[i][h] = r < p.m ? a + int64_t(r) * p.lda + lk * t : nullptr;
            }
        // Along k a column's k are 1 apart and columns ldb; along n the other way round.
        const int64_t k_step = X_ALONG_N ? p.ldb : 1, n_step = X_ALONG_N ? 1 : p.ldb;
        const T *columns[COLS];
#pragma unroll
        for (int j = 0; j < COLS; ++j)
            columns[j] = 8 * j + g < p.n ? b + int64_t(8 * j + g) * n_step + lk * t * k_step : nullptr;
        float d[TILES][COLS][4] = {};
        for (int c0 = begin; c0 < end; c0 += in_flight) {
            uint4 va[in_flight][TILES][2], vx[in_flight][COLS];
#pragma unroll
            for (int u = 0; u < in_flight; ++u) {
                const bool in = c0 + u < end;
                const int64_t kk = int64_t(c0 + u) * chunk;
#pragma unroll
                for (int i = 0; i < TILES; ++i)
#pragma unroll
                    for (int h = 0; h < 2; ++h) va[u][i][h] = load_16<true>(rows[i][h] + kk, in && rows[i][h]);
#pragma unroll
                for (int j = 0; j < COLS; ++j) vx[u][j] = load_x<X_ALONG_N>(columns[j], k_step, kk, in);
            }
            // ptxas keeps loads before a warp barrier: without it, it moved each chunk's loads
            // after the previous chunk's multiplications.
            __syncwarp();
#pragma unroll
            for (int u = 0; u < in_flight; ++u)
#pragma unroll
                for (int i = 0; i < TILES; ++i)
#pragma unroll
                    for (int j = 0; j < COLS; ++j) mma_chunk_into<T>(d[i][j], va[u][i][0], va[u][i][1], vx[u][j]);
        }
        if (part) {
            const int64_t kk = int64_t(full) * chunk, left = p.k - kk - lk * t;  // this lane's k there
            uint4 x[COLS];
#pragma unroll
            for (int j = 0; j < COLS; ++j) x[j] = load_x_part<X_ALONG_N>(columns[j], k_step, kk, left);
#pragma unroll
            for (int i = 0; i < TILES; ++i) {
                const uint4 lo = rows[i][0] ? load_part_of(rows[i][0] + kk, left) : zero;
                const uint4 hi = rows[i][1] ? load_part_of(rows[i][1] + kk, left) : zero;
#pragma unroll
                for (int j = 0; j < COLS; ++j) mma_chunk_into<T>(d[i][j], lo, hi, x[j]);
            }
        }
#pragma unroll
        for (int i = 0; i < TILES; ++i)
#pragma unroll
            for (int j = 0; j < COLS; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) sums[warp][i][j][e][lane] = d[i][j][e];
        __syncthreads();
        // Warp w adds the sums of piece w (tile w / COLS, columns 8 (w % COLS) ..) in warp order
        // and stores them: element e of lane 4 g + t is row g + 8 (e / 2), column 2 t + e % 2
        // of the piece. beta = 0 never reads C. As stored, a store instruction writes 8 rows of
        // each of 4 columns (a run of 8 elements each); mirrored, 4 elements 2 apart in each of 8
        // rows of the row-major C, the instruction of e + 1 the elements between (NOTES.md,
        // Skinny kernels on C of few rows).
        static_assert(TILES * COLS <= warps, "a warp for each 16x8 piece of the block's C");
        if (warp < TILES * COLS) {
            const int tile = warp / COLS, piece = warp % COLS;
            float s[4] = {};
#pragma unroll
            for (int w = 0; w < warps; ++w)
#pragma unroll
                for (int e = 0; e < 4; ++e) s[e] += sums[w][tile][piece][e][lane];
            TC *c = static_cast<TC *>(p.c) + matrix * p.stride_c;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int r = blockIdx.x * 16 * TILES + 16 * tile + 8 * (e / 2) + g;
                const int col = 8 * piece + 2 * t + e % 2;
                if (r >= p.m || col >= p.n) continue;
                TC *at = c + skinny_c_offset(MIRRORED, r, col, p.ldc);
                float v = alpha * s[e];
                if (p.beta != 0.0f) v += p.beta * cuda::to_compute(*at);
                if constexpr (is_fp8_element<T>) {
                    amax = hopper::max_with_nan(amax, fabsf(v));
                    v *= d_scale;
                }
                *at = cuda::from_compute<TC>(v);
            }
        }
        __syncthreads();  // the next matrix writes sums again
    }
    if constexpr (is_fp8_element<T>) {
        // The block's largest |D| before d_scale (NaN once one is): a warp's by shuffles, the
        // block's through shared memory, then one atomicMax on the float's bits, which order
        // non-negative floats (NaN with its sign bit clear above +Inf) as integers do.
        if (!p.amax) return;
        __shared__ float warp_amax[warps];
        for (int lanes = 16; lanes > 0; lanes /= 2)
            amax = hopper::max_with_nan(amax, __shfl_xor_sync(0xffffffffu, amax, lanes));
        if (lane == 0) warp_amax[warp] = amax;
        __syncthreads();
        if (threadIdx.x != 0) return;
        for (int w = 1; w < warps; ++w) amax = hopper::max_with_nan(amax, warp_amax[w]);
        atomicMax(reinterpret_cast<int *>(p.amax), __float_as_int(amax));
    }
#endif
}

}  // namespace gemm::cuda_tiled::skinny
