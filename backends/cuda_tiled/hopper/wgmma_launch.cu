// wgmma_launch.cu: the Hopper kernels of every wgmma line of kernel_table, and their launch: the
// TF32 operand copies, tensor maps, split of k, the GEMM kernel and the split-k reduction.
#include <cuda.h>  // CUtensorMap
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"
#include "backends/cuda_tiled/hopper/sm90_device.hpp"
#include "backends/cuda_tiled/hopper/split_k_reduce.cuh"
#include "backends/cuda_tiled/hopper/split_k_rule.hpp"
#include "backends/cuda_tiled/hopper/tensor_maps.hpp"
#include "backends/cuda_tiled/hopper/tf32_copies.hpp"
#include "backends/cuda_tiled/hopper/tf32_transpose.cuh"
#include "backends/cuda_tiled/hopper/wgmma_gemm.hpp"
#include "backends/cuda_tiled/hopper/wgmma_kernel.cuh"
#include "backends/cuda_tiled/kernel_variants.hpp"
#include "dispatch/error.hpp"

namespace gemm::cuda_tiled {
namespace {

using namespace hopper;

// The shared memory a block may take on compute capability 9.0 (227 KB).
constexpr int max_block_shared_bytes = 232448;

template <class T, class TC, class Tiling, bool A_ROWS, bool B_ROWS>
gemm_status_t launch_typed(const CUtensorMap &map_a, const CUtensorMap &map_b, const wgmma_params &params, int device,
                           cudaStream_t stream) {
    auto kernel = wgmma_gemm_kernel<T, TC, Tiling, A_ROWS, B_ROWS>;
    static std::atomic<uint64_t> prepared{0};  // a bit per device ordinal below 64
    const uint64_t bit = uint64_t(1) << (device & 63);
    if (!(prepared.load() & bit)) {
        if (cudaError_t e =
                cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Tiling::smem_bytes);
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
    //    kernels launched early onto the SMs a smaller grid leaves idle slowed it down
    //    (NOTES.md, Programmatic dependent launch).
    //  - A GEMM that computes amax is launched plainly: its predecessor is the memset that
    //    zeroes amax, or the GEMM of the group's previous matrix that raised it (both before it
    //    in stream order: cuda_tiled.cpp's clear_amax).
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
    config.numAttrs = (fills || params.splits == 1) && !params.amax ? 1 : 0;
    if (cudaError_t e = cudaLaunchKernelEx(&config, kernel, map_a, map_b, gemm); e != cudaSuccess || params.splits == 1)
        return cuda::cuda_status(e, "cuda_tiled: wgmma kernel launch");
    // The reduction's blocks: two quads a thread where one would make more blocks than run at
    // once (three an SM); where one quad's blocks all run at once, one quad is faster, and four
    // quads never were (NOTES.md, Split-k reduction).
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

// The op pairs a line's form reads: b_along_k only op(B)^T stored along k (wgmma_refusal).
template <class T, class TC, class Tiling, operand_form FORM>
gemm_status_t launch_ops(const problem &dp, const CUtensorMap &map_a, const CUtensorMap &map_b, const wgmma_params &p,
                         cudaStream_t stream) {
    const bool a_rows = dp.op_a == transpose::n, b_rows = dp.op_b != transpose::n;
    if constexpr (FORM == operand_form::b_along_k) {
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

// FP8 inputs T (both operands stored along k: wgmma_refusal) into C of dp's type.
template <class T, class Tiling>
gemm_status_t launch_fp8(const problem &dp, const CUtensorMap &map_a, const CUtensorMap &map_b, const wgmma_params &p,
                         cudaStream_t stream) {
    if (dp.c_type == dtype::f32)
        return launch_typed<T, float, Tiling, false, false>(map_a, map_b, p, dp.device, stream);
    if (dp.c_type == dtype::f16)
        return launch_typed<T, __half, Tiling, false, false>(map_a, map_b, p, dp.device, stream);
    return launch_typed<T, __nv_bfloat16, Tiling, false, false>(map_a, map_b, p, dp.device, stream);
}

// Line LINE's kernel for dp's types: f16/bf16 in any op pair its form reads, C in the input type
// or f32; f32 (TF32) with both operands stored along k (wgmma_refusal, launch_wgmma's copies),
// C in f32; e4m3/e5m2 with both operands stored along k, C in f32, f16 or bf16. Only the types
// the line names are compiled.
template <std::size_t LINE>
gemm_status_t launch_line(const problem &dp, const CUtensorMap &map_a, const CUtensorMap &map_b, const wgmma_params &p,
                          cudaStream_t stream) {
    constexpr kernel_config c = kernel_table[LINE];
    using half_tiling = wgmma_tiling<c.bm, c.bn, c.stages, 2>;
    using tf32_tiling = wgmma_tiling<c.bm, c.bn, c.stages, 4>;
    using fp8_tiling = wgmma_tiling<c.bm, c.bn, c.stages, 1>;
    static_assert(half_tiling::smem_bytes <= max_block_shared_bytes &&
                      tf32_tiling::smem_bytes <= max_block_shared_bytes &&
                      fp8_tiling::smem_bytes <= max_block_shared_bytes,
                  "a wgmma line's stages exceed the shared memory of a block");
    if (dp.ab_type == dtype::e4m3) {
        if constexpr (c.computes(types::e4m3))
            return launch_fp8<__nv_fp8_e4m3, fp8_tiling>(dp, map_a, map_b, p, stream);
    } else if (dp.ab_type == dtype::e5m2) {
        if constexpr (c.computes(types::e5m2))
            return launch_fp8<__nv_fp8_e5m2, fp8_tiling>(dp, map_a, map_b, p, stream);
    } else if (dp.ab_type == dtype::f32) {
        if constexpr (c.computes(types::f32))
            return launch_typed<float, float, tf32_tiling, false, false>(map_a, map_b, p, dp.device, stream);
    } else if (dp.ab_type == dtype::f16) {
        if constexpr (c.computes(types::f16))
            return dp.c_type == dtype::f32
                       ? launch_ops<__half, float, half_tiling, c.operands>(dp, map_a, map_b, p, stream)
                       : launch_ops<__half, __half, half_tiling, c.operands>(dp, map_a, map_b, p, stream);
    } else if (dp.ab_type == dtype::bf16) {
        if constexpr (c.computes(types::bf16))
            return dp.c_type == dtype::f32
                       ? launch_ops<__nv_bfloat16, float, half_tiling, c.operands>(dp, map_a, map_b, p, stream)
                       : launch_ops<__nv_bfloat16, __nv_bfloat16, half_tiling, c.operands>(dp, map_a, map_b, p, stream);
    }
    // Not reached: wgmma_refusal refuses the types a line does not name.
    return set_error(GEMM_STATUS_NOT_SUPPORTED, "cuda_tiled: no kernel of this wgmma line for these types");
}

using line_fn = gemm_status_t (*)(const problem &, const CUtensorMap &, const CUtensorMap &, const wgmma_params &,
                                  cudaStream_t);

template <std::size_t LINE> constexpr line_fn launcher_of() {
    if constexpr (kernel_table[LINE].family == kernel_family::wgmma) return launch_line<LINE>;
    else return nullptr;
}

template <std::size_t... LINES>
constexpr std::array<line_fn, kernel_count> all_launchers(std::index_sequence<LINES...>) {
    return {launcher_of<LINES>()...};
}

// A launcher per kernel_table line, null for the lines of other families.
constexpr std::array<line_fn, kernel_count> launchers = all_launchers(std::make_index_sequence<kernel_count>());

// Enqueues dst = the transpose of one operand (rows x k, column-major, ld, stride) as k x rows
// with leading dimension copy_ld(k).
gemm_status_t transpose_operand(const void *src, int64_t ld, int64_t stride, int64_t rows, int64_t k, int64_t batch,
                                float *dst, cudaStream_t stream) {
    const int64_t matrices = stride == 0 ? 1 : batch;
    if (rows == 0 || k == 0 || matrices == 0) return GEMM_STATUS_SUCCESS;
    const dim3 grid(unsigned((rows + transpose_tile - 1) / transpose_tile),
                    unsigned(std::min<int64_t>((k + transpose_tile - 1) / transpose_tile, 65535)),
                    unsigned(std::min<int64_t>(matrices, 65535)));
    transpose_f32<<<grid, dim3(32, 8), 0, stream>>>(static_cast<const float *>(src), ld, stride, dst, copy_ld(k),
                                                    copy_ld(k) * rows, int(rows), int(k), int(matrices));
    return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: f32 operand copy along k");
}

// dp, whose operands the kernels read as they are, through tensor maps.
gemm_status_t launch_direct(const kernel_config &c, const problem &dp, cudaStream_t stream) {
    const int bm = c.bm, bn = c.bn;
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
    // FP8's scales, per tensor or per block (on both operands: wgmma_refusal); the kernel's
    // atomicMax raises amax from what it holds (cuda_tiled.cpp's clear_amax zeroed it).
    const scaling_spec &x = dp.scaling;
    p.a_scale = x.a.kind == scale_kind::tensor ? x.a.values : nullptr;
    p.b_scale = x.b.kind == scale_kind::tensor ? x.b.values : nullptr;
    if (x.blocks()) {
        p.a_block = x.a.values, p.ld_a_block = x.a.ld, p.a_per_128 = x.a.kind == scale_kind::blk128;
        p.b_block = x.b.values, p.ld_b_block = x.b.ld, p.b_per_128 = x.b.kind == scale_kind::blk128;
    }
    p.d_scale = x.d_scale;
    p.amax = x.amax_d;
    p.row_count = dp.row_count;
    p.row_count_on_n = dp.row_count_on_n;
    const int stage_k = int(128 / dtype_size(dp.ab_type));  // wgmma_tiling::bk
    const int k_steps = int((dp.k + stage_k - 1) / stage_k);
    p.splits = 1;
    p.split_steps = k_steps;
    if (c.split_k) {
        const int64_t tiles = (dp.m + bm - 1) / bm * ((dp.n + bn - 1) / bn) * dp.batch;
        const int splits = k_splits(dp, tiles, bm, bn, multiprocessors(dp.device), k_steps);
        p.split_steps = (k_steps + splits - 1) / splits;
        p.splits = (k_steps + p.split_steps - 1) / p.split_steps;
    }
    auto launch = [&] { return launchers[std::size_t(&c - kernel_table)](dp, map_a, map_b, p, stream); };
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

gemm_status_t launch_wgmma(const kernel_config &c, const problem &dp, cudaStream_t stream) {
    if (std::string why = wgmma_refusal(c, dp); !why.empty())
        return set_error(GEMM_STATUS_NOT_SUPPORTED,
                         "cuda_tiled: " + kernel_id(c, dp.ab_type, false) + " refuses " + why);
    if (!copied_a(dp) && !copied_b(dp)) return launch_direct(c, dp, stream);
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
    if (s == GEMM_STATUS_SUCCESS) s = launch_direct(c, direct, stream);
    const gemm_status_t released = context->release_scratch(stream, scratch);
    return s != GEMM_STATUS_SUCCESS ? s : released;
}

}  // namespace gemm::cuda_tiled
