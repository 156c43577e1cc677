// wgmma_kernel.cu: the Hopper tensor-core GEMM for f16/bf16 inputs (f32 accumulators, C in
// the input type or f32) and for f32 through TF32 (C in f32): operands brought into shared
// memory by the bulk tensor copy engine (TMA) through a ring of stages on mbarriers,
// multiplied by wgmma. Compiled for sm_90a only.
#include "wgmma_gemm.hpp"

#include <cuda.h>  // CUtensorMap and its enums; the encode function is found through the runtime
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"
#include "dispatch/error.hpp"
#include "dispatch/settings.hpp"
#include "tiled_variants.hpp"
#include "wgmma_instructions.cuh"

namespace gemm::cuda_tiled {
namespace {

constexpr int consumers = 2;  // warpgroups that multiply; one more issues the copies
constexpr int threads = 128 * (1 + consumers);

// Each consumer warp writes C through its own piece of shared memory (store_tile): 16 rows
// (n) by 32 m of f32, each row 8 floats longer, so that the fragment's 8-byte stores (a
// half-warp: 4 rows by 4 pairs) fall on 32 distinct banks.
constexpr int staging_row = 32 + 8;                              // floats
constexpr int staging_warp = 16 * staging_row;                   // floats
constexpr int staging_bytes = consumers * 4 * staging_warp * 4;  // 20,480

// A block computes the transpose of a BM x BN tile of C: its wgmma "A" operand is op(B)^T (rows
// along n) and its "B" operand op(A) (rows along m), so that the two neighbouring accumulator
// columns a thread holds are neighbouring m, contiguous in column-major C. BN 128: each
// consumer warpgroup multiplies 64 of the tile's n by all of its BM m. BN 64 (C with few
// columns: decode shapes): both multiply the same 64 n, each by half of the BM m, so that a
// stage holds mostly op(A), the operand streamed from memory. BN 16 (C of at most 16 columns,
// op(B)^T stored along k): a stage holds only the 16 rows of op(B)^T there are, and the
// instruction, which reads 64, reads the 48 after them from the shared memory that follows (the
// next stages' rows, or op(A)); the rows of C they give are never stored. So a stage is almost
// all op(A). A stage holds 128 bytes of k per row (one row of the 128-byte swizzle): 64
// f16/bf16 or 32 f32 (TF32) elements.
template <int BM, int BN, int STAGES, int ELEMENT_BYTES>
struct wgmma_tiling {
    static constexpr int bm = BM;
    static constexpr int bn = BN;    // rows of the wgmma A operand: n
    static constexpr int bk = 128 / ELEMENT_BYTES;
    static constexpr int wgmma_k = 32 / ELEMENT_BYTES;  // the k of one instruction: 16, tf32 8
    static constexpr int stages = STAGES;
    static constexpr bool split_m = BN <= 64;
    static constexpr int wgmma_n = split_m ? BM / 2 : BM;  // the m of one consumer
    static constexpr int accumulators = wgmma_n / 2;       // per consumer thread: 64 x wgmma_n over 128
    static constexpr int stage_elems_a = bn * bk;
    static constexpr int stage_elems_b = bm * bk;
    static constexpr int stage_bytes = (stage_elems_a + stage_elems_b) * ELEMENT_BYTES;
    // The stages, the consumer warps' C staging (below), the stages' full and empty barriers,
    // and room to align the stages to 1024 bytes (the 128-byte swizzle repeats every 8 rows
    // of 128 bytes).
    static constexpr int smem_bytes = stages * stage_bytes + staging_bytes + 2 * stages * 8 + 1024;
};

// Tiles along m visited together, so that consecutive tiles share their B panel in L2.
constexpr int raster_group = 8;
// The most ranges split k takes (a reduction reads that many partial sums per element).
constexpr int max_splits = 16;

// Where a block's tile goes: C, or with split k a matrix of f32 partial sums.
struct c_target {
    void *c;
    int64_t ld, stride;  // leading dimension, batch stride
    float alpha, beta;
    bool quads;          // groups of 4 elements from an m divisible by 4 are aligned to their size
};

struct wgmma_params {
    c_target out;    // C
    float *partial;  // with splits > 1: splits x batch column-major m x n f32 matrices (ld m)
    // m * n * batch: floats from one split's partial sums to the next's. Passed, not recomputed
    // in the reduction: that form compiles to 76 registers (three blocks an SM); the forms that
    // derived it took 83-92 or spilled under the launch bound (two blocks an SM: 2-4 us slower).
    int64_t split_stride;
    int m, n, k, batch;
    int splits, split_steps;    // k in `splits` ranges of split_steps k steps (the last shorter)
    bool a_batched, b_batched;  // a batch coordinate for the operand (stride != 0)
    bool early_dependents;      // the GEMM lets the stream's next kernel launch once it starts (launch_typed)
    bool discard_partials;      // the reduction drops the partial sums from L2 once read (split_k_reduce)
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ inline uint32_t shared_address(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ inline void barrier_init(uint64_t *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
}

__device__ inline void barrier_expect_bytes(uint64_t *bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
                 : "memory");
}

__device__ inline void barrier_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}

// Waits until the barrier's phase of this parity has completed.
__device__ inline void barrier_wait(uint64_t *bar, unsigned parity) {
    const uint32_t address = shared_address(bar);
    uint32_t done = 0;
    do {
        asm volatile(
            "{\n"
            ".reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n"
            "}\n"
            : "=r"(done)
            : "r"(address), "r"(parity)
            : "memory");
    } while (!done);
}

// One box of the tensor map at coordinates (x, y) of one matrix (x along the stored
// contiguous dimension) into shared memory; the barrier counts its bytes. Elements past the
// matrix arrive as zeros.
__device__ inline void copy_box(void *dst, const CUtensorMap *map, uint64_t *bar, int x, int y, int matrix) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
        ::"r"(shared_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(matrix),
        "r"(shared_address(bar))
        : "memory");
}

// One operand's tile in shared memory: R rows (along m or n) by 128 bytes of k (64 f16/bf16,
// 32 f32), in the 128-byte swizzle, as TMA writes it and wgmma reads it, for an operand stored
// along k (MN = false) or along its rows (MN = true, 16-bit types only). A slice of 64 rows
// begins 8 KB * slice in both.
//  - k-major: boxes of 128 bytes of k x 128 rows (R rows for a tile of fewer); each row 128
//    bytes, groups of 8 rows 1024 bytes apart (the descriptor's stride offset; its leading
//    offset is unused), an instruction's k step (16 elements, tf32 8) 32 bytes further.
//  - MN-major: boxes of 64 rows x 64 k, 8 KB apart (the leading offset: the next 64 rows);
//    each k a 128-byte row of 64 elements, groups of 8 k 1024 bytes apart (the stride
//    offset), a k step of 16 two such groups further.
template <bool MN>
struct operand_tile {
    template <int R>
    static constexpr int box_rows = MN ? 64 : R >= 128 ? 128 : R;
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

// The accumulators change behind the compiler's back between a wgmma and its wait: these
// empty statements keep it from moving their reads and writes across either.
template <int N>
__device__ inline void fence_accumulators(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <class TC>
__device__ inline TC to_c(float v) {
    if constexpr (std::is_same_v<TC, float>) return v;
    else if constexpr (std::is_same_v<TC, __half>) return __float2half_rn(v);
    else return __float2bfloat16_rn(v);
}

// Four neighbouring elements of C (m .. m + 3) as one access.
template <class TC>
struct alignas(4 * sizeof(TC)) c_quad {
    TC v[4];
};

// x (alpha * acc) + beta * C at m .. m + 3 of a column of C (rows of C: m_end), as one access
// where the four are whole and aligned, else element by element. beta = 0 writes C without
// reading it.
template <class TC>
__device__ inline void store_quad(TC *at, int m, int m_end, float4 x, const c_target &o) {
    float v[4] = {x.x, x.y, x.z, x.w};
    if (o.quads && m + 3 < m_end) {
        c_quad<TC> *quad = reinterpret_cast<c_quad<TC> *>(at);
        if (o.beta != 0.0f) {
            const c_quad<TC> old = *quad;
#pragma unroll
            for (int e = 0; e < 4; ++e) v[e] += o.beta * float(old.v[e]);
        }
        *quad = c_quad<TC>{{to_c<TC>(v[0]), to_c<TC>(v[1]), to_c<TC>(v[2]), to_c<TC>(v[3])}};
        return;
    }
    for (int e = 0; e < 4 && m + e < m_end; ++e) {
        if (o.beta != 0.0f) v[e] += o.beta * float(at[e]);
        at[e] = to_c<TC>(v[e]);
    }
}

// This thread's accumulators of a consumer warpgroup, whose 64 n from n0 by WN m from m0, into
// o: the rows before n_end (the tile's, within C's). Element 4j + 2h + e of the wgmma fragment
// is row (n) 16 warp + lane / 4 + 8h of the 64 and column (m) 8j + 2 (lane % 4) + e of the WN:
// a warp's stores straight from the fragment would write 16 bytes or less of each of 8 columns.
// So each warp passes its 16 rows through its staging (alpha * acc, 32 m at a time), and reads
// them back as 4 neighbouring m a lane, 8 lanes a row: a store instruction writes 4 rows of 32
// contiguous m (whole 32-byte sectors).
template <class TC, int WN, int N>
__device__ void store_tile(const float (&d)[N], float *staging, const c_target &o, const wgmma_params &p, int m0,
                           int n0, int n_end, int matrix) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
    if (n0 + warp * 16 >= n_end) return;  // none of this warp's rows
    float *rows = staging + (threadIdx.x / 32 - 4) * staging_warp;  // warps 4 .. 11 multiply
    TC *c = static_cast<TC *>(o.c) + int64_t(matrix) * o.stride;
#pragma unroll
    for (int part = 0; part < WN / 32; ++part) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
            const int j = 4 * part + jj;
#pragma unroll
            for (int h = 0; h < 2; ++h)
                *reinterpret_cast<float2 *>(rows + (lane / 4 + 8 * h) * staging_row + 8 * jj + 2 * (lane % 4)) =
                    make_float2(o.alpha * d[4 * j + 2 * h], o.alpha * d[4 * j + 2 * h + 1]);
        }
        __syncwarp();
#pragma unroll
        for (int it = 0; it < 4; ++it) {
            const int r = 4 * it + lane / 8, v = lane % 8;
            const int n = n0 + warp * 16 + r, m = m0 + 32 * part + 4 * v;
            if (n < n_end && m < p.m)
                store_quad<TC>(c + int64_t(n) * o.ld + m, m, p.m,
                               *reinterpret_cast<const float4 *>(rows + r * staging_row + 4 * v), o);
        }
        __syncwarp();
    }
}

