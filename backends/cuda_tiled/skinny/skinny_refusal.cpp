// skinny_refusal.cpp: what the skinny kernel of a kernel_table line refuses, and why.
#include <climits>
#include <string>

#include "backends/cuda_tiled/hopper/sm90_device.hpp"
#include "backends/cuda_tiled/operand_alignment.hpp"
#include "backends/cuda_tiled/skinny/skinny_gemm.hpp"

namespace gemm::cuda_tiled {

std::string skinny_refusal(const kernel_config &c, const problem &dp) {
    const unsigned bit = dp.ab_type == dtype::f16 ? types::f16 : dp.ab_type == dtype::bf16 ? types::bf16 : 0;
    if (!c.computes(bit) || (dp.c_type != dp.ab_type && dp.c_type != dtype::f32) || dp.compute_type != dtype::f32)
        return "types other than f16/bf16 inputs with C in their type or f32";
    if (dp.n > c.bn) return "C of more than " + std::to_string(c.bn) + " columns (column-major n; row-major m)";
    // The kernel reads rows of op(A) and columns of op(B) along k (skinny lines: along_k).
    if (c.operands == operand_form::along_k && (dp.op_a == transpose::n || dp.op_b != transpose::n))
        return "an operand not stored along k (column-major: op(A) = T and op(B) = N; row-major: op(A) = N and "
               "op(B) = T)";
    // The _nn kernel reads op(A) along m and op(B) along k.
    if (c.operands == operand_form::a_along_m && (dp.op_a != transpose::n || dp.op_b != transpose::n))
        return "op(A) not stored along m or op(B) not stored along k (op(A) = op(B) = N in either layout)";
    const std::size_t size = dtype_size(dp.ab_type);
    if (!aligned_16_bytes(dp.a, dp.lda, dp.stride_a, dp.batch, size) ||
        !aligned_16_bytes(dp.b, dp.ldb, dp.stride_b, dp.batch, size))
        return "A or B not 16-byte aligned (base, leading dimension, batch stride)";
    if (dp.m > INT_MAX || dp.k > INT_MAX || dp.batch > INT_MAX) return "m, k or batch above 2^31 - 1";
    if (!runs_on_sm90(dp)) return "a device of compute capability other than 9.0 (the kernel is built for sm_90a)";
    return "";
}

}  // namespace gemm::cuda_tiled
