// epilogue_pass.cu: an epilogue the backend did not fuse, as kernels on the call's stream
// after the product (dispatch/epilogue_pass.hpp).
#include "epilogue_pass.hpp"

#include <algorithm>

#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "backends/cuda_common/runtime/device_context.hpp"
#include "device_elements.cuh"
#include "dispatch/activation_math.hpp"
#include "dispatch/error.hpp"

namespace gemm::cuda {
namespace {

struct epilogue_args {
    int64_t m, n, ldc, ld_aux;
    epilogue_act act;
    bool backward;
    epilogue_axis axis;
};

// x walks rows (C is column-major: neighbouring threads, neighbouring addresses); grid-stride
// loops cover any m and n.
template <class T> __global__ void activation_kernel(T *c, const T *bias, T *aux, epilogue_args a) {
    using S = compute_of<T>;
    for (int64_t j = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; j < a.n; j += int64_t(gridDim.y) * blockDim.y)
        for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.m; i += int64_t(gridDim.x) * blockDim.x) {
            T *e = c + i + j * a.ldc;
            S z = to_compute(*e), saved = S(0);
            if (a.backward) {
                saved = to_compute(aux[i + j * a.ld_aux]);
            } else {
                if (bias) z += to_compute(bias[a.axis == epilogue_axis::rows ? i : j]);
                if (aux) aux[i + j * a.ld_aux] = from_compute<T>(z);
            }
            *e = from_compute<T>(activation_math::apply(a.act, z, saved));
        }
}

constexpr int row_lanes = 32, row_slices = 8;

// Sums of each row: a block takes 32 rows (x, neighbouring addresses) and 8 slices of the
// columns (y, every 8th column), so that enough threads read C when it has few rows; the 8
// partial sums are added in a fixed order, so the result does not depend on scheduling.
template <class T> __global__ void row_sums_kernel(const T *c, T *sums, int64_t m, int64_t n, int64_t ldc) {
    using S = compute_of<T>;
    __shared__ S partial[row_slices][row_lanes];
    for (int64_t base = int64_t(blockIdx.x) * row_lanes; base < m; base += int64_t(gridDim.x) * row_lanes) {
        const int64_t i = base + threadIdx.x;
        S sum = 0;
        if (i < m)
            for (int64_t j = threadIdx.y; j < n; j += row_slices) sum += to_compute(c[i + j * ldc]);
        partial[threadIdx.y][threadIdx.x] = sum;
        __syncthreads();
        if (threadIdx.y == 0 && i < m) {
            S total = 0;
            for (int y = 0; y < row_slices; ++y) total += partial[y][threadIdx.x];
            sums[i] = from_compute<T>(total);
        }
        __syncthreads();  // partial is reused by the next rows
    }
}

constexpr int column_threads = 256;

// Sums of each column: one block per column, its threads down the column, then a tree in
// shared memory.
template <class T> __global__ void column_sums_kernel(const T *c, T *sums, int64_t m, int64_t n, int64_t ldc) {
    using S = compute_of<T>;
    __shared__ S partial[column_threads];
    for (int64_t j = blockIdx.x; j < n; j += gridDim.x) {
        S sum = 0;
        for (int64_t i = threadIdx.x; i < m; i += blockDim.x) sum += to_compute(c[i + j * ldc]);
        partial[threadIdx.x] = sum;
        __syncthreads();
        for (int half = column_threads / 2; half > 0; half /= 2) {
            if (int(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
            __syncthreads();
        }
        if (threadIdx.x == 0) sums[j] = from_compute<T>(partial[0]);
        __syncthreads();  // partial is reused by the next column
    }
}

template <class T> gemm_status_t launch(const problem &p, cudaStream_t stream) {
    const epilogue_spec &e = p.epilogue;
    epilogue_args a{p.m, p.n, p.ldc, e.ld_aux, e.act, e.backward(), e.axis};
    const dim3 block(32, 8);
    const dim3 grid(unsigned(std::min<int64_t>((p.m + 31) / 32, 65535)),
                    unsigned(std::min<int64_t>((p.n + 7) / 8, 65535)));
    activation_kernel<T>
        <<<grid, block, 0, stream>>>(static_cast<T *>(p.c), static_cast<const T *>(e.bias), static_cast<T *>(e.aux), a);
    gemm_status_t s = cuda_status(cudaGetLastError(), "epilogue kernel launch");
    if (s != GEMM_STATUS_SUCCESS || !e.backward() || e.axis == epilogue_axis::none) return s;
    T *sums = static_cast<T *>(e.bias_grad);
    if (e.axis == epilogue_axis::rows) {
        row_sums_kernel<T>
            <<<unsigned(std::min<int64_t>((p.m + row_lanes - 1) / row_lanes, 65535)), dim3(row_lanes, row_slices), 0,
               stream>>>(static_cast<const T *>(p.c), sums, p.m, p.n, p.ldc);
    } else {
        column_sums_kernel<T><<<unsigned(std::min<int64_t>(p.n, 65535)), column_threads, 0, stream>>>(
            static_cast<const T *>(p.c), sums, p.m, p.n, p.ldc);
    }
    return cuda_status(cudaGetLastError(), "bias gradient kernel launch");
}

}  // namespace

gemm_status_t epilogue_pass(const problem &p) {
    if (p.m == 0 || p.n == 0) return GEMM_STATUS_SUCCESS;
    device_guard guard;
    if (gemm_status_t s = guard.enter(p.device); s != GEMM_STATUS_SUCCESS) return s;
    cudaStream_t stream = static_cast<cudaStream_t>(p.stream);
    switch (p.c_type) {
    case dtype::f32: return launch<float>(p, stream);
    case dtype::f64: return launch<double>(p, stream);
    case dtype::f16: return launch<__half>(p, stream);
    case dtype::bf16: return launch<__nv_bfloat16>(p, stream);
    case dtype::c32:
    case dtype::c64:
    case dtype::e4m3:
    case dtype::e5m2: break;
    }
    return set_error(GEMM_STATUS_INTERNAL_ERROR, "epilogue pass: a complex or FP8 C type");
}

}  // namespace gemm::cuda
