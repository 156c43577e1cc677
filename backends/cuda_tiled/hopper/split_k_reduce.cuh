// split_k_reduce.cuh: the kernel that adds split k's f32 partial sums into C in a fixed order,
// and drops them from L2 once read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda_tiled/hopper/c_store.cuh"
#include "backends/cuda_tiled/hopper/split_k_rule.hpp"
#include "backends/cuda_tiled/hopper/wgmma_tiling.cuh"

namespace gemm::cuda_tiled::hopper {

constexpr int reduce_threads = 256;

// Drops from L2, without writing them back, the lines of partial sums this warp has just read
// in one column: nothing reads them again (the next user of the workspace writes it first).
// Only where every line lies whole in one column (discards_partials): the 8 lanes that read a
// line are then one warp's, and the warp's meeting orders their loads before the discard of
// the line by its first lane.
template <int Q> __device__ void discard_read_lines(const float *part, const wgmma_params &p) {
    __syncwarp();
    if (threadIdx.x % 8 != 0) return;
    for (int m0 = 4 * int(blockIdx.x * blockDim.x * Q + threadIdx.x); m0 < p.m;
         m0 += 4 * int(gridDim.x * blockDim.x * Q))
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int m = m0 + 4 * reduce_threads * q;
            if (m >= p.m) continue;
            for (int s = 0; s < p.splits; ++s) {
                const size_t line = __cvta_generic_to_global(part + s * p.split_stride + m);
                asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
            }
        }
}

// C = alpha * (the splits' partial sums, added in split order) + beta * C: the same sum in
// the same order on every run, whatever order the blocks ran in. Launched as the GEMM
// kernel's programmatic dependent: it waits for that grid's completion and its memory before
// reading the partial sums. Blocks walk the matrices (z) and columns (y) of C, each thread Q
// quads of neighbouring m of a column, 1024 m apart (the grid's x covers m once), so that no
// thread divides an index (with an element's matrix, column and row found by 64-bit division
// the SMs, not memory, were the limit). A thread issues its loads of every split (of 8 splits
// at a time for Q = 2) before adding them, so that its reads are in flight at once; with one
// quad a thread, three blocks an SM keep enough of them in flight, two do not (NOTES.md,
// Split-k reduction).
// launch_typed takes Q = 2 where one quad a thread would make more blocks than run at once.
template <class TC, int Q>
__global__ void __launch_bounds__(reduce_threads, Q == 1 ? 3 : 2) split_k_reduce(wgmma_params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // The stream's next GEMM kernel (a programmatic dependent) may be scheduled once every
    // block here has started: it waits for this grid's completion before touching memory.
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    constexpr int chunk = max_splits / Q;  // splits whose loads are in flight together
    const int64_t per_matrix = int64_t(p.m) * p.n;
    // Every column's quads 16-byte aligned in every split's partial sums.
    const bool vector = p.m % 4 == 0 && p.split_stride % 4 == 0;
    for (int matrix = blockIdx.z; matrix < p.batch; matrix += gridDim.z)
        for (int column = blockIdx.y; column < p.n; column += gridDim.y) {
            const float *part = p.partial + matrix * per_matrix + int64_t(column) * p.m;
            TC *c = static_cast<TC *>(p.out.c) + matrix * p.out.stride + int64_t(column) * p.out.ld;
            // One pass: the grid's x covers m (launch_typed). m is at most 2^22 where k
            // splits (the partial sums fit the 32 MiB workspace), far from int's range.
            for (int m0 = 4 * int(blockIdx.x * blockDim.x * Q + threadIdx.x); m0 < p.m;
                 m0 += 4 * int(gridDim.x * blockDim.x * Q)) {
                float4 sum[Q];
#pragma unroll
                for (int q = 0; q < Q; ++q) sum[q] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                for (int s0 = 0; s0 < (Q == 1 ? 1 : p.splits); s0 += chunk) {
                    float4 v[chunk][Q];
#pragma unroll
                    for (int s = 0; s < chunk; ++s)
#pragma unroll
                        for (int q = 0; q < Q; ++q) {
                            const int m = m0 + 4 * reduce_threads * q;
                            v[s][q] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                            if (s0 + s < p.splits && m < p.m) {
                                const float *at = part + (s0 + s) * p.split_stride + m;
                                if (vector) v[s][q] = __ldcg(reinterpret_cast<const float4 *>(at));
                                else {
                                    v[s][q].x = __ldcg(at);
                                    if (m + 1 < p.m) v[s][q].y = __ldcg(at + 1);
                                    if (m + 2 < p.m) v[s][q].z = __ldcg(at + 2);
                                    if (m + 3 < p.m) v[s][q].w = __ldcg(at + 3);
                                }
                            }
                        }
#pragma unroll
                    for (int s = 0; s < chunk; ++s)
#pragma unroll
                        for (int q = 0; q < Q; ++q)
                            if (s0 + s < p.splits)
                                sum[q] = make_float4(sum[q].x + v[s][q].x, sum[q].y + v[s][q].y, sum[q].z + v[s][q].z,
                                                     sum[q].w + v[s][q].w);
                }
                const float a = p.out.alpha;
#pragma unroll
                for (int q = 0; q < Q; ++q) {
                    const int m = m0 + 4 * reduce_threads * q;
                    if (m < p.m)
                        store_quad<TC>(c + m, m, p.m,
                                       make_float4(a * sum[q].x, a * sum[q].y, a * sum[q].z, a * sum[q].w), p.out);
                }
            }
            if (p.discard_partials) discard_read_lines<Q>(part, p);
        }
#endif
}

}  // namespace gemm::cuda_tiled::hopper