template <class T, int WN, bool A_MN, bool B_MN, int N>
__device__ inline void wgmma_step(float (&d)[N], uint64_t a, uint64_t b, int accumulate) {
    if constexpr (WN == 64) wgmma_64x64<T, A_MN, B_MN>(d, a, b, accumulate);
    else if constexpr (WN == 128) wgmma_64x128<T, A_MN, B_MN>(d, a, b, accumulate);
    else wgmma_64x256<T, A_MN, B_MN>(d, a, b, accumulate);
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
    return {split, matrix, first_m + (tile % per_group) % group_m, (tile % per_group) / group_m, ks_begin,
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
    unsigned char *base = reinterpret_cast<unsigned char *>(
        (reinterpret_cast<uintptr_t>(raw_shared) + 1023) & ~uintptr_t(1023));
    T *tiles_a = reinterpret_cast<T *>(base);                   // op(B)^T: rows of n
    T *tiles_b = tiles_a + stages * Tiling::stage_elems_a;      // op(A): rows of m
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

    constexpr int bn = Tiling::bn, wn = Tiling::wgmma_n;
    const int tiles_m = (p.m + bm - 1) / bm, tiles_n = (p.n + bn - 1) / bn;
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
                tile_of_b::template copy<bn>(tiles_a + s * Tiling::stage_elems_a, &map_b, &full[s], ks * bk,
                                             at.tn * bn, p.b_batched ? at.matrix : 0);
                tile_of_a::template copy<bm>(tiles_b + s * Tiling::stage_elems_b, &map_a, &full[s], ks * bk,
                                             at.tm * bm, p.a_batched ? at.matrix : 0);
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int group = warpgroup - 1;
    int step = 0;
    for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
        const work_item at = item_of(w, tiles_m, tiles_n, k_steps, p);
        // This group's n and m: a slice of 64 n, or of wn m with split_m.
        const int n0 = at.tn * bn + (Tiling::split_m ? 0 : group * 64);
        const int m0 = at.tm * bm + (Tiling::split_m ? group * wn : 0);
        const int n_end = min(p.n, at.tn * bn + bn);
        // A group whose slice lies past the matrix (n <= 64: decode shapes) has nothing to
        // multiply or store; it only hands the stages back.
        if (n0 >= p.n || m0 >= p.m) {
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
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        fence_accumulators(d);
        barrier_arrive(&empty[(step - 1) % stages]);
        if (p.splits == 1) {
            store_tile<TC, wn>(d, staging, p.out, p, m0, n0, n_end, at.matrix);
        } else {
            const int64_t elements = int64_t(p.m) * p.n;
            const c_target partial{p.partial + at.split * p.split_stride, p.m, elements, 1.0f, 0.0f, p.m % 4 == 0};
            store_tile<float, wn>(d, staging, partial, p, m0, n0, n_end, at.matrix);
        }
    }
#endif
}

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

constexpr int reduce_threads = 256;

// Drops from L2, without writing them back, the lines of partial sums this warp has just read
// in one column: nothing reads them again (the next user of the workspace writes it first).
// Only where every line lies whole in one column (discards_partials): the 8 lanes that read a
// line are then one warp's, and the warp's meeting orders their loads before the discard of
// the line by its first lane.
template <int Q>
__device__ void discard_read_lines(const float *part, const wgmma_params &p) {
    __syncwarp();
    if (threadIdx.x % 8 != 0) return;
    for (int m0 = 4 * int(blockIdx.x * blockDim.x * Q + threadIdx.x); m0 < p.m;
         m0 += 4 * int(gridDim.x * blockDim.x * Q))
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int m = m0 + 4 * reduce_threads * q;
            if (m >= p.m) continue;
            for (int s = 0; s < p.splits; ++s) {
                const size_t line = __cvta_generic_to_global(part + s * p.split_stride + m);
                asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
            }
        }
}

