// cusparse_library.cpp: cuSPARSE loaded on first use, and its statuses as the library's.
#include "cusparse_library.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <library_types.h>

#include <string>

#include "backends/cuda_common/cublas_loader/cuda_library_open.hpp"
#include "dispatch/error.hpp"

namespace gemm::cusparse_detail {
namespace {

#define GEMM_TEXT_OF(x) #x
#define GEMM_TEXT(x) GEMM_TEXT_OF(x)
constexpr const char *soname = "libcusparse.so." GEMM_TEXT(CUSPARSE_VER_MAJOR);

struct loaded_library {
    cusparse_functions functions;
    verdict result;
};

loaded_library load() {
    loaded_library lib;
    std::string error;
    void *handle = gemm::cuda::open_cuda_library(soname, error);
    if (!handle) {
        lib.result = verdict::no("cuSPARSE cannot be loaded: " + error);
        return lib;
    }
    std::string missing;
    cusparse_functions &f = lib.functions;
#define GEMM_FIND(name) gemm::cuda::find_symbol(handle, GEMM_TEXT(name), f.name, missing);
    GEMM_CUSPARSE_FUNCTIONS(GEMM_FIND)
#undef GEMM_FIND
    if (!missing.empty()) {
        lib.functions = {};
        lib.result = verdict::no("cuSPARSE cannot be used: " + std::string(soname) + " lacks " + missing);
        return lib;
    }
    int major = 0, minor = 0, patch = 0;
    f.cusparseGetProperty(MAJOR_VERSION, &major);
    f.cusparseGetProperty(MINOR_VERSION, &minor);
    f.cusparseGetProperty(PATCH_LEVEL, &patch);
    lib.result =
        verdict::yes("cuSPARSE " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch));
    return lib;
}

const loaded_library &library() {
    static const loaded_library lib = load();
    return lib;
}

}  // namespace

const verdict &cusparse_loaded() { return library().result; }

std::string cusparse_built_version() {
    return "cuSPARSE " + std::to_string(CUSPARSE_VER_MAJOR) + "." + std::to_string(CUSPARSE_VER_MINOR) + "." +
           std::to_string(CUSPARSE_VER_PATCH);
}

const cusparse_functions &cusparse() { return library().functions; }

gemm_status_t cusparse_status(cusparseStatus_t st, const char *what) {
    if (st == CUSPARSE_STATUS_SUCCESS) return GEMM_STATUS_SUCCESS;
    cudaGetLastError();
    const gemm_status_t s = st == CUSPARSE_STATUS_ALLOC_FAILED ? GEMM_STATUS_ALLOC_FAILED
                            : st == CUSPARSE_STATUS_NOT_SUPPORTED || st == CUSPARSE_STATUS_ARCH_MISMATCH
                                ? GEMM_STATUS_NOT_SUPPORTED
                                : GEMM_STATUS_EXECUTION_FAILED;
    return set_error(s, std::string(what) + ": " + cusparse().cusparseGetErrorName(st) + " (" +
                            cusparse().cusparseGetErrorString(st) + ")");
}

}  // namespace gemm::cusparse_detail
