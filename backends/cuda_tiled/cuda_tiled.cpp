// cuda_tiled.cpp: the hand-written tiled CUDA backend: which variants suit a problem, and the
// checks around a launch (the default's rule: default_choice.cpp).
#include "cuda_tiled.hpp"

#include <climits>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "backends/cuda_common/cuda_services.hpp"
#include "backends/cuda_common/kernels/scale_c.hpp"
#include "backends/cuda_common/run_on_device.hpp"
#include "backends/cuda_common/runtime/cuda_devices.hpp"
#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"
#include "backends/cuda_tiled/default_choice.hpp"
#include "backends/cuda_tiled/kernel_variants.hpp"
#include "backends/cuda_tiled/operand_alignment.hpp"
#include "backends/cuda_tiled/sparse/spmm_launch.hpp"
#include "backends/cuda_tiled/transpose/transpose_launch.hpp"
#include "backends/cuda_tiled/wmma/mma_batch.hpp"
#include "backends/cuda_tiled/wmma/mma_items.hpp"
#include "dispatch/error.hpp"

namespace gemm {
namespace {

using cuda_tiled::variant_info;

// The textbook kernels are offered to the tuner only up to this many multiply-adds per matrix:
// beyond it they run several times slower than the register-tiled ones and only cost tuning
// time (NOTES.md, Textbook kernels in the tuner). run() still takes them by id at any size.
constexpr double textbook_offer_limit = 1024.0 * 1024.0 * 1024.0;

// Why cuda_tiled cannot compute the FP8 problem p ("" when it can): host memory is not staged
// (the kernels read the scales on the device), k = 0 or alpha = 0 runs scale_c, which has no
// output scale or amax; else what its default FP8 line (the first of the type) refuses. A
// group of a grouped call (pointer_batch) runs in run_batch, a launch per matrix.
std::string fp8_refusal(const problem &p) {
    if (p.space == memory_space::host)
        return "FP8 on host memory not supported (the kernels read the scales on the device: device or managed "
               "memory)";
    if (p.scales_only() && (p.scaling.d_scale || p.scaling.amax_d))
        return "FP8 with k = 0 or alpha = 0 and an output scale or amax not supported";
    if (p.scales_only() && p.row_count)
        return "a masked batch with k = 0 or alpha = 0 not supported (the GEMM kernels read the row counts)";
    for (const variant_info &v : cuda_tiled::variant_table())
        if (v.type == p.ab_type) return cuda_tiled::refusal(v, p);
    return "FP8 not supported by this build (its kernels need CUDA 12.0 or later)";
}

// FP8's amax_d is max |D| over every matrix a call writes: zeroed on the stream before the
// first, then raised by each matrix's kernel (its atomicMax).
gemm_status_t clear_amax(const problem &dp, cudaStream_t stream) {
    if (!is_fp8(dp.ab_type) || !dp.scaling.amax_d) return GEMM_STATUS_SUCCESS;
    return cuda::cuda_status(cudaMemsetAsync(dp.scaling.amax_d, 0, sizeof(float), stream),
                             "cuda_tiled: clearing amax_d");
}

// The kernel that computes dp: the one asked for, else the default for dp's shape (nullptr
// with the reason in `why` when it refuses dp; without a default, what the type's first
// line refuses, as supports() says for one matrix).
const variant_info *fp8_kernel(const problem &dp, const variant_info *asked, int sms, std::string &why) {
    const variant_info *v = asked ? asked : cuda_tiled::default_variant(dp, cuda_tiled::vectors_aligned(dp), sms);
    if (!v) {
        why = fp8_refusal(dp);
        if (why.empty()) why = "no kernel computes it";
        return nullptr;
    }
    why = cuda_tiled::refusal(*v, dp);
    return why.empty() ? v : nullptr;
}

// The variant `variant` names for problems of `type` into `asked` (nullptr for ""): an unknown
// id is INVALID_VALUE, one of another type NOT_SUPPORTED.
gemm_status_t asked_variant(std::string_view variant, dtype type, const variant_info *&asked) {
    asked = nullptr;
    if (variant.empty()) return GEMM_STATUS_SUCCESS;
    asked = cuda_tiled::find_variant(variant);
    if (!asked)
        return set_error(GEMM_STATUS_INVALID_VALUE, "cuda_tiled: unknown variant '" + std::string(variant) + "'");
    if (asked->type != type)
        return set_error(GEMM_STATUS_NOT_SUPPORTED,
                         "cuda_tiled: variant " + asked->id + " does not compute " + dtype_name(type));
    return GEMM_STATUS_SUCCESS;
}

// An FP8 group of several matrices on device or managed memory (backend.hpp): each matrix
// checked against its kernel before any runs, so a refusal leaves every C untouched; then a
// launch per matrix on the stream, the group's amax_d zeroed once before its first, so that
// each kernel raises it to the group's max |D|.
gemm_status_t run_fp8_batch(const problem_batch &b, const variant_info *asked, run_report &ctx) {
    const problem &first = b.shapes.front();
    cuda::device_guard guard;
    if (gemm_status_t s = guard.enter(first.device); s != GEMM_STATUS_SUCCESS) return s;
    int sms = 0;
    if (cudaError_t e = cuda::multiprocessor_count(first.device, sms); e != cudaSuccess)
        return cuda::cuda_status(e, "cuda_tiled: cudaDeviceGetAttribute");
    std::vector<problem> matrices;
    std::vector<const variant_info *> kernels;  // nullptr: the matrix only scales C
    for (std::size_t g = 0, item = 0; g < b.shapes.size(); ++g) {
        problem p = b.shapes[g];
        p.batch = 1;
        p.pointer_batch = false;
        for (int64_t i = 0; i < b.sizes[g]; ++i, ++item) {
            p.a = b.a[item], p.b = b.b[item], p.c = b.c[item];
            std::string why;
            const variant_info *v = p.scales_only() ? nullptr : fp8_kernel(p, asked, sms, why);
            if (!p.scales_only() && !v)
                return set_error(GEMM_STATUS_NOT_SUPPORTED,
                                 fmt::format("cuda_tiled: matrix {} of group {}: {}", i, g, why));
            matrices.push_back(p);
            kernels.push_back(v);
        }
    }
    const cudaStream_t stream = static_cast<cudaStream_t>(first.stream);
    gemm_status_t s = GEMM_STATUS_SUCCESS;
    for (std::size_t item = 0; item < matrices.size() && s == GEMM_STATUS_SUCCESS; ++item) {
        const problem &p = matrices[item];
        if (item == 0 || p.scaling.amax_d != matrices[item - 1].scaling.amax_d) s = clear_amax(p, stream);
        if (s == GEMM_STATUS_SUCCESS)
            s = kernels[item] ? cuda_tiled::launch(*kernels[item], p, stream) : cuda::scale_c(p, stream);
    }
    ctx.variant_used = asked ? std::string_view(asked->id) : std::string_view("default");
    ctx.note = fmt::format("{} FP8 matrices, one launch each", matrices.size());
    return s;
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
        if (is_fp8(p.ab_type)) {
            if (std::string why = fp8_refusal(p); !why.empty()) return verdict::no(why);
            return verdict::yes();
        }
        if (cuda_tiled::mma_types(p)) {
            if (!cuda_tiled::mma_tiles_fit(p)) return verdict::no("more than 2^31 - 1 tiles of 64x64 in C");
            return verdict::yes();
        }
        if (p.ab_type != dtype::f32 && p.ab_type != dtype::f64)
            return verdict::no(std::string(dtype_name(p.ab_type)) + " not supported (f32, f64, f16 and bf16 only)");
        if (p.c_type != p.ab_type || p.compute_type != p.ab_type)
            return verdict::no(std::string("C or compute type other than the input type ") + dtype_name(p.ab_type) +
                               " not supported");
        return verdict::yes();
    }

