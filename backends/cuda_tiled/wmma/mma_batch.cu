// mma_batch.cu: the launches of the wmma tensor-core kernel, its instantiations, and the items a
// problem or batch becomes.
#include "mma_batch.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "backends/cuda_common/kernels/scale_c.hpp"
#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_tiled/kernel_table.hpp"
#include "dispatch/error.hpp"
#include "mma_kernel.cuh"

namespace gemm::cuda_tiled {
namespace {

using mma_tiling::bm;
using mma_tiling::bn;

// The kernel's tile is the one its kernel_table line names (mma_rules.cpp counts tiles by it).
static_assert(wmma_config().bm == bm && wmma_config().bn == bn,
              "the wmma line of kernel_table is not the kernel's tile");

int64_t tiles_of(const problem &p) { return ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn); }

mma_item item_of(const problem &p, int first_tile) {
    mma_item it;
    it.a = p.a, it.b = p.b, it.c = p.c;
    it.lda = p.lda, it.ldb = p.ldb, it.ldc = p.ldc;
    it.stride_a = p.stride_a, it.stride_b = p.stride_b, it.stride_c = p.stride_c;
    it.batch = p.batch;
    it.m = int(p.m), it.n = int(p.n), it.k = int(p.k);
    it.tiles_m = int((p.m + bm - 1) / bm);
    it.first_tile = first_tile;
    it.alpha = float(p.alpha), it.beta = float(p.beta);
    it.a_t = p.op_a != transpose::n;
    it.b_t = p.op_b != transpose::n;
    auto vectors = [&p](const void *ptr, int64_t ld, int64_t stride) {
        return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % mma_tiling::vector == 0 &&
               (p.batch == 1 || stride % mma_tiling::vector == 0);
    };
    it.vec_a = vectors(p.a, p.lda, p.stride_a);
    it.vec_b = vectors(p.b, p.ldb, p.stride_b);
    return it;
}

template <class T, class TC, bool A_T, bool B_T, int N>
gemm_status_t launch_typed(const mma_launch<N> &l, int tiles, int64_t batch, cudaStream_t stream) {
    mma_kernel<T, TC, A_T, B_T, N>
        <<<dim3(unsigned(tiles), unsigned(std::min<int64_t>(batch, 65535))), mma_tiling::threads, 0, stream>>>(l);
    return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: mma kernel launch");
}

template <class T, class TC, int N>
gemm_status_t launch_ops(const mma_launch<N> &l, int tiles, int64_t batch, cudaStream_t stream) {
    const mma_item &first = l.items[0];
    if (first.a_t)
        return first.b_t ? launch_typed<T, TC, true, true, N>(l, tiles, batch, stream)
                         : launch_typed<T, TC, true, false, N>(l, tiles, batch, stream);
    return first.b_t ? launch_typed<T, TC, false, true, N>(l, tiles, batch, stream)
                     : launch_typed<T, TC, false, false, N>(l, tiles, batch, stream);
}

// One launch of the items of l (all of one op pair), tiles blocks along x and the largest
// batch along y.
template <int N>
gemm_status_t launch_items(const mma_launch<N> &l, dtype ab, dtype c, int tiles, int64_t batch, cudaStream_t stream) {
    if (ab == dtype::f16)
        return c == dtype::f32 ? launch_ops<__half, float, N>(l, tiles, batch, stream)
                               : launch_ops<__half, __half, N>(l, tiles, batch, stream);
    return c == dtype::f32 ? launch_ops<__nv_bfloat16, float, N>(l, tiles, batch, stream)
                           : launch_ops<__nv_bfloat16, __nv_bfloat16, N>(l, tiles, batch, stream);
}

// The kernel needs compute capability 8.0 (bf16 wmma): older devices are refused before
// anything runs.
gemm_status_t check_device(int device) {
    int major = 0;
    if (cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device); e != cudaSuccess)
        return cuda::cuda_status(e, "cuda_tiled: cudaDeviceGetAttribute");
    if (major < 8)
        return set_error(GEMM_STATUS_NOT_SUPPORTED, "cuda_tiled: the f16/bf16 tensor-core kernel needs compute "
                                                    "capability 8.0 or later");
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

gemm_status_t launch_mma(const problem &dp, cudaStream_t stream) {
    if (gemm_status_t s = check_device(dp.device); s != GEMM_STATUS_SUCCESS) return s;
    mma_launch<1> l;
    l.items[0] = item_of(dp, 0);
    l.count = 1;
    return launch_items(l, dp.ab_type, dp.c_type, int(tiles_of(dp)), dp.batch, stream);
}

gemm_status_t launch_mma_batch(const problem_batch &batch, cudaStream_t stream) {
    thread_local mma_launch<mma_items_per_launch> items;  // 14 KB: not on the stack, not allocated per call
    mma_launch<mma_items_per_launch> *l = &items;
    l->count = 0;
    const problem &first = batch.shapes.front();
    int64_t tiles = 0;
    gemm_status_t s = check_device(first.device);
    auto flush = [&] {
        if (l->count > 0 && s == GEMM_STATUS_SUCCESS)
            s = launch_items(*l, first.ab_type, first.c_type, int(tiles), 1, stream);
        l->count = 0;
        tiles = 0;
    };
    // A launch per op pair that occurs (its kernel is compiled for it), scale-only matrices
    // on the first pass.
    for (int ops = 0; ops < 4 && s == GEMM_STATUS_SUCCESS; ++ops) {
        const bool a_t = ops & 1, b_t = ops & 2;
        std::size_t item = 0;
        for (std::size_t g = 0; g < batch.shapes.size() && s == GEMM_STATUS_SUCCESS; ++g) {
            problem p = batch.shapes[g];
            const bool these = (p.op_a != transpose::n) == a_t && (p.op_b != transpose::n) == b_t;
            if (!these && !(ops == 0 && p.scales_only())) {
                item += std::size_t(batch.sizes[g]);
                continue;
            }
            for (int64_t i = 0; i < batch.sizes[g] && s == GEMM_STATUS_SUCCESS; ++i, ++item) {
                p.a = batch.a[item], p.b = batch.b[item], p.c = batch.c[item];
                if (p.scales_only()) {
                    if (ops == 0) s = cuda::scale_c(p, stream);
                    continue;
                }
                if (l->count == mma_items_per_launch || tiles + tiles_of(p) > INT_MAX) flush();
                l->items[l->count++] = item_of(p, int(tiles));
                tiles += tiles_of(p);
            }
        }
        flush();
    }
    return s;
}

}  // namespace gemm::cuda_tiled
