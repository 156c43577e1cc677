// c_store.cuh: how the Hopper kernels write C (or f32 partial sums): alpha * acc + beta * C in
// groups of four neighbouring m, a warp's accumulators passed through shared memory first; for
// FP8 also the output scale and amax.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda_tiled/hopper/wgmma_tiling.cuh"

namespace gemm::cuda_tiled::hopper {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

template <class TC> __device__ inline TC to_c(float v) {
    if constexpr (std::is_same_v<TC, float>) return v;
    else if constexpr (std::is_same_v<TC, __half>) return __float2half_rn(v);
    else return __float2bfloat16_rn(v);
}

// Four neighbouring elements of C (m .. m + 3) as one access.
template <class TC> struct alignas(4 * sizeof(TC)) c_quad { TC v[4]; };

// The larger of a and b, NaN where either is NaN (fmaxf would drop it).
__device__ inline float max_with_nan(float a, float b) { return b > a || b != b ? b : a; }

// The FP8 epilogue's last step (store_quad's SCALED): an element x = alpha * acc + beta * C is
// stored as d_scale * x, and amax keeps the largest |x| this thread stored (NaN once one is).
struct output_scaling {
    float d_scale = 1.0f;
    float amax = 0.0f;

    __device__ float apply(float x) {
        amax = max_with_nan(amax, fabsf(x));
        return d_scale * x;
    }
};

// x (alpha * acc) + beta * C at m .. m + 3 of a column of C (rows of C: m_end), as one access
// where the four are whole and aligned, else element by element; SCALED: through os.apply.
// beta = 0 writes C without reading it.
template <class TC, bool SCALED = false>
__device__ inline void store_quad(TC *at, int m, int m_end, float4 x, const c_target &o, output_scaling *os = nullptr) {
    float v[4] = {x.x, x.y, x.z, x.w};
    if (o.quads && m + 3 < m_end) {
        c_quad<TC> *quad = reinterpret_cast<c_quad<TC> *>(at);
        if (o.beta != 0.0f) {
            const c_quad<TC> old = *quad;
#pragma unroll
            for (int e = 0; e < 4; ++e) v[e] += o.beta * float(old.v[e]);
        }
        if constexpr (SCALED)
#pragma unroll
            for (int e = 0; e < 4; ++e) v[e] = os->apply(v[e]);
        *quad = c_quad<TC>{{to_c<TC>(v[0]), to_c<TC>(v[1]), to_c<TC>(v[2]), to_c<TC>(v[3])}};
        return;
    }
    for (int e = 0; e < 4 && m + e < m_end; ++e) {
        if (o.beta != 0.0f) v[e] += o.beta * float(at[e]);
        if constexpr (SCALED) v[e] = os->apply(v[e]);
        at[e] = to_c<TC>(v[e]);
    }
}

// This thread's accumulators of a consumer warpgroup, whose 64 n from n0 by WN m from m0, into
// o: the rows before n_end (the tile's, within C's), the columns before m_end. Element
// 4j + 2h + e of the wgmma fragment is row (n) 16 warp + lane / 4 + 8h of the 64 and column (m)
// 8j + 2 (lane % 4) + e of the WN: a warp's stores straight from the fragment would write 16
// bytes or less of each of 8 columns. So each warp passes its 16 rows through its staging
// (alpha * acc, 32 m at a time), and reads them back as 4 neighbouring m a lane, 8 lanes a row:
// a store instruction writes 4 rows of 32 contiguous m (whole 32-byte sectors). SCALED: each
// element through os (store_quad).
template <class TC, int WN, bool SCALED = false, int N>
__device__ void store_tile(const float (&d)[N], float *staging, const c_target &o, int m0, int m_end, int n0, int n_end,
                           int matrix, output_scaling *os = nullptr) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
    if (n0 + warp * 16 >= n_end) return;                            // none of this warp's rows
    float *rows = staging + (threadIdx.x / 32 - 4) * staging_warp;  // warps 4 .. 11 multiply
    TC *c = static_cast<TC *>(o.c) + int64_t(matrix) * o.stride;
#pragma unroll
    for (int part = 0; part < WN / 32; ++part) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
            const int j = 4 * part + jj;
#pragma unroll
            for (int h = 0; h < 2; ++h)
                *reinterpret_cast<float2 *>(rows + (lane / 4 + 8 * h) * staging_row + 8 * jj + 2 * (lane % 4)) =
                    make_float2(o.alpha * d[4 * j + 2 * h], o.alpha * d[4 * j + 2 * h + 1]);
        }
        __syncwarp();
#pragma unroll
        for (int it = 0; it < 4; ++it) {
            const int r = 4 * it + lane / 8, v = lane % 8;
            const int n = n0 + warp * 16 + r, m = m0 + 32 * part + 4 * v;
            if (n < n_end && m < m_end)
                store_quad<TC, SCALED>(c + int64_t(n) * o.ld + m, m, m_end,
                                       *reinterpret_cast<const float4 *>(rows + r * staging_row + 4 * v), o, os);
        }
        __syncwarp();
    }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace gemm::cuda_tiled::hopper
