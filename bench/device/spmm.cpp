// spmm.cpp: gemm_spmm_csr on the GPU against cuSPARSE and against dense GEMM. A CSR f32 A of
// N x N (default 16384) times a row-major N x n B (default n = 64) on device memory, at the
// densities 0.1 %, 1 %, 5 %, 10 % and 25 % (each row's entries spread evenly, sorted): cuda_tiled
// and cusparse through the library, cusparseSpMM called directly, and cuBLAS's sgemm through the
// library on the same A stored dense; then SpMV (n = 1) at 1 % the same ways (cusparseSpMV
// directly). Each way is verified first (sampled elements of C against a host sum in double),
// then the ways take turns over rounds, each sample calls back to back between two CUDA events.
// Prints per line the median and best ms, GFLOP/s counting the sparse product's 2 nnz n (so
// lines compare by time), the ratio of cuSPARSE's direct time to the way's (>= 1: as fast), and
// a summary line: cuda_tiled's ratios at 1 % and the largest density where a sparse way beats
// the dense GEMM. Built and run by bench/device/run.sh (stage spmm).
// Usage: spmm [N] [n]
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gemm/gemm.h>

#include "sampling.hpp"

namespace {

void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "spmm: %s failed (%s; %s)\n", what, gemm_last_error(),
                     cudaGetErrorString(cudaGetLastError()));
        std::exit(1);
    }
}

// Small integers and halves: every product and sum of the sizes here is exact in f32 for the
// verification's sampled rows up to 2^24, and neighbours differ.
float a_value(int64_t p) { return float(int(p % 7) - 3) * 0.5f; }
float b_value(int64_t index) { return float(int(index % 5) - 2); }

// A's rows with nnz_row entries each, spread evenly and shifted per row: sorted, no repeats.
struct csr_matrix {
    int64_t n = 0, nnz = 0;
    std::vector<int32_t> offsets, cols;
    std::vector<float> values;
};

csr_matrix make_csr(int64_t n, double density) {
    csr_matrix a;
    a.n = n;
    const int64_t per_row = std::max<int64_t>(1, std::llround(density * double(n)));
    const int64_t spacing = n / per_row;
    a.offsets.reserve(std::size_t(n + 1));
    a.offsets.push_back(0);
    for (int64_t r = 0; r < n; ++r) {
        const int64_t shift = (r * 131) % spacing;
        for (int64_t t = 0; t < per_row; ++t) {
            a.cols.push_back(int32_t(t * spacing + shift));
            a.values.push_back(a_value(int64_t(a.values.size())));
        }
        a.offsets.push_back(int32_t(a.cols.size()));
    }
    a.nnz = int64_t(a.cols.size());
    return a;
}

