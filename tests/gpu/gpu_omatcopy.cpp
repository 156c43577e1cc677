// gpu_omatcopy.cpp: gemm_omatcopy on the GPU backends (cuda_tiled's kernels, cuBLAS's geam)
// against the test's oracle, on device and managed memory, every dtype, layout and op; alpha = 0
// with NaN in A; pointers aligned to their parts only; the caller's stream; and the refusals:
// host pointers on a GPU backend, geam's missing 16-bit forms, mixed spaces.
// Without a CUDA device the program prints "SKIPPED: ..." and exits with 77, which CTest
// reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gpu/device_memory.hpp"
#include "omatcopy_case.hpp"

using namespace gemm_test;

namespace {

constexpr gemm_dtype_t all_types[] = {GEMM_F32, GEMM_F64, GEMM_F16, GEMM_BF16, GEMM_C32, GEMM_C64};
constexpr gemm_layout_t all_layouts[] = {GEMM_COL_MAJOR, GEMM_ROW_MAJOR};
constexpr gemm_op_t all_ops[] = {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C};

// One case on the device: "" when B is the oracle's, else what differs; `refused` when the
// backend said NOT_SUPPORTED (B then checked untouched).
std::string run_device_case(const omatcopy_case &c, bool managed, bool nan_in_a, std::size_t lead, bool &refused) {
    const omatcopy_operands o = make_omatcopy_operands(c, nan_in_a);
    device_bytes a(o.a, managed, lead), b(o.b0, managed, lead);
    const gemm_status_t s = call_omatcopy(c, a.data(), b.data());
    refused = s == GEMM_STATUS_NOT_SUPPORTED;
    if (refused) return b.read() == o.b0 ? "" : "refused but B changed";
    if (s != GEMM_STATUS_SUCCESS) return std::string("status ") + std::to_string(int(s)) + ": " + gemm_last_error();
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) return std::string("CUDA error: ") + cudaGetErrorString(e);
    return compare_b(c, b.read(), expected_b(c, o));
}

}  // namespace

TEST_CASE("gpu omatcopy: cuda_tiled and cublas on device memory against the oracle") {
    const std::pair<int64_t, int64_t> shapes[] = {{1, 1},    {31, 33}, {33, 31}, {64, 64},
                                                  {67, 131}, {1, 97},  {97, 1},  {1000, 777}};
    for (const char *backend : {"cuda_tiled", "cublas"}) {
        if (!available(backend)) {
            MESSAGE(std::string(backend) << " is unavailable here");
            continue;
        }
        forced f(backend);
        REQUIRE(f.status == GEMM_STATUS_SUCCESS);
        int64_t checked = 0, refused_count = 0;
        for (gemm_dtype_t type : all_types)
            for (gemm_layout_t layout : all_layouts)
                for (gemm_op_t op : all_ops)
                    for (const auto &shape : shapes)
                        for (double alpha : {1.0, -1.5})
                            for (double alpha_imag : {0.0, 0.25}) {
                                if (alpha_imag != 0.0 && !is_complex(type)) continue;
                                const omatcopy_case c = make_omatcopy_case(type, layout, op, shape.first, shape.second,
                                                                           3, alpha, alpha_imag);
                                INFO(std::string(backend) << ": " << c.describe());
                                bool refused = false;
                                const std::string wrong = run_device_case(c, false, false, 0, refused);
                                CHECK_MESSAGE(wrong.empty(), wrong);
                                if (refused) {
                                    ++refused_count;
                                    // Only geam's missing 16-bit forms are refused.
                                    CHECK(std::string(backend) == "cublas");
                                    CHECK((type == GEMM_F16 || type == GEMM_BF16));
                                    CHECK(std::string(gemm_last_error()).find("geam has no") != std::string::npos);
                                } else {
                                    ++checked;
                                }
                            }
        MESSAGE(std::string(backend) << ": " << checked << " cases checked, " << refused_count << " refused");
    }
}

TEST_CASE("gpu omatcopy: alpha = 0 writes zeros without reading A; managed memory; pointers aligned to parts only") {
    for (const char *backend : {"cuda_tiled", "cublas", "auto"}) {
        if (std::string(backend) != "auto" && !available(backend)) continue;
        forced f(backend);
        for (gemm_dtype_t type : all_types)
            for (gemm_op_t op : all_ops) {
                bool refused = false;
                const omatcopy_case zero = make_omatcopy_case(type, GEMM_ROW_MAJOR, op, 45, 70, 2, 0.0);
                INFO(std::string(backend) << ": " << zero.describe());
                CHECK(run_device_case(zero, false, true, 0, refused) == "");
                const omatcopy_case managed = make_omatcopy_case(type, GEMM_COL_MAJOR, op, 45, 70, 1, 2.0, -0.5);
                CHECK(run_device_case(managed, true, false, 0, refused) == "");
                // A complex element's part size past a multiple of the element size.
                const std::size_t lead = is_complex(type) ? dtype_size(type) / 2 : 0;
                CHECK(run_device_case(managed, false, false, lead, refused) == "");
            }
    }
}

