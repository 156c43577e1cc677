// naive_kernel.cu: the one-thread-per-element GEMM kernel, the simplest correct CUDA GEMM.
#include "naive_kernel.hpp"

#include <algorithm>

#include "backends/cuda_common/runtime/cuda_status.hpp"

namespace gemm::cuda {
namespace {

struct naive_args {
    int64_t m, n, k;
    bool a_t, b_t;  // op(A), op(B) transposed
    int64_t lda, stride_a, ldb, stride_b, ldc, stride_c, batch;
    bool reads_ab;  // k > 0 and alpha != 0
};

// One thread computes C(i, j) of one batch matrix. threadIdx.x walks the row index i, not
// the column: the canonical problem is column-major, so C(i, j) and C(i + 1, j) are
// neighbours in memory, as are A(i, l) and A(i + 1, l) when A is not transposed; a warp then
// reads and writes contiguous addresses while B(l, j) is one broadcast value per step. (The
// design's "x -> column" describes row-major C, where the columns are the contiguous side.)
// Grid-stride loops cover any m, n and batch (gridDim.y and z stop at 65535). The sum is in
// T: f32 is computed in f32.
template <class T> __global__ void naive_gemm(naive_args g, T alpha, T beta, const T *a, const T *b, T *c) {
    for (int64_t z = blockIdx.z; z < g.batch; z += gridDim.z) {
        T *cz = c + z * g.stride_c;
        for (int64_t j = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; j < g.n; j += int64_t(gridDim.y) * blockDim.y)
            for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < g.m;
                 i += int64_t(gridDim.x) * blockDim.x) {
                T sum = 0;
                if (g.reads_ab) {
                    // A(i, l) and B(l, j) as stored: N is (row + col * ld), T swaps the two.
                    int64_t a_step = g.a_t ? 1 : g.lda;
                    const T *ap = a + z * g.stride_a + (g.a_t ? i * g.lda : i);
                    int64_t b_step = g.b_t ? g.ldb : 1;
                    const T *bp = b + z * g.stride_b + (g.b_t ? j : j * g.ldb);
                    for (int64_t l = 0; l < g.k; ++l) sum += ap[l * a_step] * bp[l * b_step];
                }
                T *ce = cz + i + j * g.ldc;
                T v = alpha * sum;
                if (!g.reads_ab) v = 0;             // alpha == 0: not even 0 * (Inf or NaN in A or B)
                if (beta != T(0)) v += beta * *ce;  // beta == 0: C is written, never read
                *ce = v;
            }
    }
}

template <class T> gemm_status_t launch(const problem &p, cudaStream_t stream) {
    naive_args g{p.m,
                 p.n,
                 p.k,
                 p.op_a == transpose::t,
                 p.op_b == transpose::t,
                 p.lda,
                 p.stride_a,
                 p.ldb,
                 p.stride_b,
                 p.ldc,
                 p.stride_c,
                 p.batch,
                 p.k > 0 && p.alpha != 0.0};
    constexpr int64_t side = naive_block_side;
    dim3 block(unsigned(side), unsigned(side), 1);
    dim3 grid(unsigned(std::min<int64_t>((p.m + side - 1) / side, 1 << 30)),
              unsigned(std::min<int64_t>((p.n + side - 1) / side, 65535)), unsigned(std::min<int64_t>(p.batch, 65535)));
    naive_gemm<T><<<grid, block, 0, stream>>>(g, T(p.alpha), T(p.beta), static_cast<const T *>(p.a),
                                              static_cast<const T *>(p.b), static_cast<T *>(p.c));
    return cuda_status(cudaGetLastError(), "cuda_naive: kernel launch");
}

}  // namespace

gemm_status_t launch_naive_gemm(const problem &dp, cudaStream_t stream) {
    if (dp.ab_type == dtype::f64) return launch<double>(dp, stream);
    return launch<float>(dp, stream);
}

}  // namespace gemm::cuda
