// cuda_tiled.cpp: the hand-written tiled CUDA backend: which variants suit a problem, the size
// rule of the default, and the checks around a launch.
#include "cuda_tiled.hpp"

#include <climits>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "backends/cuda_common/cuda_services.hpp"
#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"
#include "backends/cuda_common/run_on_device.hpp"
#include "backends/cuda_common/kernels/scale_c.hpp"
#include "dispatch/error.hpp"
#include "dispatch/settings.hpp"
#include "mma_batch.hpp"
#include "mma_items.hpp"
#include "tiled_variants.hpp"

namespace gemm {
namespace {

using cuda_tiled::variant_info;

// The skinny kernels are cuda_tiled's default up to this many bytes of op(A): for C of at most 8
// columns, and of 9 to 32 (hopper_default says why).
constexpr double skinny_largest_a = 128.0 * 1024.0 * 1024.0;
constexpr double wide_skinny_largest_a = 64.0 * 1024.0 * 1024.0;

// The textbook kernels are offered to the tuner only up to this many multiply-adds per matrix:
// beyond it they run several times slower than the register-tiled ones and only cost tuning
// time. run() still takes them by id at any size.
constexpr double textbook_offer_limit = 1024.0 * 1024.0 * 1024.0;

int64_t blocks_for(const problem &dp, int64_t bm, int64_t bn) {
    return ((dp.m + bm - 1) / bm) * ((dp.n + bn - 1) / bn) * dp.batch;
}
int64_t blocks_for(const problem &dp, const variant_info &v) { return blocks_for(dp, v.bm, v.bn); }

// run(""): the largest default tile whose blocks still cover at least 3/4 of the SMs (larger
// tiles need the least bandwidth per FMA; on the H200 128x64 with 128 blocks on 132 SMs was
// the best at 1024^3); when even the smallest tile covers fewer, the smallest.
const variant_info *default_variant(const problem &dp, bool vector, int sms) {
    const variant_info *best = nullptr, *smallest = nullptr;
    for (const variant_info &v : cuda_tiled::variant_table()) {
        if (v.type != dp.ab_type || v.textbook || !v.default_candidate || v.vector != vector)
            continue;
        if (!smallest || v.bm * v.bn < smallest->bm * smallest->bn) smallest = &v;
        if (4 * blocks_for(dp, v) >= 3 * int64_t(sms) && (!best || v.bm * v.bn > best->bm * best->bn)) best = &v;
    }
    return best ? best : smallest;
}

class cuda_tiled_backend final : public backend {
public:
    std::string_view name() const override { return "cuda_tiled"; }
    backend_kind kind() const override { return backend_kind::device; }
    verdict probe() const override { return cuda::device_verdict(); }
    const device_services *runtime_services() const override { return &cuda::cuda_services(); }

    // Device and managed pointers run in place on p.stream; host pointers are offloaded (run_on_device).
    verdict supports(const problem &p) const override {
        if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX || p.batch > INT_MAX)
            return verdict::no("m, n, k or batch above 2^31 - 1 not supported (32-bit indices)");
        if (cuda_tiled::mma_types(p)) {
            if (!cuda_tiled::mma_tiles_fit(p)) return verdict::no("more than 2^31 - 1 tiles of 64x64 in C");
            return verdict::yes();
        }
        if (p.ab_type != dtype::f32 && p.ab_type != dtype::f64)
            return verdict::no(std::string(dtype_name(p.ab_type)) + " not supported (f32, f64, f16 and bf16 only)");
        if (p.c_type != p.ab_type || p.compute_type != p.ab_type)
            return verdict::no(std::string("C or compute type other than the input type ") +
                               dtype_name(p.ab_type) + " not supported");
        return verdict::yes();
    }