    // The variants of p's dtype: with 16-byte alignment, only the vector ones (their scalar
    // twins cannot win), else only the scalar ones; the Hopper (TF32) ones where they do not
    // refuse p. Host problems are judged by their offload's steps, whose operands are packed
    // aligned.
    std::vector<std::string> variants(const problem &p) const override {
        if (is_fp8(p.ab_type) && !fp8_refusal(p).empty()) return {};  // host memory is not staged
        const problem dp = p.space == memory_space::host ? cuda::offload_shape(p) : p;
        if (cuda_tiled::mma_types(p)) {
            // The wmma kernel computes every such problem; the Hopper ones those they do not refuse.
            std::vector<std::string> ids;
            for (const variant_info &v : cuda_tiled::variant_table())
                if (v.type == p.ab_type && cuda_tiled::refusal(v, dp).empty()) ids.push_back(v.id);
            return ids;
        }
        const bool aligned = cuda_tiled::vectors_aligned(dp);
        const bool small = double(p.m) * double(p.n) * double(p.k) <= textbook_offer_limit;
        std::vector<std::string> ids;
        for (const variant_info &v : cuda_tiled::variant_table()) {
            if (v.type != p.ab_type) continue;
            const bool textbook = v.family() == cuda_tiled::kernel_family::textbook;
            if (v.may_refuse() ? cuda_tiled::refusal(v, dp).empty() : textbook ? small : v.vector == aligned)
                ids.push_back(v.id);
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
        if (gemm_status_t s = asked_variant(variant, p.ab_type, asked); s != GEMM_STATUS_SUCCESS) return s;
        // Refused before anything is copied (the launch would refuse it too); a problem that
        // only scales C runs scale_c whatever the variant.
        if (asked && asked->may_refuse() && p.k != 0 && p.alpha != 0.0)
            if (std::string why = cuda_tiled::refusal(*asked, cuda::offload_shape(p)); !why.empty())
                return set_error(GEMM_STATUS_NOT_SUPPORTED, "cuda_tiled: " + asked->id + " refuses " + why);
        if (is_fp8(p.ab_type))
            if (std::string why = fp8_refusal(p); !why.empty())
                return set_error(GEMM_STATUS_NOT_SUPPORTED, "cuda_tiled: " + why);
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
            if (!v) {
                v = cuda_tiled::default_variant(dp, aligned, sms);
                if (!v)  // not reached: supports() refuses what no default computes
                    return set_error(GEMM_STATUS_NOT_SUPPORTED, "cuda_tiled: no kernel computes this problem");
            } else if (v->vector && !aligned) {
                // Never an unaligned 16-byte access: the scalar twin computes the same tiles.
                v = cuda_tiled::find_variant(v->scalar_twin);
                ctx.note +=
                    std::string(ctx.note.empty() ? "" : "; ") + asked->id + " needs 16-byte alignment: ran " + v->id;
            }
            ctx.variant_used = v->id;
            if (gemm_status_t s = clear_amax(dp, stream); s != GEMM_STATUS_SUCCESS) return s;
            return cuda_tiled::launch(*v, dp, stream);
        });
    }

