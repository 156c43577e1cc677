// gemm_omatcopy_api.cpp: gemm_omatcopy's argument checks (BLAS rules, named parameters),
// canonicalization to a column-major transpose_problem, and its entry into dispatch.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "call.hpp"
#include "dispatch/dispatch_omatcopy.hpp"
#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"
#include "dispatch/size_math.hpp"
#include "entry_points.h"
#include "guard.hpp"

namespace gemm {
namespace {

// gemm_omatcopy's arguments as its entry point received them (enums as int, not yet valid).
struct omatcopy_args {
    int layout, trans;
    int64_t rows, cols;
    const void *alpha;
    const void *a;
    int64_t lda;
    void *b;
    int64_t ldb;
    int type;
};

// Positions in gemm_omatcopy's signature, for messages.
enum position : int { p_layout = 1, p_trans, p_rows, p_cols, p_alpha, p_a, p_lda, p_b, p_ldb, p_dtype };

gemm_status_t fail(gemm_status_t s, int position, const std::string &what) {
    return set_error(s, fmt::format("parameter {}: {}", position, what), position);
}

const char *layout_words(int l) { return l == GEMM_ROW_MAJOR ? "row-major" : "column-major"; }

// One stored matrix: `lines` lines (columns in column-major, rows in row-major) of `length`
// elements, ld apart; the size parameter that counts the lines, for messages.
struct stored_matrix {
    const char *name;
    const char *lines_name;
    int lines_position;
    const char *ld_name;
    int ld_position;
    int64_t ld, lines, length;
};

// B's rows and columns as stored: op(A)'s, named by the parameters they come from.
struct b_shape {
    int64_t rows, cols;
    const char *rows_name, *cols_name;
    int rows_position, cols_position;
};

b_shape shape_of_b(const omatcopy_args &c) {
    if (c.trans == GEMM_OP_N) return {c.rows, c.cols, "rows", "cols", p_rows, p_cols};
    return {c.cols, c.rows, "cols", "rows", p_cols, p_rows};
}

gemm_status_t check_shape(const omatcopy_args &c) {
    if (c.layout != GEMM_ROW_MAJOR && c.layout != GEMM_COL_MAJOR)
        return fail(GEMM_STATUS_INVALID_LAYOUT, p_layout,
                    fmt::format("layout = {} must be GEMM_ROW_MAJOR (101) or GEMM_COL_MAJOR (102)", c.layout));
    if (!valid_op(c.trans))
        return fail(GEMM_STATUS_INVALID_OP, p_trans,
                    fmt::format("trans = {} must be GEMM_OP_N (111), GEMM_OP_T (112) or GEMM_OP_C (113)", c.trans));
    if (c.rows < 0) return fail(GEMM_STATUS_INVALID_SIZE, p_rows, fmt::format("rows = {} must be >= 0", c.rows));
    if (c.cols < 0) return fail(GEMM_STATUS_INVALID_SIZE, p_cols, fmt::format("cols = {} must be >= 0", c.cols));
    const bool col = c.layout == GEMM_COL_MAJOR;
    const int64_t need_a = std::max<int64_t>(1, col ? c.rows : c.cols);
    if (c.lda < need_a)
        return fail(GEMM_STATUS_INVALID_LEADING_DIM, p_lda,
                    fmt::format("lda = {} must be >= max(1, {} = {}) for {} A", c.lda, col ? "rows" : "cols",
                                col ? c.rows : c.cols, layout_words(c.layout)));
    const b_shape b = shape_of_b(c);
    const int64_t need_b = std::max<int64_t>(1, col ? b.rows : b.cols);
    if (c.ldb < need_b)
        return fail(GEMM_STATUS_INVALID_LEADING_DIM, p_ldb,
                    fmt::format("ldb = {} must be >= max(1, {} = {}) for {} B = {} ({} x {})", c.ldb,
                                col ? b.rows_name : b.cols_name, col ? b.rows : b.cols, layout_words(c.layout),
                                c.trans == GEMM_OP_N ? "alpha * A" : "alpha * op(A)", b.rows_name, b.cols_name));
    if (!valid_dtype(c.type))
        return fail(GEMM_STATUS_INVALID_DTYPE, p_dtype,
                    fmt::format("dtype = {} is not a gemm_dtype_t (GEMM_F32 0, GEMM_F64 1, GEMM_F16 2, GEMM_BF16 3, "
                                "GEMM_C32 4, GEMM_C64 5, GEMM_F8_E4M3 6, GEMM_F8_E5M2 7)",
                                c.type));
    if (is_fp8(dtype(c.type)))
        return fail(GEMM_STATUS_NOT_SUPPORTED, p_dtype,
                    fmt::format("dtype = {}: gemm_omatcopy takes f32, f64, f16, bf16, c32 and c64 (FP8 is an input "
                                "type of gemm_ex only)",
                                dtype_name(dtype(c.type))));
    if (!c.alpha) return fail(GEMM_STATUS_INVALID_POINTER, p_alpha, "alpha is NULL");
    return GEMM_STATUS_SUCCESS;
}

// The bytes a stored matrix spans, or INVALID_SIZE when more than 2^63 - 1: blamed on the
// leading dimension when the matrix would fit packed tight, else on the size counting its lines.
gemm_status_t span_bytes(const stored_matrix &m, std::size_t element, int64_t &bytes) {
    auto span = [&](int64_t step) -> std::optional<int64_t> {
        std::optional<int64_t> elements = span_elements(m.lines, step, m.length);
        return elements ? checked_mul(*elements, int64_t(element)) : std::nullopt;
    };
    if (std::optional<int64_t> b = span(m.ld)) {
        bytes = *b;
        return GEMM_STATUS_SUCCESS;
    }
    if (span(m.length))
        return fail(GEMM_STATUS_INVALID_SIZE, m.ld_position,
                    fmt::format("{} = {} makes {} span more than 2^63 - 1 bytes ({} lines of {} elements)", m.ld_name,
                                m.ld, m.name, m.lines, m.length));
    return fail(GEMM_STATUS_INVALID_SIZE, m.lines_position,
                fmt::format("{} = {} makes {} span more than 2^63 - 1 bytes ({} lines {} elements apart)", m.lines_name,
                            m.lines, m.name, m.lines, m.ld));
}

// For a non-empty call: the pointers it needs, the spans of A and B, and that they do not
// overlap (a backend reads A's tiles while writing B's: an overlap would read what it wrote).
gemm_status_t check_operands(const omatcopy_args &c, bool reads_a) {
    if (reads_a && !c.a) return fail(GEMM_STATUS_INVALID_POINTER, p_a, "A is NULL");
    if (!c.b) return fail(GEMM_STATUS_INVALID_POINTER, p_b, "B is NULL");
    const bool col = c.layout == GEMM_COL_MAJOR;
    const std::size_t element = dtype_size(dtype(c.type));
    const b_shape b = shape_of_b(c);
    const stored_matrix bs = {"B",
                              col ? b.cols_name : b.rows_name,
                              col ? b.cols_position : b.rows_position,
                              "ldb",
                              p_ldb,
                              c.ldb,
                              col ? b.cols : b.rows,
                              col ? b.rows : b.cols};
    int64_t b_bytes = 0, a_bytes = 0;
    if (gemm_status_t s = span_bytes(bs, element, b_bytes); s != GEMM_STATUS_SUCCESS) return s;
    if (!reads_a) return GEMM_STATUS_SUCCESS;
    const stored_matrix as = {"A",   col ? "cols" : "rows", col ? p_cols : p_rows, "lda", p_lda,
                              c.lda, col ? c.cols : c.rows, col ? c.rows : c.cols};
    if (gemm_status_t s = span_bytes(as, element, a_bytes); s != GEMM_STATUS_SUCCESS) return s;
    const auto a0 = reinterpret_cast<std::uintptr_t>(c.a), b0 = reinterpret_cast<std::uintptr_t>(c.b);
    if (a0 < b0 + std::uintptr_t(b_bytes) && b0 < a0 + std::uintptr_t(a_bytes))
        return fail(GEMM_STATUS_INVALID_VALUE, p_b,
                    fmt::format("B overlaps A (B spans {} bytes from {}, A {} bytes from {}): gemm_omatcopy is out of "
                                "place",
                                b_bytes, c.b, a_bytes, c.a));
    return GEMM_STATUS_SUCCESS;
}

// Row-major storage read as column-major is the transpose: B^T = alpha * op(A^T), so rows and
// cols swap and the op stays (op C keeps its conjugation under the transpose).
transpose_problem canonicalize(const omatcopy_args &c) {
    transpose_problem t;
    const bool row = c.layout == GEMM_ROW_MAJOR;
    t.op = canonical_op(c.trans, c.type);
    t.rows = row ? c.cols : c.rows;
    t.cols = row ? c.rows : c.cols;
    t.type = dtype(c.type);
    t.lda = c.lda;
    t.ldb = c.ldb;
    t.b = c.b;
    const scalar alpha = scalar_value(c.alpha, int(compute_type_for(t.type)));
    t.alpha = alpha.re;
    t.alpha_imag = alpha.im;
    t.a = t.alpha_zero() ? nullptr : c.a;  // not read: no backend may touch it
    return t;
}

gemm_status_t run_omatcopy(const omatcopy_args &c) {
    clear_error();
    if (gemm_status_t s = check_shape(c); s != GEMM_STATUS_SUCCESS) return s;
    const bool empty = c.rows == 0 || c.cols == 0;
    const bool reads_a = !scalar_value(c.alpha, int(compute_type_for(dtype(c.type)))).zero();
    if (!empty)
        if (gemm_status_t s = check_operands(c, reads_a); s != GEMM_STATUS_SUCCESS) return s;
    transpose_problem t = canonicalize(c);
    if (gemm_status_t s = classify_memory(t); s != GEMM_STATUS_SUCCESS) return s;
    const transpose_call call = {
        static_cast<gemm_layout_t>(c.layout), static_cast<gemm_op_t>(c.trans), c.rows, c.cols, c.lda, c.ldb};
    return dispatch_omatcopy(t, call);
}

}  // namespace
}  // namespace gemm

extern "C" gemm_status_t api_omatcopy(int layout, int trans, int64_t rows, int64_t cols, const void *alpha,
                                      const void *A, int64_t lda, void *B, int64_t ldb, int dtype) {
    const gemm::omatcopy_args args = {layout, trans, rows, cols, alpha, A, lda, B, ldb, dtype};
    return gemm::guarded([&args] { return gemm::run_omatcopy(args); });
}
