// scale_c.cu: C = beta * C on the device, the k == 0 / alpha == 0 case of every CUDA backend.
#include "scale_c.hpp"

#include <algorithm>

#include "backends/cuda_common/runtime/cuda_status.hpp"
#include "device_elements.cuh"

namespace gemm::cuda {
namespace {

// x walks rows: C is column-major, so neighbouring threads touch neighbouring addresses.
// Grid-stride loops in all three dimensions cover any m, n and batch.
template <class T, class S>
__global__ void scale_kernel(T *c, int64_t m, int64_t n, int64_t ldc, int64_t stride_c, int64_t batch, S beta) {
    for (int64_t z = blockIdx.z; z < batch; z += gridDim.z)
        for (int64_t j = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; j < n; j += int64_t(gridDim.y) * blockDim.y)
            for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
                 i += int64_t(gridDim.x) * blockDim.x) {
                T *e = c + z * stride_c + j * ldc + i;
                *e = beta == S(0) ? from_compute<T>(S(0)) : from_compute<T>(S(beta * to_compute(*e)));
            }
}

// Complex C as pairs of R (real, imaginary); beta = br + bi·i.
template <class R>
__global__ void scale_complex_kernel(R *c, int64_t m, int64_t n, int64_t ldc, int64_t stride_c, int64_t batch, R br,
                                     R bi) {
    for (int64_t z = blockIdx.z; z < batch; z += gridDim.z)
        for (int64_t j = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; j < n; j += int64_t(gridDim.y) * blockDim.y)
            for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
                 i += int64_t(gridDim.x) * blockDim.x) {
                R *e = c + 2 * (z * stride_c + j * ldc + i);
                if (br == R(0) && bi == R(0)) {
                    e[0] = e[1] = R(0);
                } else {
                    R re = e[0], im = e[1];
                    e[0] = br * re - bi * im;
                    e[1] = br * im + bi * re;
                }
            }
}

struct scale_grid {
    dim3 block, grid;
    explicit scale_grid(const problem &p) {
        constexpr int64_t bx = 32, by = 8;
        block = dim3(unsigned(bx), unsigned(by), 1);
        grid =
            dim3(unsigned(std::min<int64_t>((p.m + bx - 1) / bx, 65535)),
                 unsigned(std::min<int64_t>((p.n + by - 1) / by, 65535)), unsigned(std::min<int64_t>(p.batch, 65535)));
    }
};

template <class T, class S> gemm_status_t launch_scale(const problem &p, cudaStream_t stream, S beta) {
    scale_grid g(p);
    scale_kernel<T, S>
        <<<g.grid, g.block, 0, stream>>>(static_cast<T *>(p.c), p.m, p.n, p.ldc, p.stride_c, p.batch, beta);
    return cuda_status(cudaGetLastError(), "scale_c kernel launch");
}

template <class R> gemm_status_t launch_scale_complex(const problem &p, cudaStream_t stream) {
    scale_grid g(p);
    scale_complex_kernel<R><<<g.grid, g.block, 0, stream>>>(static_cast<R *>(p.c), p.m, p.n, p.ldc, p.stride_c, p.batch,
                                                            R(p.beta), R(p.beta_imag));
    return cuda_status(cudaGetLastError(), "scale_c kernel launch");
}

}  // namespace

gemm_status_t scale_c(const problem &dp, cudaStream_t stream) {
    if (dp.m == 0 || dp.n == 0 || dp.batch == 0) return GEMM_STATUS_SUCCESS;
    switch (dp.c_type) {
    case dtype::f32: return launch_scale<float>(dp, stream, float(dp.beta));
    case dtype::f64: return launch_scale<double>(dp, stream, dp.beta);
    case dtype::f16: return launch_scale<__half>(dp, stream, float(dp.beta));
    case dtype::bf16: return launch_scale<__nv_bfloat16>(dp, stream, float(dp.beta));
    case dtype::c32: return launch_scale_complex<float>(dp, stream);
    case dtype::c64: return launch_scale_complex<double>(dp, stream);
    case dtype::e4m3:
    case dtype::e5m2: break;  // never a C type (the API refuses it)
    }
    return GEMM_STATUS_INTERNAL_ERROR;
}

}  // namespace gemm::cuda