// C = alpha * (the splits' partial sums, added in split order) + beta * C: the same sum in
// the same order on every run, whatever order the blocks ran in. Launched as the GEMM
// kernel's programmatic dependent: it waits for that grid's completion and its memory before
// reading the partial sums. Blocks walk the matrices (z) and columns (y) of C, each thread Q
// quads of neighbouring m of a column, 1024 m apart (the grid's x covers m once), so that no
// thread divides an index: with an element's matrix, column and row found by 64-bit division
// the SMs were the limit (9.3 us at 128x4096x4096 on the H200, 5.9 this way). A thread issues
// its loads of every split (of 8 splits at a time for Q = 2) before adding them, so that its
// reads are in flight at once; with one quad a thread, three blocks an SM keep enough of them
// in flight (at 96 registers, two blocks an SM, 128x4096x4096 took 2-4 us longer).
// launch_typed takes Q = 2 where one quad a thread would make more blocks than run at once.
template <class TC, int Q>
__global__ void __launch_bounds__(reduce_threads, Q == 1 ? 3 : 2) split_k_reduce(wgmma_params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // The stream's next GEMM kernel (a programmatic dependent) may be scheduled once every
    // block here has started: it waits for this grid's completion before touching memory.
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    constexpr int chunk = max_splits / Q;  // splits whose loads are in flight together
    const int64_t per_matrix = int64_t(p.m) * p.n;
    // Every column's quads 16-byte aligned in every split's partial sums.
    const bool vector = p.m % 4 == 0 && p.split_stride % 4 == 0;
    for (int matrix = blockIdx.z; matrix < p.batch; matrix += gridDim.z)
        for (int column = blockIdx.y; column < p.n; column += gridDim.y) {
            const float *part = p.partial + matrix * per_matrix + int64_t(column) * p.m;
            TC *c = static_cast<TC *>(p.out.c) + matrix * p.out.stride + int64_t(column) * p.out.ld;
            // One pass: the grid's x covers m (launch_typed). m is at most 2^22 where k
            // splits (the partial sums fit the 32 MiB workspace), far from int's range.
            for (int m0 = 4 * int(blockIdx.x * blockDim.x * Q + threadIdx.x); m0 < p.m;
                 m0 += 4 * int(gridDim.x * blockDim.x * Q)) {
                float4 sum[Q];
#pragma unroll
                for (int q = 0; q < Q; ++q) sum[q] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                for (int s0 = 0; s0 < (Q == 1 ? 1 : p.splits); s0 += chunk) {
                    float4 v[chunk][Q];
#pragma unroll
                    for (int s = 0; s < chunk; ++s)
#pragma unroll
                        for (int q = 0; q < Q; ++q) {
                            const int m = m0 + 4 * reduce_threads * q;
                            v[s][q] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                            if (s0 + s < p.splits && m < p.m) {
                                const float *at = part + (s0 + s) * p.split_stride + m;
                                if (vector) v[s][q] = __ldcg(reinterpret_cast<const float4 *>(at));
                                else {
                                    v[s][q].x = __ldcg(at);
                                    if (m + 1 < p.m) v[s][q].y = __ldcg(at + 1);
                                    if (m + 2 < p.m) v[s][q].z = __ldcg(at + 2);
                                    if (m + 3 < p.m) v[s][q].w = __ldcg(at + 3);
                                }
                            }
                        }
#pragma unroll
                    for (int s = 0; s < chunk; ++s)
#pragma unroll
                        for (int q = 0; q < Q; ++q)
                            if (s0 + s < p.splits)
                                sum[q] = make_float4(sum[q].x + v[s][q].x, sum[q].y + v[s][q].y,
                                                     sum[q].z + v[s][q].z, sum[q].w + v[s][q].w);
                }
                const float a = p.out.alpha;
#pragma unroll
                for (int q = 0; q < Q; ++q) {
                    const int m = m0 + 4 * reduce_threads * q;
                    if (m < p.m)
                        store_quad<TC>(c + m, m, p.m,
                                       make_float4(a * sum[q].x, a * sum[q].y, a * sum[q].z, a * sum[q].w), p.out);
                }
            }
            if (p.discard_partials) discard_read_lines<Q>(part, p);
        }
#endif
}

