// element.hpp: reading and writing one element of any dtype as double, for the code that
// handles every dtype the slow, simple way (the reference backend, the tuner's checks).
#pragma once

#include <complex>
#include <cstdint>

#include "fp8.hpp"
#include "gemm/gemm.hpp"
#include "problem.hpp"

namespace gemm {

// The real elements load_element and store_element handle: a complex element is two of its
// part_type (real, then imaginary), element i of a complex array being parts 2i and 2i + 1.
inline dtype part_type(dtype t) { return t == dtype::c32 ? dtype::f32 : t == dtype::c64 ? dtype::f64 : t; }
inline int64_t parts_per_element(dtype t) { return is_complex(t) ? 2 : 1; }

// A real dtype's element (t must not be complex: load_value reads those).
inline double load_element(const void *base, int64_t i, dtype t) {
    switch (t) {
    case dtype::f32: return static_cast<const float *>(base)[i];
    case dtype::f64: return static_cast<const double *>(base)[i];
    case dtype::f16: return half::to_float(static_cast<const uint16_t *>(base)[i]);
    case dtype::bf16: return bfloat16::to_float(static_cast<const uint16_t *>(base)[i]);
    case dtype::e4m3:
    case dtype::e5m2: return fp8_table(t)[static_cast<const uint8_t *>(base)[i]];
    case dtype::c32:
    case dtype::c64: break;
    }
    return 0;
}

// Rounds as the dtype's own arithmetic would: 16-bit results go through float once. FP8 is
// never an output (C is f32, f16 or bf16); the measurement engine encodes its FP8 operands
// with fp8_encode.
inline void store_element(void *base, int64_t i, dtype t, double v) {
    switch (t) {
    case dtype::f32: static_cast<float *>(base)[i] = float(v); break;
    case dtype::f64: static_cast<double *>(base)[i] = v; break;
    case dtype::f16: static_cast<uint16_t *>(base)[i] = half::from_float(float(v)); break;
    case dtype::bf16: static_cast<uint16_t *>(base)[i] = bfloat16::from_float(float(v)); break;
    case dtype::e4m3:
    case dtype::e5m2: static_cast<uint8_t *>(base)[i] = fp8_encode(v, fp8_format_of(t)); break;
    case dtype::c32:
    case dtype::c64: break;
    }
}

// Element i of any dtype as a complex number (imaginary part 0 for real types).
inline std::complex<double> load_value(const void *base, int64_t i, dtype t) {
    if (!is_complex(t)) return load_element(base, i, t);
    return {load_element(base, 2 * i, part_type(t)), load_element(base, 2 * i + 1, part_type(t))};
}

// Stores v's real part for a real dtype, both parts for a complex one.
inline void store_value(void *base, int64_t i, dtype t, std::complex<double> v) {
    if (!is_complex(t)) return store_element(base, i, t, v.real());
    store_element(base, 2 * i, part_type(t), v.real());
    store_element(base, 2 * i + 1, part_type(t), v.imag());
}

}  // namespace gemm