TEST_CASE("gpu omatcopy: enqueued on the caller's stream") {
    cudaStream_t stream = nullptr;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const omatcopy_case c = make_omatcopy_case(GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_T, 2048, 1024, 0, 1.0);
    const omatcopy_operands o = make_omatcopy_operands(c);
    device_bytes a(o.a, false), b(o.b0, false);
    REQUIRE(gemm_set_stream(stream) == GEMM_STATUS_SUCCESS);
    REQUIRE(call_omatcopy(c, a.data(), b.data()) == GEMM_STATUS_SUCCESS);
    CUDA_REQUIRE(cudaStreamSynchronize(stream));
    gemm_set_stream(nullptr);
    CHECK(compare_b(c, b.read(), expected_b(c, o)) == "");
    cudaStreamDestroy(stream);
}

TEST_CASE("gpu omatcopy: host pointers on a GPU backend and mixed spaces are refused, B untouched") {
    const omatcopy_case c = make_omatcopy_case(GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_T, 20, 30, 0, 1.0);
    const omatcopy_operands o = make_omatcopy_operands(c);
    for (const char *backend : {"cuda_tiled", "cublas"}) {
        if (!available(backend)) continue;
        forced f(backend);
        bytes b = o.b0;
        CHECK(call_omatcopy(c, o.a.data(), b.data()) == GEMM_STATUS_NOT_SUPPORTED);
        CHECK(std::string(gemm_last_error()).find("host pointers") != std::string::npos);
        CHECK(b == o.b0);
    }
    device_bytes db(o.b0, false);
    CHECK(call_omatcopy(c, o.a.data(), db.data()) == GEMM_STATUS_MIXED_MEMORY_SPACES);
    CHECK(db.read() == o.b0);
    // Device memory forced onto a host backend.
    forced f("cpu_omp");
    device_bytes da(o.a, false);
    CHECK(call_omatcopy(c, da.data(), db.data()) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(gemm_last_error()).find("needs host pointers") != std::string::npos);
}

TEST_CASE("gpu omatcopy tune: a device key's candidates are the GPU backends, each checked; auto takes the winner") {
    setenv("GEMM_TEST_TUNE_DISTURBED", "never", 1);  // stored on a busy machine too
    const char *key = "omatcopy f32 T 2048 1024 space=device";
    gemm_tune_report_t r{};
    REQUIRE_MESSAGE(gemm_tune_key(key, 0, 200, nullptr, 1, &r) == GEMM_STATUS_SUCCESS, gemm_last_error());
    CHECK(r.stored == 1);
    CHECK(std::string(r.default_backend) == "cuda_tiled");
    for (int64_t i = 0; i < r.candidate_count; ++i) {
        const std::string name = r.candidates[i].backend;
        INFO(name << ": " << r.candidates[i].note);
        CHECK((name == "cuda_tiled" || name == "cublas"));  // device backends only, no reference
        CHECK(r.candidates[i].correct == 1);
        CHECK(r.candidates[i].median_us > 0);
    }
    CHECK(r.candidate_count == (available("cublas") ? 2 : 1));
    const gemm_tune_entry_t *entries = nullptr;
    int64_t count = 0;
    REQUIRE(gemm_tune_cache_entries(&entries, &count) == GEMM_STATUS_SUCCESS);
    bool listed = false;
    for (int64_t i = 0; i < count; ++i) listed |= std::string(entries[i].key) == key;
    CHECK(listed);
    // A call of the class runs on the stored choice and computes B exactly.
    const omatcopy_case c = make_omatcopy_case(GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_T, 2048, 1024, 0, 1.0);
    bool refused = false;
    CHECK(run_device_case(c, false, false, 0, refused) == "");
    CHECK(!refused);
    gemm_tune_verdict_t v{};
    CHECK(gemm_tune_verify(key, 0, 100, 0, &v) == GEMM_STATUS_SUCCESS);
    CHECK(std::string(v.default_backend) == "cuda_tiled");
}

// Run by CTest with GEMM_VERBOSE=1 (gpu_omatcopy.trace), in a process of its own: no other
// test case has loaded cuBLAS.
TEST_SUITE("gpu_omatcopy_trace" * doctest::skip()) {
    TEST_CASE("gpu omatcopy trace: auto takes cuda_tiled's kernel for device memory, without loading cuBLAS") {
        const omatcopy_case c = make_omatcopy_case(GEMM_BF16, GEMM_ROW_MAJOR, GEMM_OP_T, 100, 60, 0, 1.0);
        const omatcopy_operands o = make_omatcopy_operands(c);
        device_bytes a(o.a, false), b(o.b0, false);
        std::vector<std::string> lines;
        {
            stderr_capture capture;
            CHECK(call_omatcopy(c, a.data(), b.data()) == GEMM_STATUS_SUCCESS);
            lines = capture.lines();
        }
        REQUIRE(lines.size() == 1);
        INFO("trace: " << lines[0]);
        CHECK(lines[0].find("backend=cuda_tiled variant=transpose_tile_64x64_pad1 call=omatcopy dtype=bf16") !=
              std::string::npos);
        CHECK(lines[0].find("space=device") != std::string::npos);
        // The choice asked no cuBLAS backend whether it is available, which would load cuBLAS.
        std::ifstream maps("/proc/self/maps");
        const std::string mapped((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
        CHECK(mapped.find("libcublas") == std::string::npos);
    }
}

int main(int argc, char **argv) { return run_with_device(argc, argv); }
