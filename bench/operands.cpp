// operands.cpp: aligned random operands, their rotation, and the one GEMM call being timed.
#include "operands.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "gemm/gemm.hpp"

namespace gemm_cli {
namespace {

// 64 bytes: a cache line and an AVX-512 vector, the alignment user code usually has.
constexpr std::size_t buffer_alignment = 64;
// Tiny shapes would otherwise need thousands of copies; past this they stay cache-resident
// whatever we do, and the cap keeps set-up time and memory bounded.
constexpr std::size_t max_sets = 256;

// splitmix64: a fast, well-mixed generator; the benchmark only needs reproducible noise.
struct random_stream {
    uint64_t state;
    double next_signed_unit() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        return double(z >> 11) * 0x1p-52 - 1.0;  // [-1, 1)
    }
};

void element_store(unsigned char *base, int64_t i, gemm_dtype_t t, double v) {
    std::size_t at = std::size_t(i);
    switch (t) {
    case GEMM_F32: reinterpret_cast<float *>(base)[at] = float(v); break;
    case GEMM_F64: reinterpret_cast<double *>(base)[at] = v; break;
    case GEMM_F16: reinterpret_cast<uint16_t *>(base)[at] = gemm::half::from_float(float(v)); break;
    case GEMM_BF16: reinterpret_cast<uint16_t *>(base)[at] = gemm::bfloat16::from_float(float(v)); break;
    }
}

void buffer_fill_random(aligned_buffer &buffer, gemm_dtype_t t, random_stream &random) {
    int64_t count = int64_t(buffer.bytes() / dtype_size(t));
    for (int64_t i = 0; i < count; ++i) element_store(buffer.data(), i, t, random.next_signed_unit());
}

std::size_t matrix_bytes(const gemm_case &c, const stored_matrix &x) {
    return std::size_t(x.elements() * c.batch) * dtype_size(c.dtype);
}

gemm_status_t call_f32(const gemm_case &c, int64_t lda, int64_t ldb, int64_t ldc, const unsigned char *a,
                       const unsigned char *b, unsigned char *cm) {
    auto A = reinterpret_cast<const float *>(a);
    auto B = reinterpret_cast<const float *>(b);
    auto C = reinterpret_cast<float *>(cm);
    const gemm_shape &s = c.shape;
    if (c.batch == 1)
        return gemm_sgemm(c.layout, c.op_a, c.op_b, s.m, s.n, s.k, float(c.alpha), A, lda, B, ldb,
                          float(c.beta), C, ldc);
    return gemm_sgemm_strided_batched(c.layout, c.op_a, c.op_b, s.m, s.n, s.k, float(c.alpha), A, lda,
                                      s.m * s.k, B, ldb, s.k * s.n, float(c.beta), C, ldc, s.m * s.n,
                                      c.batch);
}

gemm_status_t call_f64(const gemm_case &c, int64_t lda, int64_t ldb, int64_t ldc, const unsigned char *a,
                       const unsigned char *b, unsigned char *cm) {
    auto A = reinterpret_cast<const double *>(a);
    auto B = reinterpret_cast<const double *>(b);
    auto C = reinterpret_cast<double *>(cm);
    const gemm_shape &s = c.shape;
    if (c.batch == 1)
        return gemm_dgemm(c.layout, c.op_a, c.op_b, s.m, s.n, s.k, c.alpha, A, lda, B, ldb, c.beta, C, ldc);
    return gemm_dgemm_strided_batched(c.layout, c.op_a, c.op_b, s.m, s.n, s.k, c.alpha, A, lda, s.m * s.k,
                                      B, ldb, s.k * s.n, c.beta, C, ldc, s.m * s.n, c.batch);
}

// f16 and bf16: C of the same type, computed in f32 (the types gemm_ex documents).
gemm_status_t call_16bit(const gemm_case &c, int64_t lda, int64_t ldb, int64_t ldc, const unsigned char *a,
                         const unsigned char *b, unsigned char *cm) {
    const float alpha = float(c.alpha), beta = float(c.beta);
    const gemm_shape &s = c.shape;
    if (c.batch == 1)
        return gemm_ex(c.layout, c.op_a, c.op_b, s.m, s.n, s.k, &alpha, a, c.dtype, lda, b, c.dtype, ldb,
                       &beta, cm, c.dtype, ldc, GEMM_F32);
    return gemm_ex_strided_batched(c.layout, c.op_a, c.op_b, s.m, s.n, s.k, &alpha, a, c.dtype, lda,
                                   s.m * s.k, b, c.dtype, ldb, s.k * s.n, &beta, cm, c.dtype, ldc,
                                   s.m * s.n, c.batch, GEMM_F32);
}

}  // namespace

