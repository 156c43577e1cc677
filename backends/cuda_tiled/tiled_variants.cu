// tiled_variants.cu: the kernel instantiations behind every cuda_tiled id, and their launchers.
#include "tiled_variants.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/run_on_device.hpp"
#include "mma_batch.hpp"
#include "skinny_gemm.hpp"
#include "wgmma_gemm.hpp"
#include "register_tiled_kernel.cuh"
#include "textbook_kernel.cuh"

namespace gemm::cuda_tiled {
namespace {

template <typename T>
constexpr dtype dtype_of() {
    return sizeof(T) == 4 ? dtype::f32 : dtype::f64;
}

template <typename T>
tiled_args<T> make_args(const problem &dp) {
    return {static_cast<const T *>(dp.a), static_cast<const T *>(dp.b), static_cast<T *>(dp.c),
            dp.lda, dp.ldb, dp.ldc, dp.stride_a, dp.stride_b, dp.stride_c,
            int(dp.m), int(dp.n), int(dp.k), int(dp.batch), T(dp.alpha), T(dp.beta)};
}

// Grid: x over m tiles (up to 2^31 - 1), y over n tiles and z over the batch, both capped at
// the hardware's 65535; the kernels loop over what the cap leaves out.
dim3 grid_for(const problem &dp, int bm, int bn) {
    return dim3(unsigned((dp.m + bm - 1) / bm),
                unsigned(std::min<int64_t>((dp.n + bn - 1) / bn, 65535)),
                unsigned(std::min<int64_t>(dp.batch, 65535)));
}

template <typename T, int TILE>
struct textbook_config {
    template <bool A_T, bool B_T>
    static gemm_status_t launch_ops(const problem &dp, cudaStream_t stream) {
        textbook_kernel<T, TILE, A_T, B_T>
            <<<grid_for(dp, TILE, TILE), dim3(TILE, TILE), 0, stream>>>(make_args<T>(dp));
        return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: textbook kernel launch");
    }

    static gemm_status_t launch(const problem &dp, cudaStream_t stream) {
        constexpr launch_fn by_ops[2][2] = {{launch_ops<false, false>, launch_ops<false, true>},
                                            {launch_ops<true, false>, launch_ops<true, true>}};
        return by_ops[dp.op_a == transpose::t][dp.op_b == transpose::t](dp, stream);
    }

    static void append(std::vector<variant_info> &table) {
        std::string id = std::string("textbook_") + dtype_name(dtype_of<T>()) + "_t" +
                         std::to_string(TILE);
        table.push_back({id, dtype_of<T>(), TILE, TILE, true, false, false, "", launch});
    }
};

// Kernels whose shared memory exceeds 48 KB must opt in, once per kernel and device; the
// caller keeps one `prepared` mask (a bit per device ordinal < 64) per kernel. The carveout
// asks for the largest shared-memory split so that MIN_BLOCKS blocks fit per SM.
// `device` is the current device (dp.device: run_on_device made it current).
template <typename T>
gemm_status_t prepare_kernel(void (*kernel)(tiled_args<T>), int shared_bytes, int device,
                             std::atomic<unsigned long long> &prepared) {
    const unsigned long long bit = device < 64 ? 1ull << device : 0;
    if (bit && (prepared.load(std::memory_order_acquire) & bit)) return GEMM_STATUS_SUCCESS;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         shared_bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 int(cudaSharedmemCarveoutMaxShared));
    if (e != cudaSuccess) return cuda::cuda_status(e, "cuda_tiled: cudaFuncSetAttribute");
    prepared.fetch_or(bit, std::memory_order_acq_rel);
    return GEMM_STATUS_SUCCESS;
}

template <typename T, int BM, int BN, int BK, int TM, int TN, int STAGES, bool DEFAULT>
struct register_tiled_config {
    template <bool A_T, bool B_T, bool VECTOR>
    static gemm_status_t launch_ops(const problem &dp, cudaStream_t stream) {
        using shape = register_tiled_shape<T, BM, BN, BK, TM, TN, STAGES, A_T, B_T, VECTOR>;
        auto kernel = register_tiled_kernel<T, BM, BN, BK, TM, TN, STAGES, A_T, B_T, VECTOR>;
        static std::atomic<unsigned long long> prepared{0};  // this instantiation's own
        if (gemm_status_t s = prepare_kernel<T>(kernel, shape::SHARED_BYTES, dp.device, prepared);
            s != GEMM_STATUS_SUCCESS)
            return s;
        kernel<<<grid_for(dp, BM, BN), shape::THREADS, shape::SHARED_BYTES, stream>>>(
            make_args<T>(dp));
        return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: register-tiled kernel launch");
    }

