// peak_probe.cpp: FMA-throughput loops (AVX-512, AVX2+FMA or portable, chosen at run time)
// and a STREAM-style triad, both run on every OpenMP thread.
#include "peak_probe.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <memory>

#include "timer.hpp"

namespace gemm_cli {
namespace {

// Independent accumulator chains per thread: enough to cover FMA latency (4-5 cycles) times
// two FMA pipes, yet few enough to stay in the 16 AVX2 registers with the two operands.
constexpr int chains = 12;
constexpr double min_trial_seconds = 0.02;
constexpr double target_trial_seconds = 0.04;
constexpr int trials = 8;

// The chains converge (x < 1), so no value overflows or turns subnormal however long it runs.
struct chain_operands {
    double x = 0.999999;
    double y = 1e-6;
};

__attribute__((target("avx512f"))) double fma_chains_avx512_f32(int64_t iterations, chain_operands o) {
    const __m512 x = _mm512_set1_ps(float(o.x)), y = _mm512_set1_ps(float(o.y));
    __m512 acc[chains];
    for (auto &a : acc) a = _mm512_set1_ps(1.0f);
    for (int64_t it = 0; it < iterations; ++it)
        for (auto &a : acc) a = _mm512_fmadd_ps(a, x, y);
    alignas(64) float lanes[16];
    double sum = 0;
    for (auto &a : acc) {
        _mm512_store_ps(lanes, a);
        for (float v : lanes) sum += double(v);
    }
    return sum;
}

__attribute__((target("avx512f"))) double fma_chains_avx512_f64(int64_t iterations, chain_operands o) {
    const __m512d x = _mm512_set1_pd(o.x), y = _mm512_set1_pd(o.y);
    __m512d acc[chains];
    for (auto &a : acc) a = _mm512_set1_pd(1.0);
    for (int64_t it = 0; it < iterations; ++it)
        for (auto &a : acc) a = _mm512_fmadd_pd(a, x, y);
    alignas(64) double lanes[8];
    double sum = 0;
    for (auto &a : acc) {
        _mm512_store_pd(lanes, a);
        for (double v : lanes) sum += v;
    }
    return sum;
}

__attribute__((target("avx2,fma"))) double fma_chains_avx2_f32(int64_t iterations, chain_operands o) {
    const __m256 x = _mm256_set1_ps(float(o.x)), y = _mm256_set1_ps(float(o.y));
    __m256 acc[chains];
    for (auto &a : acc) a = _mm256_set1_ps(1.0f);
    for (int64_t it = 0; it < iterations; ++it)
        for (auto &a : acc) a = _mm256_fmadd_ps(a, x, y);
    alignas(32) float lanes[8];
    double sum = 0;
    for (auto &a : acc) {
        _mm256_store_ps(lanes, a);
        for (float v : lanes) sum += double(v);
    }
    return sum;
}

__attribute__((target("avx2,fma"))) double fma_chains_avx2_f64(int64_t iterations, chain_operands o) {
    const __m256d x = _mm256_set1_pd(o.x), y = _mm256_set1_pd(o.y);
    __m256d acc[chains];
    for (auto &a : acc) a = _mm256_set1_pd(1.0);
    for (int64_t it = 0; it < iterations; ++it)
        for (auto &a : acc) a = _mm256_fmadd_pd(a, x, y);
    alignas(32) double lanes[4];
    double sum = 0;
    for (auto &a : acc) {
        _mm256_store_pd(lanes, a);
        for (double v : lanes) sum += v;
    }
    return sum;
}

// Whatever the baseline ISA offers (SSE2 on x86-64): the compiler vectorizes the chains.
template <class T> double fma_chains_portable(int64_t iterations, chain_operands o) {
    constexpr int width = 32 / sizeof(T);
    const T x = T(o.x), y = T(o.y);
    T acc[chains * width];
    for (auto &a : acc) a = T(1);
    for (int64_t it = 0; it < iterations; ++it)
        for (auto &a : acc) a = a * x + y;
    double sum = 0;
    for (auto a : acc) sum += double(a);
    return sum;
}

using chain_fn = double (*)(int64_t, chain_operands);

struct chain_kernel {
    chain_fn run = nullptr;
    int flops_per_iteration = 0;
};

struct chain_kernels {
    chain_kernel f32, f64;
    const char *isa = "portable";
};

chain_kernels pick_kernels() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return {{fma_chains_avx512_f32, chains * 16 * 2}, {fma_chains_avx512_f64, chains * 8 * 2}, "avx512f"};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return {{fma_chains_avx2_f32, chains * 8 * 2}, {fma_chains_avx2_f64, chains * 4 * 2}, "avx2+fma"};
    return {{fma_chains_portable<float>, chains * 8 * 2}, {fma_chains_portable<double>, chains * 4 * 2}, "portable"};
}

// Written once so the compiler cannot drop the loops as dead code.
volatile double sink;

double run_on_all_threads(chain_kernel kernel, int64_t iterations) {
    chain_operands operands;
    double total = 0;
#pragma omp parallel reduction(+ : total)
    total += kernel.run(iterations, operands);
    sink = total;
    return total;
}

// GFLOP/s of one kernel: the best of several trials of at least min_trial_seconds. Shorter
// runs only grow the iteration count: they are dominated by waking the threads, and a
// preempted thread would make the next size too small if one run were trusted to calibrate.
double measure_gflops(chain_kernel kernel, int threads) {
    int64_t iterations = 1 << 12;
    double best = 0;
    for (int counted = 0; counted < trials;) {
        stopwatch clock;
        run_on_all_threads(kernel, iterations);
        double elapsed = clock.seconds();
        if (elapsed < min_trial_seconds) {
            double growth = std::clamp(target_trial_seconds / std::max(elapsed, 1e-9), 2.0, 16.0);
            iterations = int64_t(double(iterations) * growth);
            continue;
        }
        double flops = double(iterations) * kernel.flops_per_iteration * threads;
        best = std::max(best, flops / elapsed * 1e-9);
        ++counted;
    }
    return best;
}

}  // namespace

