// skinny_refusal.cpp: what the skinny kernel of a kernel_table line refuses, and why.
#include <climits>
#include <string>

#include "backends/cuda_tiled/hopper/sm90_device.hpp"
#include "backends/cuda_tiled/operand_alignment.hpp"
#include "backends/cuda_tiled/skinny/skinny_gemm.hpp"
#include "backends/cuda_tiled/skinny/skinny_view.hpp"

namespace gemm::cuda_tiled {

std::string skinny_refusal(const kernel_config &c, const problem &dp, skinny_orientation &o) {
    const unsigned bit = dp.ab_type == dtype::f16 ? types::f16 : dp.ab_type == dtype::bf16 ? types::bf16 : 0;
    if (!c.computes(bit) || (dp.c_type != dp.ab_type && dp.c_type != dtype::f32) || dp.compute_type != dtype::f32)
        return "types other than f16/bf16 inputs with C in their type or f32";
    // C of few columns as stored, or of few rows through its mirror; the ops the line reads.
    if (std::string why = skinny_orientation_for(c, dp, o); !why.empty()) return why;
    const std::size_t size = dtype_size(dp.ab_type);
    if (!aligned_16_bytes(dp.a, dp.lda, dp.stride_a, dp.batch, size) ||
        !aligned_16_bytes(dp.b, dp.ldb, dp.stride_b, dp.batch, size))
        return "A or B not 16-byte aligned (base, leading dimension, batch stride)";
    // The kernel's m is the long side of C: dp's m as stored, n mirrored.
    if (skinny_view_of(dp, o).m > INT_MAX || dp.k > INT_MAX || dp.batch > INT_MAX)
        return "m (n where mirrored), k or batch above 2^31 - 1";
    if (!runs_on_sm90(dp)) return "a device of compute capability other than 9.0 (the kernel is built for sm_90a)";
    return "";
}

std::string skinny_refusal(const kernel_config &c, const problem &dp) {
    skinny_orientation o = skinny_orientation::as_stored;
    return skinny_refusal(c, dp, o);
}

}  // namespace gemm::cuda_tiled
