// gemm_api.cpp: the exported C entry points; each builds a user_call and runs it.
#include <string>

#include "call.hpp"
#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"
#include "dispatch/registry.hpp"
#include "dispatch/settings.hpp"
#include "gemm/gemm.h"

using namespace gemm;

extern "C" {

const char *gemm_version(void) { return GEMM_VERSION_STRING; }

const char *gemm_status_string(gemm_status_t status) {
    switch (status) {
    case GEMM_STATUS_SUCCESS: return "GEMM_STATUS_SUCCESS: success";
    case GEMM_STATUS_INVALID_LAYOUT: return "GEMM_STATUS_INVALID_LAYOUT: layout is not row- or column-major";
    case GEMM_STATUS_INVALID_OP: return "GEMM_STATUS_INVALID_OP: transpose is not N, T or C";
    case GEMM_STATUS_INVALID_SIZE: return "GEMM_STATUS_INVALID_SIZE: a size or batch count is negative";
    case GEMM_STATUS_INVALID_LEADING_DIM: return "GEMM_STATUS_INVALID_LEADING_DIM: a leading dimension is too small";
    case GEMM_STATUS_INVALID_STRIDE: return "GEMM_STATUS_INVALID_STRIDE: a batch stride is negative or C matrices overlap";
    case GEMM_STATUS_INVALID_POINTER: return "GEMM_STATUS_INVALID_POINTER: a needed pointer is NULL";
    case GEMM_STATUS_INVALID_DTYPE: return "GEMM_STATUS_INVALID_DTYPE: not a gemm_dtype_t value";
    case GEMM_STATUS_INVALID_VALUE: return "GEMM_STATUS_INVALID_VALUE: an argument is invalid";
    case GEMM_STATUS_MIXED_MEMORY_SPACES: return "GEMM_STATUS_MIXED_MEMORY_SPACES: A, B and C are not in one memory space";
    case GEMM_STATUS_NOT_SUPPORTED: return "GEMM_STATUS_NOT_SUPPORTED: the chosen backend cannot serve this call";
    case GEMM_STATUS_UNKNOWN_BACKEND: return "GEMM_STATUS_UNKNOWN_BACKEND: no backend of that name in this build";
    case GEMM_STATUS_BACKEND_UNAVAILABLE: return "GEMM_STATUS_BACKEND_UNAVAILABLE: the backend cannot run on this machine";
    case GEMM_STATUS_INVALID_CONFIG: return "GEMM_STATUS_INVALID_CONFIG: a GEMM_* environment variable is invalid";
    case GEMM_STATUS_ALLOC_FAILED: return "GEMM_STATUS_ALLOC_FAILED: memory allocation failed";
    case GEMM_STATUS_EXECUTION_FAILED: return "GEMM_STATUS_EXECUTION_FAILED: the backend failed while computing";
    case GEMM_STATUS_INTERNAL_ERROR: return "GEMM_STATUS_INTERNAL_ERROR: internal error";
    }
    return "unknown gemm_status_t value";
}

const char *gemm_last_error(void) { return last_error_message(); }

int gemm_last_error_parameter(void) { return last_error_parameter(); }

gemm_status_t gemm_sgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                         int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                         const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    return run_call({layout, transa, transb, m, n, k, &alpha, A, GEMM_F32, lda, 0, B, GEMM_F32,
                     ldb, 0, &beta, C, GEMM_F32, ldc, 0, 1, GEMM_F32, &sgemm_positions});
}

gemm_status_t gemm_dgemm(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                         int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                         const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
    return run_call({layout, transa, transb, m, n, k, &alpha, A, GEMM_F64, lda, 0, B, GEMM_F64,
                     ldb, 0, &beta, C, GEMM_F64, ldc, 0, 1, GEMM_F64, &sgemm_positions});
}

