// skinny_launch.cu: the skinny kernels of every skinny line of kernel_table, each as stored and
// mirrored, with the narrow operand along k and along n (FP8: along k only), and their launch.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_tiled/kernel_variants.hpp"
#include "backends/cuda_tiled/skinny/skinny_along_m_kernel.cuh"
#include "backends/cuda_tiled/skinny/skinny_gemm.hpp"
#include "backends/cuda_tiled/skinny/skinny_kernel.cuh"
#include "backends/cuda_tiled/skinny/skinny_view.hpp"
#include "dispatch/error.hpp"

namespace gemm::cuda_tiled {
namespace {

using namespace skinny;

template <class T, class TC, int TILES, int COLS, bool ALONG_M, bool MIRRORED, bool X_ALONG_N>
gemm_status_t launch_typed(const skinny_params &p, cudaStream_t stream) {
    // Every launch is the programmatic dependent of the stream's previous kernel (the kernel
    // waits for it before reading), so that in a loop of calls its launch overlaps the previous
    // call's end; but one that raises amax is launched plainly, after the memset that zeroes
    // it or the kernel of the group's previous matrix (cuda_tiled.cpp's clear_amax), as the
    // wgmma kernels are.
    cudaLaunchAttribute dependent{};
    dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned((int64_t(p.m) + 16 * TILES - 1) / (16 * TILES)), unsigned(std::min(p.batch, 65535)));
    config.blockDim = dim3(32 * warps);
    config.stream = stream;
    config.attrs = &dependent;
    config.numAttrs = p.amax ? 0 : 1;
    if constexpr (ALONG_M)
        return cuda::cuda_status(
            cudaLaunchKernelEx(&config, skinny_along_m_kernel<T, TC, TILES, COLS, MIRRORED, X_ALONG_N>, p),
            "cuda_tiled: skinny kernel launch");
    else
        return cuda::cuda_status(cudaLaunchKernelEx(&config, skinny_kernel<T, TC, TILES, COLS, MIRRORED, X_ALONG_N>, p),
                                 "cuda_tiled: skinny kernel launch");
}

// FP8 inputs (along k only) with C in f32, f16 or bf16.
template <class T, int TILES, int COLS, bool MIRRORED>
gemm_status_t launch_fp8_c(const problem &dp, const skinny_params &p, cudaStream_t stream) {
    if (dp.c_type == dtype::f32) return launch_typed<T, float, TILES, COLS, false, MIRRORED, false>(p, stream);
    if (dp.c_type == dtype::f16) return launch_typed<T, __half, TILES, COLS, false, MIRRORED, false>(p, stream);
    return launch_typed<T, __nv_bfloat16, TILES, COLS, false, MIRRORED, false>(p, stream);
}

template <int TILES, int COLS, bool MIRRORED>
gemm_status_t launch_fp8(const problem &dp, const skinny_params &p, cudaStream_t stream) {
    return dp.ab_type == dtype::e4m3 ? launch_fp8_c<__nv_fp8_e4m3, TILES, COLS, MIRRORED>(dp, p, stream)
                                     : launch_fp8_c<__nv_fp8_e5m2, TILES, COLS, MIRRORED>(dp, p, stream);
}

template <int TILES, int COLS, bool ALONG_M, bool MIRRORED, bool X_ALONG_N>
gemm_status_t launch_types(const problem &dp, const skinny_params &p, cudaStream_t stream) {
    if (dp.ab_type == dtype::f16)
        return dp.c_type == dtype::f32
                   ? launch_typed<__half, float, TILES, COLS, ALONG_M, MIRRORED, X_ALONG_N>(p, stream)
                   : launch_typed<__half, __half, TILES, COLS, ALONG_M, MIRRORED, X_ALONG_N>(p, stream);
    return dp.c_type == dtype::f32
               ? launch_typed<__nv_bfloat16, float, TILES, COLS, ALONG_M, MIRRORED, X_ALONG_N>(p, stream)
               : launch_typed<__nv_bfloat16, __nv_bfloat16, TILES, COLS, ALONG_M, MIRRORED, X_ALONG_N>(p, stream);
}

// Line LINE's kernel for dp's types: blocks of bm / 16 tiles of 16 rows by bn / 8 pieces of 8
// columns, reading op(A) along k (skinny_kernel) or along m (skinny_along_m_kernel) and op(B)
// along k or, x_along_n, along n, storing C as the problem's (column-major) or, mirrored, as the
// problem's C^T (row-major).
template <std::size_t LINE>
gemm_status_t launch_line(const problem &dp, const skinny_params &p, skinny_orientation o, bool x_along_n,
                          cudaStream_t stream) {
    constexpr kernel_config c = kernel_table[LINE];
    constexpr bool along_m = c.operands == operand_form::a_along_m;
    constexpr int tiles = c.bm / 16, cols = c.bn / 8;
    if constexpr (c.computes(types::fp8)) {
        // FP8 lines are lines of their own, along k; their TN form reads X along k in either
        // orientation (skinny_refusal), so x_along_n is false.
        static_assert(!along_m && !c.computes(types::f16 | types::bf16), "FP8 lines of their own, along k");
        (void)x_along_n;
        return o == skinny_orientation::mirrored ? launch_fp8<tiles, cols, true>(dp, p, stream)
                                                 : launch_fp8<tiles, cols, false>(dp, p, stream);
    } else {
        if (o == skinny_orientation::mirrored)
            return x_along_n ? launch_types<tiles, cols, along_m, true, true>(dp, p, stream)
                             : launch_types<tiles, cols, along_m, true, false>(dp, p, stream);
        return x_along_n ? launch_types<tiles, cols, along_m, false, true>(dp, p, stream)
                         : launch_types<tiles, cols, along_m, false, false>(dp, p, stream);
    }
}

using line_fn = gemm_status_t (*)(const problem &, const skinny_params &, skinny_orientation, bool, cudaStream_t);

template <std::size_t LINE> constexpr line_fn launcher_of() {
    if constexpr (kernel_table[LINE].family == kernel_family::skinny) return launch_line<LINE>;
    else return nullptr;
}

template <std::size_t... LINES>
constexpr std::array<line_fn, kernel_count> all_launchers(std::index_sequence<LINES...>) {
    return {launcher_of<LINES>()...};
}

// A launcher per kernel_table line, null for the lines of other families.
constexpr std::array<line_fn, kernel_count> launchers = all_launchers(std::make_index_sequence<kernel_count>());

}  // namespace

