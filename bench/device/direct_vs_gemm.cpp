// direct_vs_gemm.cpp: what routing through gemm costs over calling cuBLAS / cuBLASLt directly.
// For each shape it times, with CUDA events on one stream and device pointers, the same
// SGEMM made directly and through gemm_sgemm (backend forced), and reports the ratio; then
// the host time per call on a tiny shape (the dispatch layer's own cost, and a plan run's).
// Built and run by bench/device/run.sh; prints one table. --host-only: the host cost alone.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>  // the driver's types only: its functions are found through the runtime
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <gemm/gemm.h>

#include "sampling.hpp"

namespace {

void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "direct_vs_gemm: %s failed (%s)\n", what, gemm_last_error());
        std::exit(1);
    }
}

struct operands {
    float *a = nullptr, *b = nullptr, *c = nullptr;
    int n;
    explicit operands(int size) : n(size) {
        std::size_t bytes = std::size_t(n) * n * sizeof(float);
        for (float **p : {&a, &b, &c})
            check(cudaMalloc(reinterpret_cast<void **>(p), bytes) == cudaSuccess, "cudaMalloc");
        std::vector<float> h(std::size_t(n) * n);
        for (std::size_t i = 0; i < h.size(); ++i) h[i] = float((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
        cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice);
        cudaMemcpy(b, h.data(), bytes, cudaMemcpyHostToDevice);
    }
    ~operands() { cudaFree(a), cudaFree(b), cudaFree(c); }
};

// Median device time (ms) of `reps` batches of `inner` calls each, after a warm-up.
template <class F> double median_ms(cudaStream_t s, F &&call, int reps, int inner) {
    bench_device::warm_up(call, 3);
    return bench_device::median_ms_per_call(s, call, reps, inner, 0);
}

// One way of making the tiny call: directly (backend null) or through gemm with a backend set.
struct host_way {
    const char *backend;
    std::function<void()> call;
};

// Host time per call (us) of each way, per round: rounds of `count` calls enqueued back to
// back, synced at the end; the ways take turns within each round, each round starting one
// further on, so that the GPU's clock state and the host's weather fall on all alike.
std::vector<std::vector<double>> host_us_interleaved(cudaStream_t s, const std::vector<host_way> &ways, int count,
                                                     int rounds) {
    return bench_device::interleaved_samples(ways.size(), rounds, [&](std::size_t w) {
        if (ways[w].backend) check(gemm_set_backend(ways[w].backend) == GEMM_STATUS_SUCCESS, "gemm_set_backend");
        bench_device::warm_up(ways[w].call, 100);
        cudaStreamSynchronize(s);
        const double us = bench_device::host_us_per_call(ways[w].call, count);
        cudaStreamSynchronize(s);
        return us;
    });
}

using bench_device::median;

// Way w's cost over way base: the median over the rounds of their difference in each round (a
// host's speed drifts between rounds by more than the differences measured).
double median_over(const std::vector<std::vector<double>> &per, std::size_t w, std::size_t base) {
    std::vector<double> over(per[w].size());
    for (std::size_t r = 0; r < over.size(); ++r) over[r] = per[w][r] - per[base][r];
    return median(over);
}

struct lt_plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t layout = nullptr;
    cublasLtMatmulAlgo_t algo{};
    void *workspace = nullptr;
    std::size_t workspace_bytes = 32u << 20;
};

lt_plan make_lt_plan(cublasLtHandle_t lt, int n) {
    lt_plan p;
    check(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS, "desc");
    check(cublasLtMatrixLayoutCreate(&p.layout, CUDA_R_32F, n, n, n) == CUBLAS_STATUS_SUCCESS, "layout");
    cudaMalloc(&p.workspace, p.workspace_bytes);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &p.workspace_bytes,
                                         sizeof(p.workspace_bytes));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    check(cublasLtMatmulAlgoGetHeuristic(lt, p.desc, p.layout, p.layout, p.layout, p.layout, pref, 1, &result,
                                         &found) == CUBLAS_STATUS_SUCCESS &&
              found > 0,
          "heuristic");
    p.algo = result.algo;
    cublasLtMatmulPreferenceDestroy(pref);
    return p;
}

}  // namespace

