// transpose_host.cpp: gemm_omatcopy on host memory: cpu_omp's tiles against cpu_ref (the
// reference's element loop), a plain loop (B(j, i) = A(i, j), one thread, no tiles) and
// std::memcpy of the same bytes (the ceiling: no reordering). For each n, f32 and f64, column-
// major op T, alpha = 1: the median of 5 timed calls after one untimed, in GB/s (bytes read plus
// written). Build target gemm_transpose_host; run: ./build/bench/gemm_transpose_host [n...]
// (default 1024 4096). backends/cpu_omp/NOTES.md ("Transposes") holds its figures.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gemm/gemm.h>

namespace {

template <class F> double median_seconds(F &&f, int reps) {
    f();  // untimed: first touch, pool start
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const auto start = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

template <class T> void run(int64_t n, gemm_dtype_t type, const char *name) {
    const std::size_t elements = std::size_t(n) * std::size_t(n);
    std::vector<T> a(elements), b(elements);
    for (std::size_t i = 0; i < elements; ++i) a[i] = T(i % 1000);
    const T one = 1;
    const double moved = 2.0 * double(elements) * sizeof(T);
    auto through = [&](const char *backend) {
        return [&, backend] {
            if (gemm_set_backend(backend) != GEMM_STATUS_SUCCESS ||
                gemm_omatcopy(GEMM_COL_MAJOR, GEMM_OP_T, n, n, &one, a.data(), n, b.data(), n, type) !=
                    GEMM_STATUS_SUCCESS) {
                std::fprintf(stderr, "%s: %s\n", backend, gemm_last_error());
                std::exit(1);
            }
        };
    };
    auto plain = [&] {
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < n; ++i) b[std::size_t(j + i * n)] = a[std::size_t(i + j * n)];
    };
    auto copy = [&] { std::memcpy(b.data(), a.data(), elements * sizeof(T)); };
    struct {
        const char *way;
        double seconds;
    } rows[] = {{"cpu_omp", median_seconds(through("cpu_omp"), 5)},
                {"cpu_ref", median_seconds(through("cpu_ref"), n > 2048 ? 1 : 5)},
                {"plain loop", median_seconds(plain, 5)},
                {"memcpy", median_seconds(copy, 5)}};
    for (const auto &r : rows)
        std::printf("%s n=%lld %-10s %9.3f ms %7.2f GB/s\n", name, static_cast<long long>(n), r.way, r.seconds * 1e3,
                    moved / r.seconds * 1e-9);
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<int64_t> sizes;
    for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
    if (sizes.empty()) sizes = {1024, 4096};
    for (int64_t n : sizes) {
        run<float>(n, GEMM_F32, "f32");
        run<double>(n, GEMM_F64, "f64");
    }
    return 0;
}