fma_peak peak_probe_fma() {
    chain_kernels kernels = pick_kernels();
    fma_peak peak;
    peak.isa = kernels.isa;
    peak.threads = omp_get_max_threads();
    peak.f32_gflops = measure_gflops(kernels.f32, peak.threads);
    peak.f64_gflops = measure_gflops(kernels.f64, peak.threads);
    return peak;
}

bandwidth_peak peak_probe_bandwidth(int64_t bytes_per_array) {
    const int64_t n = std::max<int64_t>(bytes_per_array / int64_t(sizeof(double)), 1 << 20);
    // Uninitialized so that the parallel loop below is the first touch: pages land on the
    // NUMA node of the thread that later streams them.
    std::unique_ptr<double[]> a(new double[std::size_t(n)]), b(new double[std::size_t(n)]),
        c(new double[std::size_t(n)]);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        a[std::size_t(i)] = 0.0;
        b[std::size_t(i)] = 1.0;
        c[std::size_t(i)] = 2.0;
    }
    const double scalar = 3.0;
    double best_seconds = 1e30;
    for (int t = 0; t < trials; ++t) {
        stopwatch clock;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; ++i) a[std::size_t(i)] = b[std::size_t(i)] + scalar * c[std::size_t(i)];
        best_seconds = std::min(best_seconds, clock.seconds());
    }
    sink = a[std::size_t(n / 2)];
    bandwidth_peak peak;
    peak.bytes_per_array = n * int64_t(sizeof(double));
    peak.threads = omp_get_max_threads();
    peak.gbs = 3.0 * double(peak.bytes_per_array) / best_seconds * 1e-9;
    return peak;
}

}  // namespace gemm_cli
