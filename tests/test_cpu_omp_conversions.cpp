// test_cpu_omp_conversions.cpp: cpu_omp's vector conversions of f16 and bf16 (widening packed
// operands, rounding a 16-bit C) give the bits gemm::half and gemm::bfloat16 give, value by
// value, for every 16-bit pattern and for f32 values at each rounding boundary; so do the
// microkernels that round their tile into a 16-bit C. Each set this CPU runs is checked, the
// others are skipped.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu_omp/conversions.hpp"
#include "backends/cpu_omp/microkernel.hpp"

using namespace gemm;
using namespace gemm::cpu_omp_detail;

namespace {

uint32_t bits_of(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    return x;
}

float float_of(uint32_t x) {
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

template <class S> struct named_set {
    const char *name;
    const conversion_kernels<S> *kernels;
    bool runs;  // this CPU runs the set
};

bool cpu_has(const char *feature) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (std::strcmp(feature, "avx512f") == 0) return __builtin_cpu_supports("avx512f");
    if (std::strcmp(feature, "avx512bf16") == 0)
        return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512dq");
    if (std::strcmp(feature, "avx2_f16c") == 0) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#endif
    (void)feature;
    return false;
}

template <class S>
std::vector<named_set<S>> sets_of(const conversion_kernels<S> &generic, const conversion_kernels<S> *avx2,
                                  const conversion_kernels<S> *avx512) {
    std::vector<named_set<S>> sets{{"generic", &generic, true}};
    if (avx2) sets.push_back({"avx2_f16c", avx2, cpu_has("avx2_f16c")});
    if (avx512) sets.push_back({"avx512f", avx512, cpu_has("avx512f")});
    return sets;
}

std::vector<named_set<half>> f16_sets() {
    return sets_of<half>(conversions_generic_f16,
#if GEMM_TEST_CONVERSIONS_AVX2
                         &conversions_avx2_f16,
#else
                         nullptr,
#endif
#if GEMM_TEST_CONVERSIONS_AVX512
                         &conversions_avx512_f16);
#else
                         nullptr);
#endif
}

std::vector<named_set<bfloat16>> bf16_sets() {
    return sets_of<bfloat16>(conversions_generic_bf16,
#if GEMM_TEST_CONVERSIONS_AVX2
                             &conversions_avx2_bf16,
#else
                             nullptr,
#endif
#if GEMM_TEST_CONVERSIONS_AVX512
                             &conversions_avx512_bf16);
#else
                             nullptr);
#endif
}

// Two results agree: the same bits, or both NaN (a vector conversion may keep a NaN's payload
// where the scalar one sets a fixed one).
bool same_float(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits_of(a) == bits_of(b); }
template <class S> bool same_16(S a, S b) { return (std::isnan(float(a)) && std::isnan(float(b))) || a.bits == b.bits; }

// f32 values around every rounding boundary of both types: each 16-bit value's neighbours,
// halfway points and the f32 values next to them, subnormals, overflow, infinities and NaNs.
std::vector<float> boundary_values() {
    std::vector<float> v;
    for (uint32_t h = 0; h < 0x10000u; h += 7) {
        const float f16 = half::to_float(uint16_t(h)), bf = bfloat16::to_float(uint16_t(h));
        for (float x : {f16, bf}) {
            if (std::isnan(x)) continue;
            const uint32_t b = bits_of(x);
            for (int64_t d : {-1, 0, 1, 0xfff, 0x1000, 0x1001, 0x7fff, 0x8000, 0x8001})
                v.push_back(float_of(uint32_t(b + d)));
        }
    }
    for (float x : {0.0f, -0.0f, 65504.0f, 65519.0f, 65520.0f, 1e30f, -1e30f, 5.9604645e-8f, 2.9802322e-8f,
                    2.9802326e-8f, INFINITY, -INFINITY, NAN, -NAN, float_of(0x7f800001u), float_of(0xff80ffffu)})
        v.push_back(x);
    return v;
}

