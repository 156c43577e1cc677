// device_elements.cuh: C's element types on the device and the type they are computed in
// (float for all but double), for the library's own passes over C.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace gemm::cuda {

__device__ inline float to_compute(float v) { return v; }
__device__ inline double to_compute(double v) { return v; }
__device__ inline float to_compute(__half v) { return __half2float(v); }
__device__ inline float to_compute(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T, class S> __device__ T from_compute(S v) {
    if constexpr (std::is_same_v<T, __half>) return __float2half_rn(float(v));
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(float(v));
    else return T(v);
}

template <class T> using compute_of = std::conditional_t<std::is_same_v<T, double>, double, float>;

}  // namespace gemm::cuda
