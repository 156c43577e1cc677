// transpose_launch.cu: B = alpha * op(A) on the device for every dtype: the classic
// shared-memory tiled transpose (op T and C), a scaled copy (op N), a fill of zeros (alpha = 0).
#include "transpose_launch.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector_types.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda_common/kernels/device_elements.cuh"
#include "backends/cuda_common/runtime/cuda_status.hpp"

namespace gemm::cuda_tiled {
namespace {

using cuda::compute_of;
using cuda::from_compute;
using cuda::to_compute;

// A 32 x 32 tile moved by 32 x 8 threads, each taking 4 of its elements: enough threads per
// tile to cover a load's latency, few enough that a block stays small.
constexpr int tile_edge = 32;
constexpr int tile_rows_per_pass = 8;
// Grids are at most this many blocks along y (CUDA's limit); the kernels loop over the rest.
constexpr int64_t grid_y_limit = 65535;

// The element maps: what one element of A becomes in B.
struct identity {
    template <class T> __device__ T operator()(T x) const { return x; }
};

// Real types: computed in the compute type (float for f16 and bf16), rounded once.
template <class T> struct real_scale {
    compute_of<T> alpha;
    __device__ T operator()(T x) const { return from_compute<T>(alpha * to_compute(x)); }
};

// A complex element as two parts with only its part's alignment: std::complex<float> and
// <double> promise no more than that, so a caller's pointer may be 4 (8) bytes past a multiple
// of 8 (16), where float2 (double2) accesses would fault. Aligned operands take the vector
// types, one access per element.
template <class R> struct parts_of { R x, y; };

// Complex types stored as float2 / double2 or parts_of (real, imaginary). sign = -1 conjugates A's element;
// a real alpha (ai = 0) scales each part, so an infinite part of A stays in its own part.
template <class V, class R> struct complex_scale {
    R ar, ai, sign;
    __device__ V operator()(V x) const {
        const R re = x.x, im = sign * x.y;
        V out;
        if (ai == R(0)) {
            out.x = ar * re;
            out.y = ar * im;
        } else {
            out.x = ar * re - ai * im;
            out.y = ar * im + ai * re;
        }
        return out;
    }
};

// op T and C: B(j, i) = f(A(i, j)). A block loads a tile of A into shared memory with x along
// A's rows, so neighbouring threads read neighbouring addresses of a column of A, then writes
// the transposed tile with x along B's rows, neighbouring addresses of a column of B: both
// global accesses are coalesced, and the turn happens in shared memory. The tile's rows are 33
// elements long so that the column read by the store pass (tile[x][y]: 32 threads, 33 words
// apart) touches 32 different banks for 4-byte elements; without the padding all 32 would
// share one bank and the store pass would serialize 32 ways. Blocks walk the tiles of A along
// y in steps of the grid, for more than grid_y_limit tile columns.
template <class T, class F>
__global__ void transpose_tile_kernel(const T *a, int64_t lda, T *b, int64_t ldb, int64_t rows, int64_t cols, F f) {
    __shared__ T tile[tile_edge][tile_edge + 1];
    const int64_t i0 = int64_t(blockIdx.x) * tile_edge;
    const int tx = int(threadIdx.x), ty = int(threadIdx.y);
    for (int64_t j0 = int64_t(blockIdx.y) * tile_edge; j0 < cols; j0 += int64_t(gridDim.y) * tile_edge) {
        for (int k = 0; k < tile_edge; k += tile_rows_per_pass) {
            const int64_t i = i0 + tx, j = j0 + ty + k;
            if (i < rows && j < cols) tile[ty + k][tx] = a[i + j * lda];
        }
        __syncthreads();
        for (int k = 0; k < tile_edge; k += tile_rows_per_pass) {
            const int64_t row_of_b = j0 + tx, col_of_b = i0 + ty + k;
            if (row_of_b < cols && col_of_b < rows) b[row_of_b + col_of_b * ldb] = f(tile[tx][ty + k]);
        }
        __syncthreads();  // the next tile reuses the shared tile
    }
}

// op N: B(i, j) = f(A(i, j)) over the transpose's 32 x 32 tiles, x along the rows, so each warp
// reads and writes 32 neighbouring elements of a column. Each thread loads its 4 elements of a
// tile before it stores any: 4 loads in flight a thread keep enough bytes moving to approach a
// device copy's bandwidth, where one element a thread ran at 0.43 of it (NOTES.md, "Transpose
// and copy kernels"). Blocks walk the tiles along y in steps of the grid, as the transpose's do.
template <class T, class F>
__global__ void copy_tile_kernel(const T *a, int64_t lda, T *b, int64_t ldb, int64_t rows, int64_t cols, F f) {
    constexpr int per_thread = tile_edge / tile_rows_per_pass;
    const int64_t i = int64_t(blockIdx.x) * tile_edge + threadIdx.x;
    if (i >= rows) return;
    for (int64_t j0 = int64_t(blockIdx.y) * tile_edge + threadIdx.y; j0 < cols; j0 += int64_t(gridDim.y) * tile_edge) {
        T v[per_thread];
#pragma unroll
        for (int k = 0; k < per_thread; ++k)
            if (j0 + k * tile_rows_per_pass < cols) v[k] = a[i + (j0 + k * tile_rows_per_pass) * lda];
#pragma unroll
        for (int k = 0; k < per_thread; ++k)
            if (j0 + k * tile_rows_per_pass < cols) b[i + (j0 + k * tile_rows_per_pass) * ldb] = f(v[k]);
    }
}

// alpha = 0: zeros into B's window, A never read.
template <class T> __global__ void zero_kernel(T *b, int64_t ldb, int64_t rows, int64_t cols) {
    for (int64_t j = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; j < cols; j += int64_t(gridDim.y) * blockDim.y)
        for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows; i += int64_t(gridDim.x) * blockDim.x)
            b[i + j * ldb] = T{};
}

// A grid of 32 x 8 blocks over rows x cols, one block per 32 x 32 tile (grid-stride beyond the
// limits).
struct tile_grid {
    dim3 block, grid;
    tile_grid(int64_t rows, int64_t cols) {
        block = dim3(tile_edge, tile_rows_per_pass, 1);
        const int64_t across = (rows + tile_edge - 1) / tile_edge, down = (cols + tile_edge - 1) / tile_edge;
        grid = dim3(unsigned(std::min<int64_t>(across, int64_t(1) << 30)), unsigned(std::min(down, grid_y_limit)), 1);
    }
};

template <class T, class F> gemm_status_t launch_with(const transpose_problem &t, cudaStream_t stream, F f) {
    const T *a = static_cast<const T *>(t.a);
    T *b = static_cast<T *>(t.b);
    const tile_grid g(t.rows, t.cols);
    if (t.op == transpose::n)
        copy_tile_kernel<T, F><<<g.grid, g.block, 0, stream>>>(a, t.lda, b, t.ldb, t.rows, t.cols, f);
    else transpose_tile_kernel<T, F><<<g.grid, g.block, 0, stream>>>(a, t.lda, b, t.ldb, t.rows, t.cols, f);
    return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: transpose kernel launch");
}

template <class T> gemm_status_t launch_zero(const transpose_problem &t, cudaStream_t stream) {
    const dim3 block(tile_edge, tile_rows_per_pass, 1);
    const int64_t rows = t.b_rows(), cols = t.b_cols();
    const dim3 grid(unsigned(std::min<int64_t>((rows + tile_edge - 1) / tile_edge, int64_t(1) << 30)),
                    unsigned(std::min<int64_t>((cols + tile_rows_per_pass - 1) / tile_rows_per_pass, grid_y_limit)), 1);
    zero_kernel<T><<<grid, block, 0, stream>>>(static_cast<T *>(t.b), t.ldb, rows, cols);
    return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: zero fill kernel launch");
}

template <class T> gemm_status_t launch_real(const transpose_problem &t, cudaStream_t stream) {
    if (t.alpha_one()) return launch_with<T>(t, stream, identity{});
    return launch_with<T>(t, stream, real_scale<T>{compute_of<T>(t.alpha)});
}

template <class V, class R> gemm_status_t launch_complex_as(const transpose_problem &t, cudaStream_t stream) {
    const bool conj = t.op == transpose::c;
    if (t.alpha_one() && !conj) return launch_with<V>(t, stream, identity{});
    return launch_with<V>(t, stream, complex_scale<V, R>{R(t.alpha), R(t.alpha_imag), conj ? R(-1) : R(1)});
}

// Whether A (when read) and B start on a multiple of the element's size, which the vector
// types' accesses need (every element is then aligned: leading dimensions count elements).
bool vector_aligned(const transpose_problem &t) {
    const std::uintptr_t size = dtype_size(t.type);
    return reinterpret_cast<std::uintptr_t>(t.b) % size == 0 && reinterpret_cast<std::uintptr_t>(t.a) % size == 0;
}

template <class V, class R> gemm_status_t launch_complex(const transpose_problem &t, cudaStream_t stream) {
    return vector_aligned(t) ? launch_complex_as<V, R>(t, stream) : launch_complex_as<parts_of<R>, R>(t, stream);
}

}  // namespace

