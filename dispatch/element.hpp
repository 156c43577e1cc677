// element.hpp: reading and writing one element of any dtype as double, for the code that
// handles every dtype the slow, simple way (the reference backend, the tuner's checks).
#pragma once

#include <cstdint>

#include "gemm/gemm.hpp"
#include "problem.hpp"

namespace gemm {

inline double load_element(const void *base, int64_t i, dtype t) {
    switch (t) {
    case dtype::f32: return static_cast<const float *>(base)[i];
    case dtype::f64: return static_cast<const double *>(base)[i];
    case dtype::f16: return half::to_float(static_cast<const uint16_t *>(base)[i]);
    case dtype::bf16: return bfloat16::to_float(static_cast<const uint16_t *>(base)[i]);
    }
    return 0;
}

// Rounds as the dtype's own arithmetic would: 16-bit results go through float once.
inline void store_element(void *base, int64_t i, dtype t, double v) {
    switch (t) {
    case dtype::f32: static_cast<float *>(base)[i] = float(v); break;
    case dtype::f64: static_cast<double *>(base)[i] = v; break;
    case dtype::f16: static_cast<uint16_t *>(base)[i] = half::from_float(float(v)); break;
    case dtype::bf16: static_cast<uint16_t *>(base)[i] = bfloat16::from_float(float(v)); break;
    }
}

}  // namespace gemm