aligned_buffer::aligned_buffer(std::size_t bytes) : bytes_(bytes) {
    // aligned_alloc wants a multiple of the alignment; never 0 so data() is never NULL.
    std::size_t rounded = std::max<std::size_t>(1, (bytes + buffer_alignment - 1) / buffer_alignment) * buffer_alignment;
    data_.reset(static_cast<unsigned char *>(std::aligned_alloc(buffer_alignment, rounded)));
    if (!data_) throw std::bad_alloc();
}

operand_pool::operand_pool(const gemm_case &c, int64_t cache_bytes, uint64_t seed) {
    std::size_t a_bytes = matrix_bytes(c, gemm_case_stored_a(c));
    std::size_t b_bytes = matrix_bytes(c, gemm_case_stored_b(c));
    std::size_t c_bytes = matrix_bytes(c, gemm_case_stored_c(c));
    std::size_t set_bytes = std::max<std::size_t>(1, a_bytes + b_bytes + c_bytes);
    std::size_t wanted = (2 * std::size_t(cache_bytes)) / set_bytes + 1;
    std::size_t count = std::clamp<std::size_t>(wanted, 1, max_sets);
    random_stream random{seed};
    for (std::size_t i = 0; i < count; ++i) {
        operand_set set{aligned_buffer(a_bytes), aligned_buffer(b_bytes), aligned_buffer(c_bytes)};
        buffer_fill_random(set.a, c.dtype, random);
        buffer_fill_random(set.b, c.dtype, random);
        buffer_fill_random(set.c, c.dtype, random);
        sets_.push_back(std::move(set));
    }
    c_initial_ = aligned_buffer(c_bytes);
    buffer_copy(c_initial_, sets_[0].c);
}

int64_t operand_pool::bytes_total() const {
    int64_t total = 0;
    for (const operand_set &s : sets_) total += int64_t(s.a.bytes() + s.b.bytes() + s.c.bytes());
    return total;
}

double element_load(const unsigned char *base, int64_t i, gemm_dtype_t t) {
    std::size_t at = std::size_t(i);
    switch (t) {
    case GEMM_F32: return double(reinterpret_cast<const float *>(base)[at]);
    case GEMM_F64: return reinterpret_cast<const double *>(base)[at];
    case GEMM_F16: return double(gemm::half::to_float(reinterpret_cast<const uint16_t *>(base)[at]));
    case GEMM_BF16: return double(gemm::bfloat16::to_float(reinterpret_cast<const uint16_t *>(base)[at]));
    }
    return 0.0;
}

void buffer_fill_nan(aligned_buffer &buffer, gemm_dtype_t t) {
    int64_t count = int64_t(buffer.bytes() / dtype_size(t));
    for (int64_t i = 0; i < count; ++i)
        element_store(buffer.data(), i, t, std::numeric_limits<double>::quiet_NaN());
}

void buffer_copy(aligned_buffer &to, const aligned_buffer &from) {
    std::memcpy(to.data(), from.data(), std::min(to.bytes(), from.bytes()));
}

gemm_status_t gemm_case_call(const gemm_case &c, const unsigned char *a, const unsigned char *b,
                             unsigned char *cm) {
    int64_t lda = gemm_case_ld(c, gemm_case_stored_a(c));
    int64_t ldb = gemm_case_ld(c, gemm_case_stored_b(c));
    int64_t ldc = gemm_case_ld(c, gemm_case_stored_c(c));
    switch (c.dtype) {
    case GEMM_F32: return call_f32(c, lda, ldb, ldc, a, b, cm);
    case GEMM_F64: return call_f64(c, lda, ldb, ldc, a, b, cm);
    case GEMM_F16:
    case GEMM_BF16: return call_16bit(c, lda, ldb, ldc, a, b, cm);
    }
    return GEMM_STATUS_INVALID_DTYPE;
}

}  // namespace gemm_cli
