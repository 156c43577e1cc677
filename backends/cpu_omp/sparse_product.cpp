// sparse_product.cpp: C = alpha * op(A) * op(B) + beta * C with a sparse A on host memory, in
// the call's type. CSR with op N gathers: each row of C is its row of A times op(B), the rows
// taken in chunks from a shared counter. Every other form scatters (an entry of A adds to the
// row of C its column names, or COO's entries to rows in any order), so that no two threads
// write one element each thread owns a range of C's rows, scans every entry and applies those
// that land in its range: no atomics and no partial copies of C, at the price of each thread
// reading every index (backends/cpu_omp/NOTES.md, "Sparse products").
#include "sparse_product.hpp"

#include <algorithm>
#include <atomic>
#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "worker_pool.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// Rows of C a thread takes at a time in the gather.
constexpr int64_t rows_per_chunk = 16;
// Below this many multiply-adds per thread the pool costs more than it saves.
constexpr double products_per_thread = 32 * 1024;

template <class S> struct is_complex_type : std::false_type {};
template <class R> struct is_complex_type<std::complex<R>> : std::true_type {};

template <class S> S conj_if(S x, bool conj) {
    if constexpr (is_complex_type<S>::value) return conj ? std::conj(x) : x;
    else return x;
}

template <class S> S scalar_of(double re, double im) {
    if constexpr (is_complex_type<S>::value) return S(typename S::value_type(re), typename S::value_type(im));
    else return S(re);
}

// The problem's arrays typed: S the values', I the indices'.
template <class S, class I> struct view {
    const sparse_problem &s;
    const I *rows = static_cast<const I *>(s.format == sparse_format::csr ? s.row_offsets : s.row_indices);
    const I *cols = static_cast<const I *>(s.col_indices);
    const S *values = static_cast<const S *>(s.values);
    const S *b = static_cast<const S *>(s.b);
    S *c = static_cast<S *>(s.c);
    S alpha = scalar_of<S>(s.alpha, s.alpha_imag), beta = scalar_of<S>(s.beta, s.beta_imag);

    int64_t index(const I *array, int64_t p) const { return int64_t(array[p]) - s.index_base; }
    S b_at(int64_t l, int64_t j) const { return conj_if(b[l * s.b_row_step + j * s.b_col_step], s.b_conj); }
    S &c_at(int64_t i, int64_t j) const { return c[i * s.c_row_step + j * s.c_col_step]; }
};

// C(i, :) += a * op(B)(l, :); contiguous rows of B and C (row-major, op_b N) in a loop the
// compiler vectorizes.
template <class S, class I> void add_row(const view<S, I> &v, S a, int64_t l, int64_t i) {
    const sparse_problem &s = v.s;
    if (s.b_col_step == 1 && s.c_col_step == 1 && !s.b_conj) {
        const S *b = v.b + l * s.b_row_step;
        S *c = v.c + i * s.c_row_step;
        for (int64_t j = 0; j < s.n; ++j) c[j] += a * b[j];
        return;
    }
    for (int64_t j = 0; j < s.n; ++j) v.c_at(i, j) += a * v.b_at(l, j);
}

// C's rows [i0, i1) times beta: zeros for beta = 0 (C not read), nothing for beta = 1.
template <class S, class I> void scale_rows(const view<S, I> &v, int64_t i0, int64_t i1) {
    const sparse_problem &s = v.s;
    if (s.beta == 1.0 && s.beta_imag == 0.0) return;
    for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
            S &out = v.c_at(i, j);
            out = s.beta_zero() ? S(0) : v.beta * out;
        }
}

// Row i of C from row i of A (CSR, op N). SpMV (n = 1) sums in a register; wider C is scaled
// by beta and then takes alpha * a(i, l) * op(B)(l, :) per entry, which measured 3x faster than
// sums held per block of 16 columns (NOTES.md, "Sparse products").
template <class S, class I> void gather_row(const view<S, I> &v, int64_t i) {
    const sparse_problem &s = v.s;
    const int64_t lo = v.index(v.rows, i), hi = v.index(v.rows, i + 1);
    const bool conj_a = s.op_a == transpose::c;
    if (s.n == 1) {
        S sum = S(0);
        for (int64_t p = lo; p < hi; ++p) sum += conj_if(v.values[p], conj_a) * v.b_at(v.index(v.cols, p), 0);
        S &out = v.c_at(i, 0);
        out = s.beta_zero() ? v.alpha * sum : v.alpha * sum + v.beta * out;  // beta = 0: not read
        return;
    }
    scale_rows(v, i, i + 1);
    for (int64_t p = lo; p < hi; ++p) add_row(v, v.alpha * conj_if(v.values[p], conj_a), v.index(v.cols, p), i);
}