// ---- host side ---------------------------------------------------------------------------

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
    static const auto encode =
        reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(cuda::driver_entry_point("cuTensorMapEncodeTiled", 12000));
    return encode;
}

// Per device ordinal below 64, asked once: 0 not asked, else 1 + the answer.
std::atomic<int> sm90_facts[64] = {};

// Compute capability 9.0 exactly: sm_90a code runs on no other device.
bool device_is_sm90(int device) {
    if (device < 0 || device >= 64) return false;
    int v = sm90_facts[device].load(std::memory_order_relaxed);
    if (v == 0) {
        int major = 0, minor = 0;
        const bool ok = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess;
        if (!ok) cudaGetLastError();
        v = 1 + (ok && major == 9 && minor == 0);
        sm90_facts[device].store(v, std::memory_order_relaxed);
    }
    return v == 2;
}

// The device's SMs, 1 where the query fails (a grid of one block is still correct).
int multiprocessors(int device) {
    int sms = 0;
    if (cuda::multiprocessor_count(device, sms) != cudaSuccess || sms <= 0) {
        cudaGetLastError();
        return 1;
    }
    return sms;
}

CUtensorMapDataType tensor_map_type(dtype t) {
    if (t == dtype::bf16) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    return t == dtype::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

// What a tensor map is encoded from: the same inputs give the same map (it holds the address
// and the layout, nothing of the memory itself, so a map stays right for its address and
// layout whatever was freed or allocated there since).
struct map_inputs {
    const void *ptr;
    dtype t;
    bool along_rows;
    int tile_rows;
    int64_t k, rows, ld, stride, matrices;

    bool operator==(const map_inputs &o) const {
        return ptr == o.ptr && t == o.t && along_rows == o.along_rows && tile_rows == o.tile_rows && k == o.k &&
               rows == o.rows && ld == o.ld && stride == o.stride && matrices == o.matrices;
    }
};

// The last maps this thread encoded: a call repeated on the same operands (a loop, a layer
// run again, a benchmark) takes its two maps from here instead of the driver's encoder, a
// host cost every launch would otherwise pay twice.
struct encoded_maps {
    static constexpr int slots = 4;
    map_inputs inputs[slots] = {};
    CUtensorMap maps[slots] = {};
    bool valid[slots] = {};
    int next = 0;  // the slot the next miss replaces
};
thread_local encoded_maps tls_maps;

// One operand (stored column-major with leading dimension ld: `rows` along it when along_rows,
// else k) as boxes of operand_tile's shape for a tile of tile_rows rows: 128 bytes along
// the contiguous dimension.
gemm_status_t encode_operand(CUtensorMap &map, dtype t, const void *ptr, bool along_rows, int tile_rows, int64_t k,
                             int64_t rows, int64_t ld, int64_t stride, int64_t matrices) {
    const map_inputs inputs{ptr, t, along_rows, tile_rows, k, rows, ld, stride, matrices};
    encoded_maps &memo = tls_maps;
    for (int i = 0; i < encoded_maps::slots; ++i)
        if (memo.valid[i] && memo.inputs[i] == inputs) {
            map = memo.maps[i];
            return GEMM_STATUS_SUCCESS;
        }
    PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
    if (!encode) return set_error(GEMM_STATUS_NOT_SUPPORTED, "cuda_tiled: the driver has no cuTensorMapEncodeTiled");
    const cuuint64_t size = dtype_size(t);
    const int64_t inner = along_rows ? rows : k, outer = along_rows ? k : rows;
    const cuuint64_t dims[3] = {cuuint64_t(inner), cuuint64_t(outer), cuuint64_t(matrices)};
    const cuuint64_t strides[2] = {cuuint64_t(ld) * size, cuuint64_t(matrices > 1 ? stride : ld * outer) * size};
    const cuuint32_t box_rows = along_rows ? 64 : tile_rows >= 128 ? 128 : tile_rows;
    const cuuint32_t box[3] = {cuuint32_t(128 / size), box_rows, 1}, element_strides[3] = {1, 1, 1};
    CUresult r = encode(&map, tensor_map_type(t), 3,
                        const_cast<void *>(ptr), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return set_error(GEMM_STATUS_NOT_SUPPORTED,
                         "cuda_tiled: cuTensorMapEncodeTiled refused an operand (error " + std::to_string(int(r)) + ")");
    const int slot = memo.next;
    memo.inputs[slot] = inputs;
    memo.maps[slot] = map;
    memo.valid[slot] = true;
    memo.next = (slot + 1) % encoded_maps::slots;
    return GEMM_STATUS_SUCCESS;
}

template <class T, class TC, class Tiling, bool A_ROWS, bool B_ROWS>
gemm_status_t launch_typed(const CUtensorMap &map_a, const CUtensorMap &map_b, const wgmma_params &params,
                           int device, cudaStream_t stream) {
    auto kernel = wgmma_gemm_kernel<T, TC, Tiling, A_ROWS, B_ROWS>;
    static std::atomic<uint64_t> prepared{0};  // a bit per device ordinal below 64
    const uint64_t bit = uint64_t(1) << (device & 63);
    if (!(prepared.load() & bit)) {
        if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Tiling::smem_bytes);
            e != cudaSuccess)
            return cuda::cuda_status(e, "cuda_tiled: cudaFuncSetAttribute (wgmma kernel)");
        prepared.fetch_or(bit);
    }
    const int64_t tiles = ((params.m + Tiling::bm - 1) / Tiling::bm) * int64_t((params.n + Tiling::bn - 1) / Tiling::bn);
    const int sms = multiprocessors(device);
    const int64_t blocks = std::min<int64_t>(tiles * params.batch * params.splits, sms);
    // Every kernel here waits for its predecessor (griddepcontrol.wait) before touching memory,
    // so each may be launched as the programmatic dependent of the stream's previous kernel:
    //  - The reduction always is, and the GEMM lets it launch as soon as the GEMM starts, so
    //    that its launch overlaps the GEMM's last blocks.
    //  - A GEMM whose grid leaves at most 1/32 of the SMs idle is too, and it lets the next
    //    kernel launch early as well: in a loop of calls its launch and set-up overlap the
    //    previous call's end.
    //  - A smaller grid that does not split k is launched as a dependent but lets the next kernel
    //    launch only at its completion; a smaller grid that splits is launched plainly. Next
    //    kernels launched early onto the SMs a smaller grid leaves idle slowed it down.
    // On the H200 (NOTES.md), bf16 decode shapes called back to back: with 128 blocks on 132
    // SMs a call took up to 1.4 us less launched early; with 112 blocks, from 1.0 us less to
    // 6.4 more; unsplit 112-block grids launched as dependents that let the next kernel launch
    // only at their end, up to 3 us less than launched plainly.
    const bool fills = 32 * blocks >= 31 * int64_t(sms);
    wgmma_params gemm = params;
    gemm.early_dependents = fills || params.splits > 1;
    cudaLaunchAttribute dependent{};
    dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(blocks));
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = Tiling::smem_bytes;
    config.stream = stream;
    config.attrs = &dependent;
    config.numAttrs = fills || params.splits == 1 ? 1 : 0;
    if (cudaError_t e = cudaLaunchKernelEx(&config, kernel, map_a, map_b, gemm);
        e != cudaSuccess || params.splits == 1)
        return cuda::cuda_status(e, "cuda_tiled: wgmma kernel launch");
    // The reduction's blocks: two quads a thread where one would make more blocks than run at
    // once (three an SM). On the H200 (NOTES.md), two quads took 128x4096x4096 and
    // 128x4096x14336 (512 blocks of one quad) 0.2-0.5 us less, and up to 0.6 us more on six
    // split decode shapes of smaller grids; four quads a thread were slower on all eight.
    const int64_t columns = std::min(params.n, 65535), matrices = std::min(params.batch, 65535);
    auto grid_x = [&](int q) { return (int64_t(params.m) + 4 * reduce_threads * q - 1) / (4 * reduce_threads * q); };
    const bool two_quads = grid_x(1) * columns * matrices > 3 * int64_t(sms);
    config.gridDim = dim3(unsigned(grid_x(two_quads ? 2 : 1)), unsigned(columns), unsigned(matrices));
    config.blockDim = dim3(reduce_threads);
    config.dynamicSmemBytes = 0;
    config.numAttrs = 1;
    auto reduce = two_quads ? split_k_reduce<TC, 2> : split_k_reduce<TC, 1>;
    return cuda::cuda_status(cudaLaunchKernelEx(&config, reduce, params), "cuda_tiled: split-k reduction launch");
}

