// skinny_refusal.cpp: what the skinny kernel of a kernel_table line refuses, and why.
#include <climits>
#include <string>

#include "backends/cuda_tiled/hopper/sm90_device.hpp"
#include "backends/cuda_tiled/operand_alignment.hpp"
#include "backends/cuda_tiled/skinny/skinny_gemm.hpp"
#include "backends/cuda_tiled/skinny/skinny_view.hpp"

namespace gemm::cuda_tiled {

namespace {

// Why line c cannot take dp's types ("" when it can): f16/bf16 inputs with C in their type or
// f32; on the FP8 lines e4m3/e5m2 inputs with C in f32, f16 or bf16, in the TN form (both
// operands along k, which is its own mirror's form) and with scales per tensor.
std::string type_refusal(const kernel_config &c, const problem &dp) {
    if (c.computes(types::fp8)) {
        const unsigned bit = dp.ab_type == dtype::e4m3 ? types::e4m3 : dp.ab_type == dtype::e5m2 ? types::e5m2 : 0;
        if (!c.computes(bit) || (dp.c_type != dtype::f32 && dp.c_type != dtype::f16 && dp.c_type != dtype::bf16) ||
            dp.compute_type != dtype::f32)
            return "types other than e4m3 or e5m2 inputs with C in f32, f16 or bf16";
        if (dp.op_a != transpose::t || dp.op_b != transpose::n)
            return std::string(
                       "FP8 operands not both stored along k: the FP8 kernels take the TN form (column-major ") +
                   "op(A) = T, op(B) = N; row-major transa = N, transb = T), not " + op_name(dp.op_a) + op_name(dp.op_b);
        if (dp.scaling.blocks()) return "FP8 block scales (the FP8 skinny kernels take scales per tensor)";
        if (dp.row_count) return "a masked batch (the FP8 skinny kernels do not read row counts)";
        if (dp.space == memory_space::host)
            return "FP8 on host memory (the kernels read the scales on the device: device or managed memory)";
        return "";
    }
    const unsigned bit = dp.ab_type == dtype::f16 ? types::f16 : dp.ab_type == dtype::bf16 ? types::bf16 : 0;
    if (!c.computes(bit) || (dp.c_type != dp.ab_type && dp.c_type != dtype::f32) || dp.compute_type != dtype::f32)
        return "types other than f16/bf16 inputs with C in their type or f32";
    return "";
}

}  // namespace

std::string skinny_refusal(const kernel_config &c, const problem &dp, skinny_orientation &o) {
    if (std::string why = type_refusal(c, dp); !why.empty()) return why;
    // C of few columns as stored, or of few rows through its mirror; the ops the line reads.
    if (std::string why = skinny_orientation_for(c, dp, o); !why.empty()) return why;
    const std::size_t size = dtype_size(dp.ab_type);
    const skinny_view v = skinny_view_of(dp, o);
    // The weights (the kernel's A) are read in pieces of 16 bytes, as is X stored along k; X
    // stored along n is read an element at a time (skinny_kernel.cuh, load_x), 16-bit only.
    const bool x_along_n = v.op_b == transpose::t;
    if (!aligned_16_bytes(v.a, v.lda, v.stride_a, dp.batch, size))
        return x_along_n ? "the weights (the operand beside C's many rows or columns) not 16-byte aligned (base, "
                           "leading dimension, batch stride)"
                         : "A or B not 16-byte aligned (base, leading dimension, batch stride)";
    if (!x_along_n && !aligned_16_bytes(v.b, v.ldb, v.stride_b, dp.batch, size))
        return "A or B not 16-byte aligned (base, leading dimension, batch stride)";
    // The kernel's m is the long side of C: dp's m as stored, n mirrored.
    if (v.m > INT_MAX || dp.k > INT_MAX || dp.batch > INT_MAX) return "m (n where mirrored), k or batch above 2^31 - 1";
    if (!runs_on_sm90(dp)) return "a device of compute capability other than 9.0 (the kernel is built for sm_90a)";
    return "";
}

std::string skinny_refusal(const kernel_config &c, const problem &dp) {
    skinny_orientation o = skinny_orientation::as_stored;
    return skinny_refusal(c, dp, o);
}

}  // namespace gemm::cuda_tiled
