// tolerance.hpp: the one rule of "correct" for an element of C: the measurement engine's
// result check (result_check.cpp) and the tests' harness (tests/harness.hpp) both judge by it,
// so a result the tuner accepts is one the tests accept. Header-only, in the public C types,
// so that tests linked against the public library alone can include it.
#pragma once

#include <cmath>
#include <cstdint>

#include "gemm/gemm.h"

namespace gemm {

// Unit roundoff u of a real type, or of the parts of a complex one: the largest relative error
// of one rounding to nearest.
inline double unit_roundoff(gemm_dtype_t t) {
    switch (t) {
    case GEMM_F64:
    case GEMM_C64: return std::ldexp(1.0, -53);
    case GEMM_F32:
    case GEMM_C32: return std::ldexp(1.0, -24);
    case GEMM_F16: return std::ldexp(1.0, -11);
    case GEMM_BF16: return std::ldexp(1.0, -8);
    case GEMM_F8_E4M3: return std::ldexp(1.0, -4);
    case GEMM_F8_E5M2: return std::ldexp(1.0, -3);
    }
    return 1.0;
}

// The smallest positive subnormal of a real type, or of the parts of a complex one: below the
// normal range a rounding's error is absolute, up to half of it.
inline double smallest_subnormal(gemm_dtype_t t) {
    switch (t) {
    case GEMM_F64:
    case GEMM_C64: return std::ldexp(1.0, -1074);
    case GEMM_F32:
    case GEMM_C32: return std::ldexp(1.0, -149);
    case GEMM_F16: return std::ldexp(1.0, -24);
    case GEMM_BF16: return std::ldexp(1.0, -133);
    case GEMM_F8_E4M3: return std::ldexp(1.0, -9);
    case GEMM_F8_E5M2: return std::ldexp(1.0, -16);
    }
    return 0.0;
}

// What FP8 products on the tensor cores (cuBLASLt's kernels, cuda_tiled's wgmma_e4m3_* and
// wgmma_e5m2_*) may lose beyond f32 arithmetic, as a share of an element's sum of |scaled
// products|: the tensor cores add each group of 128 FP8 products keeping about 14 bits
// (DeepSeek-V3's report) before the sum is added into f32 registers, so each of 128 additions
// may be off by 2^-14 of the sum of |products| so far, 2^-7 of it at worst (docs/FP8.md has
// what they were seen to lose). A wrong tile, stage or scale is off by far more.
constexpr double tensor_core_fp8_share = 0x1p-7;

// What the tolerance of an element of alpha·op(A)·op(B) + beta·C0 depends on besides the
// element itself. The rule assumes operands in [-1, 1] (the parts of complex ones), as the
// measurement engine and the tests' harness make them, or else says how large the products
// are (product_size: FP8 operands, whose values and scales span a wider range).
struct tolerance_rule {
    gemm_dtype_t ab_type = GEMM_F32;
    gemm_dtype_t c_type = GEMM_F32;
    int64_t k = 0;
    bool tf32 = false;      // f32 products may be formed from inputs rounded to TF32
    double alpha_size = 1;  // |alpha| (times |d_scale| for an FP8 output scale)
    double beta_size = 0;   // |beta| (likewise)
    // The largest |op(A)(i, l) op(B)(l, j)| of a term, scales applied (1 for operands in
    // [-1, 1]). FP8 values are exact in f32, so an FP8 product's roundings are those of f32
    // arithmetic (a scale's product with a value, the sums): the f32 rule at this size, plus
    // the tensor cores' allowance (tensor_cores).
    double product_size = 1;

    // What an FP8 product on the tensor cores may lose beyond the f32 rule, for an element whose
    // sum over l of |scaled op(A)(i, l)·scaled op(B)(l, j)| is abs_products (alpha and an output
    // scale not applied: alpha_size carries them): tensor_core_fp8_share of it times alpha_size.
    // 0 for every other type. It holds for every FP8 result, whichever backend computed it
    // (cpu_ref and cpu_omp sum in f64 and f32 and stay inside the f32 rule). Linear in
    // abs_products, so that a sum of elements' allowances is the allowance of the sum of their
    // abs_products (result_check's vector check).
    double tensor_cores(double abs_products) const {
        const bool fp8 = ab_type == GEMM_F8_E4M3 || ab_type == GEMM_F8_E5M2;
        return fp8 ? tensor_core_fp8_share * alpha_size * abs_products : 0.0;
    }