    template <bool VECTOR>
    static gemm_status_t launch(const problem &dp, cudaStream_t stream) {
        constexpr launch_fn by_ops[2][2] = {
            {launch_ops<false, false, VECTOR>, launch_ops<false, true, VECTOR>},
            {launch_ops<true, false, VECTOR>, launch_ops<true, true, VECTOR>}};
        return by_ops[dp.op_a == transpose::t][dp.op_b == transpose::t](dp, stream);
    }

    static std::string id(int align) {
        auto s = [](int v) { return std::to_string(v); };
        return std::string("tiled_") + dtype_name(dtype_of<T>()) + "_" + s(BM) + "x" + s(BN) +
               "x" + s(BK) + "_" + s(TM) + "x" + s(TN) + "_s" + s(STAGES) + "_a" + s(align);
    }

    static void append(std::vector<variant_info> &table) {
        const std::string scalar = id(1);
        table.push_back({id(16 / int(sizeof(T))), dtype_of<T>(), BM, BN, false, true, DEFAULT,
                         scalar, launch<true>});
        table.push_back({scalar, dtype_of<T>(), BM, BN, false, false, DEFAULT, "", launch<false>});
    }
};

// The tensor-core kernel of one input type (mma_batch.cu), C in that type or f32: id
// mma_<dtype>_64x64.
template <dtype T>
struct mma_config {
    static void append(std::vector<variant_info> &table) {
        table.push_back({std::string("mma_") + dtype_name(T) + "_64x64", T, 64, 64, false, false, true, "", launch_mma});
    }
};

// The Hopper kernel of one input type and tile (wgmma_kernel.cu), C in that type or f32,
// where the build has it; SPLIT_K: its twin that splits k.
template <dtype T, int BM, int BN, bool SPLIT_K = false>
struct wgmma_config {
    static gemm_status_t launch(const problem &dp, cudaStream_t stream) {
        return launch_wgmma(dp, BM, BN, SPLIT_K, stream);
    }
    static void append([[maybe_unused]] std::vector<variant_info> &table) {
#if GEMM_CUDA_TILED_WGMMA
        table.push_back({wgmma_id(T, BM, BN, SPLIT_K), T, BM, BN, false, false, false, "", launch,
                         BN < 64 ? wgmma_narrow_refusal : wgmma_refusal, SPLIT_K});
#endif
    }
};

// The kernel for C of at most BN columns (skinny_kernel.cu) of one input type and blocks of BM
// rows, C in that type or f32, where the build has the Hopper kernels.
template <dtype T, int BM, int BN>
struct skinny_config {
    static gemm_status_t launch(const problem &dp, cudaStream_t stream) { return launch_skinny(dp, BM, BN, stream); }
    static std::string refusal(const problem &dp) { return skinny_refusal(dp, BN); }
    static void append([[maybe_unused]] std::vector<variant_info> &table) {
#if GEMM_CUDA_TILED_WGMMA
        table.push_back({skinny_id(T, BM, BN), T, BM, BN, false, false, false, "", launch, refusal});
#endif
    }
};

template <typename... Configs>
std::vector<variant_info> make_table() {
    std::vector<variant_info> table;
    (Configs::append(table), ...);
    return table;
}

}  // namespace