gemm_status_t launch_skinny(const kernel_config &c, const problem &dp, cudaStream_t stream) {
    skinny_orientation o = skinny_orientation::as_stored;
    if (std::string why = skinny_refusal(c, dp, o); !why.empty())
        return set_error(GEMM_STATUS_NOT_SUPPORTED,
                         "cuda_tiled: " + kernel_id(c, dp.ab_type, false) + " refuses " + why);
    if (dp.m == 0 || dp.n == 0 || dp.batch == 0) return GEMM_STATUS_SUCCESS;
    // The kernel's A, B, m and n: dp's, or its mirror's (C^T = op(B)^T op(A)^T); C stays dp's.
    // Its op(B) = T: the narrow operand lies along n.
    const skinny_view v = skinny_view_of(dp, o);
    // FP8's scales per tensor (skinny_refusal refuses block scales); amax was zeroed before
    // the call's first matrix (cuda_tiled.cpp's clear_amax).
    const scaling_spec &x = dp.scaling;
    const float *a_scale = x.a.kind == scale_kind::tensor ? x.a.values : nullptr;
    const float *b_scale = x.b.kind == scale_kind::tensor ? x.b.values : nullptr;
    const skinny_params p{v.a,      v.b,        dp.c,          v.lda,           v.ldb,
                          dp.ldc,   v.stride_a, v.stride_b,    dp.stride_c,     int(v.m),
                          int(v.n), int(dp.k),  int(dp.batch), float(dp.alpha), float(dp.beta),
                          a_scale,  b_scale,    x.d_scale,     x.amax_d};
    return launchers[std::size_t(&c - kernel_table)](dp, p, o, v.op_b == transpose::t, stream);
}

}  // namespace gemm::cuda_tiled