gemm_status_t gemm_sgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa,
                                         gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                                         float alpha, const float *A, int64_t lda,
                                         int64_t stride_a, const float *B, int64_t ldb,
                                         int64_t stride_b, float beta, float *C, int64_t ldc,
                                         int64_t stride_c, int64_t batch_count) {
    return run_call({layout, transa, transb, m, n, k, &alpha, A, GEMM_F32, lda, stride_a, B,
                     GEMM_F32, ldb, stride_b, &beta, C, GEMM_F32, ldc, stride_c, batch_count,
                     GEMM_F32, &sgemm_batched_positions});
}

gemm_status_t gemm_dgemm_strided_batched(gemm_layout_t layout, gemm_op_t transa,
                                         gemm_op_t transb, int64_t m, int64_t n, int64_t k,
                                         double alpha, const double *A, int64_t lda,
                                         int64_t stride_a, const double *B, int64_t ldb,
                                         int64_t stride_b, double beta, double *C, int64_t ldc,
                                         int64_t stride_c, int64_t batch_count) {
    return run_call({layout, transa, transb, m, n, k, &alpha, A, GEMM_F64, lda, stride_a, B,
                     GEMM_F64, ldb, stride_b, &beta, C, GEMM_F64, ldc, stride_c, batch_count,
                     GEMM_F64, &sgemm_batched_positions});
}

gemm_status_t gemm_ex(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb, int64_t m,
                      int64_t n, int64_t k, const void *alpha, const void *A,
                      gemm_dtype_t a_type, int64_t lda, const void *B, gemm_dtype_t b_type,
                      int64_t ldb, const void *beta, void *C, gemm_dtype_t c_type, int64_t ldc,
                      gemm_dtype_t compute_type) {
    return run_call({layout, transa, transb, m, n, k, alpha, A, a_type, lda, 0, B, b_type, ldb,
                     0, beta, C, c_type, ldc, 0, 1, compute_type, &ex_positions});
}

gemm_status_t gemm_ex_strided_batched(gemm_layout_t layout, gemm_op_t transa, gemm_op_t transb,
                                      int64_t m, int64_t n, int64_t k, const void *alpha,
                                      const void *A, gemm_dtype_t a_type, int64_t lda,
                                      int64_t stride_a, const void *B, gemm_dtype_t b_type,
                                      int64_t ldb, int64_t stride_b, const void *beta, void *C,
                                      gemm_dtype_t c_type, int64_t ldc, int64_t stride_c,
                                      int64_t batch_count, gemm_dtype_t compute_type) {
    return run_call({layout, transa, transb, m, n, k, alpha, A, a_type, lda, stride_a, B,
                     b_type, ldb, stride_b, beta, C, c_type, ldc, stride_c, batch_count,
                     compute_type, &ex_batched_positions});
}

int64_t gemm_backend_count(void) { return int64_t(registered_backends().size()); }

gemm_status_t gemm_backend_get_info(int64_t index, gemm_backend_info_t *info) {
    clear_error();
    const auto &all = registered_backends();
    if (index < 0 || index >= int64_t(all.size()))
        return set_error(GEMM_STATUS_INVALID_VALUE,
                         "parameter 1: index = " + std::to_string(index) + " must be in [0, " +
                             std::to_string(all.size()) + ")", 1);
    if (!info) return set_error(GEMM_STATUS_INVALID_POINTER, "parameter 2: info is NULL", 2);
    backend *b = all[std::size_t(index)];
    const verdict &v = b->available();  // constant once probed: its reason outlives the call
    info->name = b->name().data();
    info->available = v.ok ? 1 : 0;
    info->reason = v.reason.c_str();
    info->detail = v.detail.c_str();
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t gemm_set_backend(const char *name) {
    clear_error();
    return select_backend(name);
}

gemm_status_t gemm_set_stream(void *stream) {
    clear_error();
    set_thread_stream(stream);
    return GEMM_STATUS_SUCCESS;
}

void *gemm_get_stream(void) { return thread_stream(); }

const char *gemm_get_backend(void) { return current_selection().spec.c_str(); }

}  // extern "C"
