// activation_math.hpp: the activations of an epilogue and their derivatives, one definition
// for the reference backend, the host pass and the device pass (host and device code).
#pragma once

#include <cmath>

#include "problem.hpp"

#if defined(__CUDACC__)
#define GEMM_HOST_DEVICE __host__ __device__
#else
#define GEMM_HOST_DEVICE
#endif

namespace gemm::activation_math {

// GELU's tanh form: z/2 (1 + tanh(u)), u = sqrt(2/pi) (z + 0.044715 z^3).
template <class T> GEMM_HOST_DEVICE T gelu(T z) {
    const T u = T(0.7978845608028654) * (z + T(0.044715) * z * z * z);
    return T(0.5) * z * (T(1) + std::tanh(u));
}

// d gelu / dz = (1 + t)/2 + z/2 (1 - t^2) du/dz, t = tanh(u).
template <class T> GEMM_HOST_DEVICE T gelu_derivative(T z) {
    const T s = T(0.7978845608028654);
    const T t = std::tanh(s * (z + T(0.044715) * z * z * z));
    return T(0.5) * (T(1) + t) + T(0.5) * z * (T(1) - t * t) * s * (T(1) + T(3) * T(0.044715) * z * z);
}

// The epilogue's value for Z (bias already added for forward activations) and, for backward
// activations, the saved aux value.
template <class T> GEMM_HOST_DEVICE T apply(epilogue_act a, T z, T aux) {
    switch (a) {
    case epilogue_act::relu: return z > T(0) ? z : T(0);
    case epilogue_act::gelu: return gelu(z);
    case epilogue_act::relu_backward: return aux > T(0) ? z : T(0);
    case epilogue_act::gelu_backward: return z * gelu_derivative(aux);
    case epilogue_act::none: break;
    }
    return z;
}

}  // namespace gemm::activation_math
