// operand_alignment.hpp: whether operands allow 16-byte accesses, the rule vector variants and
// the Hopper kernels' tensor maps share.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dispatch/problem.hpp"

namespace gemm::cuda_tiled {

// Whether an operand can be read in 16-byte pieces: its base, leading dimension and (for a
// batch) batch stride multiples of 16 bytes. What TMA can describe, too.
bool aligned_16_bytes(const void *ptr, int64_t ld, int64_t stride, int64_t batch, std::size_t element_bytes);

// Whether the 16-byte accesses of a vector variant are legal for dp: C, and each operand that
// is copied straight (A op N, B op T), has a 16-byte aligned base, and a leading dimension and
// (for batches) a batch stride that are multiples of 16 bytes; a straight operand's extent
// along its vectors (m for A, n for B) is a multiple of 16 bytes too, so that no vector
// straddles the edge. A op T and B op N are copied element by element and need nothing.
bool vectors_aligned(const problem &dp);

}  // namespace gemm::cuda_tiled
