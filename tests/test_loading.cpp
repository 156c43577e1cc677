// test_loading.cpp: what loading libgemm costs a process. cuBLAS and cuBLASLt are loaded only when
// a backend built on them is probed on a machine with a CUDA device
// (backends/cuda_common/cublas_loader/cublas_library.hpp): linked, they cost every process that
// loads libgemm, GPU or not, about 0.1 s and 210 MB resident. One process per run: nothing may have
// probed a backend before the test does.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "gemm/gemm.h"

namespace {

// Whether a file whose path contains `part` is mapped into this process.
bool mapped(const std::string &part) {
    std::ifstream maps("/proc/self/maps");
    REQUIRE(maps.good());
    for (std::string line; std::getline(maps, line);)
        if (line.find(part) != std::string::npos) return true;
    return false;
}

bool built_on_cublas(const std::string &backend) { return backend.rfind("cublas", 0) == 0; }

}  // namespace

TEST_CASE("loading: cuBLAS is mapped only once a cuBLAS backend is probed where a CUDA device is") {
    // libcublas.so.N and libcublasLt.so.N both contain "libcublas".
    CHECK_FALSE(mapped("libcublas"));

    // A host GEMM through auto (the built-in rule serves host memory with host backends).
    std::vector<float> a(7 * 5, 1.0f), b(5 * 3, 2.0f), c(7 * 3, 0.0f);
    REQUIRE(gemm_sgemm(GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 7, 3, 5, 1.0f, a.data(), 5, b.data(), 3, 0.0f, c.data(),
                       3) == GEMM_STATUS_SUCCESS);
    CHECK(c[0] == 10.0f);
    CHECK_FALSE(mapped("libcublas"));

    // The backends not built on cuBLAS probed by name, the CUDA ones among them (a build
    // without CUDA has no cuda_tiled or cuda_naive: GEMM_STATUS_UNKNOWN_BACKEND).
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F32, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 7, 3, 5);
    d.device = 0;
    for (const char *name : {"cblas", "cpu_omp", "cpu_ref", "cuda_tiled", "cuda_naive"})
        gemm_backend_supports(name, &d);
    CHECK_FALSE(mapped("libcublas"));

    // Then every backend: whether cuBLAS's probes loaded it depends on the device; without one
    // they refuse before loading anything.
    std::vector<gemm_backend_info_t> cublas_based;
    for (int64_t i = 0; i < gemm_backend_count(); ++i) {
        gemm_backend_info_t info{};
        REQUIRE(gemm_backend_get_info(i, &info) == GEMM_STATUS_SUCCESS);
        if (built_on_cublas(info.name)) cublas_based.push_back(info);
    }
    for (const gemm_backend_info_t &info : cublas_based) {
        INFO(info.name << ": " << (info.available ? info.detail : info.reason));
        if (info.available) {
            CHECK(mapped("libcublasLt.so"));
            CHECK(std::string(info.detail).find(", cuBLAS ") != std::string::npos);
        } else if (std::string(info.reason).rfind("no CUDA device", 0) == 0) {
            CHECK_FALSE(mapped("libcublas"));
        }
    }
    const std::string state = mapped("libcublas") ? "loaded" : "not loaded";
    MESSAGE(cublas_based.size() << " cuBLAS backends in this build; cuBLAS " << state);
}
