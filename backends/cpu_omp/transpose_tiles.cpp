// transpose_tiles.cpp: B = alpha * op(A) for every dtype on host memory, tile by tile: each
// tile of A read down its columns (contiguous) and written into B's tile, whose lines stay in
// L1 while the tile is done; the tiles shared out over the caller and the pool.
#include "transpose_tiles.hpp"

#include <algorithm>
#include <atomic>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "gemm/gemm.hpp"
#include "worker_pool.hpp"

namespace gemm::cpu_omp_detail {
namespace {

// Below this many elements a call stays on the calling thread: waking the pool costs more
// than the copy (NOTES.md, "Transposes").
constexpr int64_t elements_per_thread = 64 * 1024;

// The edge of the blocks a tile is transposed in (a divisor of every tile edge).
constexpr int64_t micro = 8;

// The tiles of an rows x cols A, numbered down its tile columns: (index % down, index / down).
struct tiling {
    int64_t rows, cols, edge, down, count;
    tiling(int64_t r, int64_t c, int64_t e) : rows(r), cols(c), edge(e), down((r + e - 1) / e) {
        count = down * ((c + e - 1) / e);
    }
};

// Runs body(i0, i1, j0, j1) on every tile, the tiles taken one at a time from a shared counter
// by the caller and up to threads - 1 helpers.
template <class Body> void for_each_tile(const tiling &g, int threads, Body &body) {
    std::atomic<int64_t> next{0};
    auto work = [&]() noexcept {
        for (int64_t k = next.fetch_add(1, std::memory_order_relaxed); k < g.count;
             k = next.fetch_add(1, std::memory_order_relaxed)) {
            const int64_t i0 = (k % g.down) * g.edge, j0 = (k / g.down) * g.edge;
            body(i0, std::min(i0 + g.edge, g.rows), j0, std::min(j0 + g.edge, g.cols));
        }
    };
    run_on_threads(threads, work);
}

// What becomes of one element of A: S is the stored type, f maps an element to B's.
// op N: B(i, j) = f(A(i, j)); op T and C: B(j, i) = f(A(i, j)) (C's conjugate is in f).
template <class S, class F> void copy_tiles(const transpose_problem &t, int threads, F f) {
    const S *a = static_cast<const S *>(t.a);
    S *b = static_cast<S *>(t.b);
    const int64_t lda = t.lda, ldb = t.ldb;
    const tiling g(t.rows, t.cols, transpose_tile_edge(sizeof(S)));
    if (t.op == transpose::n) {
        auto body = [=](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
            for (int64_t j = j0; j < j1; ++j)
                for (int64_t i = i0; i < i1; ++i) b[i + j * ldb] = f(a[i + j * lda]);
        };
        for_each_tile(g, threads, body);
        return;
    }
    // The tile in blocks of micro x micro: a block is read as `micro` runs down A's columns
    // into registers (or L1) and written as `micro` runs down B's columns, so that both sides
    // touch whole runs of a cache line rather than one element per line; the tile keeps the
    // lines of B it writes in L1 until it is done. Blocks cut by the tile's edge go element by
    // element.
    auto body = [=](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
        for (int64_t jb = j0; jb < j1; jb += micro)
            for (int64_t ib = i0; ib < i1; ib += micro) {
                if (jb + micro <= j1 && ib + micro <= i1) {
                    S block[micro][micro];  // block[x][y] = A(ib + y, jb + x)
                    for (int64_t x = 0; x < micro; ++x)
                        for (int64_t y = 0; y < micro; ++y) block[x][y] = a[(ib + y) + (jb + x) * lda];
                    for (int64_t y = 0; y < micro; ++y)
                        for (int64_t x = 0; x < micro; ++x) b[(jb + x) + (ib + y) * ldb] = f(block[x][y]);
                    continue;
                }
                for (int64_t j = jb; j < std::min(jb + micro, j1); ++j)
                    for (int64_t i = ib; i < std::min(ib + micro, i1); ++i) b[j + i * ldb] = f(a[i + j * lda]);
            }
    };
    for_each_tile(g, threads, body);
}

// alpha = 0: zeros into B's b_rows() x b_cols() window, A never read.
template <class S> void zero_tiles(const transpose_problem &t, int threads) {
    S *b = static_cast<S *>(t.b);
    const int64_t ldb = t.ldb;
    const tiling g(t.b_rows(), t.b_cols(), transpose_tile_edge(sizeof(S)));
    auto body = [=](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) std::memset(static_cast<void *>(b + i0 + j * ldb), 0, sizeof(S) * (i1 - i0));
    };
    for_each_tile(g, threads, body);
}

template <class R> void run_real(const transpose_problem &t, int threads) {
    const R alpha = R(t.alpha);
    if (t.alpha_one()) copy_tiles<R>(t, threads, [](R x) { return x; });
    else copy_tiles<R>(t, threads, [alpha](R x) { return alpha * x; });
}

// f16 and bf16 through f32, rounded once; alpha = 1 copies the bits (exact, NaN payloads kept).
template <class H> void run_16bit(const transpose_problem &t, int threads) {
    const float alpha = float(t.alpha);
    if (t.alpha_one()) copy_tiles<uint16_t>(t, threads, [](uint16_t x) { return x; });
    else copy_tiles<uint16_t>(t, threads, [alpha](uint16_t x) { return H::from_float(alpha * H::to_float(x)); });
}

// Complex elements as their two parts. A real alpha (imaginary part 0) scales each part, so
// that an infinite part of A stays in its own part; others multiply as complex numbers, the
// products written out (std::complex's operator* takes a slow path for NaN results).
template <class R> void run_complex(const transpose_problem &t, int threads) {
    using Z = std::complex<R>;
    const bool conj = t.op == transpose::c;
    const R ar = R(t.alpha), ai = R(t.alpha_imag);
    if (t.alpha_one()) {
        if (conj) copy_tiles<Z>(t, threads, [](Z x) { return Z(x.real(), -x.imag()); });
        else copy_tiles<Z>(t, threads, [](Z x) { return x; });
    } else if (ai == R(0)) {
        const R s = conj ? -ar : ar;
        copy_tiles<Z>(t, threads, [ar, s](Z x) { return Z(ar * x.real(), s * x.imag()); });
    } else {
        const R sign = conj ? R(-1) : R(1);
        copy_tiles<Z>(t, threads, [ar, ai, sign](Z x) {
            const R re = x.real(), im = sign * x.imag();
            return Z(ar * re - ai * im, ar * im + ai * re);
        });
    }
}

// Up to one thread per elements_per_thread elements, within the call's thread count.
int threads_for(const transpose_problem &t) {
    const double elements = double(t.rows) * double(t.cols);
    const int64_t wanted = int64_t(std::min(elements / double(elements_per_thread), 1e6)) + 1;
    return int(std::min<int64_t>(wanted, call_threads()));
}

// "tiles_f32_64x64", one literal per dtype and edge so that the trace allocates nothing.
std::string_view variant_name(dtype type) {
    switch (type) {
    case dtype::f32: return "tiles_f32_64x64";
    case dtype::f64: return "tiles_f64_32x32";
    case dtype::f16: return "tiles_f16_64x64";
    case dtype::bf16: return "tiles_bf16_64x64";
    case dtype::c32: return "tiles_c32_32x32";
    case dtype::c64: return "tiles_c64_32x32";
    case dtype::e4m3:
    case dtype::e5m2: break;  // gemm_omatcopy refuses FP8
    }
    return "tiles";
}

}  // namespace

gemm_status_t transpose_tiles(const transpose_problem &t, run_report &ctx) {
    const int threads = threads_for(t);
    ctx.variant_used = variant_name(t.type);
    if (t.alpha_zero()) {
        switch (dtype_size(t.type)) {
        case 2: zero_tiles<uint16_t>(t, threads); break;
        case 4: zero_tiles<float>(t, threads); break;
        case 8: zero_tiles<double>(t, threads); break;
        default: zero_tiles<std::complex<double>>(t, threads); break;
        }
        return GEMM_STATUS_SUCCESS;
    }
    switch (t.type) {
    case dtype::f32: run_real<float>(t, threads); break;
    case dtype::f64: run_real<double>(t, threads); break;
    case dtype::f16: run_16bit<half>(t, threads); break;
    case dtype::bf16: run_16bit<bfloat16>(t, threads); break;
    case dtype::c32: run_complex<float>(t, threads); break;
    case dtype::c64: run_complex<double>(t, threads); break;
    case dtype::e4m3:
    case dtype::e5m2: return GEMM_STATUS_NOT_SUPPORTED;  // gemm_omatcopy refuses FP8
    }
    return GEMM_STATUS_SUCCESS;
}

}  // namespace gemm::cpu_omp_detail