template <class T> T *upload(const std::vector<T> &host) {
    void *d = nullptr;
    check(cudaMalloc(&d, host.size() * sizeof(T)) == cudaSuccess, "cudaMalloc");
    check(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy");
    return static_cast<T *>(d);
}

struct result {
    std::string way;
    double median_ms, best_ms;
};

// The ways for one A and n, in the order of names below (the direct cuSPARSE call third).
std::vector<result> run_case(const csr_matrix &a, int64_t n, const float *b, float *c, cudaStream_t stream,
                             cusparseHandle_t sparse) {
    const int64_t rows = a.n;
    int32_t *offsets = upload(a.offsets), *cols = upload(a.cols);
    float *values = upload(a.values);
    // The same A dense, row-major, for the GEMM.
    std::vector<float> dense_host(std::size_t(rows * rows), 0.0f);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t p = a.offsets[std::size_t(r)]; p < a.offsets[std::size_t(r + 1)]; ++p)
            dense_host[std::size_t(r * rows + a.cols[std::size_t(p)])] = a.values[std::size_t(p)];
    float *dense = upload(dense_host);
    dense_host = {};

    gemm_csr_t desc;
    gemm_csr_init(&desc, rows, rows, a.nnz, GEMM_INDEX_I32, offsets, cols, values);
    const float one = 1.0f, zero = 0.0f;
    cusparseConstSpMatDescr_t sp = nullptr;
    check(cusparseCreateConstCsr(&sp, rows, rows, a.nnz, offsets, cols, values, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                 CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F) == CUSPARSE_STATUS_SUCCESS,
          "cusparseCreateConstCsr");
    cusparseConstDnMatDescr_t bm = nullptr;
    cusparseDnMatDescr_t cm = nullptr;
    cusparseConstDnVecDescr_t bv = nullptr;
    cusparseDnVecDescr_t cv = nullptr;
    std::size_t buffer_bytes = 0;
    if (n == 1) {
        check(cusparseCreateConstDnVec(&bv, rows, b, CUDA_R_32F) == CUSPARSE_STATUS_SUCCESS &&
                  cusparseCreateDnVec(&cv, rows, c, CUDA_R_32F) == CUSPARSE_STATUS_SUCCESS,
              "cusparseCreateDnVec");
        check(cusparseSpMV_bufferSize(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp, bv, &zero, cv, CUDA_R_32F,
                                      CUSPARSE_SPMV_ALG_DEFAULT, &buffer_bytes) == CUSPARSE_STATUS_SUCCESS,
              "cusparseSpMV_bufferSize");
    } else {
        check(cusparseCreateConstDnMat(&bm, rows, n, n, b, CUDA_R_32F, CUSPARSE_ORDER_ROW) == CUSPARSE_STATUS_SUCCESS &&
                  cusparseCreateDnMat(&cm, rows, n, n, c, CUDA_R_32F, CUSPARSE_ORDER_ROW) == CUSPARSE_STATUS_SUCCESS,
              "cusparseCreateDnMat");
        check(cusparseSpMM_bufferSize(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                      sp, bm, &zero, cm, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                      &buffer_bytes) == CUSPARSE_STATUS_SUCCESS,
              "cusparseSpMM_bufferSize");
    }
    void *buffer = nullptr;
    check(cudaMalloc(&buffer, std::max<std::size_t>(buffer_bytes, 1)) == cudaSuccess, "cudaMalloc");

    const char *names[] = {"cuda_tiled (gemm_spmm_csr)", "cusparse (gemm_spmm_csr)",
                           n == 1 ? "cusparseSpMV (direct)" : "cusparseSpMM (direct)", "cublas dense (gemm_sgemm)"};
    constexpr std::size_t count = 4;
    auto select = [&](std::size_t w) {
        check(gemm_set_backend(w == 0   ? "cuda_tiled"
                               : w == 1 ? "cusparse"
                               : w == 3 ? "cublas"
                                        : nullptr) == GEMM_STATUS_SUCCESS,
              "gemm_set_backend");
    };
    auto call = [&](std::size_t w) {
        switch (w) {
        case 0:
        case 1:
            check(gemm_spmm_csr(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, rows, n, rows, &one, &desc, b, n, &zero, c, n,
                                GEMM_F32) == GEMM_STATUS_SUCCESS,
                  "gemm_spmm_csr");
            break;
        case 2:
            if (n == 1)
                check(cusparseSpMV(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp, bv, &zero, cv, CUDA_R_32F,
                                   CUSPARSE_SPMV_ALG_DEFAULT, buffer) == CUSPARSE_STATUS_SUCCESS,
                      "cusparseSpMV");
            else
                check(cusparseSpMM(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp,
                                   bm, &zero, cm, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                   buffer) == CUSPARSE_STATUS_SUCCESS,
                      "cusparseSpMM");
            break;
        default:
            check(gemm_sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, rows, n, rows, one, dense, rows, b, n, zero, c, n) ==
                      GEMM_STATUS_SUCCESS,
                  "gemm_sgemm");
        }
    };

    // Verify each way before timing: C poisoned, one call, 64 rows of C against host sums.
    std::vector<float> b_host(std::size_t(rows * n));
    check(cudaMemcpy(b_host.data(), b, b_host.size() * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess,
          "cudaMemcpy");
    for (std::size_t w = 0; w < count; ++w) {
        check(cudaMemsetAsync(c, 0xff, std::size_t(rows * n) * sizeof(float), stream) == cudaSuccess,
              "cudaMemsetAsync");
        select(w);
        call(w);
        check(cudaStreamSynchronize(stream) == cudaSuccess, "cudaStreamSynchronize");
        int64_t wrong = 0;
        std::vector<float> row(static_cast<std::size_t>(n));
        for (int s = 0; s < 64; ++s) {
            const int64_t r = (int64_t(s) * 7919) % rows;
            check(cudaMemcpy(row.data(), c + r * n, row.size() * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess,
                  "cudaMemcpy");
            for (int64_t j = 0; j < n; ++j) {
                double want = 0;
                for (int64_t p = a.offsets[std::size_t(r)]; p < a.offsets[std::size_t(r + 1)]; ++p)
                    want +=
                        double(a.values[std::size_t(p)]) * double(b_host[std::size_t(a.cols[std::size_t(p)] * n + j)]);
                wrong += std::fabs(double(row[std::size_t(j)]) - want) > 1e-3 * (1.0 + std::fabs(want));
            }
        }
        if (wrong) {
            std::printf("verify %-28s WRONG (%lld elements)\n", names[w], static_cast<long long>(wrong));
            std::exit(1);
        }
    }

    bench_device::event_timer timer(stream);
    const auto samples = bench_device::interleaved_samples(count, 7, [&](std::size_t w) {
        select(w);
        return timer.ms_per_call([&] { call(w); }, 10, 2);
    });
    gemm_set_backend(nullptr);
    std::vector<result> out;
    for (std::size_t w = 0; w < count; ++w)
        out.push_back(
            {names[w], bench_device::median(samples[w]), *std::min_element(samples[w].begin(), samples[w].end())});

    cudaFree(buffer);
    if (bm) cusparseDestroyDnMat(bm);
    if (cm) cusparseDestroyDnMat(cm);
    if (bv) cusparseDestroyDnVec(bv);
    if (cv) cusparseDestroyDnVec(cv);
    cusparseDestroySpMat(sp);
    cudaFree(offsets);
    cudaFree(cols);
    cudaFree(values);
    cudaFree(dense);
    return out;
}

// One line per way: median and best ms, GFLOP/s of the sparse product, ratio of the direct
// cuSPARSE call's median to the way's.
void print(double density, int64_t n, int64_t nnz, const std::vector<result> &r) {
    const double flops = 2.0 * double(nnz) * double(n), direct = r[2].median_ms;
    for (const result &x : r)
        std::printf("density %6.3f%% n %-4lld %-28s median %9.3f ms best %9.3f ms %9.1f GFLOP/s %7.3fx cuSPARSE\n",
                    density * 100, static_cast<long long>(n), x.way.c_str(), x.median_ms, x.best_ms,
                    flops / (x.median_ms * 1e-3) * 1e-9, direct / x.median_ms);
}

}  // namespace