// The configurations. Why these (H200 figures in NOTES.md):
//  - 128x128, 8x8 per thread, 256 threads: 64 FMAs per 4 LDS.128, the shape that reaches the
//    FP32 pipes' limit on big problems. BK 16 (3 stages, 50-51 KB) beat BK 8 on every op
//    combination from 2048 up (half the barriers and loop overhead per FMA); BK 8 stays as
//    the classic 25 KB point.
//  - 128x64 / 64x128 (128 threads): the same per-thread work, twice the blocks, for problems
//    with too few 128x128 tiles to fill 132 SMs (128x64x16 matched cuBLAS at 1024^3), or
//    skinny ones.
//  - 64x64 (8x4 or 4x4 per thread): small problems; 4x4 trades intensity for 256 threads.
//  - f64: a double accumulator costs two registers, so 8x4 (64 registers) per thread.
//  - The textbook kernel at 16 and 32, the baseline the register tiling is measured against.
//  - f16 and bf16: the tensor-core kernel (mma_kernel.cuh), whose launch also serves a batch
//    of GEMMs of their own shapes (run_batch); on Hopper also the wgmma kernels
//    (wgmma_kernel.cu: 128x128 tiles for most sizes, 256x128 for the largest, the 128x128
//    kernel splitting k for shapes with too few tiles to fill the SMs, 64x128 tiles splitting
//    k for C of 128 columns with too few 128x128 tiles to fill half of them, 256x64
//    and 128x64 tiles splitting k for C with few columns, 256x16 and 128x16 for C of at most
//    16), offered beside it to the tuner where A and B are 16-byte aligned. All but the 64x128
//    and 16-column ones also for f32 through TF32 (GEMM_ALLOW_TF32=1), an operand stored along
//    m or n copied along k first.
//  - f16 and bf16 on Hopper, C of at most 32 columns with both operands stored along k (decode:
//    up to 32 rows of X W^T): the skinny kernel (skinny_kernel.cu), which reads op(A) straight
//    into tensor-core registers without splitting k, in blocks of 16 or 32 rows of C and 8
//    columns, or 16 rows and 16 or 32 columns.
// DEFAULT marks what run("") may pick by size (cuda_tiled.cpp: the largest tile that still
// fills the GPU).
const std::vector<variant_info> &variant_table() {
    static const std::vector<variant_info> table = make_table<
        textbook_config<float, 16>, textbook_config<float, 32>,
        textbook_config<double, 16>, textbook_config<double, 32>,
        register_tiled_config<float, 128, 128, 16, 8, 8, 3, true>,
        register_tiled_config<float, 128, 128, 8, 8, 8, 3, false>,
        register_tiled_config<float, 128, 64, 16, 8, 8, 3, true>,
        register_tiled_config<float, 128, 64, 8, 8, 8, 3, false>,
        register_tiled_config<float, 64, 128, 8, 8, 8, 3, false>,
        register_tiled_config<float, 64, 64, 16, 8, 4, 3, true>,
        register_tiled_config<float, 64, 64, 8, 8, 4, 3, false>,
        register_tiled_config<float, 64, 64, 16, 4, 4, 3, false>,
        register_tiled_config<double, 128, 64, 8, 8, 4, 3, true>,
        register_tiled_config<double, 64, 64, 8, 8, 4, 3, true>,
        register_tiled_config<double, 64, 64, 8, 4, 4, 3, false>,
        mma_config<dtype::f16>, mma_config<dtype::bf16>, wgmma_config<dtype::f16, 128, 128>,
        wgmma_config<dtype::f16, 256, 128>, wgmma_config<dtype::f16, 128, 128, true>,
        wgmma_config<dtype::f16, 256, 64, true>, wgmma_config<dtype::f16, 128, 64, true>,
        wgmma_config<dtype::bf16, 128, 128>, wgmma_config<dtype::bf16, 256, 128>,
        wgmma_config<dtype::bf16, 128, 128, true>, wgmma_config<dtype::bf16, 256, 64, true>,
        wgmma_config<dtype::bf16, 128, 64, true>, wgmma_config<dtype::f16, 64, 128, true>,
        wgmma_config<dtype::bf16, 64, 128, true>, wgmma_config<dtype::f16, 256, 16, true>,
        wgmma_config<dtype::bf16, 256, 16, true>, wgmma_config<dtype::f16, 128, 16, true>,
        wgmma_config<dtype::bf16, 128, 16, true>, wgmma_config<dtype::f32, 128, 128>,
        wgmma_config<dtype::f32, 256, 128>, wgmma_config<dtype::f32, 128, 128, true>,
        wgmma_config<dtype::f32, 256, 64, true>, wgmma_config<dtype::f32, 128, 64, true>,
        skinny_config<dtype::f16, 16, 8>, skinny_config<dtype::f16, 32, 8>, skinny_config<dtype::f16, 16, 16>,
        skinny_config<dtype::f16, 16, 32>, skinny_config<dtype::bf16, 16, 8>, skinny_config<dtype::bf16, 32, 8>,
        skinny_config<dtype::bf16, 16, 16>, skinny_config<dtype::bf16, 16, 32>>();
    return table;
}

const variant_info *find_variant(std::string_view id) {
    for (const variant_info &v : variant_table())
        if (v.id == id) return &v;
    return nullptr;
}

bool aligned_16_bytes(const void *ptr, int64_t ld, int64_t stride, int64_t batch, std::size_t element_bytes) {
    const int64_t per_16 = int64_t(16 / element_bytes);
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % per_16 == 0 && (batch == 1 || stride % per_16 == 0);
}

bool vectors_aligned(const problem &dp) {
    const std::size_t size = dtype_size(dp.ab_type);
    const int64_t elements = 16 / int64_t(size);
    auto fits = [&](const void *ptr, int64_t ld, int64_t stride) {
        return aligned_16_bytes(ptr, ld, stride, dp.batch, size);
    };
    // A straight operand's vectors run along m (A) or n (B): an extent that is not a multiple
    // of the vector would leave one straddling the edge.
    return (dp.op_a == transpose::t || (fits(dp.a, dp.lda, dp.stride_a) && dp.m % elements == 0)) &&
           (dp.op_b == transpose::n || (fits(dp.b, dp.ldb, dp.stride_b) && dp.n % elements == 0)) &&
           fits(dp.c, dp.ldc, dp.stride_c);
}

}  // namespace gemm::cuda_tiled
