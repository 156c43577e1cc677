// activation_math.hpp: the activations of an epilogue and their derivatives, one definition
// for the reference backend, the host pass and the device pass (host and device code).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "host_device.hpp"
#include "problem.hpp"

namespace gemm::activation_math {

// GELU's tanh form: z/2 (1 + tanh(u)), u = sqrt(2/pi) (z + 0.044715 z^3).
template <class T> GEMM_HOST_DEVICE T gelu(T z) {
    const T u = T(0.7978845608028654) * (z + T(0.044715) * z * z * z);
    return T(0.5) * z * (T(1) + std::tanh(u));
}

// d gelu / dz = (1 + t)/2 + z/2 (1 - t^2) du/dz, given t = tanh(u). Where tanh has saturated
// (t^2 = 1) the second term is 0, and it is taken as 0 without being computed: for a large
// finite z, z^3 overflows to infinity and 0 times it would be NaN, where the slope is 1 or 0.
template <class T> GEMM_HOST_DEVICE T gelu_slope_at(T z, T t) {
    const T s = T(0.7978845608028654), c = T(0.044715);
    const T flat = T(1) - t * t;
    const T rest = flat == T(0) ? T(0) : T(0.5) * z * flat * s * (T(1) + T(3) * c * z * z);
    return T(0.5) * (T(1) + t) + rest;
}

template <class T> GEMM_HOST_DEVICE T gelu_derivative(T z) {
    return gelu_slope_at(z, std::tanh(T(0.7978845608028654) * (z + T(0.044715) * z * z * z)));
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

#if !defined(__CUDA_ARCH__)
// ---- Host loops over a column of C: cpu_omp's fused epilogue and the host pass --------------

// tanh for float within a few units of roundoff in absolute terms (largest error 8.6e-8 over
// [-5, 5]), which is what GELU and its slope need (they use 1 + tanh and 1 - tanh^2):
// sign(x) (1 - e) / (1 + e) with e = exp(-2|x|), exp as 2^n times a degree-7 polynomial of the
// remainder (|r| <= ln2/2, error below 1e-8). A GELU column takes about half the time it
// takes with std::tanh (backends/cpu_omp/NOTES.md, "GELU's tanh").
inline float tanh_float(float x) {
    const float a = std::min(std::fabs(x), 9.0f);  // tanh(9) is 1 to float's precision
    const float y = -2.0f * a;
    // Adding 1.5 * 2^23 rounds to an integer, which then sits in the low bits of the sum.
    const float shifter = 12582912.0f, shifted = y * 1.44269504088896341f + shifter;
    const float n = shifted - shifter;
    const float r = (y - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    // 2^n, n in [-26, 0]. Unsigned: for a NaN x, shifted's bits are anything, and the
    // arithmetic must stay defined (p is NaN then, and so is the result).
    uint32_t integer;
    std::memcpy(&integer, &shifted, sizeof integer);
    const uint32_t bits = (integer - 0x4B400000u + 127u) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    const float e = p * scale;
    return std::copysign((1.0f - e) / (1.0f + e), x);
}

template <class T> T tanh_host(T x) {
    if constexpr (std::is_same_v<T, float>) return tanh_float(x);
    else return std::tanh(x);
}

// x[i] = act(x[i]) for a forward activation.
template <class T> void forward_column(epilogue_act a, T *x, int64_t n) {
    const T s = T(0.7978845608028654), c = T(0.044715);
    if (a == epilogue_act::relu)
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] > T(0) ? x[i] : T(0);
    else if (a == epilogue_act::gelu)
        for (int64_t i = 0; i < n; ++i) x[i] = T(0.5) * x[i] * (T(1) + tanh_host(s * (x[i] + c * x[i] * x[i] * x[i])));
}

// x[i] = x[i] * act'(saved[i]) for a backward activation.
template <class T> void backward_column(epilogue_act a, T *x, const T *saved, int64_t n) {
    const T s = T(0.7978845608028654), c = T(0.044715);
    if (a == epilogue_act::relu_backward)
        for (int64_t i = 0; i < n; ++i) x[i] = saved[i] > T(0) ? x[i] : T(0);
    else if (a == epilogue_act::gelu_backward)
        for (int64_t i = 0; i < n; ++i) {
            const T z = saved[i];
            x[i] *= gelu_slope_at(z, tanh_host(s * (z + c * z * z * z)));
        }
}
#endif

}  // namespace gemm::activation_math