    // The variants of p's dtype: with 16-byte alignment, only the vector ones (their scalar
    // twins cannot win), else only the scalar ones; the Hopper (TF32) ones where they do not
    // refuse p. Host problems are judged by their offload's steps, whose operands are packed
    // aligned.
    std::vector<std::string> variants(const problem &p) const override {
        const problem dp = p.space == memory_space::host ? cuda::offload_shape(p) : p;
        if (cuda_tiled::mma_types(p)) {
            // The wmma kernel computes every such problem; the Hopper ones those they do not refuse.
            std::vector<std::string> ids;
            for (const variant_info &v : cuda_tiled::variant_table())
                if (v.type == p.ab_type && (!v.refusal || v.refusal(dp).empty())) ids.push_back(v.id);
            return ids;
        }
        const bool aligned = cuda_tiled::vectors_aligned(dp);
        const bool small = double(p.m) * double(p.n) * double(p.k) <= textbook_offer_limit;
        std::vector<std::string> ids;
        for (const variant_info &v : cuda_tiled::variant_table()) {
            if (v.type != p.ab_type) continue;
            if (v.refusal ? v.refusal(dp).empty() : v.textbook ? small : v.vector == aligned) ids.push_back(v.id);
        }
        return ids;
    }

    bool knows_variant(std::string_view v) const override {
        return v.empty() || cuda_tiled::find_variant(v) != nullptr;
    }

    std::vector<std::string> variant_ids() const override {
        std::vector<std::string> ids;
        for (const variant_info &v : cuda_tiled::variant_table()) ids.push_back(v.id);
        return ids;
    }

    gemm_status_t run(const problem &p, std::string_view variant, run_report &ctx) override {
        const variant_info *asked = nullptr;
        if (!variant.empty()) {
            asked = cuda_tiled::find_variant(variant);
            if (!asked)
                return set_error(GEMM_STATUS_INVALID_VALUE,
                                 "cuda_tiled: unknown variant '" + std::string(variant) + "'");
            if (asked->type != p.ab_type)
                return set_error(GEMM_STATUS_NOT_SUPPORTED,
                                 "cuda_tiled: variant " + asked->id + " does not compute " +
                                     dtype_name(p.ab_type));
            // Refused before anything is copied (the launch would refuse it too); a problem
            // that only scales C runs scale_c whatever the variant.
            if (asked->refusal && p.k != 0 && p.alpha != 0.0)
                if (std::string why = asked->refusal(cuda::offload_shape(p)); !why.empty())
                    return set_error(GEMM_STATUS_NOT_SUPPORTED, "cuda_tiled: " + asked->id + " refuses " + why);
        }
        return cuda::run_on_device(p, ctx, [&](const problem &dp, cudaStream_t stream) {
            // alpha == 0 or k == 0: C = beta * C, and A and B are never read.
            if (dp.k == 0 || dp.alpha == 0.0) {
                ctx.variant_used = "scale_c";
                return cuda::scale_c(dp, stream);
            }
            const bool aligned = cuda_tiled::vectors_aligned(dp);
            const variant_info *v = asked;
            int sms = 0;  // dp.device is current (run_on_device), offloaded problems included
            if (!v) {
                if (cudaError_t e = cuda::multiprocessor_count(dp.device, sms); e != cudaSuccess)
                    return cuda::cuda_status(e, "cuda_tiled: cudaDeviceGetAttribute");
            }
            if (!v) v = hopper_default(dp, sms);
            if (!v && cuda_tiled::mma_types(dp)) {
                v = mma_variant(dp.ab_type);
            } else if (!v) {
                v = default_variant(dp, aligned, sms);
            } else if (v->vector && !aligned) {
                // Never an unaligned 16-byte access: the scalar twin computes the same tiles.
                v = cuda_tiled::find_variant(v->scalar_twin);
                ctx.note += std::string(ctx.note.empty() ? "" : "; ") + asked->id +
                            " needs 16-byte alignment: ran " + v->id;
            }
            ctx.variant_used = v->id;
            return v->launch(dp, stream);
        });
    }

