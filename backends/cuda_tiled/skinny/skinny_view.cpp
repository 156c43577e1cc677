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

// What line c reads, in the words of both layouts: the weights (the operand beside C's many rows
// or columns) along k, or along their long side.
std::string form_reason(const kernel_config &c) {
    if (c.operands == operand_form::along_k)
        return "the weights not stored along k (column-major: op(A) = T where C has few columns, op(B) = N where it "
               "has few rows; row-major: op(B) = T where C has few rows, op(A) = N where it has few columns)";
    return "the weights not stored along m or n (column-major: op(A) = N where C has few columns, op(B) = T where it "
           "has few rows; row-major: op(B) = N where C has few rows, op(A) = T where it has few columns)";
}

// Which skinny kernels read dp's op pair, and for which shapes of C.
std::string readers(const problem &dp) {
    const std::optional<skinny_reading> stored = skinny_reading_as_stored(dp.op_a, dp.op_b),
                                        mirror = skinny_reading_mirrored(dp.op_a, dp.op_b);
    const std::string widest = std::to_string(widest_skinny());
    auto family = [](operand_form f) {
        return f == operand_form::along_k ? std::string("the skinny kernels without _nn")
                                          : std::string("the _nn skinny kernels");
    };
    if (stored && mirror && stored->form == mirror->form) return "; " + family(stored->form) + " read this op pair";
    std::string who;
    if (stored)
        who = family(stored->form) + " read this op pair where C has at most " + widest +
              " columns (column-major; rows in row-major)";
    if (mirror)
        who += (who.empty() ? family(mirror->form) + " read this op pair" : ", " + family(mirror->form)) +
               " where C has at most " + widest + " rows (column-major; columns in row-major)";
    return who.empty() ? "; no skinny kernel reads this op pair" : "; " + who;
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
    const std::optional<skinny_reading> stored = skinny_reading_as_stored(dp.op_a, dp.op_b),
                                        mirror = skinny_reading_mirrored(dp.op_a, dp.op_b);
    const bool reads_stored = stored && stored->form == c.operands, reads_mirror = mirror && mirror->form == c.operands;
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
