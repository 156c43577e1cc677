// default_choice.cpp: the rules by which cuda_tiled's run("") picks a variant from the problem's
// shape and the device's SMs.
#include "backends/cuda_tiled/default_choice.hpp"

#include <cstdint>
#include <optional>

#include "backends/cuda_tiled/skinny/skinny_view.hpp"
#include "backends/cuda_tiled/wmma/mma_batch.hpp"
#include "dispatch/settings.hpp"

namespace gemm::cuda_tiled {
namespace {

// The skinny kernels are the default up to this many bytes of op(A): for C of at most 8
// columns, and of 9 to 32 (hopper_default says why).
constexpr double skinny_largest_a = 128.0 * 1024.0 * 1024.0;
constexpr double wide_skinny_largest_a = 64.0 * 1024.0 * 1024.0;
// The skinny kernels that read op(A) along m are the default up to this many bytes of op(A),
// in blocks of this many rows (hopper_default says why).
constexpr double along_m_largest_a = 32.0 * 1024.0 * 1024.0;
constexpr int along_m_rows = 32;

int64_t blocks_for(const problem &dp, int64_t bm, int64_t bn) {
    return ((dp.m + bm - 1) / bm) * ((dp.n + bn - 1) / bn) * dp.batch;
}
int64_t blocks_for(const problem &dp, const variant_info &v) { return blocks_for(dp, v.config->bm, v.config->bn); }
int64_t area(const variant_info &v) { return int64_t(v.config->bm) * v.config->bn; }

// A problem the skinny kernels read: C of at most 32 columns as stored, else of at most 32 rows
// mirrored (as skinny_orientation_for orients it), with the form that reads its weights.
struct skinny_shape {
    operand_form form = operand_form::along_k;
    int64_t few = 0;          // C's columns as stored, its rows mirrored
    double weight_bytes = 0;  // op(A) as stored, op(B) mirrored
    bool mirrored = false;
};

std::optional<skinny_shape> skinny_shape_of(const problem &dp) {
    const double per_k = double(dp.k) * double(dp.batch) * double(dtype_size(dp.ab_type));
    if (dp.n <= 32)
        if (const std::optional<skinny_reading> r = skinny_reading_as_stored(dp.op_a, dp.op_b))
            return skinny_shape{r->form, dp.n, double(dp.m) * per_k, false};
    if (dp.m <= 32)
        if (const std::optional<skinny_reading> r = skinny_reading_mirrored(dp.op_a, dp.op_b))
            return skinny_shape{r->form, dp.m, double(dp.n) * per_k, true};
    return std::nullopt;
}

// The largest by_size tile whose blocks still cover at least 3/4 of the SMs (larger tiles need
// the least bandwidth per FMA, and a tile count just under the SM count beats a smaller tile's
// second wave: NOTES.md, f32 and f64 default tile); when even the smallest tile covers fewer,
// the smallest.
const variant_info *size_rule(const problem &dp, bool vector, int sms) {
    const variant_info *best = nullptr, *smallest = nullptr;
    for (const variant_info &v : variant_table()) {
        if (v.type != dp.ab_type || v.family() != kernel_family::register_tiled || !v.config->by_size ||
            v.vector != vector)
            continue;
        if (!smallest || area(v) < area(*smallest)) smallest = &v;
        if (4 * blocks_for(dp, v) >= 3 * int64_t(sms) && (!best || area(v) > area(*best))) best = &v;
    }
    return best ? best : smallest;
}

// The tile rules of hopper_default (its comment gives them and their evidence); `first` is its
// search of the variant table.
template <class First> const variant_info *hopper_tile_default(const problem &dp, int sms, const First &first) {
    const bool wide = blocks_for(dp, 256, 128) >= 3 * int64_t(sms);
    if (dp.n <= 16) {
        const int64_t narrow_tiles = blocks_for(dp, 128, 16);
        const bool use_128x16 = 4 * narrow_tiles >= 3 * int64_t(sms) && narrow_tiles <= sms && dp.k <= 8192;
        if (const variant_info *narrow =
                first([&](const kernel_config &c) { return c.bn == 16 && c.bm == (use_128x16 ? 128 : 256); }))
            return narrow;
    }
    if (dp.n == 128 && 2 * blocks_for(dp, 128, 128) <= sms)
        if (const variant_info *tall = first([](const kernel_config &c) { return c.bm == 64 && c.bn == 128; }))
            return tall;
    return first([&](const kernel_config &c) {
        if (dp.n <= 64) return c.bn == 64 && c.bm == (dp.n >= 32 ? 128 : 256);
        if (wide) return c.bm == 256 && c.bn == 128 && !c.split_k;
        return c.bm == 128 && c.bn == 128 && c.split_k == (blocks_for(dp, c.bm, c.bn) < sms);
    });
}

// Where the Hopper kernels compute dp (f16/bf16; f32 with TF32 allowed), the first of these that
// computes it; each rule is the tile that measured fastest on such shapes (NOTES.md, the
// heading after each):
//  - C of at most 32 columns, or else of at most 32 rows (its mirror C^T, skinny_view.hpp), the
//    few side's operand X along k or along the few side, the weights W (op(A) as stored, op(B)
//    mirrored) streamed once whichever way X lies and C is stored (skinny_rule):
//    - W stored along m (n mirrored) and of at most 32 MiB: the skinny kernel of 8, 16 or 32
//      columns that reads W along m, in blocks of 32 rows (Skinny kernels along m); beyond it the
//      tiles that split k, which read W through TMA's transposed boxes and were as fast or
//      faster where W is 112 MiB (between 32 and 64 MiB the skinny kernels measured faster, not
//      yet the rule: NOTES.md, Open questions).
//    - W stored along k, C of at most 8 columns and W of at most 128 MiB: the skinny kernel of
//      blocks of 16 rows (Skinny kernel); C of 9 to 16 or 17 to 32 columns with W of at most 64
//      MiB: the skinny kernel of 16 or 32 columns (Skinny kernels of 16 and 32 columns). Beyond
//      those sizes the tiles, which split k, stream W faster.
//    - C of few rows (mirrored), of at most 16 rows, or of 17 to 32 where the 128x128 tiles
//      would cover fewer than half of the SMs: the skinny kernel whatever W's size. The tiles
//      are sized by C's columns; on the mirrors of the decode shapes they ran at 0.64-0.97 of
//      cuBLAS where the skinny kernels ran at 0.89-1.01 (Decode: C of few rows, X along its
//      short side).
//    - Where no tile computes dp (an X of one row or column has a leading dimension TMA cannot
//      take), the skinny kernel whatever W's size: the wmma kernel ran at 0.07-0.25 of cuBLAS
//      there, the skinny kernels at 0.78-0.97.
//  - C of at most 16 columns (op(B)^T stored along k): the 128x16 tiles where they run unsplit
//    in one wave over at least 3/4 of the SMs and k is at most 8192, else the 256x16 ones, whose
//    stages hold more of the streamed operand (Decode: tiles of 16 columns).
//  - C of at most 64 columns (decode shapes): the tiles of 64 columns that split k, 128x64 where
//    C has 32 columns or more, else 256x64 (more of op(A) a stage) (Decode: tiles of 64 columns).
//  - C of 128 columns: the 64x128 tiles that split k where the 128x128 ones would cover at most
//    half of the SMs (twice the tiles, half the partial sums) (Decode: 64x128 tiles).
//  - The 256x128 tiles where they make at least three waves over the SMs; else the 128x128
//    ones, their twin that splits k where fewer tiles than SMs would leave some idle (Hopper
//    default: 128x128 and 256x128).
// FP8: C of at most 16 columns, the skinny kernel of 16 columns; of 17 to 32 columns, the skinny
// kernel of 32 where the 128x128 tiles would cover fewer than half of the SMs (op(A) of few
// rows); else the 128x128 tiles (NOTES.md, FP8 kernel and FP8 decode).
// nullptr elsewhere (the wmma kernel computes every f16/bf16 problem, the register-tiled ones
// every f32 one).
const variant_info *hopper_default(const problem &dp, int sms) {
    // Every f32 call without TF32 asks: answered without building a refusal's text.
    if (dp.ab_type == dtype::f32 && !settings().allow_tf32) return nullptr;
    // The first Hopper variant of dp's type whose line `wanted` names and that computes dp.
    auto first = [&](auto wanted) -> const variant_info * {
        for (const variant_info &v : variant_table())
            if (v.type == dp.ab_type && v.may_refuse() && wanted(*v.config) && refusal(v, dp).empty()) return &v;
        return nullptr;
    };
    if (is_fp8(dp.ab_type)) {
        const bool skinny = dp.n <= 16 || (dp.n <= 32 && 2 * blocks_for(dp, 128, 128) < sms);
        const int bn = dp.n <= 16 ? 16 : 32;
        if (skinny)
            if (const variant_info *v = first([&](const kernel_config &c) {
                    return c.operands == operand_form::along_k && c.bm == 16 && c.bn == bn;
                }))
                return v;
        return first([](const kernel_config &c) { return c.bm == 128 && c.bn == 128; });
    }
    // The skinny kernel for dp's shape whatever the size of its weights: the last resort where
    // no tile reads the operands (an X of one row or column is not 16-byte aligned for TMA).
    const variant_info *skinny = nullptr;
    if (const std::optional<skinny_shape> s = skinny_shape_of(dp)) {
        const int bn = s->few <= 8 ? 8 : s->few <= 16 ? 16 : 32;
        const bool along_m = s->form == operand_form::a_along_m;
        const double largest = along_m ? along_m_largest_a : bn == 8 ? skinny_largest_a : wide_skinny_largest_a;
        skinny = first([&](const kernel_config &c) {
            return c.family == kernel_family::skinny && c.operands == s->form && c.bn == bn &&
                   c.bm == (along_m ? along_m_rows : 16);
        });
        // The tile rules below size their tiles by C's columns: C of few rows gets wide tiles
        // along them, which beat the skinny kernels only where they cover half of the SMs.
        const bool mirror_wins = s->mirrored && (s->few <= 16 || 2 * blocks_for(dp, 128, 128) < sms);
        if (skinny && (s->weight_bytes <= largest || mirror_wins)) return skinny;
    }
    if (const variant_info *tile = hopper_tile_default(dp, sms, first)) return tile;
    return skinny;
}

}  // namespace

const variant_info *wmma_variant(dtype ab) {
    for (const variant_info &v : variant_table())
        if (v.type == ab && v.family() == kernel_family::wmma) return &v;
    return nullptr;  // not reached: the table has a wmma line for f16 and bf16
}

const variant_info *default_variant(const problem &dp, bool aligned, int sms) {
    if (const variant_info *v = hopper_default(dp, sms)) return v;
    if (mma_types(dp)) return wmma_variant(dp.ab_type);
    return size_rule(dp, aligned, sms);
}

}  // namespace gemm::cuda_tiled
