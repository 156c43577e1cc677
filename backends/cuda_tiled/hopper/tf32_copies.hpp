// tf32_copies.hpp: which f32 operands the TF32 kernels copy along k first, and the layout and
// bytes of those copies.
#pragma once

#include <cstdint>

#include "dispatch/problem.hpp"

namespace gemm::cuda_tiled::hopper {

// The TF32 kernels read both operands along k (wgmma has no transpose for tf32): an f32
// operand stored along m or n (A op N, B op T) is first copied, transposed, into the thread's
// scratch buffer, as an operand stored along k with k rounded up to 4 elements (16 bytes, what
// TMA needs) as its leading dimension.
inline bool copied_a(const problem &dp) { return dp.ab_type == dtype::f32 && dp.op_a == transpose::n; }
inline bool copied_b(const problem &dp) { return dp.ab_type == dtype::f32 && dp.op_b != transpose::n; }
inline int64_t copy_ld(int64_t k) { return (k + 3) / 4 * 4; }

// The bytes of one operand's copy (rows along m or n): a matrix per batch entry, one when the
// batch shares it (stride 0); rounded up to 256 so that the next copy starts aligned. In
// floating point, so that no shape overflows it; exact for every size the refusal lets
// through (at most max_copy_bytes, far below 2^53).
double operand_copy_bytes(int64_t rows, int64_t k, int64_t batch, int64_t stride);

// The bytes of dp's copies (0 where it has none).
double copy_bytes(const problem &dp);

// The copies may take this much of the device's memory per call.
constexpr double max_copy_bytes = double(1 << 30);

}  // namespace gemm::cuda_tiled::hopper