int main(int argc, char **argv) {
    const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 16384, n = argc > 2 ? std::atoll(argv[2]) : 64;
    check(rows > 0 && n > 1, "N > 0 and n > 1");
    std::printf("command: bench/device/spmm %lld %lld\n", static_cast<long long>(rows), static_cast<long long>(n));
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0) == cudaSuccess, "cudaGetDeviceProperties");
    std::printf("device: %s; CSR f32 %lld x %lld (32-bit indices) times row-major %lld x %lld, beta = 0\n", prop.name,
                static_cast<long long>(rows), static_cast<long long>(rows), static_cast<long long>(rows),
                static_cast<long long>(n));

    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess, "cudaStreamCreate");
    check(gemm_set_stream(stream) == GEMM_STATUS_SUCCESS, "gemm_set_stream");
    cusparseHandle_t sparse = nullptr;
    check(cusparseCreate(&sparse) == CUSPARSE_STATUS_SUCCESS, "cusparseCreate");
    cusparseSetStream(sparse, stream);

    std::vector<float> b_host(std::size_t(rows * n));
    for (std::size_t i = 0; i < b_host.size(); ++i) b_host[i] = b_value(int64_t(i));
    float *b = upload(b_host);
    float *c = upload(b_host);  // overwritten: beta = 0

    double spmm_tiled = 0, spmm_cusparse = 0, spmv_tiled = 0, crossover = 0;
    for (double density : {0.001, 0.01, 0.05, 0.1, 0.25}) {
        const csr_matrix a = make_csr(rows, density);
        const std::vector<result> r = run_case(a, n, b, c, stream, sparse);
        print(density, n, a.nnz, r);
        const double best_sparse = std::min({r[0].median_ms, r[1].median_ms, r[2].median_ms});
        if (best_sparse < r[3].median_ms) crossover = density;
        if (density == 0.01) {
            spmm_tiled = r[2].median_ms / r[0].median_ms;
            spmm_cusparse = r[2].median_ms / r[1].median_ms;
            const std::vector<result> v = run_case(a, 1, b, c, stream, sparse);
            print(density, 1, a.nnz, v);
            spmv_tiled = v[2].median_ms / v[0].median_ms;
        }
    }
    std::printf("summary: 1%% SpMM cuda_tiled %.3fx cuSPARSE, cusparse through gemm %.3fx; SpMV cuda_tiled %.3fx "
                "cuSPARSE; sparse beats dense GEMM up to %.1f%% of the densities run\n",
                spmm_tiled, spmm_cusparse, spmv_tiled, crossover * 100);
    cusparseDestroy(sparse);
    gemm_set_stream(nullptr);
    cudaStreamDestroy(stream);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
