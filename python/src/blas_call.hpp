// blas_call.hpp: one gemm.matmul as the C call that computes it, made without the GIL.
#pragma once

#include "blas_geometry.hpp"
#include "python_error.hpp"

#include <gemm/gemm.h>

#include <nanobind/nanobind.h>

#include <complex>
#include <string>

namespace gemm_python {

// alpha and beta as a value of the compute type (float, double or a complex pair of either).
struct scalars {
    alignas(16) unsigned char alpha[16] = {};
    alignas(16) unsigned char beta[16] = {};
    bool beta_zero = true;
};

// Refused (naming alpha or beta) when not a number, or complex for a real dtype.
scalars scalars_of(gemm_dtype_t dtype, nanobind::handle alpha, nanobind::handle beta);

gemm_dtype_t compute_type_of(gemm_dtype_t dtype);

bool is_fp8(gemm_dtype_t dtype);

// An FP8 call's per-tensor scales (gemm_scaling_t's): pointers in the operands' memory, NULL
// where not given.
struct fp8_scales {
    gemm_scale_mode_t mode = GEMM_SCALE_NONE;
    const float *a = nullptr, *b = nullptr, *d = nullptr;
    float *amax = nullptr;
    int64_t ld_a = 0, ld_b = 0;  // GEMM_SCALE_BLOCK: gemm_scaling_t's ld_a_scale, ld_b_scale
};

gemm_scaling_t scaling_of(const fp8_scales &scales);

struct blas_call {
    gemm_layout_t layout = GEMM_ROW_MAJOR;
    blas_operand a, b;
    int64_t m = 0, n = 0, k = 0, ldc = 1;
    gemm_dtype_t dtype = GEMM_F32;  // a's and b's
    int64_t itemsize = 4;
    gemm_dtype_t c_dtype = GEMM_F32;  // dtype's, but for FP8 a and b
    int64_t c_itemsize = 4;
    uintptr_t a_data = 0, b_data = 0, c_data = 0;
    batch_form batch;
    scalars values;
    fp8_scales scales;  // FP8 only: a single matrix, through gemm_ex_scaled
};

// What the call runs with: a backend forced for it (empty: the selection in force) and the
// CUDA stream of device calls.
struct call_context {
    std::string backend;
    bool device = false;
    void *stream = nullptr;
};

// Runs the call with the GIL released; the failure (status SUCCESS when none) is read
// before anything else runs on this thread.
call_failure run_without_gil(const blas_call &call, const call_context &context);

// The stream a stream= argument names: None (the legacy default stream), an int (a
// cudaStream_t's value), or an object with cuda_stream (PyTorch) or ptr (CuPy).
void *stream_of(nanobind::handle stream);

}  // namespace gemm_python