    // gemm_omatcopy on device and managed memory, every dtype (transpose/transpose_launch.cu).
    // Host memory is not staged: a transpose moves each byte once, so a round trip over the
    // link would cost more than a host backend's copy; the built-in rule sends it to one.
    verdict supports_omatcopy(const transpose_problem &t) const override {
        if (t.space == memory_space::host)
            return verdict::no("host pointers: transposes on the GPU take device or managed memory (auto runs host "
                               "memory on a host backend)");
        // A block per 32 rows of A in x, at most 2^30 blocks (the tiled kernel walks y alone).
        if (t.op != transpose::n && t.rows > (int64_t(1) << 35))
            return verdict::no("more than 2^35 rows of A not supported by the tiled transpose");
        return verdict::yes();
    }

    // The built-in rule takes this kernel first for device memory: it serves every dtype
    // (cuBLAS's geam has no f16 or bf16), it needs no cuBLAS loaded (loading it costs a
    // process time and memory: docs/BLAS.md), and a tiled transpose is bound by memory
    // bandwidth as a copy is, so a library's kernel has little to gain over it.
    // bench/device/transpose.cpp measures it against geam and cudaMemcpy; NOTES.md,
    // "Transpose and copy kernels", is where its figures go.
    bool leads_omatcopy(const transpose_problem &t) const override { return t.space != memory_space::host; }