template <class S> void check_widen(const named_set<S> &set) {
    // Every pattern, in runs of every length up to a few vectors (tails through the scalar path).
    std::vector<S> all(0x10000);
    for (uint32_t h = 0; h < 0x10000u; ++h) all[h].bits = uint16_t(h);
    std::vector<float> out(all.size());
    set.kernels->widen(all.data(), out.data(), int64_t(all.size()));
    int64_t wrong = 0;
    for (uint32_t h = 0; h < 0x10000u; ++h)
        if (!same_float(out[h], float(all[h]))) ++wrong;
    CHECK_MESSAGE(wrong == 0, std::string(set.name) << ": " << wrong << " patterns widened wrong");
    for (int64_t n = 0; n <= 40; ++n) {
        std::vector<float> part(std::size_t(n) + 1, -7.0f);
        set.kernels->widen(all.data() + 0x3c00, part.data(), n);
        for (int64_t i = 0; i < n; ++i) CHECK(same_float(part[std::size_t(i)], float(all[std::size_t(0x3c00 + i)])));
        CHECK(part[std::size_t(n)] == -7.0f);  // nothing written past n
    }
}

template <class S> void check_round(const named_set<S> &set) {
    const std::vector<float> sums = boundary_values();
    const int64_t n = int64_t(sums.size());
    // beta = 0: C full of NaN is written, never read.
    std::vector<S> c(sums.size(), S(NAN));
    set.kernels->round(sums.data(), 0.0f, c.data(), n);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i)
        if (!same_16(c[std::size_t(i)], S(sums[std::size_t(i)]))) ++wrong;
    CHECK_MESSAGE(wrong == 0, std::string(set.name) << " beta=0: " << wrong << " of " << n << " values rounded wrong");
    // beta != 0: sums + beta * C in f32, rounded once.
    std::vector<S> c0(sums.size());
    for (std::size_t i = 0; i < c0.size(); ++i) c0[i].bits = uint16_t(i * 2654435761u >> 16);
    for (float beta : {1.0f, -0.5f, 3.0f}) {
        std::vector<S> got = c0;
        set.kernels->round(sums.data(), beta, got.data(), n);
        wrong = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            const float scaled = beta * float(c0[i]);
            if (!same_16(got[i], S(sums[i] + scaled))) {
                if (wrong == 0)
                    MESSAGE(std::string(set.name)
                            << " first wrong: sum bits " << bits_of(sums[i]) << " c bits " << c0[i].bits << " got "
                            << got[i].bits << " want " << S(sums[i] + scaled).bits);
                ++wrong;
            }
        }
        CHECK_MESSAGE(wrong == 0, std::string(set.name) << " beta=" << beta << ": " << wrong << " values rounded wrong");
    }
    // Runs of every short length: nothing written past the run.
    for (int64_t len = 0; len <= 40; ++len) {
        std::vector<S> part(std::size_t(len) + 1, S(-7.0f));
        set.kernels->round(sums.data(), 0.0f, part.data(), len);
        for (int64_t i = 0; i < len; ++i) CHECK(same_16(part[std::size_t(i)], S(sums[std::size_t(i)])));
        CHECK(part[std::size_t(len)].bits == S(-7.0f).bits);
    }
    // Blocks (round_block: a microkernel's tile into C), each length of column across the
    // pairs of vectors stored at once, beta = 0 over NaN and beta != 0: every value rounded as
    // round does, nothing written between the columns (ldc > rows).
    const int64_t cols = 3, lds = 41, ldc = 43;
    for (float beta : {0.0f, -0.5f})
        for (int64_t rows = 0; rows <= 40; ++rows) {
            std::vector<S> block(std::size_t(ldc * cols));
            for (std::size_t i = 0; i < block.size(); ++i) block[i] = beta == 0.0f ? S(NAN) : c0[(i * 7) % c0.size()];
            const std::vector<S> before = block;
            set.kernels->round_block(sums.data(), lds, beta, block.data(), ldc, rows, cols);
            wrong = 0;
            for (int64_t j = 0; j < cols; ++j)
                for (int64_t i = 0; i < ldc; ++i) {
                    const std::size_t at = std::size_t(i + j * ldc);
                    const float sum = sums[std::size_t(i + j * lds)];
                    const S want = i >= rows ? before[at] : beta == 0.0f ? S(sum) : S(sum + beta * float(before[at]));
                    if (!same_16(block[at], want)) ++wrong;
                }
            CHECK_MESSAGE(wrong == 0, std::string(set.name) << " round_block rows=" << rows << " beta=" << beta << ": "
                                                            << wrong << " values wrong");
        }
}

template <class S> void check_sets(const std::vector<named_set<S>> &sets) {
    int checked = 0;
    for (const named_set<S> &set : sets) {
        if (!set.runs) {
            MESSAGE(std::string(set.name) << ": this CPU lacks it, skipped");
            continue;
        }
        ++checked;
        check_widen(set);
        check_round(set);
    }
    CHECK(checked >= 1);
}

