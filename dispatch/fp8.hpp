// fp8.hpp: the two 8-bit floating-point types (OCP FP8: E4M3 and E5M2), decoded exactly
// through a 256-entry table and encoded with rounding to nearest, ties to even.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "problem.hpp"

namespace gemm {

// E4M3: bias 7, no infinities; S.1111.111 is NaN (the only NaN), so the largest finite value
// is S.1111.110 = 448. E5M2: bias 15, IEEE-like: S.11111.00 is infinity, S.11111.xx (xx != 0)
// NaN, the largest finite value S.11110.11 = 57344. Both have subnormals (exponent field 0).
struct fp8_format {
    int mantissa_bits;
    int bias;
    bool has_infinity;
    double max_finite;
};

constexpr fp8_format e4m3_format{3, 7, false, 448.0};
constexpr fp8_format e5m2_format{2, 15, true, 57344.0};

constexpr const fp8_format &fp8_format_of(dtype t) { return t == dtype::e4m3 ? e4m3_format : e5m2_format; }

// The exact value of bit pattern x (every FP8 value is a float).
inline float fp8_decode(uint8_t x, const fp8_format &f) {
    const int exponent_bits = 7 - f.mantissa_bits;
    const int exponent_max = (1 << exponent_bits) - 1;
    const int e = (x >> f.mantissa_bits) & exponent_max, mant = x & ((1 << f.mantissa_bits) - 1);
    const float sign = (x & 0x80) ? -1.0f : 1.0f;
    if (f.has_infinity && e == exponent_max)
        return mant ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
    if (!f.has_infinity && e == exponent_max && mant == (1 << f.mantissa_bits) - 1)
        return std::numeric_limits<float>::quiet_NaN();
    if (e == 0) return sign * std::ldexp(float(mant), 1 - f.bias - f.mantissa_bits);
    return sign * std::ldexp(float((1 << f.mantissa_bits) + mant), e - f.bias - f.mantissa_bits);
}

// All 256 values of type t, built once: what the CPU backends decode through.
inline const std::array<float, 256> &fp8_table(dtype t) {
    auto make = [](const fp8_format &f) {
        std::array<float, 256> table{};
        for (int x = 0; x < 256; ++x) table[std::size_t(x)] = fp8_decode(uint8_t(x), f);
        return table;
    };
    static const std::array<float, 256> e4m3 = make(e4m3_format), e5m2 = make(e5m2_format);
    return t == dtype::e4m3 ? e4m3 : e5m2;
}

// v rounded to the nearest value of the format, ties to even; a magnitude past the largest
// finite value saturates to it (as cuBLASLt's and PyTorch's float8 conversions with
// saturation do: the library only makes FP8 operands for measurement), NaN stays NaN.
inline uint8_t fp8_encode(double v, const fp8_format &f) {
    const uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
    const int exponent_max = (1 << (7 - f.mantissa_bits)) - 1;
    if (std::isnan(v)) return uint8_t(sign | (f.has_infinity ? (exponent_max << f.mantissa_bits) | 1 : 0x7f));
    double a = std::fabs(v);
    if (a >= f.max_finite) a = f.max_finite;
    // The value's quantum: that of its binade, or the subnormals' below the normal range.
    int e = 0;
    std::frexp(a, &e);  // a = x 2^e, x in [0.5, 1)
    const int min_exponent = 1 - f.bias;
    const int quantum_exp = std::max(e - 1, min_exponent) - f.mantissa_bits;
    const double q = std::nearbyint(std::ldexp(a, -quantum_exp));  // ties to even by default
    const double r = std::ldexp(q, quantum_exp);
    // Encode r (now exact in the format, at most max_finite).
    if (r == 0.0) return sign;
    int re = 0;
    std::frexp(r, &re);
    const int biased = re - 1 + f.bias;
    if (biased <= 0) return uint8_t(sign | int(std::ldexp(r, f.bias - 1 + f.mantissa_bits)));  // subnormal
    const int mant = int(std::ldexp(r, -(re - 1) + f.mantissa_bits)) - (1 << f.mantissa_bits);
    return uint8_t(sign | (biased << f.mantissa_bits) | mant);
}

}  // namespace gemm
