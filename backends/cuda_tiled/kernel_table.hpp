// kernel_table.hpp: the table of cuda_tiled's kernel configurations, the one source of their ids,
// stage counts, launches, refusals and the default rule's candidates.
#pragma once

#include <cstddef>
#include <iterator>

namespace gemm::cuda_tiled {

// The kernel families, each in its folder: simt/ (textbook and register_tiled), wmma/, hopper/
// (wgmma), skinny/.
enum class kernel_family { textbook, register_tiled, wmma, wgmma, skinny };

// The input types a configuration computes, a bit each (f32 on wgmma is TF32; e4m3 and e5m2,
// FP8, with A and B of one type).
namespace types {
constexpr unsigned f32 = 1, f64 = 2, f16 = 4, bf16 = 8, e4m3 = 16, e5m2 = 32;
constexpr unsigned fp8 = e4m3 | e5m2;
}  // namespace types

// How the operands must be stored for the kernel to read them (canonical column-major).
//  - as_stored: any op pair.
//  - b_along_k: op(B)^T stored along k (op(B) = N). The Hopper kernel copies an operand stored
//    along its rows in boxes of 64 rows, so a tile of fewer columns of C needs op(B)^T along k.
//  - along_k: op(A) stored along k (op(A) = T); the skinny kernels read op(B), at most 32
//    columns, along k (N) or along n (T), a compile-time flag chosen at launch.
//  - a_along_m: op(A) stored along m (op(A) = N); op(B) as along_k's.
enum class operand_form { as_stored, b_along_k, along_k, a_along_m };

// One line of the table: a kernel of `family`, for each input type in `types`, computing C in
// block tiles of bm rows by bn columns.
//  - bk: the k of a stage (register_tiled); the wgmma kernel's stage is 128 bytes of k (one row
//    of the 128-byte swizzle: 64 f16/bf16, 32 tf32, 128 e4m3/e5m2), so its lines leave bk 0.
//  - tm x tn: a thread's tile of C (register_tiled).
//  - stages: the stages of operands in shared memory (register_tiled, wgmma).
//  - split_k: the kernel may split k into ranges whose f32 partial sums a second kernel adds
//    (wgmma), where the tiles alone would leave SMs idle.
//  - by_size: a candidate of run("")'s size rule for f32 and f64 (default_choice.cpp).
// A wgmma line's stages fill at most the shared memory an SM gives a block
// (hopper/wgmma_launch.cu checks it when it compiles the line).
struct kernel_config {
    kernel_family family;
    unsigned types;
    int bm, bn;
    int bk;
    int tm, tn;
    int stages;
    operand_form operands;
    bool split_k;
    bool by_size;

