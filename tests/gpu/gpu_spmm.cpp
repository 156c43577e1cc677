// gpu_spmm.cpp: gemm_spmm_csr and gemm_spmm_coo on the GPU backends (cuda_tiled's kernels,
// cuSPARSE's generic SpMM and SpMV) against the test's oracle, on device and managed memory,
// every dtype, layout, op pair, index type and base, unsorted input and COO duplicates (sorted
// input for cusparse); beta = 0 with NaN in C; alpha = 0; the caller's stream; and the
// refusals: what cusparse does not serve, host pointers on a GPU backend, mixed spaces,
// validation of device arrays; GEMMs refused by cusparse.
// Without a CUDA device the program prints "SKIPPED: ..." and exits with 77, which CTest
// reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu/device_memory.hpp"
#include "spmm_case.hpp"

using namespace gemm_test;

namespace {

constexpr gemm_dtype_t all_types[] = {GEMM_F32, GEMM_F64, GEMM_C32, GEMM_C64};
constexpr gemm_layout_t all_layouts[] = {GEMM_COL_MAJOR, GEMM_ROW_MAJOR};
constexpr gemm_op_t all_ops[] = {GEMM_OP_N, GEMM_OP_T, GEMM_OP_C};

// One case on the device: "" when C is the oracle's, else what differs; `refused` when the
// backend said NOT_SUPPORTED (C then checked untouched).
std::string run_device_case(const spmm_case &c, bool managed, bool &refused) {
    const spmm_operands o = make_spmm_operands(c);
    device_bytes rows(o.row_array, managed), cols(o.col_array, managed), values(o.values, managed), b(o.b, managed),
        out(o.c0, managed);
    const gemm_status_t s = call_spmm(c, o, rows.data(), cols.data(), values.data(), b.data(), out.data());
    refused = s == GEMM_STATUS_NOT_SUPPORTED;
    if (refused) return out.read() == o.c0 ? "" : "refused but C changed";
    if (s != GEMM_STATUS_SUCCESS) return std::string("status ") + std::to_string(int(s)) + ": " + gemm_last_error();
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) return std::string("CUDA error: ") + cudaGetErrorString(e);
    return compare_spmm(c, o, out.read(), expected_spmm(c, o));
}

spmm_case device_case(bool coo, gemm_dtype_t type, gemm_layout_t layout, gemm_op_t op_a, gemm_op_t op_b, int64_t m,
                      int64_t n, int64_t k, int64_t turn) {
    spmm_case c;
    c.coo = coo;
    c.type = type;
    c.layout = layout;
    c.op_a = op_a;
    c.op_b = op_b;
    c.m = m;
    c.n = n;
    c.k = k;
    c.index64 = turn % 2 == 1;
    c.index_base = int(turn / 2 % 2);
    c.unsorted = turn % 3 == 1;
    c.duplicates = coo && turn % 3 == 1;
    c.density = 0.2;
    c.alpha = turn % 4 == 3 ? 0.0 : -1.25;
    c.alpha_imag = is_complex(type) && turn % 4 != 3 ? 0.5 : 0.0;
    c.beta = turn % 4 == 0 ? 0.0 : 0.5;
    c.beta_imag = is_complex(type) && turn % 4 == 1 ? -0.25 : 0.0;
    set_spmm_leading_dims(c, turn % 3 == 2 ? 3 : 0);
    return c;
}

// What cusparse promises: op_a N, op(B) in C's order (op_b N), something to multiply.
bool cusparse_serves(const spmm_case &c) { return c.op_a == GEMM_OP_N && c.op_b == GEMM_OP_N && !c.alpha_zero(); }

}  // namespace