int main(int argc, char **argv) {
    const bool host_only = argc > 1 && std::string(argv[1]) == "--host-only";
    cudaStream_t s;
    cudaStreamCreate(&s);
    cublasHandle_t handle;
    cublasLtHandle_t lt;
    check(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS && cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS, "create");
    cublasSetStream(handle, s);
    gemm_set_stream(s);
    const float one = 1.0f, zero = 0.0f;

    if (!host_only) std::printf("%-10s %6s %12s %12s %8s\n", "library", "n", "direct_ms", "via_gemm_ms", "ratio");
    for (int n : {8, 256, 1024, 4096, 8192}) {
        if (host_only) break;
        operands o(n);
        int inner = n <= 256 ? 200 : n <= 1024 ? 20 : 3;
        auto direct = [&] {
            cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, o.a, n, o.b, n, &zero, o.c, n);
        };
        auto routed = [&] {
            gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, n, n, n, 1.0f, o.a, n, o.b, n, 0.0f, o.c, n);
        };
        check(gemm_set_backend("cublas") == GEMM_STATUS_SUCCESS, "gemm_set_backend(cublas)");
        double d = median_ms(s, direct, 11, inner), g = median_ms(s, routed, 11, inner);
        std::printf("%-10s %6d %12.4f %12.4f %8.3f\n", "cublas", n, d, g, d / g);
        // The backend calls the 64-bit entry point; time it directly too.
        auto direct64 = [&] {
            cublasSgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, o.a, n, o.b, n, &zero, o.c, n);
        };
        double d64 = median_ms(s, direct64, 11, inner);
        std::printf("%-10s %6d %12.4f %12.4f %8.3f\n", "cublas_64", n, d64, g, d64 / g);

        lt_plan p = make_lt_plan(lt, n);
        auto lt_direct = [&] {
            cublasLtMatmul(lt, p.desc, &one, o.a, p.layout, o.b, p.layout, &zero, o.c, p.layout, o.c, p.layout, &p.algo,
                           p.workspace, p.workspace_bytes, s);
        };
        check(gemm_set_backend("cublaslt") == GEMM_STATUS_SUCCESS, "gemm_set_backend(cublaslt)");
        d = median_ms(s, lt_direct, 11, inner);
        g = median_ms(s, routed, 11, inner);
        std::printf("%-10s %6d %12.4f %12.4f %8.3f\n", "cublaslt", n, d, g, d / g);
        cudaFree(p.workspace);
        cublasLtMatrixLayoutDestroy(p.layout);
        cublasLtMatmulDescDestroy(p.desc);
    }

    // The dispatch layer's own host cost, on a tiny shape. Tune 8x8x8 first (limited to cublas,
    // so that the decision is all that differs); an 8x8x8 call with leading dimensions of 16 is
    // then another class (ld=padded), untuned, with no tuned shape near it.
    operands tiny(16);
    gemm_tune_request_t request = {GEMM_F32, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 8, 8, 1, 0, 0, 1,
                                   0,        200,      "cublas"};
    gemm_tune_report_t report;
    check(gemm_tune(&request, 1, &report) == GEMM_STATUS_SUCCESS, "gemm_tune");
    // The 8x8x8 call on operands a, b, c with leading dimension ld: directly, through gemm.
    auto direct_on = [&](const float *a, const float *b, float *c, int ld) {
        return [&, a, b, c, ld] {
            cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, a, ld, b, ld, &zero, c, ld);
        };
    };
    auto routed_on = [](const float *a, const float *b, float *c, int ld) {
        return [a, b, c, ld] {
            gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 8, 8, 1.0f, a, ld, b, ld, 0.0f, c, ld);
        };
    };
    auto direct_ld = [&](int ld) { return direct_on(tiny.a, tiny.b, tiny.c, ld); };
    auto routed_ld = [&](int ld) { return routed_on(tiny.a, tiny.b, tiny.c, ld); };
    // A plan of the tuned class, made under auto (so on the cache's choice).
    gemm_desc_t desc;
    gemm_desc_init(&desc, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 8, 8, 8);
    desc.device = 0;
    desc.beta_zero = 1;
    check(gemm_set_backend("auto") == GEMM_STATUS_SUCCESS, "gemm_set_backend(auto)");
    gemm_plan_t plan = nullptr;
    check(gemm_plan_create(&desc, &plan) == GEMM_STATUS_SUCCESS, "gemm_plan_create");
    auto plan_run = [&] { gemm_plan_run(plan, &one, tiny.a, tiny.b, &zero, tiny.c); };
    // The same plan asking the driver where its operands lie on every run.
    desc.check_pointers = 1;
    gemm_plan_t checked = nullptr;
    check(gemm_plan_create(&desc, &checked) == GEMM_STATUS_SUCCESS, "gemm_plan_create (check_pointers)");
    auto checked_run = [&] { gemm_plan_run(checked, &one, tiny.a, tiny.b, &zero, tiny.c); };
    // The same operands carved from one allocation, as a caching allocator hands them out:
    // the library asks the driver about the first and finds the others in the same range.
    float *whole = nullptr;
    check(cudaMalloc(reinterpret_cast<void **>(&whole), 3 * 256 * sizeof(float)) == cudaSuccess, "cudaMalloc");
    float *one_a = whole, *one_b = whole + 256, *one_c = whole + 512;
    auto plan_one = [&] { gemm_plan_run(plan, &one, one_a, one_b, &zero, one_c); };
    std::vector<host_way> ways = {{nullptr, direct_ld(8)},                        // 0: direct
                                  {"cublas", routed_ld(8)},                       // 1: forced
                                  {"auto", routed_ld(8)},                         // 2: auto, tune cache hit
                                  {nullptr, direct_ld(16)},                       // 3: direct, ld = 16
                                  {"auto", routed_ld(16)},                        // 4: auto, untuned
                                  {nullptr, plan_run},                            // 5: plan run
                                  {nullptr, direct_on(one_a, one_b, one_c, 8)},   // 6: direct, one allocation
                                  {"cublas", routed_on(one_a, one_b, one_c, 8)},  // 7: forced, one allocation
                                  {nullptr, plan_one},                            // 8: plan run, one allocation
                                  {nullptr, checked_run}};                        // 9: plan run, pointers checked
    const int rounds = 31;
    const std::vector<std::vector<double>> per = host_us_interleaved(s, ways, 1000, rounds);
    std::printf("host cost per call, 8x8x8 sgemm, the median over %d interleaved rounds of the difference to a "
                "direct call in the same round: direct cublasSgemm %.3f us; through gemm: plan run %+.3f us, forced "
                "cublas %+.3f us, auto on a tune cache hit (%s) %+.3f us; auto untuned (ld=16, built-in rule) %+.3f "
                "us over direct with ld=16 (%.3f us); plan run with check_pointers %+.3f us\n",
                rounds, median(per[0]), median_over(per, 5, 0), median_over(per, 1, 0), report.backend,
                median_over(per, 2, 0), median_over(per, 4, 3), median(per[3]), median_over(per, 9, 0));
    std::printf("the same with A, B and C in one allocation: direct %.3f us; plan run %+.3f us, forced cublas "
                "%+.3f us\n",
                median(per[6]), median_over(per, 8, 6), median_over(per, 7, 6));
    gemm_plan_destroy(plan);
    gemm_plan_destroy(checked);
    cudaFree(whole);

    // The driver calls every device call makes, each timed alone: back to back (warm), and
    // right after a cuBLAS call, as a program calling gemm meets them (cuBLAS's own host work
    // has taken the caches since the last call; the clock's own cost subtracted).
    auto warm_ns = [](auto &&call) {
        bench_device::warm_up(call, 1000);
        return bench_device::host_us_per_call(call, 200000) * 1e3;
    };
    auto after_cublas_total_ns = [&](auto &&call) {
        constexpr int count = 5000;
        double total = 0;
        for (int i = 0; i < count; ++i) {
            cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, tiny.a, 8, tiny.b, 8, &zero, tiny.c, 8);
            total += bench_device::host_seconds(call) * 1e9;
        }
        cudaStreamSynchronize(s);
        return total / count;
    };
    const double clock_ns = after_cublas_total_ns([] {});
    auto after_cublas_ns = [&](auto &&call) { return after_cublas_total_ns(call) - clock_ns; };
    // gemm's pointer query: the driver's cuPointerGetAttributes for the five attributes
    // cuda_devices.cpp asks (memory type, device, managed, the allocation's range).
    using query_fn = CUresult (*)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
    using context_device_fn = CUresult (*)(CUdevice *);
    void *query_entry = nullptr, *context_entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    check(cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &query_entry, 7000, cudaEnableDefault, &found) ==
                  cudaSuccess &&
              query_entry,
          "cuPointerGetAttributes");
    check(cudaGetDriverEntryPointByVersion("cuCtxGetDevice", &context_entry, 2000, cudaEnableDefault, &found) ==
                  cudaSuccess &&
              context_entry,
          "cuCtxGetDevice");
    auto query = reinterpret_cast<query_fn>(query_entry);
    auto context_device = reinterpret_cast<context_device_fn>(context_entry);
    std::vector<float> host(64);
    auto classify = [&](const void *p) {
        unsigned type = 0, managed = 0;
        int ordinal = -1;
        CUdeviceptr begin = 0;
        std::size_t bytes = 0;
        CUpointer_attribute asked[5] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                        CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                        CU_POINTER_ATTRIBUTE_RANGE_SIZE};
        void *answers[5] = {&type, &ordinal, &managed, &begin, &bytes};
        query(5, asked, answers, CUdeviceptr(reinterpret_cast<std::uintptr_t>(p)));
    };
    int device = 0;
    CUdevice driver_device = 0;
    auto device_pointer = [&] { classify(tiny.a); };
    auto host_pointer = [&] { classify(host.data()); };
    auto three_pointers = [&] { classify(tiny.a), classify(tiny.b), classify(tiny.c); };
    auto runtime_device = [&] { cudaGetDevice(&device); };
    auto context_of = [&] { context_device(&driver_device); };
    std::printf("host cost of the driver calls on a device call's path, ns back to back / right after a cuBLAS call: "
                "gemm's pointer query %.1f / %.1f (device pointer), %.1f / %.1f (host pointer), %.1f / %.1f (three "
                "device allocations); cuCtxGetDevice %.1f / %.1f; cudaGetDevice %.1f / %.1f\n",
                warm_ns(device_pointer), after_cublas_ns(device_pointer), warm_ns(host_pointer),
                after_cublas_ns(host_pointer), warm_ns(three_pointers), after_cublas_ns(three_pointers),
                warm_ns(context_of), after_cublas_ns(context_of), warm_ns(runtime_device),
                after_cublas_ns(runtime_device));
    cublasLtDestroy(lt);
    cublasDestroy(handle);
    cudaStreamDestroy(s);
    return 0;
}
