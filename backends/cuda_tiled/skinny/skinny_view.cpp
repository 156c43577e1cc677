// skinny_view.cpp: the orientation in which a skinny kernel reads a problem, and the operands it
// then computes with.
#include "backends/cuda_tiled/skinny/skinny_view.hpp"

#include <algorithm>

namespace gemm::cuda_tiled {
namespace {

// The most columns of C a skinny line takes: where the messages say which kernels read an op pair.
constexpr int widest_skinny() {
    int widest = 0;
    for (const kernel_config &c : kernel_table)
        if (c.family == kernel_family::skinny) widest = std::max(widest, c.bn);
    return widest;
}

// What line c reads, in the words of both layouts.
std::string form_reason(const kernel_config &c) {
    if (c.operands == operand_form::along_k)
        return "an operand not stored along k (column-major: op(A) = T and op(B) = N; row-major: op(A) = N and "
               "op(B) = T)";
    return "op(A) not stored along m or op(B) not stored along k (op(A) = op(B) = N in either layout; mirrored, for C "
           "of few rows in column-major or few columns in row-major, op(A) = op(B) = T)";
}

// Which skinny kernels read dp's op pair, and for which shapes of C.
std::string readers(const problem &dp) {
    const std::optional<operand_form> stored = skinny_form_as_stored(dp.op_a, dp.op_b),
                                      mirror = skinny_form_mirrored(dp.op_a, dp.op_b);
    const std::string widest = std::to_string(widest_skinny());
    auto family = [](operand_form f) {
        return f == operand_form::along_k ? std::string("the skinny kernels without _nn")
                                          : std::string("the _nn skinny kernels");
    };
    if (stored && mirror) return "; " + family(*stored) + " read this op pair";
    if (stored)
        return "; " + family(*stored) + " read this op pair where C has at most " + widest +
               " columns (column-major; rows in row-major)";
    if (mirror)
        return "; " + family(*mirror) + " read this op pair where C has at most " + widest +
               " rows (column-major; columns in row-major)";
    return "; no skinny kernel reads this op pair: the operand of C's few columns or rows must be stored along k "
           "(column-major: op(B) = N for few columns, op(A) = T for few rows; row-major: op(A) = N for few rows, "
           "op(B) = T for few columns)";
}

}  // namespace

skinny_view skinny_view_of(const problem &dp, skinny_orientation o) {
    if (o == skinny_orientation::as_stored)
        return {dp.op_a, dp.op_b, dp.m, dp.n, dp.a, dp.b, dp.lda, dp.ldb, dp.stride_a, dp.stride_b, false};
    // C^T = op(B)^T op(A)^T: op(B)^T is B read with the other op, and likewise op(A)^T (the
    // skinny types are real, so their ops are N or T: C has no mirror and stays C).
    return {skinny_flipped(dp.op_b).value_or(transpose::c),
            skinny_flipped(dp.op_a).value_or(transpose::c),
            dp.n,
            dp.m,
            dp.b,
            dp.a,
            dp.ldb,
            dp.lda,
            dp.stride_b,
            dp.stride_a,
            true};
}

std::string skinny_orientation_for(const kernel_config &c, const problem &dp, skinny_orientation &o) {
    const std::optional<operand_form> stored = skinny_form_as_stored(dp.op_a, dp.op_b),
                                      mirror = skinny_form_mirrored(dp.op_a, dp.op_b);
    const bool reads_stored = stored == c.operands, reads_mirror = mirror == c.operands;
    if (reads_stored && dp.n <= c.bn) {
        o = skinny_orientation::as_stored;
        return "";
    }
    if (reads_mirror && dp.m <= c.bn) {
        o = skinny_orientation::mirrored;
        return "";
    }
    const std::string bn = std::to_string(c.bn);
    if (reads_stored && reads_mirror)
        return "C of more than " + bn + " columns (column-major n; row-major m) and more than " + bn +
               " rows (column-major m; row-major n)";
    if (reads_stored) return "C of more than " + bn + " columns (column-major n; row-major m)";
    if (reads_mirror)
        return "C of more than " + bn +
               " rows (column-major m; row-major n): this op pair is read through its mirror C^T = op(B)^T op(A)^T";
    return form_reason(c) + readers(dp);
}

}  // namespace gemm::cuda_tiled
