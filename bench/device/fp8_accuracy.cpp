// fp8_accuracy.cpp: how far FP8 GEMMs on the GPU land from the exact result as k grows. For
// each k asked (default 1024 4096 16384), a row-major 256 x 256 x k e4m3 GEMM X W^T into f32 C
// (the TN form), random values of every binade in [-1, 1], on each backend or cuda_tiled id
// named (default cuda_tiled's FP8 kernel and cublaslt); each element against the exact sum of
// the decoded values (double), printed as the largest error relative to the element's sum of
// |products| (what the tensor cores' FP8 sums lose scales with it) and relative to |C| over
// the elements with |C| above a tenth of that sum. Built and run by bench/device/run.sh
// (stage fp8).
// Usage: fp8_accuracy [k...] [--backends a,b,...]
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <gemm/gemm.h>

namespace {

// e4m3 (bias 7, 3 mantissa bits, no infinities; S.1111.111 is NaN) as a double.
double e4m3_value(uint8_t x) {
    const int sign = x >> 7, exponent = (x >> 3) & 15, mantissa = x & 7;
    if (exponent == 15 && mantissa == 7) return std::nan("");
    const double v = exponent == 0 ? std::ldexp(mantissa / 8.0, -6) : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
    return sign ? -v : v;
}

// A random e4m3 in [-1, 1], every binade below 1 and the subnormals: exponent field 0 .. 7,
// with 7 (2^0) only as 1 itself.
uint8_t random_e4m3(uint64_t &state) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const unsigned bits = unsigned(state >> 56);
    const unsigned exponent = (bits >> 3) & 7;
    const unsigned mantissa = exponent == 7 ? 0 : bits & 7;
    return uint8_t((bits & 0x80) | (exponent << 3) | mantissa);
}

bool ok(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return true;
    std::fprintf(stderr, "fp8_accuracy: %s: %s\n", what, cudaGetErrorString(e));
    return false;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<int64_t> ks;
    std::string backends = "cuda_tiled:wgmma_e4m3_128x128x128_s6,cublaslt";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--backends") == 0 && i + 1 < argc) backends = argv[++i];
        else ks.push_back(std::atoll(argv[i]));
    }
    if (ks.empty()) ks = {1024, 4096, 16384};
    const int64_t m = 256, n = 256;
    std::printf("# row-major %lld x %lld x k e4m3 -> f32, X W^T; error against the exact sum in double\n", (long long)m,
                (long long)n);
    std::printf("%-44s %6s %14s %14s\n", "backend", "k", "max |err|/sum|p|", "max |err|/|C|");
    int failures = 0;
    for (int64_t k : ks) {
        uint64_t state = 12345 + uint64_t(k);
        std::vector<uint8_t> x(std::size_t(m * k)), w(std::size_t(n * k));
        for (uint8_t &v : x) v = random_e4m3(state);
        for (uint8_t &v : w) v = random_e4m3(state);
        std::vector<double> exact(std::size_t(m * n)), size(std::size_t(m * n));
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double s = 0, a = 0;
                for (int64_t l = 0; l < k; ++l) {
                    const double p = e4m3_value(x[std::size_t(i * k + l)]) * e4m3_value(w[std::size_t(j * k + l)]);
                    s += p;
                    a += std::fabs(p);
                }
                exact[std::size_t(i * n + j)] = s;
                size[std::size_t(i * n + j)] = a;
            }
        void *dx = nullptr, *dw = nullptr, *dc = nullptr;
        if (!ok(cudaMalloc(&dx, x.size()), "cudaMalloc") || !ok(cudaMalloc(&dw, w.size()), "cudaMalloc") ||
            !ok(cudaMalloc(&dc, std::size_t(m * n) * sizeof(float)), "cudaMalloc") ||
            !ok(cudaMemcpy(dx, x.data(), x.size(), cudaMemcpyHostToDevice), "cudaMemcpy") ||
            !ok(cudaMemcpy(dw, w.data(), w.size(), cudaMemcpyHostToDevice), "cudaMemcpy"))
            return 1;
        std::stringstream list(backends);
        std::string name;
        while (std::getline(list, name, ',')) {
            const float alpha = 1.0f, beta = 0.0f;
            gemm_status_t s = gemm_set_backend(name.c_str());
            if (s == GEMM_STATUS_SUCCESS)
                s = gemm_ex(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, m, n, k, &alpha, dx, GEMM_F8_E4M3, k, dw,
                            GEMM_F8_E4M3, k, &beta, dc, GEMM_F32, n, GEMM_F32);
            if (s != GEMM_STATUS_SUCCESS) {
                std::printf("%-44s %6lld %s\n", name.c_str(), (long long)k, gemm_last_error());
                ++failures;
                continue;
            }
            std::vector<float> c(std::size_t(m * n));
            if (!ok(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy")) return 1;
            double by_size = 0, by_value = 0;
            for (std::size_t e = 0; e < c.size(); ++e) {
                const double err = std::fabs(double(c[e]) - exact[e]);
                const double relative = size[e] > 0 ? err / size[e] : err;
                if (!(relative <= by_size)) by_size = relative;  // NaN stays
                if (std::fabs(exact[e]) > 0.1 * size[e] && err / std::fabs(exact[e]) > by_value)
                    by_value = err / std::fabs(exact[e]);
            }
            std::printf("%-44s %6lld %14.3e %14.3e\n", name.c_str(), (long long)k, by_size, by_value);
        }
        cudaFree(dx), cudaFree(dw), cudaFree(dc);
    }
    return failures == 0 ? 0 : 1;
}