// Every entry whose row of C lies in [i0, i1) adds alpha times its value times a row of op(B).
template <class S, class I> void scatter_rows(const view<S, I> &v, int64_t i0, int64_t i1) {
    const sparse_problem &s = v.s;
    const bool by_row = s.op_a == transpose::n, conj_a = s.op_a == transpose::c;
    auto apply = [&](int64_t row, int64_t col, int64_t p) {
        const int64_t i = by_row ? row : col, l = by_row ? col : row;
        if (i < i0 || i >= i1) return;
        add_row(v, v.alpha * conj_if(v.values[p], conj_a), l, i);
    };
    if (s.format == sparse_format::csr) {
        for (int64_t r = 0; r < s.rows; ++r)
            for (int64_t p = v.index(v.rows, r), hi = v.index(v.rows, r + 1); p < hi; ++p)
                apply(r, v.index(v.cols, p), p);
    } else {
        for (int64_t p = 0; p < s.nnz; ++p) apply(v.index(v.rows, p), v.index(v.cols, p), p);
    }
}

int threads_for(const sparse_problem &s) {
    const double products = double(std::max<int64_t>(s.nnz, s.m)) * double(s.n);
    const int64_t wanted = int64_t(std::min(products / products_per_thread, 1e6)) + 1;
    return int(std::min<int64_t>({wanted, call_threads(), s.m}));
}

template <class S, class I> void run_typed(const sparse_problem &s, int threads) {
    const view<S, I> v{s};
    std::atomic<int64_t> next{0};
    if (s.format == sparse_format::csr && s.op_a == transpose::n && !s.scales_only()) {
        const int64_t chunks = (s.m + rows_per_chunk - 1) / rows_per_chunk;
        auto work = [&]() noexcept {
            for (int64_t k = next.fetch_add(1, std::memory_order_relaxed); k < chunks;
                 k = next.fetch_add(1, std::memory_order_relaxed))
                for (int64_t i = k * rows_per_chunk; i < std::min(s.m, (k + 1) * rows_per_chunk); ++i) gather_row(v, i);
        };
        run_on_threads(threads, work);
        return;
    }
    // One range of C's rows per thread: its scaling, then its entries (none when the product
    // is not read).
    const int64_t ranges = threads;
    auto work = [&]() noexcept {
        for (int64_t k = next.fetch_add(1, std::memory_order_relaxed); k < ranges;
             k = next.fetch_add(1, std::memory_order_relaxed)) {
            const int64_t i0 = s.m * k / ranges, i1 = s.m * (k + 1) / ranges;
            scale_rows(v, i0, i1);
            if (!s.scales_only()) scatter_rows(v, i0, i1);
        }
    };
    run_on_threads(threads, work);
}

template <class S> void run_values(const sparse_problem &s, int threads) {
    if (s.index64) run_typed<S, int64_t>(s, threads);
    else run_typed<S, int32_t>(s, threads);
}

// "csr_rows_f32" (gather) or "csr_scatter_f32", "coo_scatter_f32": literals, so that the trace
// allocates nothing.
std::string_view variant_name(const sparse_problem &s) {
    const bool gather = s.format == sparse_format::csr && s.op_a == transpose::n;
    constexpr std::string_view gathers[] = {"csr_rows_f32", "csr_rows_f64", "", "", "csr_rows_c32", "csr_rows_c64"};
    constexpr std::string_view csr[] = {"csr_scatter_f32", "csr_scatter_f64", "", "",
                                        "csr_scatter_c32", "csr_scatter_c64"};
    constexpr std::string_view coo[] = {"coo_scatter_f32", "coo_scatter_f64", "", "",
                                        "coo_scatter_c32", "coo_scatter_c64"};
    const auto t = std::size_t(s.type);
    return gather ? gathers[t] : s.format == sparse_format::csr ? csr[t] : coo[t];
}

}  // namespace

gemm_status_t sparse_product(const sparse_problem &s, run_report &ctx) {
    ctx.variant_used = variant_name(s);
    const int threads = threads_for(s);
    switch (s.type) {
    case dtype::f32: run_values<float>(s, threads); break;
    case dtype::f64: run_values<double>(s, threads); break;
    case dtype::c32: run_values<std::complex<float>>(s, threads); break;
    case dtype::c64: run_values<std::complex<double>>(s, threads); break;
    default: return GEMM_STATUS_NOT_SUPPORTED;  // supports_spmm refused it
    }
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm::cpu_omp_detail
