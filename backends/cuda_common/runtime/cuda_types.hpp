// cuda_types.hpp: the CUDA libraries' names for the library's types, and the type rules
// cuBLAS and cuBLASLt follow.
#pragma once

#include <cublas_v2.h>
#include <library_types.h>

#include "dispatch/backend.hpp"

namespace gemm::cuda {

inline cublasOperation_t operation_of(transpose t) {
    return t == transpose::n ? CUBLAS_OP_N : t == transpose::t ? CUBLAS_OP_T : CUBLAS_OP_C;
}

inline cudaDataType_t data_type_of(dtype t) {
    switch (t) {
    case dtype::f32: return CUDA_R_32F;
    case dtype::f64: return CUDA_R_64F;
    case dtype::f16: return CUDA_R_16F;
    case dtype::bf16: return CUDA_R_16BF;
    case dtype::c32: return CUDA_C_32F;
    case dtype::c64: return CUDA_C_64F;
    case dtype::e4m3: return CUDA_R_8F_E4M3;
    case dtype::e5m2: return CUDA_R_8F_E5M2;
    }
    return CUDA_R_32F;
}

// f32 stays f32 unless GEMM_ALLOW_TF32=1; f16 and bf16 accumulate in f32.
bool use_tf32(const problem &p);

// The types cuBLAS and cuBLASLt serve: all of the library's (c_type_allowed, compute_type_for),
// FP8 through cuBLASLt only (cuBLAS's GemmEx has none).
verdict library_supports_types(const problem &p);

}  // namespace gemm::cuda