template <class T, class TC, class Tiling>
gemm_status_t launch_ops(const problem &dp, const CUtensorMap &map_a, const CUtensorMap &map_b,
                         const wgmma_params &p, cudaStream_t stream) {
    const bool a_rows = dp.op_a == transpose::n, b_rows = dp.op_b != transpose::n;
    if constexpr (Tiling::bn < 64) {  // op(B)^T stored along k (wgmma_narrow_refusal)
        return a_rows ? launch_typed<T, TC, Tiling, true, false>(map_a, map_b, p, dp.device, stream)
                      : launch_typed<T, TC, Tiling, false, false>(map_a, map_b, p, dp.device, stream);
    } else {
        if (a_rows)
            return b_rows ? launch_typed<T, TC, Tiling, true, true>(map_a, map_b, p, dp.device, stream)
                          : launch_typed<T, TC, Tiling, true, false>(map_a, map_b, p, dp.device, stream);
        return b_rows ? launch_typed<T, TC, Tiling, false, true>(map_a, map_b, p, dp.device, stream)
                      : launch_typed<T, TC, Tiling, false, false>(map_a, map_b, p, dp.device, stream);
    }
}

// f32 (TF32) operands are both stored along k (wgmma_refusal), C in f32; no TF32 kernel has
// tiles of 16 columns or of 64 rows (the 64 x 128 tiles were timed in bf16 only).
template <int BM, int BN, int STAGES>
gemm_status_t launch_types(const problem &dp, const CUtensorMap &map_a, const CUtensorMap &map_b,
                           const wgmma_params &p, cudaStream_t stream) {
    using half_tiling = wgmma_tiling<BM, BN, STAGES, 2>;
    if (dp.ab_type == dtype::f32) {
        if constexpr (BN >= 64 && BM >= 128)
            return launch_typed<float, float, wgmma_tiling<BM, BN, STAGES, 4>, false, false>(map_a, map_b, p,
                                                                                             dp.device, stream);
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "cuda_tiled: no TF32 kernel with tiles of 16 columns or 64 rows");
    }
    if (dp.ab_type == dtype::f16)
        return dp.c_type == dtype::f32 ? launch_ops<__half, float, half_tiling>(dp, map_a, map_b, p, stream)
                                       : launch_ops<__half, __half, half_tiling>(dp, map_a, map_b, p, stream);
    return dp.c_type == dtype::f32 ? launch_ops<__nv_bfloat16, float, half_tiling>(dp, map_a, map_b, p, stream)
                                   : launch_ops<__nv_bfloat16, __nv_bfloat16, half_tiling>(dp, map_a, map_b, p, stream);
}