TEST_CASE("gpu spmm: cuda_tiled and cusparse on device memory against the oracle") {
    const int64_t shapes[][3] = {{1, 1, 1}, {37, 1, 53}, {61, 17, 29}, {5, 64, 130}, {300, 33, 257}};
    for (const char *backend : {"cuda_tiled", "cusparse"}) {
        if (!available(backend)) {
            MESSAGE(std::string(backend) << " is unavailable here");
            continue;
        }
        forced f(backend);
        REQUIRE(f.status == GEMM_STATUS_SUCCESS);
        int64_t checked = 0, refused_count = 0, turn = 0;
        for (bool coo : {false, true})
            for (gemm_dtype_t type : all_types)
                for (gemm_layout_t layout : all_layouts)
                    for (gemm_op_t op_a : all_ops)
                        for (gemm_op_t op_b : all_ops)
                            for (const auto &shape : shapes) {
                                spmm_case c =
                                    device_case(coo, type, layout, op_a, op_b, shape[0], shape[1], shape[2], turn++);
                                const bool cusparse = std::string(backend) == "cusparse";
                                if (cusparse) {
                                    // cuSPARSE assumes sorted input without duplicates.
                                    c.unsorted = false;
                                    c.duplicates = false;
                                }
                                INFO(std::string(backend) << ": " << c.describe());
                                bool refused = false;
                                const std::string wrong = run_device_case(c, false, refused);
                                CHECK_MESSAGE(wrong.empty(), wrong);
                                if (refused) {
                                    CHECK(cusparse);
                                    CHECK(!cusparse_serves(c));
                                    CHECK(std::string(gemm_last_error()).find("cannot serve this sparse product") !=
                                          std::string::npos);
                                    ++refused_count;
                                    continue;
                                }
                                ++checked;
                            }
        MESSAGE(std::string(backend) << ": " << checked << " cases checked, " << refused_count << " refused");
        CHECK(checked > 0);
    }
}

TEST_CASE("gpu spmm: auto on device and managed memory") {
    int64_t turn = 0;
    for (bool coo : {false, true})
        for (gemm_dtype_t type : all_types)
            for (gemm_op_t op_a : all_ops)
                for (bool managed : {false, true}) {
                    // Sorted without duplicates, so that either GPU backend may serve it.
                    spmm_case c = device_case(coo, type, GEMM_ROW_MAJOR, op_a, GEMM_OP_N, 70, 9, 45, turn++);
                    c.unsorted = false;
                    c.duplicates = false;
                    INFO(c.describe() << (managed ? " managed" : " device"));
                    bool refused = false;
                    CHECK(run_device_case(c, managed, refused) == "");
                    CHECK(!refused);
                }
}

TEST_CASE("gpu spmm tune: a device key's candidates, each checked against cpu_ref; cusparse only when named") {
    setenv("GEMM_TEST_TUNE_DISTURBED", "never", 1);  // stored on a busy machine too
    const char *key = "spmm_csr f32 row NN 4096 64 4096 density=1e-2 space=device beta=0";
    gemm_tune_report_t r{};
    // cusparse assumes sorted A, which auto's callers of the class may not pass: not a
    // candidate unless named.
    REQUIRE_MESSAGE(gemm_tune_key(key, 0, 200, nullptr, 0, &r) == GEMM_STATUS_SUCCESS, gemm_last_error());
    CHECK(std::string(r.default_backend) == "cuda_tiled");
    REQUIRE(r.candidate_count == 1);
    CHECK(std::string(r.candidates[0].backend) == "cuda_tiled");
    CHECK(r.candidates[0].correct == 1);
    r = gemm_tune_report_t{};
    REQUIRE_MESSAGE(gemm_tune_key(key, 0, 200, "cuda_tiled,cusparse", 1, &r) == GEMM_STATUS_SUCCESS, gemm_last_error());
    CHECK(r.stored == 1);
    for (int64_t i = 0; i < r.candidate_count; ++i) {
        const std::string name = r.candidates[i].backend;
        INFO(name << ": " << r.candidates[i].note);
        CHECK((name == "cuda_tiled" || name == "cusparse"));
        CHECK(r.candidates[i].correct == 1);
    }
    CHECK(r.candidate_count == (available("cusparse") ? 2 : 1));
    // A CSR product within a factor of 2 of the tuned shape, about 1 % dense and sorted: the
    // nearest tuned shape's choice serves it, whichever backend that is.
    spmm_case c = device_case(false, GEMM_F32, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2048, 64, 2048, 0);
    c.density = 0.015;  // a third of the rows empty: about 1 % in all
    c.unsorted = false;
    c.duplicates = false;
    bool refused = false;
    CHECK(run_device_case(c, false, refused) == "");
    CHECK(!refused);
}

