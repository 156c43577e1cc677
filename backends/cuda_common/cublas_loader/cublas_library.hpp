// cublas_library.hpp: cuBLAS, cuBLASXt and cuBLASLt, loaded with dlopen the first time a
// backend that calls them asks, and their statuses as the library's. Not linked to libgemm:
// loading cuBLASLt costs a process time and resident memory at start, GPU or not, GEMM or
// not (docs/BLAS.md has the figures), so only a process that asks for a cuBLAS backend on a
// machine with a CUDA device pays it, once.
#pragma once

#include <cublasLt.h>
#include <cublasXt.h>
#include <cublas_v2.h>

#include "dispatch/backend.hpp"
#include "gemm/gemm.h"

namespace gemm::cuda {

// Every function of the three the library calls. cublas_v2.h renames some to versioned
// symbols (cublasCreate is cublasCreate_v2): the members and the symbols looked up take the
// renamed names, so callers write the documented ones. (clang-format would re-wrap these lists
// as nested calls, differently on each pass.)
// clang-format off
#define GEMM_CUBLAS_FUNCTIONS(X)                                                                  \
    X(cublasCreate) X(cublasDestroy) X(cublasSetStream) X(cublasSetPointerMode) X(cublasSetMathMode) \
    X(cublasGetStatusName) X(cublasGetStatusString)                                                \
    X(cublasSgemm_64) X(cublasDgemm_64) X(cublasCgemm_64) X(cublasZgemm_64)                        \
    X(cublasSgemmStridedBatched_64) X(cublasDgemmStridedBatched_64)                                \
    X(cublasCgemmStridedBatched_64) X(cublasZgemmStridedBatched_64)                                \
    X(cublasGemmEx_64) X(cublasGemmStridedBatchedEx_64) X(cublasGemmBatchedEx_64)                  \
    X(cublasGemmGroupedBatchedEx_64)                                                               \
    X(cublasSgeam_64) X(cublasDgeam_64) X(cublasCgeam_64) X(cublasZgeam_64)                        \
    X(cublasXtCreate) X(cublasXtDestroy) X(cublasXtDeviceSelect) X(cublasXtSetBlockDim)            \
    X(cublasXtSgemm) X(cublasXtDgemm)
#define GEMM_CUBLASLT_FUNCTIONS(X)                                                                \
    X(cublasLtGetVersion) X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtMatmul)                   \
    X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)     \
    X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy) X(cublasLtMatrixLayoutSetAttribute) \
    X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy)                           \
    X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic)                      \
    X(cublasLtMatmulAlgoInit) X(cublasLtMatmulAlgoCheck) X(cublasLtMatmulAlgoCapGetAttribute)      \
    X(cublasLtMatmulAlgoConfigGetAttribute) X(cublasLtMatmulAlgoConfigSetAttribute)
// clang-format on

struct cublas_functions {
#define GEMM_CUBLAS_MEMBER(name) decltype(&::name) name = nullptr;
    GEMM_CUBLAS_FUNCTIONS(GEMM_CUBLAS_MEMBER)
    GEMM_CUBLASLT_FUNCTIONS(GEMM_CUBLAS_MEMBER)
#undef GEMM_CUBLAS_MEMBER
};

// Loads the libraries, once, on the first call (thread-safe); never unloads them.
// yes("cuBLAS 13.1.0") or no("cuBLAS cannot be loaded: libcublasLt.so.13: cannot open ...").
// The soname of the major version built against comes first (LD_LIBRARY_PATH and the system's
// paths apply), then the file of the toolkit the build found.
const verdict &cublas_loaded();

// "cuBLAS 13.1.0", the version the build was made against, without loading the libraries.
std::string cublas_built_version();

// Before a handle is made: success where the libraries are loaded (loading them if need be),
// else GEMM_STATUS_NOT_SUPPORTED with cublas_loaded()'s reason recorded.
gemm_status_t require_cublas();

// The functions. Only after require_cublas() succeeded: every handle is made after it
// (device_context, side_streams, cublasxt), and every other call takes a handle.
const cublas_functions &cublas();

// A cuBLAS or cuBLASLt status as the library's, "what: CUBLAS_STATUS_X (text)" recorded with
// set_error: CUBLAS_STATUS_ALLOC_FAILED -> GEMM_STATUS_ALLOC_FAILED, CUBLAS_STATUS_NOT_SUPPORTED
// and ARCH_MISMATCH -> GEMM_STATUS_NOT_SUPPORTED, others GEMM_STATUS_EXECUTION_FAILED. Success
// passes through. Clears the CUDA runtime's last error, as cuda_status does.
gemm_status_t cublas_status(cublasStatus_t s, const char *what);

}  // namespace gemm::cuda