// The configurations: 128 x 128 tiles in 6 stages of 32 KB, 256 x 128 in 4 of 48 KB (each
// consumer thread then holds 128 accumulators), 64 x 128 in 8 of 24 KB (8 KB op(A)), 256 x 64
// in 5 of 40 KB, 32 KB of which op(A), 128 x 64 in 8 of 24 KB (16 KB op(A)), 256 x 16 in 6 of
// 34 KB (32 KB op(A)) and 128 x 16 in 11 of 18 KB; the same bytes per stage for every input type.
constexpr int stages_of(int bm, int bn) {
    if (bn == 16) return bm == 128 ? 11 : 6;
    if (bn == 64) return bm == 128 ? 8 : 5;
    return bm == 64 ? 8 : bm == 128 ? 6 : 4;
}

// The k of one stage: 128 bytes of the input type.
int stage_k(dtype ab) { return int(128 / dtype_size(ab)); }

// A work item's cost beyond its k steps, in k steps: filling the pipeline and storing the
// tile (or its partial sums).
constexpr int64_t item_overhead_steps = 4;
// A split's own cost beyond its items, in k steps: the reduction kernel's launch and its wait
// for the GEMM (k_splits adds the partial sums written and read back, as the k steps whose
// operand bytes they equal on each SM). Without it the 128x128 twin split 1024^3 bf16 in 2
// (12 k steps a block against 20) and took 21.0 us on the H200, the unsplit kernel 10.9.
constexpr int64_t split_overhead_steps = 8;

// How many ranges of k to split dp into, for `tiles` tiles of C (all matrices) of bm x bn on
// `sms` SMs: the count whose busiest SM has the fewest k steps plus overheads to run (items
// are spread evenly over the SMs), the fewest such; only counts whose partial sums fit the
// workspace.
int k_splits(const problem &dp, int64_t tiles, int bm, int bn, int sms, int k_steps) {
    const int64_t partial_bytes = dp.m * dp.n * dp.batch * int64_t(sizeof(float));
    const int64_t stage_bytes = int64_t(bm + bn) * 128;  // a k step's operands, any input type
    auto cost = [&](int64_t splits) {
        const int64_t steps = (k_steps + splits - 1) / splits;
        const int64_t items = tiles * ((k_steps + steps - 1) / steps);
        const int64_t busiest = (items + sms - 1) / sms * (steps + item_overhead_steps);
        if (splits == 1) return busiest;
        return busiest + split_overhead_steps + 2 * splits * partial_bytes / (int64_t(sms) * stage_bytes);
    };
    int best = 1;
    for (int splits = 2; splits <= std::min(k_steps, max_splits); ++splits) {
        if (splits * partial_bytes > int64_t(cuda::device_context::workspace_bytes)) break;
        if (cost(splits) < cost(best)) best = splits;
    }
    return best;
}

// Whether split_k_reduce drops dp's partial sums (`bytes` of them at `partial`) from L2 once
// read: where every 128-byte line lies whole in one column (m % 32 == 0, the sums 128-byte
// aligned), and where it pays. Left dirty in L2, the partial sums go back to memory when
// later copies evict them, taking bandwidth from the next GEMM's operands. On the H200
// (NOTES.md), bf16 128x4096x14336 (8 MB of partial sums) took 1.0 us a call less with the
// discard, the shapes of 1-2 MB and k = 14336 0.2-0.3 less; where the sums were smaller than
// 1 MiB, the pass gained nothing or cost 0.2-0.4 us; where the operands and the sums fit in L2,
// the next call may rewrite the lines before they leave it. The bound is half of L2, not all of
// it: 128x4096x4096 (41 MB with its sums; L2 50 MB) took 0.9-1.0 us a call less with the
// discard on the H100, 0.0-0.2 us more on the H200. Hence the rule.
bool discards_partials(const problem &dp, std::size_t bytes, const void *partial) {
    if (dp.m % 32 != 0 || reinterpret_cast<std::uintptr_t>(partial) % 128 != 0 || bytes < (std::size_t(1) << 20))
        return false;
    const std::size_t size = dtype_size(dp.ab_type), k = std::size_t(dp.k);
    const std::size_t operands = std::size_t(dp.m) * k * size * std::size_t(dp.stride_a == 0 ? 1 : dp.batch) +
                                 std::size_t(dp.n) * k * size * std::size_t(dp.stride_b == 0 ? 1 : dp.batch);
    int l2 = 0;
    if (cuda::l2_cache_bytes(dp.device, l2) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return operands + bytes > std::size_t(l2) / 2;
}

// The TF32 kernels read both operands along k (wgmma has no transpose for tf32): an f32
// operand stored along m or n (A op N, B op T) is first copied, transposed, into the thread's
// scratch buffer, as an operand stored along k with k rounded up to 4 elements (16 bytes, what
// TMA needs) as its leading dimension.
bool copied_a(const problem &dp) { return dp.ab_type == dtype::f32 && dp.op_a == transpose::n; }
bool copied_b(const problem &dp) { return dp.ab_type == dtype::f32 && dp.op_b != transpose::n; }
int64_t copy_ld(int64_t k) { return (k + 3) / 4 * 4; }

// The bytes of one operand's copy (rows along m or n): a matrix per batch entry, one when the
// batch shares it (stride 0); rounded up to 256 so that the next copy starts aligned. In
// floating point, so that no shape overflows it; exact for every size the refusal lets
// through (at most max_copy_bytes, far below 2^53).
double operand_copy_bytes(int64_t rows, int64_t k, int64_t batch, int64_t stride) {
    const double ld = std::ceil(double(k) / 4) * 4;  // copy_ld(k)
    return std::ceil(ld * double(rows) * double(stride == 0 ? 1 : batch) * sizeof(float) / 256) * 256;
}

double copy_bytes(const problem &dp) {
    return (copied_a(dp) ? operand_copy_bytes(dp.m, dp.k, dp.batch, dp.stride_a) : 0.0) +
           (copied_b(dp) ? operand_copy_bytes(dp.n, dp.k, dp.batch, dp.stride_b) : 0.0);
}

// The copies may take this much of the device's memory per call.
constexpr double max_copy_bytes = double(1 << 30);

// Enqueues dst = the transpose of one operand (rows x k, column-major, ld, stride) as k x rows
// with leading dimension copy_ld(k).
gemm_status_t transpose_operand(const void *src, int64_t ld, int64_t stride, int64_t rows, int64_t k,
                                int64_t batch, float *dst, cudaStream_t stream) {
    const int64_t matrices = stride == 0 ? 1 : batch;
    if (rows == 0 || k == 0 || matrices == 0) return GEMM_STATUS_SUCCESS;
    const dim3 grid(unsigned((rows + transpose_tile - 1) / transpose_tile),
                    unsigned(std::min<int64_t>((k + transpose_tile - 1) / transpose_tile, 65535)),
                    unsigned(std::min<int64_t>(matrices, 65535)));
    transpose_f32<<<grid, dim3(32, 8), 0, stream>>>(static_cast<const float *>(src), ld, stride, dst, copy_ld(k),
                                                    copy_ld(k) * rows, int(rows), int(k), int(matrices));
    return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: f32 operand copy along k");
}

}  // namespace

