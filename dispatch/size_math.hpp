// size_math.hpp: products and sums of sizes that report overflow instead of wrapping, for
// every check that multiplies a caller's (or a cache file's) numbers.
#pragma once

#include <cstdint>
#include <optional>

namespace gemm {

inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// Elements from the first to the last of `count` lines of `length` elements, `step` apart
// ((count - 1) * step + length): the span of a stored matrix (lines are its columns in
// column-major, its rows in row-major; step is the leading dimension) or of a strided batch
// (lines are its matrices, step the stride, length one matrix's span). count, length >= 1.
inline std::optional<int64_t> span_elements(int64_t count, int64_t step, int64_t length) {
    std::optional<int64_t> before_last = checked_mul(count - 1, step);
    return before_last ? checked_add(*before_last, length) : std::nullopt;
}

}  // namespace gemm
