// spmm_launch.cu: C = alpha * op(A) * op(B) + beta * C with a sparse A on the device, the
// seed's kernels: CSR with op N gathers, one thread per element of C summing its row of A (a
// warp per row for SpMV);
// every other form scatters, one thread per stored entry and column of C adding its product
// with atomicAdd after a pass that scales C (so the order of a sum, and its rounding, varies
// from run to run).
#include "spmm_launch.hpp"

#include <algorithm>
#include <cstdint>

#include "backends/cuda_common/runtime/cuda_status.hpp"

namespace gemm::cuda_tiled {
namespace {

constexpr int threads_per_block = 256;
// SpMV takes a warp per row from this many entries a row on average: below it most lanes of a
// warp would idle (not yet measured: backends/cuda_tiled/NOTES.md, "Open questions").
constexpr int64_t warp_row_entries = 8;
// Grid-stride loops cover the rest beyond this many blocks.
constexpr int64_t block_limit = int64_t(1) << 30;

// A complex element as its two parts, each read with its part's alignment (a caller's
// std::complex promises no more).
template <class R> struct parts { R re, im; };

template <class E> struct arith;

template <> struct arith<float> {
    using part = float;
    static __device__ float zero() { return 0.0f; }
    static __device__ float make(double re, double) { return float(re); }
    static __device__ float mul(float a, float b) { return a * b; }
    static __device__ float add(float a, float b) { return a + b; }
    static __device__ float conj(float a) { return a; }
    static __device__ void atomic_add(float *c, float v) { atomicAdd(c, v); }
    static __device__ float shuffle_down(float v, int by) { return __shfl_down_sync(0xffffffffu, v, by); }
};

template <> struct arith<double> {
    using part = double;
    static __device__ double zero() { return 0.0; }
    static __device__ double make(double re, double) { return re; }
    static __device__ double mul(double a, double b) { return a * b; }
    static __device__ double add(double a, double b) { return a + b; }
    static __device__ double conj(double a) { return a; }
    static __device__ void atomic_add(double *c, double v) { atomicAdd(c, v); }
    static __device__ double shuffle_down(double v, int by) { return __shfl_down_sync(0xffffffffu, v, by); }
};

template <class R> struct arith<parts<R>> {
    using E = parts<R>;
    static __device__ E zero() { return {R(0), R(0)}; }
    static __device__ E make(double re, double im) { return {R(re), R(im)}; }
    static __device__ E mul(E a, E b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
    static __device__ E add(E a, E b) { return {a.re + b.re, a.im + b.im}; }
    static __device__ E conj(E a) { return {a.re, -a.im}; }
    static __device__ void atomic_add(E *c, E v) {
        atomicAdd(&c->re, v.re);
        atomicAdd(&c->im, v.im);
    }
    static __device__ E shuffle_down(E v, int by) {
        return {__shfl_down_sync(0xffffffffu, v.re, by), __shfl_down_sync(0xffffffffu, v.im, by)};
    }
};

// What every kernel reads of the problem, by value.
template <class E, class I> struct args {
    const I *rows;  // CSR offsets or COO row indices
    const I *cols;
    const E *values;
    const E *b;
    E *c;
    int64_t m, n, nnz, a_rows, base;
    int64_t b_row_step, b_col_step, c_row_step, c_col_step;
    bool b_conj, a_conj, by_row, beta_zero, beta_one, columns_fast;
    double alpha, alpha_imag, beta, beta_imag;
};

template <class E, class I> __device__ E b_at(const args<E, I> &a, int64_t l, int64_t j) {
    const E x = a.b[l * a.b_row_step + j * a.b_col_step];
    return a.b_conj ? arith<E>::conj(x) : x;
}

// One thread per element of C (CSR, op N): neighbouring threads take neighbouring columns of
// one row where B's rows are contiguous (row-major), so that their reads of B coalesce and
// the row's entries are read once per warp; else neighbouring rows.
template <class E, class I> __global__ void csr_gather_kernel(args<E, I> a) {
    using X = arith<E>;
    const E alpha = X::make(a.alpha, a.alpha_imag), beta = X::make(a.beta, a.beta_imag);
    const int64_t total = a.m * a.n;
    for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
        const int64_t i = a.columns_fast ? e / a.n : e % a.m, j = a.columns_fast ? e % a.n : e / a.m;
        E sum = X::zero();
        for (int64_t p = int64_t(a.rows[i]) - a.base, hi = int64_t(a.rows[i + 1]) - a.base; p < hi; ++p) {
            const E v = a.a_conj ? X::conj(a.values[p]) : a.values[p];
            sum = X::add(sum, X::mul(v, b_at(a, int64_t(a.cols[p]) - a.base, j)));
        }
        E &out = a.c[i * a.c_row_step + j * a.c_col_step];
        const E scaled = X::mul(alpha, sum);
        out = a.beta_zero ? scaled : X::add(scaled, X::mul(beta, out));  // beta = 0: C not read
    }
}

// SpMV (CSR, op N, n = 1) a warp per row: the lanes read the row's entries side by side
// (coalesced, where a thread per row reads one entry of 32 rows at a time) and add their sums
// by shuffles; lane 0 writes. Every lane of a warp takes the same rows, so the shuffles see the
// whole warp.
template <class E, class I> __global__ void csr_warp_row_kernel(args<E, I> a) {
    using X = arith<E>;
    const E alpha = X::make(a.alpha, a.alpha_imag), beta = X::make(a.beta, a.beta_imag);
    const int lane = int(threadIdx.x) % 32;
    const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
    for (int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < a.m; i += warps) {
        E sum = X::zero();
        for (int64_t p = int64_t(a.rows[i]) - a.base + lane, hi = int64_t(a.rows[i + 1]) - a.base; p < hi; p += 32) {
            const E v = a.a_conj ? X::conj(a.values[p]) : a.values[p];
            sum = X::add(sum, X::mul(v, b_at(a, int64_t(a.cols[p]) - a.base, 0)));
        }
        for (int by = 16; by > 0; by /= 2) sum = X::add(sum, X::shuffle_down(sum, by));
        if (lane == 0) {
            E &out = a.c[i * a.c_row_step];
            const E scaled = X::mul(alpha, sum);
            out = a.beta_zero ? scaled : X::add(scaled, X::mul(beta, out));  // beta = 0: C not read
        }
    }
}

// C = beta * C over the m x n window: zeros for beta = 0 (C not read).
template <class E, class I> __global__ void scale_kernel(args<E, I> a) {
    using X = arith<E>;
    const E beta = X::make(a.beta, a.beta_imag);
    const int64_t total = a.m * a.n;
    for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
        const int64_t i = a.columns_fast ? e / a.n : e % a.m, j = a.columns_fast ? e % a.n : e / a.m;
        E &out = a.c[i * a.c_row_step + j * a.c_col_step];
        out = a.beta_zero ? X::zero() : X::mul(beta, out);
    }
}

// The CSR row entry p lies in: the last r with rows[r] - base <= p (a binary search over the
// offsets, so that transposed CSR needs no row array of its own).
template <class I> __device__ int64_t row_of(const I *offsets, int64_t rows, int64_t base, int64_t p) {
    int64_t lo = 0, hi = rows;  // offsets[lo] <= p < offsets[hi]
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (int64_t(offsets[mid]) - base <= p) lo = mid;
        else hi = mid;
    }
    return lo;
}

