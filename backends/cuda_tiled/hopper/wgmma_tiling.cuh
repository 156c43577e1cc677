// wgmma_tiling.cuh: the Hopper kernel's block (warpgroups, shared-memory layout of a tile's
// stages) and the parameters a launch passes it, shared by the kernels and their launches.
#pragma once

#include <cstdint>

namespace gemm::cuda_tiled::hopper {

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
// f16/bf16, 32 f32 (TF32) or 128 e4m3/e5m2 elements.
template <int BM, int BN, int STAGES, int ELEMENT_BYTES> struct wgmma_tiling {
    static constexpr int bm = BM;
    static constexpr int bn = BN;  // rows of the wgmma A operand: n
    static constexpr int bk = 128 / ELEMENT_BYTES;
    static constexpr int wgmma_k = 32 / ELEMENT_BYTES;  // the k of one instruction: 16, tf32 8, FP8 32
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

// Where a block's tile goes: C, or with split k a matrix of f32 partial sums.
struct c_target {
    void *c;
    int64_t ld, stride;  // leading dimension, batch stride
    float alpha, beta;
    bool quads;  // groups of 4 elements from an m divisible by 4 are aligned to their size
};

struct wgmma_params {
    c_target out;    // C
    float *partial;  // with splits > 1: splits x batch column-major m x n f32 matrices (ld m)
    // m * n * batch: floats from one split's partial sums to the next's. Passed, not recomputed
    // in the reduction: that form keeps the reduction within three blocks an SM, the forms that
    // derived it did not (NOTES.md, Split-k reduction).
    int64_t split_stride;
    int m, n, k, batch;
    int splits, split_steps;    // k in `splits` ranges of split_steps k steps (the last shorter)
    bool a_batched, b_batched;  // a batch coordinate for the operand (stride != 0)
    bool early_dependents;      // the GEMM lets the stream's next kernel launch once it starts (launch_typed)
    bool discard_partials;      // the reduction drops the partial sums from L2 once read (split_k_reduce)
    // FP8: the per-tensor scales of op(A) and op(B) and the output scale (device pointers,
    // nullptr for 1), and where max |alpha * acc + beta * C| goes (nullptr: not computed).
    const float *a_scale, *b_scale, *d_scale;
    float *amax;
    // FP8 block scales (nullptr: none), one per block of 128 k: a_block's of each m, ld_a_block
    // floats from one block of k to the next (or a_per_128: of each 128 m, the block of k
    // fastest, ld_a_block floats from one block of 128 m to the next); b_block's likewise for n
    // (dispatch/problem.hpp, operand_scale).
    const float *a_block, *b_block;
    int64_t ld_a_block, ld_b_block;
    bool a_per_128, b_per_128;
    // A masked batch's matrix (problem::row_count; FP8, batch 1, k unsplit): only C's first
    // *row_count rows (m), or columns (n) where row_count_on_n, are computed; nullptr: all.
    const int32_t *row_count;
    bool row_count_on_n;
};

}  // namespace gemm::cuda_tiled::hopper
