// cublas_library.cpp: cuBLAS and cuBLASLt loaded on first use, and their statuses as the library's.
#include "cublas_library.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>

#include "cuda_library_open.hpp"
#include "dispatch/error.hpp"

namespace gemm::cuda {
namespace {

#define GEMM_TEXT_OF(x) #x
#define GEMM_TEXT(x) GEMM_TEXT_OF(x)
constexpr const char *blas_soname = "libcublas.so." GEMM_TEXT(CUBLAS_VER_MAJOR);
constexpr const char *lt_soname = "libcublasLt.so." GEMM_TEXT(CUBLAS_VER_MAJOR);

struct loaded_library {
    cublas_functions functions;
    verdict result;
};

loaded_library load() {
    loaded_library lib;
    std::string error;
    // cuBLASLt first: libcublas needs it, and then finds it loaded under its soname.
    void *lt = open_cuda_library(lt_soname, error);
    void *blas = lt ? open_cuda_library(blas_soname, error) : nullptr;
    if (!lt || !blas) {
        lib.result = verdict::no("cuBLAS cannot be loaded: " + error);
        return lib;
    }
    std::string missing;
    cublas_functions &f = lib.functions;
#define GEMM_FIND_BLAS(name) find_symbol(blas, GEMM_TEXT(name), f.name, missing);
#define GEMM_FIND_LT(name) find_symbol(lt, GEMM_TEXT(name), f.name, missing);
    GEMM_CUBLAS_FUNCTIONS(GEMM_FIND_BLAS)
    GEMM_CUBLASLT_FUNCTIONS(GEMM_FIND_LT)
#undef GEMM_FIND_BLAS
#undef GEMM_FIND_LT
    if (!missing.empty()) {
        lib.functions = {};
        lib.result =
            verdict::no("cuBLAS cannot be used: " + std::string(blas_soname) + " or " + lt_soname + " lacks " + missing);
        return lib;
    }
    const std::size_t v = f.cublasLtGetVersion();  // e.g. 130100
    lib.result = verdict::yes("cuBLAS " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                              std::to_string(v % 100));
    return lib;
}

const loaded_library &library() {
    static const loaded_library lib = load();
    return lib;
}

}  // namespace

const verdict &cublas_loaded() { return library().result; }

std::string cublas_built_version() {
    return "cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) + "." +
           std::to_string(CUBLAS_VER_PATCH);
}

gemm_status_t require_cublas() {
    const verdict &loaded = cublas_loaded();
    return loaded.ok ? GEMM_STATUS_SUCCESS : set_error(GEMM_STATUS_NOT_SUPPORTED, loaded.reason);
}

const cublas_functions &cublas() { return library().functions; }

gemm_status_t cublas_status(cublasStatus_t st, const char *what) {
    if (st == CUBLAS_STATUS_SUCCESS) return GEMM_STATUS_SUCCESS;
    cudaGetLastError();
    gemm_status_t s = st == CUBLAS_STATUS_ALLOC_FAILED ? GEMM_STATUS_ALLOC_FAILED
                      : st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH
                          ? GEMM_STATUS_NOT_SUPPORTED
                          : GEMM_STATUS_EXECUTION_FAILED;
    return set_error(s, std::string(what) + ": " + cublas().cublasGetStatusName(st) + " (" +
                            cublas().cublasGetStatusString(st) + ")");
}

}  // namespace gemm::cuda