// One thread per stored entry and column of C: C(i, j) += alpha * a(p) * op(B)(l, j), i and l
// the entry's row and column (op N) or column and row (T, C). Columns are the fast index, so a
// warp adds along a row of C.
template <class E, class I> __global__ void scatter_kernel(args<E, I> a, bool coo) {
    using X = arith<E>;
    const E alpha = X::make(a.alpha, a.alpha_imag);
    const int64_t total = a.nnz * a.n;
    for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
        const int64_t p = e / a.n, j = e % a.n;
        const int64_t row = coo ? int64_t(a.rows[p]) - a.base : row_of(a.rows, a.a_rows, a.base, p);
        const int64_t col = int64_t(a.cols[p]) - a.base;
        const int64_t i = a.by_row ? row : col, l = a.by_row ? col : row;
        const E v = a.a_conj ? X::conj(a.values[p]) : a.values[p];
        X::atomic_add(&a.c[i * a.c_row_step + j * a.c_col_step], X::mul(X::mul(alpha, v), b_at(a, l, j)));
    }
}

unsigned blocks_for(int64_t threads) {
    return unsigned(std::max<int64_t>(1, std::min((threads + threads_per_block - 1) / threads_per_block, block_limit)));
}

template <class E, class I> gemm_status_t launch_typed(const sparse_problem &s, cudaStream_t stream, run_report &ctx) {
    args<E, I> a{};
    a.rows = static_cast<const I *>(s.format == sparse_format::csr ? s.row_offsets : s.row_indices);
    a.cols = static_cast<const I *>(s.col_indices);
    a.values = static_cast<const E *>(s.values);
    a.b = static_cast<const E *>(s.b);
    a.c = static_cast<E *>(s.c);
    a.m = s.m;
    a.n = s.n;
    a.nnz = s.nnz;
    a.a_rows = s.rows;
    a.base = s.index_base;
    a.b_row_step = s.b_row_step;
    a.b_col_step = s.b_col_step;
    a.c_row_step = s.c_row_step;
    a.c_col_step = s.c_col_step;
    a.b_conj = s.b_conj;
    a.a_conj = s.op_a == transpose::c;
    a.by_row = s.op_a == transpose::n;
    a.beta_zero = s.beta_zero();
    a.beta_one = s.beta == 1.0 && s.beta_imag == 0.0;
    a.columns_fast = s.n > 1 && s.c_col_step == 1;
    a.alpha = s.alpha;
    a.alpha_imag = s.alpha_imag;
    a.beta = s.beta;
    a.beta_imag = s.beta_imag;
    const int64_t elements = s.m * s.n;
    if (!s.scales_only() && s.format == sparse_format::csr && s.op_a == transpose::n && s.n == 1 &&
        s.nnz >= warp_row_entries * s.m) {
        ctx.variant_used = "csr_spmv_warp_per_row";
        csr_warp_row_kernel<E, I><<<blocks_for(s.m * 32), threads_per_block, 0, stream>>>(a);
        return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: sparse SpMV kernel launch");
    }
    if (!s.scales_only() && s.format == sparse_format::csr && s.op_a == transpose::n) {
        ctx.variant_used = "csr_gather_thread_per_element";
        csr_gather_kernel<E, I><<<blocks_for(elements), threads_per_block, 0, stream>>>(a);
        return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: sparse gather kernel launch");
    }
    ctx.variant_used = s.scales_only() ? "scale_c" : "scatter_atomic_thread_per_entry";
    if (!a.beta_one) {
        scale_kernel<E, I><<<blocks_for(elements), threads_per_block, 0, stream>>>(a);
        if (gemm_status_t st = cuda::cuda_status(cudaGetLastError(), "cuda_tiled: sparse scale kernel launch");
            st != GEMM_STATUS_SUCCESS)
            return st;
    }
    if (s.scales_only()) return GEMM_STATUS_SUCCESS;
    scatter_kernel<E, I><<<blocks_for(s.nnz * s.n), threads_per_block, 0, stream>>>(a, s.format == sparse_format::coo);
    return cuda::cuda_status(cudaGetLastError(), "cuda_tiled: sparse scatter kernel launch");
}

template <class E> gemm_status_t launch_values(const sparse_problem &s, cudaStream_t stream, run_report &ctx) {
    return s.index64 ? launch_typed<E, int64_t>(s, stream, ctx) : launch_typed<E, int32_t>(s, stream, ctx);
}

}  // namespace

gemm_status_t launch_spmm(const sparse_problem &s, cudaStream_t stream, run_report &ctx) {
    switch (s.type) {
    case dtype::f32: return launch_values<float>(s, stream, ctx);
    case dtype::f64: return launch_values<double>(s, stream, ctx);
    case dtype::c32: return launch_values<parts<float>>(s, stream, ctx);
    case dtype::c64: return launch_values<parts<double>>(s, stream, ctx);
    default: break;  // the API passes no other type
    }
    return GEMM_STATUS_INTERNAL_ERROR;
}

}  // namespace gemm::cuda_tiled