    constexpr bool computes(unsigned type_bit) const { return (types & type_bit) != 0; }
};

// The lines of each family, with the fields it reads.
namespace line {
constexpr kernel_config textbook(unsigned types, int tile) {
    return {kernel_family::textbook, types, tile, tile, tile, 0, 0, 0, operand_form::as_stored, false, false};
}
constexpr kernel_config register_tiled(unsigned types, int bm, int bn, int bk, int tm, int tn, int stages,
                                       bool by_size) {
    return {kernel_family::register_tiled, types, bm, bn, bk, tm, tn, stages, operand_form::as_stored, false, by_size};
}
constexpr kernel_config wmma(unsigned types, int bm, int bn) {
    return {kernel_family::wmma, types, bm, bn, 0, 0, 0, 0, operand_form::as_stored, false, false};
}
constexpr kernel_config wgmma(unsigned types, int bm, int bn, int stages, bool split_k,
                              operand_form operands = operand_form::as_stored) {
    return {kernel_family::wgmma, types, bm, bn, 0, 0, 0, stages, operands, split_k, false};
}
constexpr kernel_config skinny(unsigned types, int bm, int bn, operand_form operands = operand_form::along_k) {
    return {kernel_family::skinny, types, bm, bn, 0, 0, 0, 0, operands, false, false};
}
}  // namespace line

constexpr bool whole_k = false, split_k = true;
constexpr bool by_size = true, by_id_only = false;

// Why each line is here, with its evidence in NOTES.md (Register-tiled configurations; Textbook
// kernels in the tuner; Batches: the wmma kernel for groups of few; Hopper default: 128x128 and
// 256x128; Decode: tiles of 64 columns; Decode: tiles of 16 columns; Decode: 64x128 tiles;
// Skinny kernel; Skinny kernels of 16 and 32 columns; Stages; TF32). In short:
//  - textbook: the baseline the register tiling is measured against; offered to the tuner only
//    for small problems (cuda_tiled.cpp).
//  - register_tiled: 128x128 with 8x8 per thread reaches the FP32 pipes' limit on big problems;
//    BK 16 halves the barriers per FMA, BK 8 is the classic 25 KB point; 128x64 and 64x128 give
//    twice the blocks for problems with too few 128x128 tiles to fill the SMs; 64x64 serves small
//    problems (4x4 trades intensity for 256 threads); f64 holds 8x4 a thread (a double
//    accumulator costs two registers). Each line is two ids: the vector one (_a4 f32, _a2 f64:
//    16-byte copies) and its scalar twin (_a1), which runs anywhere.
//  - wmma: f16/bf16 on every device of compute capability 8.0 or later; its launch also serves
//    a batch of GEMMs of their own shapes (run_batch).
//  - wgmma (compute capability 9.0): 128x128 for most sizes, 256x128 for the largest (each
//    consumer thread then holds 128 accumulators), the 128x128 twin that splits k for shapes
//    with too few tiles to fill the SMs, 64x128 splitting k for C of 128 columns with too few
//    128x128 tiles to fill half of them, 256x64 and 128x64 splitting k for C with few columns
//    (a stage mostly op(A), the streamed operand), 256x16 and 128x16 for C of at most 16
//    columns. TF32 (f32 with GEMM_ALLOW_TF32=1) only on the tiles it was measured on. A stage
//    holds (bm + bn) x 128 bytes whatever the input type; the stages fill what shared memory
//    gives a block.
//  - wgmma FP8 (e4m3, e5m2: lines of their own, whose kernel adds the tensor cores' partial
//    sums of each stage of 128 k into f32 registers, times the block scales where there
//    are): both operands stored along k, whole k.
//    128x128, the default, and 256x64 (both consumers on the same 64 columns of C, 128 rows
//    each), which holds twice the op(A) a stage for C of few columns. A consumer thread holds
//    its accumulators and as many partial sums: 64 + 64 at 128 rows of C, so no line gives a
//    consumer 256 rows (128 + 128 registers, more than the 232 it has). No measurements yet
//    (NOTES.md, FP8 kernel).
//  - skinny (compute capability 9.0): C of at most 8, 16 or 32 columns with both operands
//    stored along k (decode: X W^T for up to 32 rows of X), op(A) read straight into tensor-core
//    registers, in blocks of bm rows; the _nn lines for op(A) stored along m (decode: X W with
//    W stored (in, out)), a lane's loads a run of rows at one k, in blocks of 16, 32 or 64 rows.
//    Each line also computes the mirror of C with at most bn rows, C^T = op(B)^T op(A)^T, where
//    that is its form (skinny/skinny_view.hpp), storing C^T row-major, and reads the narrow
//    operand stored along its short side too (op(B) = T; mirrored op(A) = N): the same ids.
//  - skinny FP8 (e4m3, e5m2): the along_k lines' tiles for the TN form (FP8 decode, the form
//    cuBLASLt's FP8 takes), mma.sync m16n8k32 with each chunk's sums added into f32, scales per
//    tensor. Tuner candidates and ids; not the default rule's until measured (NOTES.md, FP8
//    kernel). The chunk sums take registers: 32x8 needs 138 a thread (one block an SM; held to
//    128 it spills 32 bytes), the others 128.
// Adding a configuration is one line here; the ids, launches and refusals follow from it.
inline constexpr kernel_config kernel_table[] = {
    line::textbook(types::f32 | types::f64, 16),
    line::textbook(types::f32 | types::f64, 32),
    //                   types        bm   bn  bk tm tn stages
    line::register_tiled(types::f32, 128, 128, 16, 8, 8, 3, by_size),
    line::register_tiled(types::f32, 128, 128, 8, 8, 8, 3, by_id_only),
    line::register_tiled(types::f32, 128, 64, 16, 8, 8, 3, by_size),
    line::register_tiled(types::f32, 128, 64, 8, 8, 8, 3, by_id_only),
    line::register_tiled(types::f32, 64, 128, 8, 8, 8, 3, by_id_only),
    line::register_tiled(types::f32, 64, 64, 16, 8, 4, 3, by_size),
    line::register_tiled(types::f32, 64, 64, 8, 8, 4, 3, by_id_only),
    line::register_tiled(types::f32, 64, 64, 16, 4, 4, 3, by_id_only),
    line::register_tiled(types::f64, 128, 64, 8, 8, 4, 3, by_size),
    line::register_tiled(types::f64, 64, 64, 8, 8, 4, 3, by_size),
    line::register_tiled(types::f64, 64, 64, 8, 4, 4, 3, by_id_only),
    line::wmma(types::f16 | types::bf16, 64, 64),
    //          types                                bm   bn stages
    line::wgmma(types::f16 | types::bf16 | types::f32, 128, 128, 6, whole_k),
    line::wgmma(types::f16 | types::bf16 | types::f32, 256, 128, 4, whole_k),
    line::wgmma(types::f16 | types::bf16 | types::f32, 128, 128, 6, split_k),
    line::wgmma(types::f16 | types::bf16 | types::f32, 256, 64, 5, split_k),
    line::wgmma(types::f16 | types::bf16 | types::f32, 128, 64, 8, split_k),
    line::wgmma(types::f16 | types::bf16, 64, 128, 8, split_k),
    line::wgmma(types::f16 | types::bf16, 256, 16, 6, split_k, operand_form::b_along_k),
    line::wgmma(types::f16 | types::bf16, 128, 16, 11, split_k, operand_form::b_along_k),
    line::wgmma(types::fp8, 128, 128, 6, whole_k, operand_form::along_k),
    line::wgmma(types::fp8, 256, 64, 5, whole_k, operand_form::along_k),
    //           types                 bm  bn
    line::skinny(types::f16 | types::bf16, 16, 8),
    line::skinny(types::f16 | types::bf16, 32, 8),
    line::skinny(types::f16 | types::bf16, 16, 16),
    line::skinny(types::f16 | types::bf16, 16, 32),
    line::skinny(types::f16 | types::bf16, 64, 8, operand_form::a_along_m),
    line::skinny(types::f16 | types::bf16, 32, 8, operand_form::a_along_m),
    line::skinny(types::f16 | types::bf16, 16, 8, operand_form::a_along_m),
    line::skinny(types::f16 | types::bf16, 64, 16, operand_form::a_along_m),
    line::skinny(types::f16 | types::bf16, 32, 16, operand_form::a_along_m),
    line::skinny(types::f16 | types::bf16, 16, 16, operand_form::a_along_m),
    line::skinny(types::f16 | types::bf16, 64, 32, operand_form::a_along_m),
    line::skinny(types::f16 | types::bf16, 32, 32, operand_form::a_along_m),
    line::skinny(types::f16 | types::bf16, 16, 32, operand_form::a_along_m),
    line::skinny(types::fp8, 16, 8),
    line::skinny(types::fp8, 32, 8),
    line::skinny(types::fp8, 16, 16),
    line::skinny(types::fp8, 16, 32),
};

constexpr std::size_t kernel_count = std::size(kernel_table);

// The wmma line: the kernel has one tile, which the table must name once.
constexpr kernel_config wmma_config() {
    for (const kernel_config &c : kernel_table)
        if (c.family == kernel_family::wmma) return c;
    return {};
}

// The rules every line keeps, checked where the table compiles.
constexpr bool line_is_consistent(const kernel_config &c) {
    // A wgmma tile of fewer than 64 columns copies op(B)^T along k only (operand_form).
    if (c.family == kernel_family::wgmma && c.bn < 64 && c.operands != operand_form::b_along_k) return false;
    // The wgmma kernel's two consumer warpgroups take 64 columns of C each (bn 128), or share
    // bn <= 64 columns and take half the rows each: one instruction covers 64, 128 or 256 rows.
    if (c.family == kernel_family::wgmma &&
        !(c.bn == 128 ? c.bm == 64 || c.bm == 128 || c.bm == 256 : c.bn <= 64 && (c.bm == 128 || c.bm == 256)))
        return false;
    // An FP8 wgmma line reads both operands along k (the FP8 instructions have no transpose
    // flags), does not split k (its scales and amax are the GEMM kernel's epilogue), computes no
    // other type (its kernel promotes partial sums) and gives a consumer at most 128 rows of C
    // (its accumulators and partial sums: 2 x 64 registers).
    if (c.family == kernel_family::wgmma && (c.types & types::fp8) != 0 &&
        (c.types != (c.types & types::fp8) || c.operands != operand_form::along_k || c.split_k ||
         (c.bn == 128 ? c.bm : c.bm / 2) > 128))
        return false;
    // The skinny kernel's block is tiles of 16 rows by pieces of 8 columns, a warp for each piece;
    // it reads op(A) along k.
    if (c.family == kernel_family::skinny && c.operands == operand_form::along_k &&
        (c.bm % 16 != 0 || c.bn % 8 != 0 || (c.bm / 16) * (c.bn / 8) > 8))
        return false;
    // The along-m kernel's lane loads a run of 2, 4 or 8 rows (1, 2 or 4 tiles of 16 a block) for
    // C of 1, 2 or 4 pieces of 8 columns.
    if (c.family == kernel_family::skinny && c.operands == operand_form::a_along_m &&
        ((c.bm != 16 && c.bm != 32 && c.bm != 64) || (c.bn != 8 && c.bn != 16 && c.bn != 32)))
        return false;
    if (c.family == kernel_family::skinny && c.operands != operand_form::along_k &&
        c.operands != operand_form::a_along_m)
        return false;
    // An FP8 skinny line reads both operands along k (mma.sync m16n8k32 on 16-byte loads) and
    // computes no other type (its kernel adds each chunk's sums into f32).
    if (c.family == kernel_family::skinny && (c.types & types::fp8) != 0 &&
        (c.types != (c.types & types::fp8) || c.operands != operand_form::along_k))
        return false;
    return true;
}

constexpr bool table_is_consistent() {
    for (const kernel_config &c : kernel_table)
        if (!line_is_consistent(c)) return false;
    return true;
}
static_assert(table_is_consistent(), "a kernel_table line breaks a rule of its family (line_is_consistent)");

}  // namespace gemm::cuda_tiled