    // u of the type products are accumulated in: f16 and bf16 accumulate in f32.
    double compute_roundoff() const {
        return unit_roundoff(ab_type == GEMM_F64 || ab_type == GEMM_C64 ? GEMM_F64 : GEMM_F32);
    }

    // Largest |computed - exact| of an element whose exact value has size value_size (|z| for a
    // complex z; per part for complex C) and whose C0 has size c0_size.
    // A sum of k products of operands in [-1, 1] drifts by about 0.1·u·k (measured: the largest
    // difference over 10^5 elements of an f64 product reached 1.4·u·k), so 4·u·k leaves a
    // margin yet stays far below the error of a wrong block (order 0.1). A complex product adds
    // two real ones: 2k of them. Independent input roundings (TF32) add up like a random walk:
    // sqrt(k). The rounding of the result to C's type may differ between two correct
    // computations: 2·u_out·|value|, and below C's normal range a subnormal on either side.
    // A correct library may also round the product alpha·op(A)·op(B) to C's type before it
    // adds beta·C0 (cuBLAS's results for 16-bit C with beta != 0 are off by that much; the
    // sum may cancel what was rounded): u_out·|alpha·AB| at most, |alpha·AB| <= |value| +
    // |beta|·|C0|.
    // An FP8 element adds tensor_cores(abs_products) (0 for other types: their bound is the
    // f32 rule's, bit for bit).
    double element(double value_size, double c0_size, double abs_products = 0) const {
        const double u = compute_roundoff(), u_out = unit_roundoff(c_type);
        const double terms = double(k) * (ab_type == GEMM_C32 || ab_type == GEMM_C64 ? 2.0 : 1.0) + 16.0;
        const double products =
            u * terms + (tf32 && ab_type == GEMM_F32 ? std::ldexp(1.0, -11) * std::sqrt(terms) : 0.0);
        const double f32_rule = 4.0 * alpha_size * product_size * products + 2.0 * u_out * value_size +
                                4.0 * u * beta_size * c0_size + 2.0 * u_out * (value_size + beta_size * c0_size) +
                                2.0 * smallest_subnormal(c_type);
        return f32_rule + tensor_cores(abs_products);
    }

    // An epilogue's Z = alpha·op(A)·op(B) + beta·C0 + bias (real types), as a forward
    // activation's aux holds it: z_size is |Z before the bias| + |bias|, which bounds the
    // rounding of the product to C's type before an unfused pass adds the bias (the sum may
    // cancel), and the bias's addition in the compute type.
    double epilogue_input(double z_size, double c0_size) const {
        return element(z_size, c0_size) + 2.0 * (compute_roundoff() + unit_roundoff(c_type)) * z_size;
    }

    // An epilogue's C = act(Z) (forward) or Z·act'(aux) (backward): Z's tolerance times the
    // activation's slope (at most 1.13 for gelu), the activation evaluated in the compute type
    // (its absolute error, some units of roundoff, scales |Z|: gelu' may cancel to near 0), and
    // the rounding of the result, of size want_size, to C's type (a slope of 0 keeps its floor).
    double epilogue_output(double z_size, double c0_size, double slope, double want_size) const {
        return std::fabs(slope) * epilogue_input(z_size, c0_size) + 16.0 * compute_roundoff() * z_size +
               2.0 * unit_roundoff(c_type) * want_size + 2.0 * smallest_subnormal(c_type);
    }

    // A bias gradient: the sum of `terms` elements of C as written, in the compute type;
    // size_sum is the sum of their sizes, sum_size the size of the sum.
    double bias_gradient(int64_t terms, double size_sum, double sum_size) const {
        return 2.0 * double(terms + 2) * compute_roundoff() * size_sum + 2.0 * unit_roundoff(c_type) * sum_size +
               2.0 * smallest_subnormal(c_type);
    }
};

}  // namespace gemm