bool runs_on_sm90(const problem &dp) {
    // Host problems (and their offload shapes, device -1) are judged on the calling thread's
    // current device, where they run unless GEMM_OFFLOAD_DEVICES names others.
    int device = dp.space == memory_space::host ? -1 : dp.device;
    if (device < 0 && cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        device = -1;
    }
    return device_is_sm90(device);
}

std::string wgmma_id(dtype ab, int bm, int bn, bool split_k) {
    return std::string("wgmma_") + (ab == dtype::f32 ? "tf32" : dtype_name(ab)) + "_" + std::to_string(bm) + "x" +
           std::to_string(bn) + "x" + std::to_string(stage_k(ab)) + "_s" + std::to_string(stages_of(bm, bn)) +
           (split_k ? "_splitk" : "");
}

std::string wgmma_refusal(const problem &dp) {
    if (dp.ab_type == dtype::f32) {
        if (dp.c_type != dtype::f32 || dp.compute_type != dtype::f32) return "f32 inputs with C in another type";
        if (!settings().allow_tf32) return "f32 unless TF32 is allowed (GEMM_ALLOW_TF32=1)";
        if (copy_bytes(dp) > max_copy_bytes)
            return "f32 operands stored along m or n whose copies along k would exceed 1 GiB";
    } else {
        const bool half = dp.ab_type == dtype::f16 || dp.ab_type == dtype::bf16;
        if (!half || (dp.c_type != dp.ab_type && dp.c_type != dtype::f32) || dp.compute_type != dtype::f32)
            return "types other than f16/bf16 inputs with C in their type or f32";
    }
    // What the kernel reads directly (an operand it copies first has neither rule).
    const std::size_t size = dtype_size(dp.ab_type);
    const bool direct_a = !copied_a(dp), direct_b = !copied_b(dp);
    if ((direct_a && !aligned_16_bytes(dp.a, dp.lda, dp.stride_a, dp.batch, size)) ||
        (direct_b && !aligned_16_bytes(dp.b, dp.ldb, dp.stride_b, dp.batch, size)))
        return "A or B not 16-byte aligned (base, leading dimension, batch stride)";
    if (dp.batch > 1 && ((direct_a && dp.stride_a != 0 && dp.stride_a < dp.lda * dp.a_cols()) ||
                         (direct_b && dp.stride_b != 0 && dp.stride_b < dp.ldb * dp.b_cols())))
        return "batch matrices of A or B that overlap";
    if (dp.m > INT_MAX || dp.n > INT_MAX || dp.k > INT_MAX || dp.batch > INT_MAX ||
        ((dp.m + 127) / 128) * ((dp.n + 63) / 64) > INT_MAX ||
        ((dp.m + 63) / 64) * ((dp.n + 127) / 128) > INT_MAX)
        return "more than 2^31 - 1 tiles or elements along one dimension";
    if (!runs_on_sm90(dp))
        return "a device of compute capability other than 9.0 (the kernel is built for sm_90a)";
    return "";
}

std::string wgmma_narrow_refusal(const problem &dp) {
    if (dp.ab_type != dtype::f16 && dp.ab_type != dtype::bf16)
        return "types other than f16/bf16 inputs with C in their type or f32";
    if (dp.op_b != transpose::n)
        return "the operand along C's 16 columns not stored along k (column-major: op(B) = N; row-major: op(A) = N)";
    if (((dp.m + 255) / 256) * ((dp.n + 15) / 16) > INT_MAX) return "more than 2^31 - 1 tiles";
    return wgmma_refusal(dp);
}

