// cusparse_library.hpp: cuSPARSE, loaded with dlopen the first time the cusparse backend is
// probed, and its statuses as the library's. Not linked to libgemm, as cuBLAS is not
// (backends/cuda_common/cublas_loader/): a process that never asks for a sparse product on
// the device never loads it, and a machine without it runs the other backends.
#pragma once

#include <cusparse.h>

#include <string>

#include "dispatch/backend.hpp"
#include "gemm/gemm.h"

namespace gemm::cusparse_detail {

// Every function of cuSPARSE the backend calls. (clang-format would re-wrap this list as nested
// calls, differently on each pass.)
// clang-format off
#define GEMM_CUSPARSE_FUNCTIONS(X)                                                                 \
    X(cusparseCreate) X(cusparseDestroy) X(cusparseSetStream) X(cusparseGetProperty)                 \
    X(cusparseGetErrorName) X(cusparseGetErrorString)                                              \
    X(cusparseCreateConstCsr) X(cusparseCreateConstCoo) X(cusparseDestroySpMat)                    \
    X(cusparseCreateConstDnMat) X(cusparseCreateDnMat) X(cusparseDestroyDnMat)                     \
    X(cusparseCreateConstDnVec) X(cusparseCreateDnVec) X(cusparseDestroyDnVec)                     \
    X(cusparseSpMM_bufferSize) X(cusparseSpMM) X(cusparseSpMV_bufferSize) X(cusparseSpMV)
// clang-format on

struct cusparse_functions {
#define GEMM_CUSPARSE_MEMBER(name) decltype(&::name) name = nullptr;
    GEMM_CUSPARSE_FUNCTIONS(GEMM_CUSPARSE_MEMBER)
#undef GEMM_CUSPARSE_MEMBER
};

// Loads the library, once, on the first call (thread-safe); never unloads it.
// yes("cuSPARSE 12.6.3") or no("cuSPARSE cannot be loaded: libcusparse.so.12: cannot open ...").
// The soname of the major version built against comes first, then the toolkit's file.
const verdict &cusparse_loaded();

// "cuSPARSE 12.6.3", the version the build was made against, without loading the library.
std::string cusparse_built_version();

// The functions; only after cusparse_loaded() said yes.
const cusparse_functions &cusparse();

// A cuSPARSE status as the library's, "what: CUSPARSE_STATUS_X (text)" recorded with
// set_error: ALLOC_FAILED -> GEMM_STATUS_ALLOC_FAILED, NOT_SUPPORTED and ARCH_MISMATCH ->
// GEMM_STATUS_NOT_SUPPORTED, others GEMM_STATUS_EXECUTION_FAILED. Success passes through.
gemm_status_t cusparse_status(cusparseStatus_t s, const char *what);

}  // namespace gemm::cusparse_detail