TEST_CASE("gpu spmm: enqueued on the caller's stream") {
    cudaStream_t stream = nullptr;
    CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const spmm_case c = device_case(false, GEMM_F32, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 2000, 64, 1500, 1);
    const spmm_operands o = make_spmm_operands(c);
    device_bytes rows(o.row_array, false), cols(o.col_array, false), values(o.values, false), b(o.b, false),
        out(o.c0, false);
    REQUIRE(gemm_set_stream(stream) == GEMM_STATUS_SUCCESS);
    REQUIRE(call_spmm(c, o, rows.data(), cols.data(), values.data(), b.data(), out.data()) == GEMM_STATUS_SUCCESS);
    CUDA_REQUIRE(cudaStreamSynchronize(stream));
    gemm_set_stream(nullptr);
    CHECK(compare_spmm(c, o, out.read(), expected_spmm(c, o)) == "");
    cudaStreamDestroy(stream);
}

TEST_CASE("gpu spmm: host pointers on a GPU backend, mixed spaces and device validation are refused, C untouched") {
    const spmm_case c = device_case(true, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 20, 3, 30, 0);
    const spmm_operands o = make_spmm_operands(c);
    for (const char *backend : {"cuda_tiled", "cusparse"}) {
        if (!available(backend)) continue;
        forced f(backend);
        bytes out = o.c0;
        CHECK(call_spmm(c, o, out.data()) == GEMM_STATUS_NOT_SUPPORTED);
        CHECK(std::string(gemm_last_error()).find("host pointers") != std::string::npos);
        CHECK(out == o.c0);
    }
    device_bytes rows(o.row_array, false), cols(o.col_array, false), values(o.values, false), b(o.b, false),
        out(o.c0, false);
    CHECK(call_spmm(c, o, rows.data(), cols.data(), values.data(), o.b.data(), out.data()) ==
          GEMM_STATUS_MIXED_MEMORY_SPACES);
    CHECK(std::string(gemm_last_error()).find("B is host memory") != std::string::npos);
    CHECK(out.read() == o.c0);
    CHECK(call_spmm(c, o, rows.data(), cols.data(), values.data(), b.data(), out.data(), 1) ==
          GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(gemm_last_error()).find("A->validate = 1 reads A's arrays on the host") != std::string::npos);
    CHECK(out.read() == o.c0);
    // Device memory forced onto a host backend.
    forced f("cpu_omp");
    CHECK(call_spmm(c, o, rows.data(), cols.data(), values.data(), b.data(), out.data()) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(gemm_last_error()).find("needs host pointers") != std::string::npos);
    CHECK(out.read() == o.c0);
}

TEST_CASE("gpu spmm: cusparse refuses every GEMM with its reason") {
    if (!available("cusparse")) return;
    forced f("cusparse");
    void *raw = nullptr;
    CUDA_REQUIRE(cudaMalloc(&raw, 3 * sizeof(float)));
    CUDA_REQUIRE(cudaMemset(raw, 0, 3 * sizeof(float)));
    float *d = static_cast<float *>(raw);
    const float one = 1.0f, zero = 0.0f;
    CHECK(gemm_sgemm(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 1, 1, 1, one, d, 1, d + 1, 1, zero, d + 2, 1) ==
          GEMM_STATUS_NOT_SUPPORTED);
    CHECK(std::string(gemm_last_error()).find("sparse products only") != std::string::npos);
    cudaFree(raw);
}

int main(int argc, char **argv) { return run_with_device(argc, argv); }