// A 32x12 rounding microkernel (microkernel<float, S>) against the rounding of the f32 tile:
// with kc = 1 the tile's sums are a[i] * b[j] (one FMA onto zero), a[i] running over the
// rounding boundaries and b[j] powers of two, so that ties, subnormals, overflow and NaN reach
// the rounding; each value alpha * sum (+ beta * C, the product then the sum) rounded once as
// gemm::half and gemm::bfloat16 round. beta = 0 over C full of NaN: written, never read. C's
// leading dimension is odd and past the tile: nothing written between its columns.
template <class S> void check_rounding_kernel(const char *name, microkernel<float, S> kernel) {
    constexpr int64_t mr = 32, nr = 12, ldc = 37;
    constexpr float b[nr] = {1.0f, -1.0f, 0.5f, 2.0f, 0.25f, -4.0f, 1.0f, 1.0f, -0.5f, 8.0f, -1.0f, 1.0f};
    const std::vector<float> values = boundary_values();
    const int64_t count = int64_t(values.size());
    int64_t wrong = 0, calls = 0;
    for (float alpha : {1.0f, -1.5f})
        for (float beta : {0.0f, -0.5f, 3.0f})
            for (int64_t at = 0; at < count; at += mr, ++calls) {
                alignas(64) float a[mr];  // a packed panel: aligned as the kernel loads it
                for (int64_t i = 0; i < mr; ++i) a[i] = values[std::size_t((at + i) % count)];
                std::vector<S> c(std::size_t(ldc * nr));
                for (std::size_t i = 0; i < c.size(); ++i) c[i].bits = uint16_t((i + uint64_t(at)) * 2654435761u >> 16);
                if (beta == 0.0f)
                    for (int64_t j = 0; j < nr; ++j)
                        for (int64_t i = 0; i < mr; ++i) c[std::size_t(i + j * ldc)] = S(NAN);
                const std::vector<S> before = c;
                kernel(1, a, b, c.data(), ldc, alpha, beta);
                for (int64_t j = 0; j < nr; ++j)
                    for (int64_t i = 0; i < ldc; ++i) {
                        const std::size_t where = std::size_t(i + j * ldc);
                        S want = before[where];
                        if (i < mr) {
                            const float product = alpha * std::fma(a[i], b[j], 0.0f);
                            const float scaled = beta * float(before[where]);
                            want = beta == 0.0f ? S(product) : S(product + scaled);
                        }
                        if (!same_16(c[where], want)) {
                            if (wrong == 0)
                                MESSAGE(std::string(name)
                                        << " first wrong: a bits " << (i < mr ? bits_of(a[i]) : 0) << " b " << b[j]
                                        << " alpha " << alpha << " beta " << beta << " c bits " << before[where].bits
                                        << " got " << c[where].bits << " want " << want.bits);
                            ++wrong;
                        }
                    }
            }
    CHECK_MESSAGE(wrong == 0, std::string(name) << ": " << wrong << " values wrong in " << calls << " tiles");
}

}  // namespace

TEST_CASE("cpu_omp conversions: f16 widened and rounded as gemm::half does") { check_sets(f16_sets()); }

TEST_CASE("cpu_omp conversions: bf16 widened and rounded as gemm::bfloat16 does") { check_sets(bf16_sets()); }

TEST_CASE("cpu_omp conversions: the AVX-512 kernels round their tile into a 16-bit C as round does") {
#if GEMM_TEST_CONVERSIONS_AVX512
    if (!cpu_has("avx512f")) {
        MESSAGE("avx512f: this CPU lacks it, skipped");
        return;
    }
    check_rounding_kernel<half>("avx512f f16", microkernel_avx512_f32_32x12_into_f16);
    check_rounding_kernel<bfloat16>("avx512f bf16", microkernel_avx512_f32_32x12_into_bf16);
#if GEMM_TEST_ROUNDING_AVX512BF16
    if (cpu_has("avx512bf16"))
        check_rounding_kernel<bfloat16>("avx512bf16 bf16", microkernel_avx512bf16_f32_32x12_into_bf16);
    else MESSAGE("avx512bf16: this CPU lacks it, skipped");
#endif
#else
    MESSAGE("this build has no AVX-512 kernels, skipped");
#endif
}
