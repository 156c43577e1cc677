// transpose_launch.cu: B = alpha * op(A) on the device for every dtype: the classic
// shared-memory tiled transpose (op T and C), a scaled copy (op N), a fill of zeros (alpha = 0).
#include "transpose_launch.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector_types.h>

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "backends/cuda_common/kernels/device_elements.cuh"
#include "backends/cuda_common/runtime/cuda_status.hpp"

namespace gemm::cuda_tiled {
namespace {

using cuda::compute_of;
using cuda::from_compute;
using cuda::to_compute;

// Blocks of 32 x 8 threads. Each moves a tile of tile_of<T>::i elements along A's columns
// (contiguous in A) by tile_of<T>::j along its rows (contiguous in B), loading all of its share
// (i / 32 * j / 8 elements, 64 bytes a thread) before storing any: a device copy's bandwidth needs
// that many bytes in flight per SM, more than 16 bytes a thread keep (NOTES.md, "Transpose and
// copy kernels", has the figures). A tile's shared copy stays near 16 KiB at every element
// size, under the 48 KiB static limit.
constexpr int warp_width = 32;
constexpr int block_rows = 8;
constexpr int block_threads = warp_width * block_rows;
// Blocks an SM holds at once (__launch_bounds__): 64 registers a thread keep a share's 16
// elements in registers without spilling, and 4 blocks an SM keep 64 KiB of loads in flight.
constexpr int blocks_per_sm = 4;
template <class T> struct tile_of {
    static constexpr int i = sizeof(T) <= 8 ? 64 : 32;
    static constexpr int j = sizeof(T) <= 4 ? 64 : 32;
};

// The trace's names of the kernels for elements of this many bytes, their tiles i x j.
std::string_view kernel_name(transpose op, std::size_t bytes) {
    if (op == transpose::n) return bytes <= 4 ? "copy_64x64" : bytes <= 8 ? "copy_64x32" : "copy_32x32";
    return bytes <= 4   ? "transpose_tile_64x64_pad1"
           : bytes <= 8 ? "transpose_tile_64x32_pad1"
                        : "transpose_tile_32x32_pad1";
}

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
// A's columns, so neighbouring threads read neighbouring addresses of a column of A, then writes
// the transposed tile with x along B's columns, neighbouring addresses of a column of B: both
// global accesses are coalesced, and the turn happens in shared memory. The tile's rows are one
// element longer than the tile is wide (an odd number of 4-byte words) so that the column read
// by the store pass (tile[x][y]: 32 threads a row apart) touches 32 different banks (8-byte and
// 16-byte elements: different banks in each half and quarter warp that the hardware serves
// together); without the padding all 32 would share one bank and the store pass would
// serialize 32 ways. Whole tiles skip the bounds checks. Blocks walk the tiles of A along y in
// steps of the grid, for more than grid_y_limit tile rows.
template <class T, class F>
__global__ void __launch_bounds__(block_threads, blocks_per_sm)
    transpose_tile_kernel(const T *a, int64_t lda, T *b, int64_t ldb, int64_t rows, int64_t cols, F f) {
    constexpr int ti = tile_of<T>::i, tj = tile_of<T>::j, across = ti / warp_width, down = tj / block_rows;
    __shared__ T tile[tj][ti + 1];
    const int64_t i0 = int64_t(blockIdx.x) * ti;
    const int tx = int(threadIdx.x), ty = int(threadIdx.y);
    for (int64_t j0 = int64_t(blockIdx.y) * tj; j0 < cols; j0 += int64_t(gridDim.y) * tj) {
        const bool whole = i0 + ti <= rows && j0 + tj <= cols;
        T v[across * down];
#pragma unroll
        for (int c = 0; c < across; ++c)
#pragma unroll
            for (int r = 0; r < down; ++r) {
                const int64_t i = i0 + tx + c * warp_width, j = j0 + ty + r * block_rows;
                if (whole || (i < rows && j < cols)) v[c * down + r] = a[i + j * lda];
            }
#pragma unroll
        for (int c = 0; c < across; ++c)
#pragma unroll
            for (int r = 0; r < down; ++r) tile[ty + r * block_rows][tx + c * warp_width] = v[c * down + r];
        __syncthreads();
        // B's tile is tj rows (A's columns) by ti columns: x along its rows' index j.
#pragma unroll
        for (int c = 0; c < tj / warp_width; ++c)
#pragma unroll
            for (int r = 0; r < ti / block_rows; ++r) {
                const int64_t row_of_b = j0 + tx + c * warp_width, col_of_b = i0 + ty + r * block_rows;
                if (whole || (row_of_b < cols && col_of_b < rows))
                    b[row_of_b + col_of_b * ldb] = f(tile[tx + c * warp_width][ty + r * block_rows]);
            }
        __syncthreads();  // the next tile reuses the shared tile
    }
}

// op N: B(i, j) = f(A(i, j)) over the transpose's tiles, x along the columns, so each warp reads
// and writes 32 neighbouring elements of a column; each thread loads its share of a tile before
// it stores any, as the transpose does. Blocks walk the tiles along y in steps of the grid.
template <class T, class F>
__global__ void __launch_bounds__(block_threads, blocks_per_sm)
    copy_tile_kernel(const T *a, int64_t lda, T *b, int64_t ldb, int64_t rows, int64_t cols, F f) {
    constexpr int ti = tile_of<T>::i, tj = tile_of<T>::j, across = ti / warp_width, down = tj / block_rows;
    const int64_t i0 = int64_t(blockIdx.x) * ti;
    const int tx = int(threadIdx.x), ty = int(threadIdx.y);
    for (int64_t j0 = int64_t(blockIdx.y) * tj; j0 < cols; j0 += int64_t(gridDim.y) * tj) {
        const bool whole = i0 + ti <= rows && j0 + tj <= cols;
        T v[across * down];
#pragma unroll
        for (int c = 0; c < across; ++c)
#pragma unroll
            for (int r = 0; r < down; ++r) {
                const int64_t i = i0 + tx + c * warp_width, j = j0 + ty + r * block_rows;
                if (whole || (i < rows && j < cols)) v[c * down + r] = a[i + j * lda];
            }
#pragma unroll
        for (int c = 0; c < across; ++c)
#pragma unroll
            for (int r = 0; r < down; ++r) {
                const int64_t i = i0 + tx + c * warp_width, j = j0 + ty + r * block_rows;
                if (whole || (i < rows && j < cols)) b[i + j * ldb] = f(v[c * down + r]);
            }
    }
}

// alpha = 0: zeros into B's window, A never read.
template <class T> __global__ void zero_kernel(T *b, int64_t ldb, int64_t rows, int64_t cols) {
    for (int64_t j = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; j < cols; j += int64_t(gridDim.y) * blockDim.y)
        for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows; i += int64_t(gridDim.x) * blockDim.x)
            b[i + j * ldb] = T{};
}

// A grid of 32 x 8 blocks over rows x cols, one block per tile of T (grid-stride beyond the
// limits).
template <class T> struct tile_grid {
    dim3 block, grid;
    tile_grid(int64_t rows, int64_t cols) {
        block = dim3(warp_width, block_rows, 1);
        const int64_t across = (rows + tile_of<T>::i - 1) / tile_of<T>::i;
        const int64_t down = (cols + tile_of<T>::j - 1) / tile_of<T>::j;
        grid = dim3(unsigned(std::min<int64_t>(across, int64_t(1) << 30)), unsigned(std::min(down, grid_y_limit)), 1);
    }
};

template <class T, class F> gemm_status_t launch_with(const transpose_problem &t, cudaStream_t stream, F f) {
    const T *a = static_cast<const T *>(t.a);
    T *b = static_cast<T *>(t.b);
    const tile_grid<T> g(t.rows, t.cols);
    if (t.op == transpose::n)
        copy_tile_kernel<T, F><<<g.grid, g.block, 0, stream>>>(a, t.lda, b, t.ldb, t.rows, t.cols, f);
    else transpose_tile_kernel<T, F><<<g.grid, g.block, 0, stream>>>(a, t.lda, b, t.ldb, t.rows, t.cols, f);
    return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: transpose kernel launch");
}

template <class T> gemm_status_t launch_zero(const transpose_problem &t, cudaStream_t stream) {
    const dim3 block(warp_width, block_rows, 1);
    const int64_t rows = t.b_rows(), cols = t.b_cols();
    const dim3 grid(unsigned(std::min<int64_t>((rows + warp_width - 1) / warp_width, int64_t(1) << 30)),
                    unsigned(std::min<int64_t>((cols + block_rows - 1) / block_rows, grid_y_limit)), 1);
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
    ctx.variant_used = kernel_name(t.op, dtype_size(t.type));
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