    // Small f16/bf16 GEMMs of a device call of several matrices, in groups of few: run_batch
    // serves all such groups in one launch where cuBLAS pays its host cost per matrix (its
    // grouped call being slower still for these types). On the H200, 64 groups of one bf16
    // GEMM (m, n, k in 64..512) took 93 us against 806 us on cublas and 758 us as a loop of
    // cublasGemmEx; 64 GEMMs of one 256^3 shape took 32 us against 25 us in cuBLAS's batched
    // call through the library (bench/device/grouped_batch.cpp), so a group of many stays
    // with the preference order, as do GEMMs above the sizes measured.
    bool leads_batches(const problem &p) const override {
        constexpr double largest = 512.0 * 512.0 * 512.0;
        return p.pointer_batch && p.space == memory_space::device && cuda_tiled::mma_types(p) && p.batch <= 8 &&
               double(p.m) * double(p.n) * double(p.k) <= largest;
    }

    // An f16 or bf16 batch on device memory in launches of up to 128 matrices of any shapes,
    // rather than a launch each (whose host cost dominates small GEMMs). Host and managed
    // memory, and other types: NOT_SUPPORTED (run one by one).
    gemm_status_t run_batch(const problem_batch &b, std::string_view variant, run_report &ctx) override {
        const problem &first = b.shapes.front();
        if (first.space != memory_space::device || !cuda_tiled::mma_types(first)) return GEMM_STATUS_NOT_SUPPORTED;
        const variant_info *v = mma_variant(first.ab_type);
        if (!variant.empty() && variant != v->id) return GEMM_STATUS_NOT_SUPPORTED;
        cuda::device_guard guard;
        if (gemm_status_t s = guard.enter(first.device); s != GEMM_STATUS_SUCCESS) return s;
        ctx.variant_used = v->id;
        ctx.note = fmt::format("{} matrices, up to {} a launch", b.c.size(), cuda_tiled::mma_items_per_launch);
        return cuda_tiled::launch_mma_batch(b, static_cast<cudaStream_t>(first.stream));
    }

private:
    // run("") where the Hopper kernels compute dp (f16/bf16; f32 with TF32 allowed): for C of at
    // most 8 columns with both operands stored along k and op(A) of at most 128 MiB, the skinny
    // kernel (blocks of 16 rows), for C of 9 to 16 or 17 to 32 columns the one of 16 or 32 columns
    // where op(A) is at most 64 MiB; for C of at most 16 columns, where op(B)^T is stored along k,
    // the 128x16 tiles where they run unsplit in one wave over at least 3/4 of the SMs and k is at
    // most 8192, else the 256x16 ones (both split k where that is faster); for C of at most 64
    // columns (decode shapes) the tiles of 64 columns that split k, 128x64 where C has 32 columns
    // or more, else 256x64; for C of 128 columns (f16/bf16) the 64x128 tiles that split k where the
    // 128x128 ones would cover at most half of the SMs; the 256x128 tiles where they make at least
    // three waves over the SMs; else the 128x128 ones (their twin that splits k when fewer tiles
    // than SMs would leave some idle). nullptr elsewhere (the wmma kernel computes every f16/bf16
    // problem, the register-tiled ones every f32 one). On the H200 (NOTES.md), bf16 decode shapes
    // (row-major X W^T): 256x64 beat the split 128x128 tiles on every shape with X of up to 32 rows
    // and lost with 128; 128x64 beat 256x64 with 32 rows and n = 14336 (no split: 0.91 of cuBLAS
    // against 0.79 at k = 4096, whose 256x64 split reads 3.7 MB of partial sums back) and with 32
    // to 64 rows and n = 4096, where both split (by 0.4-0.7 us with 32 rows, in bf16 and f16,
    // 1.0-2.0 with 48 and 64), and lost with 1 row (0.84 against 0.89: the 256x64 stages hold 160
    // KB of the streamed operand, 128x64's 128 KB); 256x128 beat 128x128 from 4096^3 (3.9 waves) in
    // bf16, f16 and TF32, and lost at 2048^3 (under one wave); 256x16 beat 256x64 on 11 of 12
    // shapes with X of 1, 8 and 16 rows (by 0.1-1.9 us: its stages hold 192 KB of the streamed
    // operand, 256x64's 160 KB); 128x16 (unsplit, 108-128 tiles) beat 256x16 (split in two) with n
    // of 13824-16384 and k of 4096-5120 on all 9 shapes timed, by 1.2-2.8 us, tied at k = 8192
    // (-0.8 to +1.4 us), lost two of three at 14336 (by 1.4 us), and lost by 5-12 us with 224 tiles
    // (two waves). On the H100 (NOTES.md), the skinny kernel beat both tiles of 16 columns with 1
    // to 8 rows of X and op(A) of up to 117 MB (by 2.8-3.3 us at 4096x4096, by 0.2-0.9 us at
    // 14336x4096 and 4096x14336) and lost by 4-5 % at 14336x14336 (411 MB); those of 16 and 32
    // columns beat the default of 16 and 32 rows of X at 4096x4096 (32 MiB: 14.8 against 18.6 us,
    // 16.0 against 18.3) and lost with op(A) of 112 MiB or more, except 16 rows at 4096x14336 (45.7
    // against 46.5); the bound between is not timed. There too, with 128 rows of X and n = 4096 (32
    // tiles of 128x128, split in 4), the 64x128 tiles (64 tiles, split in 2: half the partial sums;
    // both discarding them from L2) took 19.2 us against 20.5 at k = 4096 and 49.0 against 49.8 at
    // 14336; with n = 14336 (112 tiles, unsplit) they lost, 48.5 against 46.3, and with 96 and 97
    // rows of X at 4096x4096, by 0.3-0.7 us; from 33 to 66 tiles of 128x128, and from 98 to 127
    // rows, not timed.
    static const variant_info *hopper_default(const problem &dp, int sms) {
        // Every f32 call without TF32 asks: answered without building a refusal's text.
        if (dp.ab_type == dtype::f32 && !settings().allow_tf32) return nullptr;
        const bool wide = blocks_for(dp, 256, 128) >= 3 * int64_t(sms);
        // The first Hopper id of dp's type that `wanted` names and that computes dp.
        auto first = [&](auto wanted) -> const variant_info * {
            for (const variant_info &v : cuda_tiled::variant_table())
                if (v.type == dp.ab_type && v.refusal && wanted(v) && v.refusal(dp).empty()) return &v;
            return nullptr;
        };
        if (dp.n <= 32) {
            const double a_bytes = double(dp.m) * double(dp.k) * double(dp.batch) * double(dtype_size(dp.ab_type));
            const int bn = dp.n <= 8 ? 8 : dp.n <= 16 ? 16 : 32;
            if (a_bytes <= (bn == 8 ? skinny_largest_a : wide_skinny_largest_a))
                if (const variant_info *skinny = first([&](const variant_info &v) { return v.bn == bn && v.bm == 16; }))
                    return skinny;
        }
        if (dp.n <= 16) {
            const int64_t narrow_tiles = blocks_for(dp, 128, 16);
            const bool use_128x16 = 4 * narrow_tiles >= 3 * int64_t(sms) && narrow_tiles <= sms && dp.k <= 8192;
            if (const variant_info *narrow =
                    first([&](const variant_info &v) { return v.bn == 16 && v.bm == (use_128x16 ? 128 : 256); }))
                return narrow;
        }
        if (dp.n == 128 && 2 * blocks_for(dp, 128, 128) <= sms)
            if (const variant_info *tall = first([](const variant_info &v) { return v.bm == 64 && v.bn == 128; }))
                return tall;
        return first([&](const variant_info &v) {
            if (dp.n <= 64) return v.bn == 64 && v.bm == (dp.n >= 32 ? 128 : 256);
            if (wide) return v.bm == 256 && v.bn == 128 && !v.split_k;
            return v.bm == 128 && v.bn == 128 && v.split_k == (blocks_for(dp, v) < sms);
        });
    }

    static const variant_info *mma_variant(dtype ab) {
        for (const variant_info &v : cuda_tiled::variant_table())
            if (v.type == ab) return &v;
        return nullptr;  // not reached: the table has one for f16 and for bf16
    }
};

}  // namespace

backend_ptr make_cuda_tiled_backend() {
    return std::make_unique<cuda_tiled_backend>();
}

}  // namespace gemm
