// wgmma_refusal.cpp: what the Hopper kernel of a kernel_table line refuses, and why.
#include <climits>
#include <string>

#include "backends/cuda_tiled/hopper/sm90_device.hpp"
#include "backends/cuda_tiled/hopper/tf32_copies.hpp"
#include "backends/cuda_tiled/hopper/wgmma_gemm.hpp"
#include "backends/cuda_tiled/operand_alignment.hpp"
#include "dispatch/settings.hpp"

namespace gemm::cuda_tiled {
namespace {

const char *const other_types = "types other than f16/bf16 inputs with C in their type or f32";

// Why an FP8 line cannot compute dp ("" where it can): the FP8 instructions read both operands
// along k; the kernel reads the scales on the device, block scales on both operands.
std::string fp8_refusal(const kernel_config &c, const problem &dp) {
    const unsigned bit = dp.ab_type == dtype::e4m3 ? types::e4m3 : dp.ab_type == dtype::e5m2 ? types::e5m2 : 0;
    if (!c.computes(bit) || (dp.c_type != dtype::f32 && dp.c_type != dtype::f16 && dp.c_type != dtype::bf16) ||
        dp.compute_type != dtype::f32)
        return "types other than e4m3 or e5m2 inputs with C in f32, f16 or bf16";
    if (dp.op_a != transpose::t || dp.op_b != transpose::n)
        return std::string("FP8 operands not both stored along k: the FP8 kernels take the TN form (column-major ") +
               "op(A) = T, op(B) = N; row-major transa = N, transb = T), not " + op_name(dp.op_a) + op_name(dp.op_b);
    if (dp.scaling.blocks() && (dp.scaling.a.kind < scale_kind::vec128 || dp.scaling.b.kind < scale_kind::vec128))
        return "FP8 block scales on one operand only";
    if (dp.space == memory_space::host)
        return "FP8 on host memory (the kernels read the scales on the device: device or managed memory)";
    return "";
}

// Why the line's types exclude dp's ("" where they include them).
std::string type_refusal(const kernel_config &c, const problem &dp) {
    if ((c.types & types::fp8) != 0) return fp8_refusal(c, dp);
    if (dp.ab_type == dtype::f32) {
        if (!c.computes(types::f32)) return other_types;
        if (dp.c_type != dtype::f32 || dp.compute_type != dtype::f32) return "f32 inputs with C in another type";
        if (!settings().allow_tf32) return "f32 unless TF32 is allowed (GEMM_ALLOW_TF32=1)";
        if (hopper::copy_bytes(dp) > hopper::max_copy_bytes)
            return "f32 operands stored along m or n whose copies along k would exceed 1 GiB";
        return "";
    }
    const unsigned bit = dp.ab_type == dtype::f16 ? types::f16 : dp.ab_type == dtype::bf16 ? types::bf16 : 0;
    if (!c.computes(bit) || (dp.c_type != dp.ab_type && dp.c_type != dtype::f32) || dp.compute_type != dtype::f32)
        return other_types;
    return "";
}

}  // namespace

std::string wgmma_refusal(const kernel_config &c, const problem &dp) {
    if (std::string why = type_refusal(c, dp); !why.empty()) return why;
    // The kernel skips the tiles past a masked matrix's row count; a split's reduction would not.
    if (dp.row_count && c.split_k) return "a masked batch (this line splits k)";
    if (c.operands == operand_form::b_along_k && dp.op_b != transpose::n)
        return "the operand along C's " + std::to_string(c.bn) +
               " columns not stored along k (column-major: op(B) = N; row-major: op(A) = N)";
    // What the kernel reads directly (an operand it copies first has neither rule).
    const std::size_t size = dtype_size(dp.ab_type);
    const bool direct_a = !hopper::copied_a(dp), direct_b = !hopper::copied_b(dp);
    if ((direct_a && !aligned_16_bytes(dp.a, dp.lda, dp.stride_a, dp.batch, size)) ||
        (direct_b && !aligned_16_bytes(dp.b, dp.ldb, dp.stride_b, dp.batch, size)))
        return "A or B not 16-byte aligned (base, leading dimension, batch stride)";
    if (dp.batch > 1 && ((direct_a && dp.stride_a != 0 && dp.stride_a < dp.lda * dp.a_cols()) ||
                         (direct_b && dp.stride_b != 0 && dp.stride_b < dp.ldb * dp.b_cols())))
        return "batch matrices of A or B that overlap";
    // The kernel counts a matrix's tiles, and its sizes, in ints.
    if (dp.m > INT_MAX || dp.n > INT_MAX || dp.k > INT_MAX || dp.batch > INT_MAX ||
        ((dp.m + c.bm - 1) / c.bm) * ((dp.n + c.bn - 1) / c.bn) > INT_MAX)
        return "more than 2^31 - 1 tiles or elements along one dimension";
    if (!runs_on_sm90(dp)) return "a device of compute capability other than 9.0 (the kernel is built for sm_90a)";
    return "";
}

}  // namespace gemm::cuda_tiled
