// wgmma_kernel.cuh: the Hopper tensor-core GEMM kernel for f16/bf16 inputs (f32 accumulators, C
// in the input type or f32), for f32 through TF32 (C in f32) and for FP8 (e4m3/e5m2, partial
// sums promoted into f32 every 128 k, C in f32, f16 or bf16): operands brought into shared
// memory by the bulk tensor copy engine (TMA) through a ring of stages on mbarriers, multiplied
// by wgmma. Compiled for sm_90a only.
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda_tiled/hopper/c_store.cuh"
#include "backends/cuda_tiled/hopper/mbarrier_tma.cuh"
#include "backends/cuda_tiled/hopper/operand_tile.cuh"
#include "backends/cuda_tiled/hopper/wgmma_instructions.cuh"
#include "backends/cuda_tiled/hopper/wgmma_tiling.cuh"

namespace gemm::cuda_tiled::hopper {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The accumulators change behind the compiler's back between a wgmma and its wait: these
// empty statements keep it from moving their reads and writes across either.
template <int N> __device__ inline void fence_accumulators(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <class T, int WN, bool A_MN, bool B_MN, int N>
__device__ inline void wgmma_step(float (&d)[N], uint64_t a, uint64_t b, int accumulate) {
    if constexpr (WN == 64) wgmma_64x64<T, A_MN, B_MN>(d, a, b, accumulate);
    else if constexpr (WN == 128) wgmma_64x128<T, A_MN, B_MN>(d, a, b, accumulate);
    else wgmma_64x256<T, A_MN, B_MN>(d, a, b, accumulate);
}

// FP8 inputs: their kernel promotes the tensor cores' partial sums (wgmma_gemm_kernel).
template <class T> constexpr bool is_fp8_type = std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>;

// Adds a stage's partial sums into the accumulators.
template <int N> __device__ inline void promote(float (&d)[N], const float (&part)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) d[i] += part[i];
}

// The same with block scales, stage kb being block kb of k: part[i] times the scale of its m and
// of its n there. part[4j + 2h + e] is m m0 + 8j + 2 (lane % 4) + e and n n0 + 16 warp + lane / 4
// + 8h (store_tile's fragment order); a consumer's m (at most 128 from a multiple of 128) and
// its 64 n each lie in one block of 128. Scales of m or n past C's are not read: their partial
// sums are 0 (TMA's zeros).
template <int N>
__device__ inline void promote_block_scaled(float (&d)[N], const float (&part)[N], const wgmma_params &p, int kb,
                                            int m0, int n0) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
    // Scales per outer index: block kb's column; per 128 of them: the column of block m0 / 128.
    const float *a_scale =
        p.a_per_128 ? p.a_block + kb + int64_t(m0 / 128) * p.ld_a_block : p.a_block + int64_t(kb) * p.ld_a_block;
    const float *b_scale =
        p.b_per_128 ? p.b_block + kb + int64_t(n0 / 128) * p.ld_b_block : p.b_block + int64_t(kb) * p.ld_b_block;
    float of_n[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int n = n0 + 16 * warp + lane / 4 + 8 * h;
        of_n[h] = p.b_per_128 ? *b_scale : n < p.n ? b_scale[n] : 0.0f;
    }
    const float of_block = p.a_per_128 ? *a_scale : 0.0f;
#pragma unroll
    for (int j = 0; j < N / 4; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int m = m0 + 8 * j + 2 * (lane % 4) + e;
            const float of_m = p.a_per_128 ? of_block : m < p.m ? a_scale[m] : 0.0f;
#pragma unroll
            for (int h = 0; h < 2; ++h) d[4 * j + 2 * h + e] += part[4 * j + 2 * h + e] * (of_m * of_n[h]);
        }
}

// The largest of the 256 consumer threads' amax into *amax: a warp's by shuffles, the block's
// through `slots` (8 floats of shared memory no consumer reads any more), then one atomicMax
// on the float's bits, which order non-negative floats (and NaN with its sign bit clear, above
// +Inf) as integers do. *amax is 0 or a |D| already stored before the kernel (cuda_tiled.cpp's
// clear_amax zeroes it before a call's first matrix).
__device__ inline void amax_to_global(float v, float *slots, float *amax) {
    for (int lanes = 16; lanes > 0; lanes /= 2) v = max_with_nan(v, __shfl_xor_sync(0xffffffffu, v, lanes));
    asm volatile("bar.sync 1, %0;" ::"n"(consumers * 128) : "memory");  // every store_tile is done
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32 - 4] = v;
    asm volatile("bar.sync 1, %0;" ::"n"(consumers * 128) : "memory");
    if (threadIdx.x != 128) return;
    for (int w = 1; w < consumers * 4; ++w) v = max_with_nan(v, slots[w]);
    atomicMax(reinterpret_cast<int *>(amax), __float_as_int(v));
}

