// skinny_view.hpp: the GEMM a skinny kernel computes for a problem: the problem as stored (C of
// few columns) or its mirror C^T = op(B)^T op(A)^T (C of few rows), which operand form reads
// each op pair in either, and why a kernel_table line reads neither. Plain C++ (the mapping is
// checked on the CPU by tests/test_skinny_view.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "backends/cuda_tiled/kernel_table.hpp"
#include "dispatch/host_device.hpp"
#include "dispatch/problem.hpp"

namespace gemm::cuda_tiled {

// as_stored: the kernel's C is the problem's, m x n column-major, its few columns n.
// mirrored: the kernel's C is C^T = op(B)^T op(A)^T, n x m, its few columns the problem's m.
enum class skinny_orientation { as_stored, mirrored };

// The op of X^T for op(X) (conjugate transposes have no mirror among the skinny types).
constexpr std::optional<transpose> skinny_flipped(transpose op) {
    if (op == transpose::n) return transpose::t;
    if (op == transpose::t) return transpose::n;
    return std::nullopt;
}

// How a skinny kernel reads an op pair in one orientation: the form of its op(A) (the weights,
// along k or along m) and where its op(B), the narrow operand X beside C's few columns, lies:
// along k (op(B) = N) or along n (op(B) = T: X of at most 32 columns stored n x k).
struct skinny_reading {
    operand_form form = operand_form::along_k;
    bool x_along_n = false;
};

// The reading of ops (op_a, op_b) as stored, C of few columns: op(A) along k (T: along_k) or
// along m (N: a_along_m), op(B) along k (N) or along n (T).
constexpr std::optional<skinny_reading> skinny_reading_as_stored(transpose op_a, transpose op_b) {
    if (op_b != transpose::n && op_b != transpose::t) return std::nullopt;
    if (op_a == transpose::t) return skinny_reading{operand_form::along_k, op_b == transpose::t};
    if (op_a == transpose::n) return skinny_reading{operand_form::a_along_m, op_b == transpose::t};
    return std::nullopt;
}

// The reading of them mirrored, C of few rows: the mirror's ops are (op_b flipped, op_a flipped),
// so op_b = N reads along_k and T a_along_m, and X (the caller's op(A)) lies along k where
// op_a = T, along n (the caller's m) where N.
constexpr std::optional<skinny_reading> skinny_reading_mirrored(transpose op_a, transpose op_b) {
    const std::optional<transpose> a = skinny_flipped(op_b), b = skinny_flipped(op_a);
    if (!a || !b) return std::nullopt;
    return skinny_reading_as_stored(*a, *b);
}

// The form that reads ops (op_a, op_b) as stored with X along k (op(B) = N), the reading the
// default rule takes (default_choice.cpp); none where X lies along n.
constexpr std::optional<operand_form> skinny_form_as_stored(transpose op_a, transpose op_b) {
    const std::optional<skinny_reading> r = skinny_reading_as_stored(op_a, op_b);
    if (!r || r->x_along_n) return std::nullopt;
    return r->form;
}

// The form that reads them mirrored with X along k: (T, N) along_k, (T, T) a_along_m's (N, N).
constexpr std::optional<operand_form> skinny_form_mirrored(transpose op_a, transpose op_b) {
    const std::optional<skinny_reading> r = skinny_reading_mirrored(op_a, op_b);
    if (!r || r->x_along_n) return std::nullopt;
    return r->form;
}

// The operands of the GEMM a skinny kernel computes for dp in an orientation (k, batch, C's
// pointer, ldc and stride_c are dp's): dp's own, or the mirror's, whose A is dp's B (op flipped),
// whose B is dp's A (op flipped), m and n swapped, and whose C element (i, j) is dp's C(j, i).
// op_b = T: the kernel's op(B) lies along n, its element (l, j) at b + l ldb + j.
struct skinny_view {
    transpose op_a = transpose::n, op_b = transpose::n;
    int64_t m = 0, n = 0;
    const void *a = nullptr, *b = nullptr;
    int64_t lda = 0, ldb = 0, stride_a = 0, stride_b = 0;
    bool c_transposed = false;  // mirrored: element (i, j) of the kernel's C at skinny_c_offset(true, ...)
};

skinny_view skinny_view_of(const problem &dp, skinny_orientation o);

// Where element (i, j) of the kernel's C lies in dp's C of leading dimension ldc: column-major
// as stored, row-major (dp's C(j, i)) when mirrored. The kernels' stores and C reads use it.
GEMM_HOST_DEVICE constexpr int64_t skinny_c_offset(bool transposed, int64_t i, int64_t j, int64_t ldc) {
    return transposed ? i * ldc + j : j * ldc + i;
}

// The orientation in which line c's kernel (C of at most c.bn columns, reading c.operands)
// computes dp: "" with `o` set, as stored where it can (C of few rows and few columns keeps its
// column-major store), else mirrored; or why neither (C too wide both ways, or an op pair the
// line does not read, with the form that reads it). Checks only the shape and the ops.
std::string skinny_orientation_for(const kernel_config &c, const problem &dp, skinny_orientation &o);

}  // namespace gemm::cuda_tiled