gemm_status_t launch_transpose(const transpose_problem &t, cudaStream_t stream, run_report &ctx) {
    if (t.alpha_zero()) {
        ctx.variant_used = "zero_fill_32x8";
        switch (t.type) {
        case dtype::f16:
        case dtype::bf16: return launch_zero<__half>(t, stream);
        case dtype::f32: return launch_zero<float>(t, stream);
        case dtype::f64: return launch_zero<double>(t, stream);
        case dtype::c32:
            return vector_aligned(t) ? launch_zero<float2>(t, stream) : launch_zero<parts_of<float>>(t, stream);
        case dtype::c64:
            return vector_aligned(t) ? launch_zero<double2>(t, stream) : launch_zero<parts_of<double>>(t, stream);
        case dtype::e4m3:
        case dtype::e5m2: break;  // gemm_omatcopy refuses FP8
        }
        return GEMM_STATUS_INTERNAL_ERROR;
    }
    ctx.variant_used = t.op == transpose::n ? "copy_32x8" : "transpose_tile_32x32_pad33";
    switch (t.type) {
    case dtype::f32: return launch_real<float>(t, stream);
    case dtype::f64: return launch_real<double>(t, stream);
    case dtype::f16: return launch_real<__half>(t, stream);
    case dtype::bf16: return launch_real<__nv_bfloat16>(t, stream);
    case dtype::c32: return launch_complex<float2, float>(t, stream);
    case dtype::c64: return launch_complex<double2, double>(t, stream);
    case dtype::e4m3:
    case dtype::e5m2: break;  // gemm_omatcopy refuses FP8
    }
    return GEMM_STATUS_INTERNAL_ERROR;
}

}  // namespace gemm::cuda_tiled