namespace {

// dp, whose operands the kernels read as they are, through tensor maps.
gemm_status_t launch_direct(const problem &dp, int bm, int bn, bool split_k, cudaStream_t stream) {
    CUtensorMap map_a{}, map_b{};
    gemm_status_t s = encode_operand(map_a, dp.ab_type, dp.a, dp.op_a == transpose::n, bm, dp.k, dp.m, dp.lda,
                                     dp.stride_a, dp.stride_a == 0 ? 1 : dp.batch);
    if (s == GEMM_STATUS_SUCCESS)
        s = encode_operand(map_b, dp.ab_type, dp.b, dp.op_b != transpose::n, bn, dp.k, dp.n, dp.ldb, dp.stride_b,
                           dp.stride_b == 0 ? 1 : dp.batch);
    if (s != GEMM_STATUS_SUCCESS) return s;
    wgmma_params p{};
    const std::size_t c_size = dtype_size(dp.c_type);
    const bool quads = reinterpret_cast<std::uintptr_t>(dp.c) % (4 * c_size) == 0 && dp.ldc % 4 == 0 &&
                       (dp.batch == 1 || dp.stride_c % 4 == 0);
    p.out = c_target{dp.c, dp.ldc, dp.stride_c, float(dp.alpha), float(dp.beta), quads};
    p.m = int(dp.m), p.n = int(dp.n), p.k = int(dp.k), p.batch = int(dp.batch);
    p.a_batched = dp.stride_a != 0;
    p.b_batched = dp.stride_b != 0;
    const int k_steps = int((dp.k + stage_k(dp.ab_type) - 1) / stage_k(dp.ab_type));
    p.splits = 1;
    p.split_steps = k_steps;
    if (split_k) {
        const int64_t tiles = (dp.m + bm - 1) / bm * ((dp.n + bn - 1) / bn) * dp.batch;
        const int splits = k_splits(dp, tiles, bm, bn, multiprocessors(dp.device), k_steps);
        p.split_steps = (k_steps + splits - 1) / splits;
        p.splits = (k_steps + p.split_steps - 1) / p.split_steps;
    }
    auto launch = [&] {
        if (bn == 16)
            return bm == 128 ? launch_types<128, 16, stages_of(128, 16)>(dp, map_a, map_b, p, stream)
                             : launch_types<256, 16, stages_of(256, 16)>(dp, map_a, map_b, p, stream);
        if (bn == 64)
            return bm == 128 ? launch_types<128, 64, stages_of(128, 64)>(dp, map_a, map_b, p, stream)
                             : launch_types<256, 64, stages_of(256, 64)>(dp, map_a, map_b, p, stream);
        if (bm == 64) return launch_types<64, 128, stages_of(64, 128)>(dp, map_a, map_b, p, stream);
        return bm == 128 ? launch_types<128, 128, stages_of(128, 128)>(dp, map_a, map_b, p, stream)
                         : launch_types<256, 128, stages_of(256, 128)>(dp, map_a, map_b, p, stream);
    };
    if (p.splits == 1) return launch();
    // The partial sums live in the thread's workspace for this device, held from the GEMM's
    // launch to the reduction's.
    cuda::device_context *context = nullptr;
    void *workspace = nullptr;
    if (gemm_status_t s = cuda::context_for(dp.device, context); s != GEMM_STATUS_SUCCESS) return s;
    p.split_stride = dp.m * dp.n * dp.batch;
    const std::size_t bytes = std::size_t(p.splits) * std::size_t(p.split_stride) * sizeof(float);
    if (gemm_status_t s = context->acquire_workspace(stream, bytes, workspace); s != GEMM_STATUS_SUCCESS) return s;
    p.partial = static_cast<float *>(workspace);
    p.discard_partials = discards_partials(dp, bytes, workspace);
    const gemm_status_t launched = launch();
    const gemm_status_t released = context->release_workspace(stream, workspace);
    return launched != GEMM_STATUS_SUCCESS ? launched : released;
}

}  // namespace

gemm_status_t launch_wgmma(const problem &dp, int bm, int bn, bool split_k, cudaStream_t stream) {
    if (std::string why = bn < 64 ? wgmma_narrow_refusal(dp) : wgmma_refusal(dp); !why.empty())
        return set_error(GEMM_STATUS_NOT_SUPPORTED,
                         "cuda_tiled: " + wgmma_id(dp.ab_type, bm, bn, split_k) + " refuses " + why);
    if (!copied_a(dp) && !copied_b(dp)) return launch_direct(dp, bm, bn, split_k, stream);
    // f32 with an operand stored along m or n: the kernel reads its copy along k, held in the
    // thread's scratch buffer from the copies' launch to the GEMM's.
    cuda::device_context *context = nullptr;
    void *scratch = nullptr;
    if (gemm_status_t s = cuda::context_for(dp.device, context); s != GEMM_STATUS_SUCCESS) return s;
    if (gemm_status_t s = context->acquire_scratch(stream, std::size_t(copy_bytes(dp)), scratch);
        s != GEMM_STATUS_SUCCESS)
        return s;
    problem direct = dp;
    float *next = static_cast<float *>(scratch);
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    if (copied_a(dp)) {
        s = transpose_operand(dp.a, dp.lda, dp.stride_a, dp.m, dp.k, dp.batch, next, stream);
        direct.a = next;
        direct.op_a = transpose::t;
        direct.lda = copy_ld(dp.k);
        direct.stride_a = dp.stride_a == 0 ? 0 : copy_ld(dp.k) * dp.m;
        next += int64_t(operand_copy_bytes(dp.m, dp.k, dp.batch, dp.stride_a)) / int64_t(sizeof(float));
    }
    if (s == GEMM_STATUS_SUCCESS && copied_b(dp)) {
        s = transpose_operand(dp.b, dp.ldb, dp.stride_b, dp.n, dp.k, dp.batch, next, stream);
        direct.b = next;
        direct.op_b = transpose::n;
        direct.ldb = copy_ld(dp.k);
        direct.stride_b = dp.stride_b == 0 ? 0 : copy_ld(dp.k) * dp.n;
    }
    if (s == GEMM_STATUS_SUCCESS) s = launch_direct(direct, bm, bn, split_k, stream);
    const gemm_status_t released = context->release_scratch(stream, scratch);
    return s != GEMM_STATUS_SUCCESS ? s : released;
}

}  // namespace gemm::cuda_tiled
