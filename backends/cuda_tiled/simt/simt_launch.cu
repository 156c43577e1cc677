// simt_launch.cu: the textbook and register-tiled kernel instantiations of every kernel_table
// line of those families, and their launchers.
#include "backends/cuda_tiled/simt/simt_launch.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <utility>

#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_tiled/simt/register_tiled_kernel.cuh"
#include "backends/cuda_tiled/simt/textbook_kernel.cuh"

namespace gemm::cuda_tiled {
namespace {

using launch_fn = gemm_status_t (*)(const problem &dp, cudaStream_t stream);

template <typename T> tiled_args<T> make_args(const problem &dp) {
    return {static_cast<const T *>(dp.a),
            static_cast<const T *>(dp.b),
            static_cast<T *>(dp.c),
            dp.lda,
            dp.ldb,
            dp.ldc,
            dp.stride_a,
            dp.stride_b,
            dp.stride_c,
            int(dp.m),
            int(dp.n),
            int(dp.k),
            int(dp.batch),
            T(dp.alpha),
            T(dp.beta)};
}

// Grid: x over m tiles (up to 2^31 - 1), y over n tiles and z over the batch, both capped at
// the hardware's 65535; the kernels loop over what the cap leaves out.
dim3 grid_for(const problem &dp, int bm, int bn) {
    return dim3(unsigned((dp.m + bm - 1) / bm), unsigned(std::min<int64_t>((dp.n + bn - 1) / bn, 65535)),
                unsigned(std::min<int64_t>(dp.batch, 65535)));
}

template <typename T, int TILE> struct textbook_launch {
    template <bool A_T, bool B_T> static gemm_status_t launch_ops(const problem &dp, cudaStream_t stream) {
        textbook_kernel<T, TILE, A_T, B_T><<<grid_for(dp, TILE, TILE), dim3(TILE, TILE), 0, stream>>>(make_args<T>(dp));
        return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: textbook kernel launch");
    }

    static gemm_status_t launch(const problem &dp, cudaStream_t stream) {
        constexpr launch_fn by_ops[2][2] = {{launch_ops<false, false>, launch_ops<false, true>},
                                            {launch_ops<true, false>, launch_ops<true, true>}};
        return by_ops[dp.op_a == transpose::t][dp.op_b == transpose::t](dp, stream);
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
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 int(cudaSharedmemCarveoutMaxShared));
    if (e != cudaSuccess) return cuda::cuda_status(e, "cuda_tiled: cudaFuncSetAttribute");
    prepared.fetch_or(bit, std::memory_order_acq_rel);
    return GEMM_STATUS_SUCCESS;
}

template <typename T, int BM, int BN, int BK, int TM, int TN, int STAGES> struct register_tiled_launch {
    template <bool A_T, bool B_T, bool VECTOR> static gemm_status_t launch_ops(const problem &dp, cudaStream_t stream) {
        using shape = register_tiled_shape<T, BM, BN, BK, TM, TN, STAGES, A_T, B_T, VECTOR>;
        auto kernel = register_tiled_kernel<T, BM, BN, BK, TM, TN, STAGES, A_T, B_T, VECTOR>;
        static std::atomic<unsigned long long> prepared{0};  // this instantiation's own
        if (gemm_status_t s = prepare_kernel<T>(kernel, shape::SHARED_BYTES, dp.device, prepared);
            s != GEMM_STATUS_SUCCESS)
            return s;
        kernel<<<grid_for(dp, BM, BN), shape::THREADS, shape::SHARED_BYTES, stream>>>(make_args<T>(dp));
        return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: register-tiled kernel launch");
    }

    template <bool VECTOR> static gemm_status_t launch(const problem &dp, cudaStream_t stream) {
        constexpr launch_fn by_ops[2][2] = {{launch_ops<false, false, VECTOR>, launch_ops<false, true, VECTOR>},
                                            {launch_ops<true, false, VECTOR>, launch_ops<true, true, VECTOR>}};
        return by_ops[dp.op_a == transpose::t][dp.op_b == transpose::t](dp, stream);
    }
};

// Line LINE's kernel for element type T (VECTOR: its 16-byte form).
template <std::size_t LINE, typename T, bool VECTOR> gemm_status_t launch_line(const problem &dp, cudaStream_t stream) {
    constexpr kernel_config c = kernel_table[LINE];
    if constexpr (c.family == kernel_family::textbook) return textbook_launch<T, c.bm>::launch(dp, stream);
    else return register_tiled_launch<T, c.bm, c.bn, c.bk, c.tm, c.tn, c.stages>::template launch<VECTOR>(dp, stream);
}

// A line's launchers: [f64][vector]; null where the line is of another family or type (so that
// only the table's kernels are compiled), and for the vector form of a textbook line.
using line_launchers = std::array<std::array<launch_fn, 2>, 2>;

template <std::size_t LINE> constexpr line_launchers launchers_of() {
    constexpr kernel_config c = kernel_table[LINE];
    line_launchers l{};
    if constexpr (c.family == kernel_family::textbook || c.family == kernel_family::register_tiled) {
        constexpr bool tiled = c.family == kernel_family::register_tiled;
        if constexpr (c.computes(types::f32)) {
            l[0][0] = launch_line<LINE, float, false>;
            if constexpr (tiled) l[0][1] = launch_line<LINE, float, true>;
        }
        if constexpr (c.computes(types::f64)) {
            l[1][0] = launch_line<LINE, double, false>;
            if constexpr (tiled) l[1][1] = launch_line<LINE, double, true>;
        }
    }
    return l;
}

template <std::size_t... LINES>
constexpr std::array<line_launchers, kernel_count> all_launchers(std::index_sequence<LINES...>) {
    return {launchers_of<LINES>()...};
}

constexpr std::array<line_launchers, kernel_count> launchers = all_launchers(std::make_index_sequence<kernel_count>());

}  // namespace

gemm_status_t launch_simt(const kernel_config &c, bool vector, const problem &dp, cudaStream_t stream) {
    const launch_fn fn = launchers[std::size_t(&c - kernel_table)][dp.ab_type == dtype::f64][vector];
    if (!fn) return GEMM_STATUS_NOT_SUPPORTED;  // not reached: variant_table holds the lines' types
    return fn(dp, stream);
}

}  // namespace gemm::cuda_tiled