    gemm_status_t run_omatcopy(const transpose_problem &t, run_report &ctx) override {
        cuda::device_guard guard;
        if (gemm_status_t s = guard.enter(t.device); s != GEMM_STATUS_SUCCESS) return s;
        return cuda_tiled::launch_transpose(t, static_cast<cudaStream_t>(t.stream), ctx);
    }

    // gemm_spmm_csr and gemm_spmm_coo on device and managed memory, every format, op pair and
    // type the API passes (sparse/spmm_launch.cu). Host memory is not staged: a sparse product
    // reads A, B and C about once each, so copying them over the link would cost more than a
    // host backend's pass.
    verdict supports_spmm(const sparse_problem &s) const override {
        if (s.space == memory_space::host)
            return verdict::no("host pointers: sparse products on the GPU take device or managed memory (auto runs "
                               "host memory on a host backend)");
        // The scatter's threads count entries times columns in 64 bits.
        if (double(s.nnz) * double(s.n) > 9.0e18) return verdict::no("nnz x n above 9e18 not supported");
        return verdict::yes();
    }

    // Auto takes these kernels first for device memory: they computed every CSR case timed faster
    // than cuSPARSE (NOTES.md, Sparse kernels) and take unsorted input and repeats as stored,
    // where cuSPARSE assumes its sorted form.
    bool leads_spmm(const sparse_problem &s) const override { return s.space != memory_space::host; }

    gemm_status_t run_spmm(const sparse_problem &s, run_report &ctx) override {
        cuda::device_guard guard;
        if (gemm_status_t st = guard.enter(s.device); st != GEMM_STATUS_SUCCESS) return st;
        return cuda_tiled::launch_spmm(s, static_cast<cudaStream_t>(s.stream), ctx);
    }

    // Small f16/bf16 GEMMs of a device call of several matrices, in groups of few: run_batch
    // serves all such groups in one launch where cuBLAS pays its host cost per matrix (its
    // grouped call being slower still for these types); many GEMMs of one shape are faster in
    // cuBLAS's batched call, so a group of many stays with the preference order, as do GEMMs
    // above the sizes measured (NOTES.md, Batches: the wmma kernel for groups of few).
    bool leads_batches(const problem &p) const override {
        constexpr double largest = 512.0 * 512.0 * 512.0;
        return p.pointer_batch && p.space == memory_space::device && cuda_tiled::mma_types(p) && p.batch <= 8 &&
               double(p.m) * double(p.n) * double(p.k) <= largest;
    }

    // An f16 or bf16 batch on device memory in launches of up to 128 matrices of any shapes,
    // rather than a launch each (whose host cost dominates small GEMMs); an FP8 group
    // (run_fp8_batch). Host and managed memory, and other types: NOT_SUPPORTED (run one by one).
    gemm_status_t run_batch(const problem_batch &b, std::string_view variant, run_report &ctx) override {
        const problem &first = b.shapes.front();
        if (is_fp8(first.ab_type)) {
            const variant_info *asked = nullptr;
            if (gemm_status_t s = asked_variant(variant, first.ab_type, asked); s != GEMM_STATUS_SUCCESS) return s;
            return run_fp8_batch(b, asked, ctx);
        }
        if (first.space != memory_space::device || !cuda_tiled::mma_types(first)) return GEMM_STATUS_NOT_SUPPORTED;
        const variant_info *v = cuda_tiled::wmma_variant(first.ab_type);
        if (!variant.empty() && variant != v->id) return GEMM_STATUS_NOT_SUPPORTED;
        cuda::device_guard guard;
        if (gemm_status_t s = guard.enter(first.device); s != GEMM_STATUS_SUCCESS) return s;
        ctx.variant_used = v->id;
        ctx.note = fmt::format("{} matrices, up to {} a launch", b.c.size(), cuda_tiled::mma_items_per_launch);
        return cuda_tiled::launch_mma_batch(b, static_cast<cudaStream_t>(first.stream));
    }
};

}  // namespace

backend_ptr make_cuda_tiled_backend() { return std::make_unique<cuda_tiled_backend>(); }

}  // namespace gemm
