// gemm_spmm_api.cpp: gemm_spmm_csr's and gemm_spmm_coo's argument checks (BLAS rules, named
// parameters), the descriptor's validation when asked, canonicalization to a sparse_problem,
// and its entry into dispatch.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "call.hpp"
#include "dispatch/dispatch_spmm.hpp"
#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"
#include "dispatch/size_math.hpp"
#include "entry_points.h"
#include "guard.hpp"
#include "struct_size.hpp"

namespace gemm {
namespace {

// The descriptor's fields, one shape for both formats: `rows_array` is CSR's row_offsets or
// COO's row_indices.
struct sparse_matrix {
    sparse_format format;
    int64_t rows, cols, nnz;
    int index_type, index_base, validate;
    const void *rows_array, *col_indices, *values;
};

// The call as its entry point received it (enums as int, not yet valid; A read from the
// descriptor once its struct_size passed).
struct spmm_args {
    sparse_format format;
    int layout, op_a, op_b;
    int64_t m, n, k;
    const void *alpha;
    const void *descriptor;
    const void *b;
    int64_t ldb;
    const void *beta;
    void *c;
    int64_t ldc;
    int type;
    sparse_matrix a;
};

// Positions in the entry points' signature, for messages.
enum position : int {
    p_layout = 1,
    p_op_a,
    p_op_b,
    p_m,
    p_n,
    p_k,
    p_alpha,
    p_a,
    p_b,
    p_ldb,
    p_beta,
    p_c,
    p_ldc,
    p_dtype
};

gemm_status_t fail(gemm_status_t s, int position, const std::string &what) {
    return set_error(s, fmt::format("parameter {}: {}", position, what), position);
}

const char *rows_array_name(sparse_format f) { return f == sparse_format::csr ? "row_offsets" : "row_indices"; }

// An enum field as the int a C caller stored there: check_descriptor refuses values outside the
// enum, and loading such a value as the C++ enum type would be undefined behaviour.
template <class E> int stored_int(const E &field) {
    static_assert(sizeof(E) == sizeof(int), "C enums are stored as int");
    int v = 0;
    std::memcpy(&v, &field, sizeof v);
    return v;
}

// The descriptor's struct_size by the rule at gemm_desc_t, then its fields into a.a.
gemm_status_t read_descriptor(spmm_args &a) {
    if (!a.descriptor) return fail(GEMM_STATUS_INVALID_POINTER, p_a, "A is NULL");
    const bool csr = a.format == sparse_format::csr;
    if (csr) {
        const auto *d = static_cast<const gemm_csr_t *>(a.descriptor);
        if (gemm_status_t s = check_struct_size(d, d->struct_size, sizeof *d, "parameter 8: A->struct_size",
                                                "gemm_csr_t", "initialize it with gemm_csr_init", p_a);
            s != GEMM_STATUS_SUCCESS)
            return s;
        a.a = {a.format,           d->rows,     d->cols,        d->nnz,         stored_int(d->index_type),
               int(d->index_base), d->validate, d->row_offsets, d->col_indices, d->values};
    } else {
        const auto *d = static_cast<const gemm_coo_t *>(a.descriptor);
        if (gemm_status_t s = check_struct_size(d, d->struct_size, sizeof *d, "parameter 8: A->struct_size",
                                                "gemm_coo_t", "initialize it with gemm_coo_init", p_a);
            s != GEMM_STATUS_SUCCESS)
            return s;
        a.a = {a.format,           d->rows,     d->cols,        d->nnz,         stored_int(d->index_type),
               int(d->index_base), d->validate, d->row_indices, d->col_indices, d->values};
    }
    return GEMM_STATUS_SUCCESS;
}

// A's fields, and that A's stored shape is op(A)'s: m x k for op N, k x m otherwise.
gemm_status_t check_descriptor(const spmm_args &c) {
    const sparse_matrix &a = c.a;
    if (a.index_type != GEMM_INDEX_I32 && a.index_type != GEMM_INDEX_I64)
        return fail(GEMM_STATUS_INVALID_VALUE, p_a,
                    fmt::format("A->index_type = {} must be GEMM_INDEX_I32 (0) or GEMM_INDEX_I64 (1)", a.index_type));
    if (a.index_base != 0 && a.index_base != 1)
        return fail(GEMM_STATUS_INVALID_VALUE, p_a, fmt::format("A->index_base = {} must be 0 or 1", a.index_base));
    if (a.validate != 0 && a.validate != 1)
        return fail(GEMM_STATUS_INVALID_VALUE, p_a, fmt::format("A->validate = {} must be 0 or 1", a.validate));
    if (a.rows < 0) return fail(GEMM_STATUS_INVALID_SIZE, p_a, fmt::format("A->rows = {} must be >= 0", a.rows));
    if (a.cols < 0) return fail(GEMM_STATUS_INVALID_SIZE, p_a, fmt::format("A->cols = {} must be >= 0", a.cols));
    if (a.nnz < 0) return fail(GEMM_STATUS_INVALID_SIZE, p_a, fmt::format("A->nnz = {} must be >= 0", a.nnz));
    const bool n = c.op_a == GEMM_OP_N;
    const char *shape = n ? "op_a = N: A is m x k" : "op_a = T or C: A is k x m";
    if (a.rows != (n ? c.m : c.k))
        return fail(GEMM_STATUS_INVALID_SIZE, p_a,
                    fmt::format("A->rows = {} must equal {} = {} ({})", a.rows, n ? "m" : "k", n ? c.m : c.k, shape));
    if (a.cols != (n ? c.k : c.m))
        return fail(GEMM_STATUS_INVALID_SIZE, p_a,
                    fmt::format("A->cols = {} must equal {} = {} ({})", a.cols, n ? "k" : "m", n ? c.k : c.m, shape));
    return GEMM_STATUS_SUCCESS;
}

const char *layout_words(int l) { return l == GEMM_ROW_MAJOR ? "row-major" : "column-major"; }

// B's stored rows and columns: op(B) is k x n, so B is k x n for op N and n x k otherwise.
int64_t b_rows(const spmm_args &c) { return c.op_b == GEMM_OP_N ? c.k : c.n; }
int64_t b_cols(const spmm_args &c) { return c.op_b == GEMM_OP_N ? c.n : c.k; }

bool sparse_dtype(int t) { return t == GEMM_F32 || t == GEMM_F64 || t == GEMM_C32 || t == GEMM_C64; }

gemm_status_t check_shape(spmm_args &c) {
    if (c.layout != GEMM_ROW_MAJOR && c.layout != GEMM_COL_MAJOR)
        return fail(GEMM_STATUS_INVALID_LAYOUT, p_layout,
                    fmt::format("layout = {} must be GEMM_ROW_MAJOR (101) or GEMM_COL_MAJOR (102)", c.layout));
    if (!valid_op(c.op_a))
        return fail(GEMM_STATUS_INVALID_OP, p_op_a,
                    fmt::format("op_a = {} must be GEMM_OP_N (111), GEMM_OP_T (112) or GEMM_OP_C (113)", c.op_a));
    if (!valid_op(c.op_b))
        return fail(GEMM_STATUS_INVALID_OP, p_op_b,
                    fmt::format("op_b = {} must be GEMM_OP_N (111), GEMM_OP_T (112) or GEMM_OP_C (113)", c.op_b));
    if (c.m < 0) return fail(GEMM_STATUS_INVALID_SIZE, p_m, fmt::format("m = {} must be >= 0", c.m));
    if (c.n < 0) return fail(GEMM_STATUS_INVALID_SIZE, p_n, fmt::format("n = {} must be >= 0", c.n));
    if (c.k < 0) return fail(GEMM_STATUS_INVALID_SIZE, p_k, fmt::format("k = {} must be >= 0", c.k));
    if (gemm_status_t s = read_descriptor(c); s != GEMM_STATUS_SUCCESS) return s;
    if (gemm_status_t s = check_descriptor(c); s != GEMM_STATUS_SUCCESS) return s;
    const bool col = c.layout == GEMM_COL_MAJOR, bn = c.op_b == GEMM_OP_N;
    const int64_t need_b = std::max<int64_t>(1, col ? b_rows(c) : b_cols(c));
    if (c.ldb < need_b)
        return fail(GEMM_STATUS_INVALID_LEADING_DIM, p_ldb,
                    fmt::format("ldb = {} must be >= max(1, {} = {}) for {} B ({})", c.ldb, col == bn ? "k" : "n",
                                col ? b_rows(c) : b_cols(c), layout_words(c.layout),
                                bn ? "op_b = N: B is k x n" : "op_b = T or C: B is n x k"));
    const int64_t need_c = std::max<int64_t>(1, col ? c.m : c.n);
    if (c.ldc < need_c)
        return fail(GEMM_STATUS_INVALID_LEADING_DIM, p_ldc,
                    fmt::format("ldc = {} must be >= max(1, {} = {}) for {} C (m x n)", c.ldc, col ? "m" : "n",
                                col ? c.m : c.n, layout_words(c.layout)));
    if (!valid_dtype(c.type))
        return fail(GEMM_STATUS_INVALID_DTYPE, p_dtype,
                    fmt::format("dtype = {} is not a gemm_dtype_t (GEMM_F32 0, GEMM_F64 1, GEMM_F16 2, GEMM_BF16 3, "
                                "GEMM_C32 4, GEMM_C64 5, GEMM_F8_E4M3 6, GEMM_F8_E5M2 7)",
                                c.type));
    if (!sparse_dtype(c.type))
        return fail(GEMM_STATUS_NOT_SUPPORTED, p_dtype,
                    fmt::format("dtype = {}: sparse products compute f32, f64, c32 and c64", dtype_name(dtype(c.type))));
    if (!c.alpha) return fail(GEMM_STATUS_INVALID_POINTER, p_alpha, "alpha is NULL");
    if (!c.beta) return fail(GEMM_STATUS_INVALID_POINTER, p_beta, "beta is NULL");
    return GEMM_STATUS_SUCCESS;
}

// The bytes from a dense matrix's first element to its last (`lines` lines of `length`
// elements, ld apart), or nullopt beyond 2^63 - 1.
std::optional<int64_t> dense_bytes(int64_t lines, int64_t length, int64_t ld, std::size_t element) {
    std::optional<int64_t> elements = span_elements(lines, ld, length);
    return elements ? checked_mul(*elements, int64_t(element)) : std::nullopt;
}

// A byte range of an operand, for the overlap check.
struct byte_range {
    const char *name;
    const void *start;
    int64_t bytes;
};

bool overlap(const byte_range &x, const byte_range &y) {
    const auto x0 = reinterpret_cast<std::uintptr_t>(x.start), y0 = reinterpret_cast<std::uintptr_t>(y.start);
    return x.start && y.start && x0 < y0 + std::uintptr_t(y.bytes) && y0 < x0 + std::uintptr_t(x.bytes);
}

// For a call that writes C: the pointers it needs, the spans of B, C and A's arrays, and that C
// overlaps none of what the product reads (the backends write C while they read the others).
gemm_status_t check_operands(const spmm_args &c, bool reads) {
    const sparse_matrix &a = c.a;
    if (reads) {
        if (!a.values) return fail(GEMM_STATUS_INVALID_POINTER, p_a, "A->values is NULL");
        if (!a.rows_array)
            return fail(GEMM_STATUS_INVALID_POINTER, p_a, fmt::format("A->{} is NULL", rows_array_name(a.format)));
        if (!a.col_indices) return fail(GEMM_STATUS_INVALID_POINTER, p_a, "A->col_indices is NULL");
        if (!c.b) return fail(GEMM_STATUS_INVALID_POINTER, p_b, "B is NULL");
    }
    if (!c.c) return fail(GEMM_STATUS_INVALID_POINTER, p_c, "C is NULL");
    const bool col = c.layout == GEMM_COL_MAJOR;
    const std::size_t element = dtype_size(dtype(c.type));
    const std::optional<int64_t> c_bytes = dense_bytes(col ? c.n : c.m, col ? c.m : c.n, c.ldc, element);
    if (!c_bytes)
        return fail(GEMM_STATUS_INVALID_SIZE, p_ldc,
                    fmt::format("ldc = {} makes C span more than 2^63 - 1 bytes", c.ldc));
    if (!reads) return GEMM_STATUS_SUCCESS;
    const std::optional<int64_t> b_bytes =
        dense_bytes(col ? b_cols(c) : b_rows(c), col ? b_rows(c) : b_cols(c), c.ldb, element);
    if (!b_bytes)
        return fail(GEMM_STATUS_INVALID_SIZE, p_ldb,
                    fmt::format("ldb = {} makes B span more than 2^63 - 1 bytes", c.ldb));
    const int64_t index_bytes = a.index_type == GEMM_INDEX_I64 ? 8 : 4;
    const std::optional<int64_t> value_bytes = checked_mul(a.nnz, int64_t(element));
    const std::optional<int64_t> entry_index_bytes = checked_mul(a.nnz, index_bytes);
    const std::optional<int64_t> offsets_bytes = checked_mul(a.rows, index_bytes);
    if (!value_bytes || !entry_index_bytes || !offsets_bytes)
        return fail(
            GEMM_STATUS_INVALID_SIZE, p_a,
            fmt::format("A (rows = {}, nnz = {}) makes A's arrays span more than 2^63 - 1 bytes", a.rows, a.nnz));
    const int64_t rows_array_bytes = a.format == sparse_format::csr ? *offsets_bytes + index_bytes : *entry_index_bytes;
    const byte_range written = {"C", c.c, *c_bytes};
    const byte_range read[] = {
        {"B", c.b, *b_bytes},
        {"A->values", a.values, *value_bytes},
        {a.format == sparse_format::csr ? "A->row_offsets" : "A->row_indices", a.rows_array, rows_array_bytes},
        {"A->col_indices", a.col_indices, *entry_index_bytes}};
    for (const byte_range &r : read)
        if (overlap(written, r))
            return fail(GEMM_STATUS_INVALID_VALUE, p_c,
                        fmt::format("C overlaps {} (C spans {} bytes from {}, {} {} bytes from {})", r.name,
                                    written.bytes, written.start, r.name, r.bytes, r.start));
    return GEMM_STATUS_SUCCESS;
}

template <class I> int64_t index_at(const void *array, int64_t p) { return int64_t(static_cast<const I *>(array)[p]); }

// CSR validation: row_offsets from base to nnz + base, never decreasing; every column in
// bounds; each row's columns strictly increasing.
template <class I> gemm_status_t validate_csr(const sparse_matrix &a) {
    const int64_t base = a.index_base;
    if (const int64_t first = index_at<I>(a.rows_array, 0); first != base)
        return fail(GEMM_STATUS_INVALID_VALUE, p_a,
                    fmt::format("A->row_offsets[0] = {} must be index_base = {} (validate = 1)", first, base));
    for (int64_t i = 0; i < a.rows; ++i) {
        const int64_t lo = index_at<I>(a.rows_array, i), hi = index_at<I>(a.rows_array, i + 1);
        if (hi < lo || hi > a.nnz + base)
            return fail(GEMM_STATUS_INVALID_VALUE, p_a,
                        fmt::format("A->row_offsets[{}] = {} must lie in [row_offsets[{}] = {}, nnz + index_base = "
                                    "{}] (validate = 1)",
                                    i + 1, hi, i, lo, a.nnz + base));
    }
    if (const int64_t last = index_at<I>(a.rows_array, a.rows); last != a.nnz + base)
        return fail(GEMM_STATUS_INVALID_VALUE, p_a,
                    fmt::format("A->row_offsets[{}] = {} must be nnz + index_base = {} (validate = 1)", a.rows, last,
                                a.nnz + base));
    for (int64_t i = 0; i < a.rows; ++i) {
        const int64_t lo = index_at<I>(a.rows_array, i) - base, hi = index_at<I>(a.rows_array, i + 1) - base;
        for (int64_t p = lo; p < hi; ++p) {
            const int64_t col = index_at<I>(a.col_indices, p);
            if (col < base || col >= a.cols + base)
                return fail(GEMM_STATUS_INVALID_VALUE, p_a,
                            fmt::format("A->col_indices[{}] = {} (row {}) is out of bounds: columns lie in [{}, {}] "
                                        "(validate = 1)",
                                        p, col, i + base, base, a.cols - 1 + base));
            if (p > lo && col <= index_at<I>(a.col_indices, p - 1))
                return fail(GEMM_STATUS_INVALID_VALUE, p_a,
                            fmt::format("A->col_indices[{}] = {} follows {} in row {}: a row's columns must increase "
                                        "strictly (unsorted or repeated; validate = 1)",
                                        p, col, index_at<I>(a.col_indices, p - 1), i + base));
        }
    }
    return GEMM_STATUS_SUCCESS;
}

// COO validation: every index in bounds; entries strictly increasing by row, then column.
template <class I> gemm_status_t validate_coo(const sparse_matrix &a) {
    const int64_t base = a.index_base;
    for (int64_t p = 0; p < a.nnz; ++p) {
        const int64_t row = index_at<I>(a.rows_array, p), col = index_at<I>(a.col_indices, p);
        if (row < base || row >= a.rows + base)
            return fail(GEMM_STATUS_INVALID_VALUE, p_a,
                        fmt::format("A->row_indices[{}] = {} is out of bounds: rows lie in [{}, {}] (validate = 1)", p,
                                    row, base, a.rows - 1 + base));
        if (col < base || col >= a.cols + base)
            return fail(GEMM_STATUS_INVALID_VALUE, p_a,
                        fmt::format("A->col_indices[{}] = {} is out of bounds: columns lie in [{}, {}] (validate = 1)",
                                    p, col, base, a.cols - 1 + base));
        if (p == 0) continue;
        const int64_t prev_row = index_at<I>(a.rows_array, p - 1), prev_col = index_at<I>(a.col_indices, p - 1);
        if (row < prev_row || (row == prev_row && col <= prev_col))
            return fail(GEMM_STATUS_INVALID_VALUE, p_a,
                        fmt::format("entry {} at (row_indices, col_indices) = ({}, {}) follows ({}, {}): entries must "
                                    "increase strictly by row, then column (unsorted or duplicate; validate = 1)",
                                    p, row, col, prev_row, prev_col));
    }
    return GEMM_STATUS_SUCCESS;
}

// The one pass validate = 1 asks for, on host arrays (the API reads them itself).
gemm_status_t validate(const sparse_matrix &a, memory_space space) {
    if (space != memory_space::host)
        return fail(GEMM_STATUS_NOT_SUPPORTED, p_a,
                    fmt::format("A->validate = 1 reads A's arrays on the host, and they are {} memory: validate them "
                                "where they were built, or pass 0",
                                memory_space_name(space)));
    const bool i64 = a.index_type == GEMM_INDEX_I64;
    if (a.format == sparse_format::csr) return i64 ? validate_csr<int64_t>(a) : validate_csr<int32_t>(a);
    return i64 ? validate_coo<int64_t>(a) : validate_coo<int32_t>(a);
}

// B's and C's element steps from the layout and op_b (sparse_problem): column-major X(i, j) is
// x[i + j * ld], row-major x[i * ld + j]; op(B)(l, j) is B(l, j) for op N and B(j, l) otherwise.
sparse_problem canonicalize(const spmm_args &c) {
    sparse_problem s;
    const bool col = c.layout == GEMM_COL_MAJOR, bn = c.op_b == GEMM_OP_N;
    s.format = c.format;
    s.op_a = canonical_op(c.op_a, c.type);
    s.m = c.m;
    s.n = c.n;
    s.k = c.k;
    s.type = dtype(c.type);
    s.rows = c.a.rows;
    s.cols = c.a.cols;
    s.nnz = c.a.nnz;
    s.index64 = c.a.index_type == GEMM_INDEX_I64;
    s.index_base = c.a.index_base;
    s.b_conj = c.op_b == GEMM_OP_C && is_complex(s.type);
    s.b_row_step = col == bn ? 1 : c.ldb;
    s.b_col_step = col == bn ? c.ldb : 1;
    s.c = c.c;
    s.c_row_step = col ? 1 : c.ldc;
    s.c_col_step = col ? c.ldc : 1;
    const scalar alpha = scalar_value(c.alpha, c.type), beta = scalar_value(c.beta, c.type);
    s.alpha = alpha.re;
    s.alpha_imag = alpha.im;
    s.beta = beta.re;
    s.beta_imag = beta.im;
    if (!s.scales_only()) {  // else not read: no backend may touch them
        (c.format == sparse_format::csr ? s.row_offsets : s.row_indices) = c.a.rows_array;
        s.col_indices = c.a.col_indices;
        s.values = c.a.values;
        s.b = c.b;
    }
    return s;
}

gemm_status_t run_spmm(spmm_args &c) {
    clear_error();
    if (gemm_status_t s = check_shape(c); s != GEMM_STATUS_SUCCESS) return s;
    sparse_problem s = canonicalize(c);
    const bool writes_c = c.m > 0 && c.n > 0;
    if (writes_c)
        if (gemm_status_t st = check_operands(c, !s.scales_only()); st != GEMM_STATUS_SUCCESS) return st;
    if (gemm_status_t st = classify_memory(s); st != GEMM_STATUS_SUCCESS) return st;
    // Only arrays the call reads are validated: the product not read, nothing is.
    if (c.a.validate && writes_c && !s.scales_only())
        if (gemm_status_t st = validate(c.a, s.space); st != GEMM_STATUS_SUCCESS) return st;
    const sparse_call call = {static_cast<gemm_layout_t>(c.layout), static_cast<gemm_op_t>(c.op_a),
                              static_cast<gemm_op_t>(c.op_b), c.ldb, c.ldc};
    return dispatch_spmm(s, call);
}

}  // namespace
}  // namespace gemm

extern "C" gemm_status_t api_spmm(int coo, int layout, int op_a, int op_b, int64_t m, int64_t n, int64_t k,
                                  const void *alpha, const void *A, const void *B, int64_t ldb, const void *beta,
                                  void *C, int64_t ldc, int dtype) {
    gemm::spmm_args args = {coo ? gemm::sparse_format::coo : gemm::sparse_format::csr,
                            layout,
                            op_a,
                            op_b,
                            m,
                            n,
                            k,
                            alpha,
                            A,
                            B,
                            ldb,
                            beta,
                            C,
                            ldc,
                            dtype,
                            {}};
    return gemm::guarded([&args] { return gemm::run_spmm(args); });
}