// Work item w: the split of k, the matrix and the tile (m, n), its k steps [ks_begin, ks_end).
// Items run split by split, each split's tiles in groups of raster_group along m.
struct work_item {
    int split, matrix, tm, tn;
    int ks_begin, ks_end;
};

__device__ inline work_item item_of(int64_t w, int tiles_m, int tiles_n, int k_steps, const wgmma_params &p) {
    const int64_t tiles = int64_t(tiles_m) * tiles_n, per_split = tiles * p.batch;
    const int split = int(w / per_split);
    w %= per_split;
    const int matrix = int(w / tiles), tile = int(w % tiles);
    const int per_group = raster_group * tiles_n;
    const int first_m = tile / per_group * raster_group;
    const int group_m = min(tiles_m - first_m, raster_group);
    const int ks_begin = split * p.split_steps;
    return {split,
            matrix,
            first_m + (tile % per_group) % group_m,
            (tile % per_group) / group_m,
            ks_begin,
            min(k_steps, ks_begin + p.split_steps)};
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// map_a: op(A), rows of m; map_b: op(B)^T, rows of n; each stored along k, or along its rows
// when A_ROWS / B_ROWS (canonical op(A) = N, op(B) = T). Persistent: each
// block takes work items (a tile of one matrix) blockIdx.x, + gridDim.x, ... Warpgroup 0's first
// thread issues the copies, up to STAGES k steps ahead and across tiles, so the next tile's
// operands arrive while the consumers store the last one; warpgroups 1 and 2 each multiply 64
// rows of n by the tile's BM of m, keeping one k step's wgmmas in flight while waiting for the
// next stage. The copying warpgroup gives its registers to the multiplying ones (setmaxnreg).
// FP8 (both operands stored along k, whole k): a stage's 128 k are summed by the tensor cores
// into fresh registers, waited for and added into the f32 accumulators (promote), since the
// tensor cores' FP8 sums keep fewer bits than f32 (NOTES.md, FP8 kernel); the other
// consumer's wgmmas keep the tensor cores busy meanwhile; block scales multiply the partial
// sums there (promote_block_scaled). The epilogue multiplies alpha by the per-tensor scales,
// and applies the output scale and amax (store_tile's SCALED).
template <class T, class TC, class Tiling, bool A_ROWS, bool B_ROWS>
__global__ void __launch_bounds__(threads, 1)
    wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                      wgmma_params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int stages = Tiling::stages, bm = Tiling::bm, bk = Tiling::bk;
    // The wgmma A operand is op(B)^T: stored along its rows (n) when op(B) = T. Its B operand is
    // op(A): along its rows (m) when op(A) = N.
    using tile_of_b = operand_tile<B_ROWS>;
    using tile_of_a = operand_tile<A_ROWS>;
    extern __shared__ unsigned char raw_shared[];
    unsigned char *base =
        reinterpret_cast<unsigned char *>((reinterpret_cast<uintptr_t>(raw_shared) + 1023) & ~uintptr_t(1023));
    T *tiles_a = reinterpret_cast<T *>(base);               // op(B)^T: rows of n
    T *tiles_b = tiles_a + stages * Tiling::stage_elems_a;  // op(A): rows of m
    float *staging = reinterpret_cast<float *>(tiles_b + stages * Tiling::stage_elems_b);
    uint64_t *full = reinterpret_cast<uint64_t *>(reinterpret_cast<unsigned char *>(staging) + staging_bytes);
    uint64_t *empty = full + stages;
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) {
            barrier_init(&full[s], 1);
            barrier_init(&empty[s], consumers * 128);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    // The stream's next kernel, when launched as this one's programmatic dependent (the
    // split-k reduction always is), may be scheduled now where launch_typed allows it: it waits
    // for this grid's completion (griddepcontrol.wait) before it reads anything.
    if (p.early_dependents) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    // This kernel may itself be launched as a programmatic dependent of the stream's previous
    // kernel (launch_typed says when), so that its launch and the set-up above overlap that
    // kernel's end: nothing in memory is read or written before that kernel has completed and
    // its writes are visible (it may have written A or B, or still read C or the workspace).
    asm volatile("griddepcontrol.wait;" ::: "memory");
    // A masked batch's matrix computes C's first *row_count rows (or columns) only: the tiles
    // past them are no work items, and no store reaches past them.
    int m_end = p.m, n_limit = p.n;
    if (p.row_count) {
        const int count = max(*p.row_count, 0);
        if (p.row_count_on_n) n_limit = min(count, p.n);
        else m_end = min(count, p.m);
    }

    constexpr int bn = Tiling::bn, wn = Tiling::wgmma_n;
    const int tiles_m = (m_end + bm - 1) / bm, tiles_n = (n_limit + bn - 1) / bn;
    const int64_t work = int64_t(tiles_m) * tiles_n * p.batch * p.splits;
    const int k_steps = (p.k + bk - 1) / bk;
    const int warpgroup = threadIdx.x / 128;

    if (warpgroup == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (threadIdx.x != 0) return;
        int step = 0;  // across the block's tiles, as the consumers count
        for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
            const work_item at = item_of(w, tiles_m, tiles_n, k_steps, p);
            for (int ks = at.ks_begin; ks < at.ks_end; ++ks, ++step) {
                const int s = step % stages;
                if (step >= stages) barrier_wait(&empty[s], ((step / stages) - 1) & 1);
                barrier_expect_bytes(&full[s], Tiling::stage_bytes);
                tile_of_b::template copy<bn>(tiles_a + s * Tiling::stage_elems_a, &map_b, &full[s], ks * bk, at.tn * bn,
                                             p.b_batched ? at.matrix : 0);
                tile_of_a::template copy<bm>(tiles_b + s * Tiling::stage_elems_b, &map_a, &full[s], ks * bk, at.tm * bm,
                                             p.a_batched ? at.matrix : 0);
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int group = warpgroup - 1;
    constexpr bool promotes = is_fp8_type<T>;
    c_target out = p.out;
    output_scaling scaling;
    if constexpr (promotes) {
        out.alpha *= (p.a_scale ? *p.a_scale : 1.0f) * (p.b_scale ? *p.b_scale : 1.0f);
        if (p.d_scale) scaling.d_scale = *p.d_scale;
    }
    int step = 0;
    for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
        const work_item at = item_of(w, tiles_m, tiles_n, k_steps, p);
        // This group's n and m: a slice of 64 n, or of wn m with split_m.
        const int n0 = at.tn * bn + (Tiling::split_m ? 0 : group * 64);
        const int m0 = at.tm * bm + (Tiling::split_m ? group * wn : 0);
        const int n_end = min(n_limit, at.tn * bn + bn);
        // A group whose slice lies past the matrix (n <= 64: decode shapes) has nothing to
        // multiply or store; it only hands the stages back.
        if (n0 >= n_limit || m0 >= m_end) {
            for (int ks = at.ks_begin; ks < at.ks_end; ++ks, ++step) {
                barrier_wait(&full[step % stages], (step / stages) & 1);
                barrier_arrive(&empty[step % stages]);
            }
            continue;
        }
        float d[Tiling::accumulators];
#pragma unroll
        for (int i = 0; i < Tiling::accumulators; ++i) d[i] = 0.0f;
        for (int ks = at.ks_begin; ks < at.ks_end; ++ks, ++step) {
            const int s = step % stages;
            barrier_wait(&full[s], (step / stages) & 1);
            const uint64_t a = tile_of_b::descriptor(tiles_a + s * Tiling::stage_elems_a + (n0 - at.tn * bn) * bk);
            const uint64_t b = tile_of_a::descriptor(tiles_b + s * Tiling::stage_elems_b + (m0 - at.tm * bm) * bk);
            if constexpr (promotes) {
                float part[Tiling::accumulators];  // the first wgmma writes it (accumulate 0)
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                for (int kk = 0; kk < bk / Tiling::wgmma_k; ++kk)
                    wgmma_step<T, wn, false, false>(part, a + kk * tile_of_b::k_step, b + kk * tile_of_a::k_step,
                                                    kk > 0);
                asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
                asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
                fence_accumulators(part);
                barrier_arrive(&empty[s]);
                if (p.a_block) promote_block_scaled(d, part, p, ks, m0, n0);
                else promote(d, part);
            } else {
                fence_accumulators(d);
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                for (int kk = 0; kk < bk / Tiling::wgmma_k; ++kk)
                    wgmma_step<T, wn, B_ROWS, A_ROWS>(d, a + kk * tile_of_b::k_step, b + kk * tile_of_a::k_step,
                                                      ks > at.ks_begin || kk > 0);
                asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
                // The previous step's wgmmas are done once at most this one is pending: its stage
                // goes back to the copies.
                asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
                fence_accumulators(d);
                if (ks > at.ks_begin) barrier_arrive(&empty[(step - 1) % stages]);
            }
        }
        if constexpr (!promotes) {
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
            fence_accumulators(d);
            barrier_arrive(&empty[(step - 1) % stages]);
        }
        if (p.splits == 1) {
            store_tile<TC, wn, promotes>(d, staging, out, m0, m_end, n0, n_end, at.matrix, &scaling);
        } else {
            const int64_t elements = int64_t(p.m) * p.n;
            const c_target partial{p.partial + at.split * p.split_stride, p.m, elements, 1.0f, 0.0f, p.m % 4 == 0};
            store_tile<float, wn>(d, staging, partial, m0, p.m, n0, n_end, at.matrix);
        }
    }
    if constexpr (promotes)
        if (p.amax) amax_to_global(scaling.amax, staging, p.amax);
#endif
}

}  // namespace gemm::cuda_tiled::hopper
