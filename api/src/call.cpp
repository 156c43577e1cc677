// call.cpp: argument checks (BLAS rules), canonicalization and the common entry path.
#include "call.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "dispatch/error.hpp"
#include "dispatch/memory.hpp"
#include "dispatch/size_math.hpp"
#include "guard.hpp"

namespace gemm {

namespace {

// Indexed by api_entry.   alpha a a_t lda s_a b b_t ldb s_b beta c c_t ldc s_c batch comp
constexpr param_positions entry_positions[] = {
    {7, 8, 0, 9, 0, 10, 0, 11, 0, 12, 13, 0, 14, 0, 0, 0},           // gemm_sgemm, gemm_dgemm
    {7, 8, 0, 9, 10, 11, 0, 12, 13, 14, 15, 0, 16, 17, 18, 0},       // their strided batches
    {7, 8, 9, 10, 0, 11, 12, 13, 0, 14, 15, 16, 17, 0, 0, 18},       // gemm_ex
    {7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22},   // gemm_ex_strided_batched
    {7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22},   // a gemm_desc_t: its fields
    {7, 8, 0, 9, 0, 10, 0, 11, 0, 12, 13, 0, 14, 0, 15, 0},          // gemm_sgemm_batched ...
    {7, 8, 9, 10, 0, 11, 12, 13, 0, 14, 15, 16, 17, 0, 18, 19},      // gemm_ex_batched
    {7, 8, 9, 10, 0, 11, 12, 13, 0, 14, 15, 16, 17, 0, 19, 20},      // gemm_ex_grouped (batch: group_size)
    {7, 8, 9, 10, 0, 11, 12, 13, 0, 14, 15, 16, 17, 0, 0, 18},       // gemm_ex_epilogue (epilogue: 19)
    {2, 3, 0, 0, 0, 4, 0, 0, 0, 5, 6, 0, 0, 0, 0, 0},                // gemm_plan_run_epilogue (epilogue: 7)
    {7, 8, 9, 10, 0, 11, 12, 13, 0, 14, 15, 16, 17, 0, 0, 18},       // gemm_ex_scaled (scaling: 19)
    {2, 3, 0, 0, 0, 4, 0, 0, 0, 5, 6, 0, 0, 0, 0, 0},                // gemm_plan_run_scaled (scaling: 7)
    {7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23}};  // gemm_ex_masked_scaled (rows 22, scalings 24)

int epilogue_position(const user_call &c) { return c.entry == api_entry_plan_epilogue ? 7 : 19; }

int scaling_position(const user_call &c) {
    if (c.entry == api_entry_plan_scaled) return 7;
    if (c.entry == api_entry_grouped) return grouped_scalings_position;
    return c.entry == api_entry_masked ? masked_scalings_position : 19;
}

// How messages name a field of the call's scaling: "scaling->d_scale", a group's or a masked
// batch's matrix's "scalings[2].d_scale", a desc's own "scale_mode".
std::string scaling_field(const user_call &c, const char *field) {
    if (c.entry == api_entry_desc) return field;
    if (c.entry == api_entry_grouped || c.entry == api_entry_masked)
        return fmt::format("scalings[{}].{}", c.group, field);
    return std::string("scaling->") + field;
}

const param_positions &positions(const user_call &c) { return entry_positions[c.entry]; }

const char *type_name(int t) { return dtype_name(static_cast<dtype>(t)); }

const char *layout_words(int l) { return l == GEMM_ROW_MAJOR ? "row-major" : "column-major"; }

const char *op_words(int o) { return o == GEMM_OP_N ? "no transpose" : "transposed"; }

// A call names the parameter by its position, and the group of a grouped call (the matrix of a
// masked batch); a gemm_desc_t names the field.
gemm_status_t fail(const user_call &c, gemm_status_t s, int position, const std::string &what) {
    if (c.entry == api_entry_desc) return set_error(s, "gemm_desc_t: " + what);
    std::string group =
        c.has_group ? fmt::format("{} {}: ", c.entry == api_entry_masked ? "matrix" : "group", c.group) : "";
    return set_error(s, fmt::format("{}parameter {}: {}", group, position, what), position);
}

// "A", or "A[3]" for one matrix of a pointer-array batch.
std::string operand_name(const user_call &c, const char *name) {
    return c.has_item ? fmt::format("{}[{}]", name, c.item) : std::string(name);
}

// The rows and columns of A or B as stored (op N: op(X)'s own; T and C: swapped), with the
// names of the sizes they are.
struct stored_dims {
    int64_t rows, cols;
    const char *rows_name, *cols_name;
};

stored_dims stored_a(const user_call &c) {
    if (c.transa == GEMM_OP_N) return {c.m, c.k, "m", "k"};
    return {c.k, c.m, "k", "m"};
}

stored_dims stored_b(const user_call &c) {
    if (c.transb == GEMM_OP_N) return {c.k, c.n, "k", "n"};
    return {c.n, c.k, "n", "k"};
}

// Elements per stored row (row-major) or column (column-major) that ld must cover.
int64_t min_ld(int layout, int64_t rows, int64_t cols) {
    return std::max<int64_t>(1, layout == GEMM_COL_MAJOR ? rows : cols);
}

gemm_status_t check_ld(const user_call &c, const char *name, int position, int64_t ld, int op, int64_t rows,
                       int64_t cols, const char *rows_name, const char *cols_name) {
    int64_t need = min_ld(c.layout, rows, cols);
    if (ld >= need) return GEMM_STATUS_SUCCESS;
    bool by_rows = c.layout == GEMM_COL_MAJOR;
    const char *dim_name = by_rows ? rows_name : cols_name;
    int64_t dim = by_rows ? rows : cols;
    std::string op_text = op == GEMM_OP_N && std::string(name) == "ldc" ? "" : std::string(", ") + op_words(op);
    return fail(c, GEMM_STATUS_INVALID_LEADING_DIM, position,
                fmt::format("{} = {} must be >= max(1, {} = {}) for {} {}{}", name, ld, dim_name, dim,
                            layout_words(c.layout),
                            name[2] == 'a'   ? "A"
                            : name[2] == 'b' ? "B"
                                             : "C",
                            op_text));
}

gemm_status_t check_layout(const user_call &c) {
    if (c.layout != GEMM_ROW_MAJOR && c.layout != GEMM_COL_MAJOR)
        return fail(c, GEMM_STATUS_INVALID_LAYOUT, 1,
                    fmt::format("layout = {} must be GEMM_ROW_MAJOR (101) or GEMM_COL_MAJOR (102)", c.layout));
    return GEMM_STATUS_SUCCESS;
}

// Whether check_shape finds nothing wrong, without naming what: the test every call pays,
// shape_error the one a wrong call pays.
bool shape_valid(const user_call &c) {
    if ((c.layout != GEMM_ROW_MAJOR && c.layout != GEMM_COL_MAJOR) || !valid_op(c.transa) || !valid_op(c.transb) ||
        c.m < 0 || c.n < 0 || c.k < 0)
        return false;
    const stored_dims a = stored_a(c), b = stored_b(c);
    return c.lda >= min_ld(c.layout, a.rows, a.cols) && c.ldb >= min_ld(c.layout, b.rows, b.cols) &&
           c.ldc >= min_ld(c.layout, c.m, c.n);
}

gemm_status_t shape_error(const user_call &c);

gemm_status_t check_shape(const user_call &c) { return shape_valid(c) ? GEMM_STATUS_SUCCESS : shape_error(c); }

// The first of check_shape's rules that c breaks, reported (BLAS order: parameter by parameter).
[[gnu::noinline, gnu::cold]] gemm_status_t shape_error(const user_call &c) {
    if (gemm_status_t s = check_layout(c); s != GEMM_STATUS_SUCCESS) return s;
    if (!valid_op(c.transa))
        return fail(c, GEMM_STATUS_INVALID_OP, 2,
                    fmt::format("transa = {} must be GEMM_OP_N (111), GEMM_OP_T (112) or GEMM_OP_C (113)", c.transa));
    if (!valid_op(c.transb))
        return fail(c, GEMM_STATUS_INVALID_OP, 3,
                    fmt::format("transb = {} must be GEMM_OP_N (111), GEMM_OP_T (112) or GEMM_OP_C (113)", c.transb));
    if (c.m < 0) return fail(c, GEMM_STATUS_INVALID_SIZE, 4, fmt::format("m = {} must be >= 0", c.m));
    if (c.n < 0) return fail(c, GEMM_STATUS_INVALID_SIZE, 5, fmt::format("n = {} must be >= 0", c.n));
    if (c.k < 0) return fail(c, GEMM_STATUS_INVALID_SIZE, 6, fmt::format("k = {} must be >= 0", c.k));
    const stored_dims a = stored_a(c), b = stored_b(c);
    gemm_status_t s = check_ld(c, "lda", positions(c).lda, c.lda, c.transa, a.rows, a.cols, a.rows_name, a.cols_name);
    if (s != GEMM_STATUS_SUCCESS) return s;
    s = check_ld(c, "ldb", positions(c).ldb, c.ldb, c.transb, b.rows, b.cols, b.rows_name, b.cols_name);
    if (s != GEMM_STATUS_SUCCESS) return s;
    return check_ld(c, "ldc", positions(c).ldc, c.ldc, GEMM_OP_N, c.m, c.n, "m", "n");
}

gemm_status_t check_batch(const user_call &c) {
    if (!positions(c).batch) return GEMM_STATUS_SUCCESS;
    const char *count_name = c.entry == api_entry_grouped ? "group_size" : "batch_count";
    if (c.batch < 0)
        return fail(c, GEMM_STATUS_INVALID_SIZE, positions(c).batch,
                    fmt::format("{} = {} must be >= 0", count_name, c.batch));
    // A desc's GEMM_DESC_TIGHT became a span before these checks: a negative stride is not it.
    const char *tight = c.entry == api_entry_desc ? " (or GEMM_DESC_TIGHT)" : "";
    const struct {
        int64_t stride;
        int position;
        const char *name;
    } strides[] = {{c.stride_a, positions(c).stride_a, "stride_a"},
                   {c.stride_b, positions(c).stride_b, "stride_b"},
                   {c.stride_c, positions(c).stride_c, "stride_c"}};
    for (const auto &x : strides)
        if (x.stride < 0)
            return fail(c, GEMM_STATUS_INVALID_STRIDE, x.position,
                        fmt::format("{} = {} must be >= 0{}", x.name, x.stride, tight));
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t check_types(const user_call &c) {
    if (!positions(c).a_type) return GEMM_STATUS_SUCCESS;  // typed entry points
    struct {
        int t;
        int pos;
        const char *name;
    } types[] = {{c.a_type, positions(c).a_type, "a_type"},
                 {c.b_type, positions(c).b_type, "b_type"},
                 {c.c_type, positions(c).c_type, "c_type"},
                 {c.compute, positions(c).compute, "compute_type"}};
    for (auto &t : types)
        if (!valid_dtype(t.t))
            return fail(c, GEMM_STATUS_INVALID_DTYPE, t.pos,
                        fmt::format("{} = {} is not a gemm_dtype_t (GEMM_F32 0, GEMM_F64 1, GEMM_F16 2, GEMM_BF16 3, "
                                    "GEMM_C32 4, GEMM_C64 5, GEMM_F8_E4M3 6, GEMM_F8_E5M2 7)",
                                    t.name, t.t));
    if (c.b_type != c.a_type)
        return fail(c, GEMM_STATUS_NOT_SUPPORTED, positions(c).b_type,
                    fmt::format("b_type = {} must equal a_type = {}", type_name(c.b_type), type_name(c.a_type)));
    bool half = c.a_type == GEMM_F16 || c.a_type == GEMM_BF16;
    const bool fp8 = is_fp8(dtype(c.a_type));
    if (is_fp8(dtype(c.c_type)))
        return fail(c, GEMM_STATUS_NOT_SUPPORTED, positions(c).c_type,
                    fmt::format("c_type = {}: FP8 is an input type only (C in f32, f16 or bf16)", type_name(c.c_type)));
    int want_compute = int(compute_type_for(dtype(c.a_type)));
    if (c.compute != want_compute)
        return fail(c, GEMM_STATUS_NOT_SUPPORTED, positions(c).compute,
                    fmt::format("compute_type = {} is not supported for a_type = {} (use {})", type_name(c.compute),
                                type_name(c.a_type), type_name(want_compute)));
    if (!c_type_allowed(dtype(c.a_type), dtype(c.c_type)))
        return fail(c, GEMM_STATUS_NOT_SUPPORTED, positions(c).c_type,
                    fmt::format("c_type = {} is not supported for a_type = {} (use {}{})", type_name(c.c_type),
                                type_name(c.a_type), type_name(c.a_type), half ? " or f32" : ""));
    // FP8 scales belong to one matrix or to one group of a grouped call (gemm_ex_grouped_scaled):
    // no other batched form takes them.
    const bool batched = c.entry == api_entry_typed_batched || c.entry == api_entry_ex_batched ||
                         c.entry == api_entry_ex_pointers || c.entry == api_entry_typed_pointers ||
                         (c.entry == api_entry_desc && c.batch != 1);
    if (fp8 && batched)
        return fail(c, GEMM_STATUS_NOT_SUPPORTED, positions(c).a_type,
                    fmt::format("a_type = {}: FP8 takes one matrix (gemm_ex, gemm_ex_scaled or a plan of batch_count "
                                "1) or groups (gemm_ex_grouped, gemm_ex_grouped_scaled), not a batch",
                                type_name(c.a_type)));
    if (fp8 && c.epilogue)
        return fail(c, GEMM_STATUS_NOT_SUPPORTED, positions(c).a_type,
                    fmt::format("a_type = {}: epilogues take f32, f64, f16 and bf16, not FP8", type_name(c.a_type)));
    return GEMM_STATUS_SUCCESS;
}

// A parameter of the call with its value, named as the messages that blame it name it.
struct named_parameter {
    const char *name;
    int position;
    int64_t value;
};

// One operand as the call stores it: `lines` lines (columns in column-major, rows in row-major)
// of `length` elements, `ld` apart; batch matrices `stride` apart.
struct stored_operand {
    const char *name;        // "A" (operand_name adds a batch matrix's index, for messages)
    const char *lines_name;  // the size parameter that counts the lines
    int lines_position;
    named_parameter ld, stride;
    int64_t lines, length;
    std::size_t element_size;
};

stored_operand stored(const user_call &c, const char *name, int64_t rows, int64_t cols, const char *rows_name,
                      const char *cols_name, named_parameter ld, named_parameter stride, std::size_t element_size) {
    bool col = c.layout == GEMM_COL_MAJOR;
    auto position_of = [](const char *dim) { return dim[0] == 'm' ? 4 : dim[0] == 'n' ? 5 : 6; };
    const char *lines_name = col ? cols_name : rows_name;
    return {name, lines_name, position_of(lines_name), ld, stride, col ? cols : rows, col ? rows : cols, element_size};
}

// Whether `count` lines of `length` elements, `step` apart, fit in 2^63 - 1 bytes.
bool addressable(int64_t count, int64_t step, int64_t length, std::size_t element_size) {
    std::optional<int64_t> span = span_elements(count, step, length);
    return span && checked_mul(*span, int64_t(element_size));
}

// Every byte a call touches must be addressable as an int64_t offset from its operand, or the
// backends' index arithmetic (and the overlap check below) would wrap. The parameter blamed is
// the leading dimension (or stride) when the matrix (or batch) would fit packed tight, else
// the size that counts its lines (or matrices): no leading dimension could make it fit.
gemm_status_t check_span(const user_call &c, const stored_operand &o, int64_t *one_matrix) {
    // The operand's name only for a message: a batch matrix's costs a format.
    auto name = [&] { return operand_name(c, o.name); };
    if (!addressable(o.lines, o.ld.value, o.length, o.element_size)) {
        if (addressable(o.lines, o.length, o.length, o.element_size))
            return fail(c, GEMM_STATUS_INVALID_SIZE, o.ld.position,
                        fmt::format("{} = {} makes {} span more than 2^63 - 1 bytes ({} lines of {} elements)",
                                    o.ld.name, o.ld.value, name(), o.lines, o.length));
        return fail(c, GEMM_STATUS_INVALID_SIZE, o.lines_position,
                    fmt::format("{} = {} makes {} span more than 2^63 - 1 bytes ({} lines {} elements apart)",
                                o.lines_name, o.lines, name(), o.lines, o.ld.value));
    }
    *one_matrix = *span_elements(o.lines, o.ld.value, o.length);
    if (c.batch <= 1) return GEMM_STATUS_SUCCESS;
    if (!addressable(c.batch, o.stride.value, *one_matrix, o.element_size)) {
        if (addressable(c.batch, *one_matrix, *one_matrix, o.element_size))
            return fail(c, GEMM_STATUS_INVALID_SIZE, o.stride.position,
                        fmt::format("{} = {} makes the {} {} matrices span more than 2^63 - 1 bytes", o.stride.name,
                                    o.stride.value, c.batch, name()));
        return fail(c, GEMM_STATUS_INVALID_SIZE, positions(c).batch,
                    fmt::format("batch_count = {} makes the {} matrices span more than 2^63 - 1 bytes "
                                "(stride {} elements)",
                                c.batch, name(), o.stride.value));
    }
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t check_epilogue_spans(const user_call &c, int64_t c_span);
gemm_status_t check_scaling_spans(const user_call &c, int64_t c_span);
gemm_status_t check_operand_spans(const user_call &c, int64_t &c_span);

// One matrix whose sizes and leading dimensions are all below 2^28 spans less than 2^56
// elements of at most 16 bytes each: no operand can pass 2^63 - 1 bytes, and one C cannot
// overlap another. Such a call (the common one, and the one whose host cost shows) skips
// check_operand_spans; the tests of spans past 2^63 bytes guard the other path.
bool cannot_overflow(const user_call &c) {
    constexpr int64_t limit = int64_t(1) << 28;
    return c.batch <= 1 && std::max({c.m, c.n, c.k, c.lda, c.ldb, c.ldc}) < limit;
}

// The operands the call reads or writes lie within the address range an int64_t reaches, and
// the C matrices of a batch do not overlap; then an epilogue's operands overlap neither C nor
// one another. An operand that cannot exist is INVALID_SIZE before any overlap is judged (the
// overlaps are judged on the spans). Runs after check_pointers: what it reads is there.
gemm_status_t check_spans(const user_call &c) {
    bool writes_c = c.m > 0 && c.n > 0 && c.batch > 0;
    if (!writes_c) return GEMM_STATUS_SUCCESS;
    int64_t c_span = 0;
    if (cannot_overflow(c)) {
        const bool col = c.layout == GEMM_COL_MAJOR;
        c_span = *span_elements(col ? c.n : c.m, c.ldc, col ? c.m : c.n);
    } else if (gemm_status_t s = check_operand_spans(c, c_span); s != GEMM_STATUS_SUCCESS) {
        return s;
    }
    if (gemm_status_t s = check_epilogue_spans(c, c_span); s != GEMM_STATUS_SUCCESS) return s;
    return check_scaling_spans(c, c_span);
}

// check_spans for A, B and C, c_span receiving the elements one C spans.
gemm_status_t check_operand_spans(const user_call &c, int64_t &c_span) {
    std::size_t ab_size = dtype_size(dtype(c.a_type)), c_size = dtype_size(dtype(c.c_type));
    int64_t other = 0;
    stored_operand cs = stored(c, "C", c.m, c.n, "m", "n", {"ldc", positions(c).ldc, c.ldc},
                               {"stride_c", positions(c).stride_c, c.stride_c}, c_size);
    if (gemm_status_t s = check_span(c, cs, &c_span); s != GEMM_STATUS_SUCCESS) return s;
    // The last stored row or column of one C must end before the next C begins.
    if (c.batch > 1 && c.stride_c < c_span)
        return fail(c, GEMM_STATUS_INVALID_STRIDE, positions(c).stride_c,
                    fmt::format("stride_c = {} must be >= {} so that the {} C matrices do not overlap", c.stride_c,
                                c_span, c.batch));
    bool reads_ab = c.k > 0 && !scalar_value(c.alpha, c.compute).zero();
    if (reads_ab) {
        const stored_dims a = stored_a(c), b = stored_b(c);
        stored_operand as = stored(c, "A", a.rows, a.cols, a.rows_name, a.cols_name, {"lda", positions(c).lda, c.lda},
                                   {"stride_a", positions(c).stride_a, c.stride_a}, ab_size);
        if (gemm_status_t s = check_span(c, as, &other); s != GEMM_STATUS_SUCCESS) return s;
        stored_operand bs = stored(c, "B", b.rows, b.cols, b.rows_name, b.cols_name, {"ldb", positions(c).ldb, c.ldb},
                                   {"stride_b", positions(c).stride_b, c.stride_b}, ab_size);
        if (gemm_status_t s = check_span(c, bs, &other); s != GEMM_STATUS_SUCCESS) return s;
    }
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t check_scalars(const user_call &c) {
    if (!c.alpha) return fail(c, GEMM_STATUS_INVALID_POINTER, positions(c).alpha, "alpha is NULL");
    if (!c.beta) return fail(c, GEMM_STATUS_INVALID_POINTER, positions(c).beta, "beta is NULL");
    return GEMM_STATUS_SUCCESS;
}

gemm_status_t check_pointers(const user_call &c) {
    bool writes_c = c.m > 0 && c.n > 0 && c.batch > 0;
    bool reads_ab = writes_c && c.k > 0 && !scalar_value(c.alpha, c.compute).zero();
    if (reads_ab && !c.a)
        return fail(c, GEMM_STATUS_INVALID_POINTER, positions(c).a, operand_name(c, "A") + " is NULL");
    if (reads_ab && !c.b)
        return fail(c, GEMM_STATUS_INVALID_POINTER, positions(c).b, operand_name(c, "B") + " is NULL");
    if (writes_c && !c.c)
        return fail(c, GEMM_STATUS_INVALID_POINTER, positions(c).c, operand_name(c, "C") + " is NULL");
    return GEMM_STATUS_SUCCESS;
}

bool writes_c(const user_call &c) { return c.m > 0 && c.n > 0 && c.batch > 0; }

// A desc's epilogue fields are its own ("gemm_desc_t: ld_aux = ..."); a call's are the
// epilogue's ("parameter 19: epilogue->ld_aux = ...").
gemm_status_t epilogue_fail(const user_call &c, gemm_status_t s, const std::string &what) {
    return fail(c, s, epilogue_position(c), (c.entry == api_entry_desc ? "" : "epilogue->") + what);
}

const char *axis_constant(int axis) { return axis == GEMM_BIAS_ROWS ? "GEMM_BIAS_ROWS" : "GEMM_BIAS_COLUMNS"; }

// Which of bias, bias_grad and aux the activation reads or writes: each one it needs is set
// (when C is written at all), each other one NULL.
gemm_status_t check_epilogue_pointers(const user_call &c, const api_epilogue &e) {
    const bool backward = e.activation == GEMM_ACTIVATION_RELU_BACKWARD || e.activation == GEMM_ACTIVATION_GELU_BACKWARD;
    const bool axis = e.bias_axis != GEMM_BIAS_NONE;
    const char *kind = backward ? "a backward activation" : "a forward activation";
    if (backward && e.bias)
        return epilogue_fail(c, GEMM_STATUS_INVALID_VALUE,
                             fmt::format("bias must be NULL for {} (bias_grad receives "
                                         "the bias's gradient)",
                                         kind));
    if (!backward && e.bias_grad)
        return epilogue_fail(c, GEMM_STATUS_INVALID_VALUE,
                             fmt::format("bias_grad must be NULL for {} (only "
                                         "*_BACKWARD activations write it)",
                                         kind));
    const void *vector = backward ? e.bias_grad : e.bias;
    const char *vector_name = backward ? "bias_grad" : "bias";
    if (!axis && vector)
        return epilogue_fail(c, GEMM_STATUS_INVALID_VALUE,
                             fmt::format("{} is set but bias_axis is GEMM_BIAS_NONE", vector_name));
    if (!writes_c(c)) return GEMM_STATUS_SUCCESS;
    if (axis && !vector)
        return epilogue_fail(c, GEMM_STATUS_INVALID_POINTER,
                             fmt::format("{} is NULL but bias_axis is {}", vector_name, axis_constant(e.bias_axis)));
    if (backward && !e.aux)
        return epilogue_fail(c, GEMM_STATUS_INVALID_POINTER,
                             "aux is NULL: a backward activation reads the forward's saved activation input there");
    return GEMM_STATUS_SUCCESS;
}

bool takes_epilogue(const user_call &c) {
    return c.entry == api_entry_ex_epilogue || c.entry == api_entry_plan_epilogue;
}

gemm_status_t check_epilogue(const user_call &c) {
    if (!c.epilogue && !takes_epilogue(c)) return GEMM_STATUS_SUCCESS;
    if (!c.epilogue)
        return fail(c, GEMM_STATUS_INVALID_POINTER, epilogue_position(c),
                    "epilogue is NULL (gemm_epilogue_init makes one that adds nothing)");
    const api_epilogue &e = *c.epilogue;
    if (e.activation < GEMM_ACTIVATION_NONE || e.activation > GEMM_ACTIVATION_GELU_BACKWARD)
        return epilogue_fail(c, GEMM_STATUS_INVALID_VALUE,
                             fmt::format("activation = {} is not a gemm_activation_t (GEMM_ACTIVATION_NONE 0 ... "
                                         "GEMM_ACTIVATION_GELU_BACKWARD 4)",
                                         e.activation));
    if (e.bias_axis < GEMM_BIAS_NONE || e.bias_axis > GEMM_BIAS_COLUMNS)
        return epilogue_fail(c, GEMM_STATUS_INVALID_VALUE,
                             fmt::format("bias_axis = {} is not a gemm_bias_t (GEMM_BIAS_NONE 0, GEMM_BIAS_ROWS 1, "
                                         "GEMM_BIAS_COLUMNS 2)",
                                         e.bias_axis));
    if (is_complex(dtype(c.a_type)))
        return fail(c, GEMM_STATUS_NOT_SUPPORTED, positions(c).a_type,
                    fmt::format("a_type = {}: epilogues take real types (f32, f64, f16, bf16)", type_name(c.a_type)));
    if (gemm_status_t s = check_epilogue_pointers(c, e); s != GEMM_STATUS_SUCCESS) return s;
    if (e.aux && e.ld_aux < min_ld(c.layout, c.m, c.n))
        return epilogue_fail(c, GEMM_STATUS_INVALID_LEADING_DIM,
                             fmt::format("ld_aux = {} must be >= max(1, {} = {}) for {} aux", e.ld_aux,
                                         c.layout == GEMM_COL_MAJOR ? "m" : "n", c.layout == GEMM_COL_MAJOR ? c.m : c.n,
                                         layout_words(c.layout)));
    return GEMM_STATUS_SUCCESS;
}

// The desc's scale_mode and a call's scaling: its field named "scaling->mode = ..." for a
// call, "scalings[2].mode = ..." for group 2 of a grouped call, "scale_mode = ..." for a desc.
// what begins with the field's name.
gemm_status_t scaling_fail(const user_call &c, gemm_status_t s, const std::string &what) {
    return fail(c, s, scaling_position(c), scaling_field(c, "") + what);
}

// Blocks of 128 along k (the last one ragged), and of 128 columns of op(B).
int64_t blocks_of(int64_t extent) { return (extent + scale_block - 1) / scale_block; }

// The least leading dimension of A's block scales (one per row of op(A) for each block of k,
// the row fastest) and of B's (one per block of k for each 128 columns of op(B), the block of
// k fastest).
int64_t least_ld_a_scale(const user_call &c) { return std::max<int64_t>(1, c.m); }
int64_t least_ld_b_scale(const user_call &c) { return std::max<int64_t>(1, blocks_of(c.k)); }

// A scaling's mode, the types it takes, and (for a call) the pointers the mode needs and
// the block scales' leading dimensions.
gemm_status_t check_scaling(const user_call &c) {
    if (!c.scaling) return GEMM_STATUS_SUCCESS;
    const api_scaling &x = *c.scaling;
    const char *mode_name = c.entry == api_entry_desc ? "scale_mode" : "mode";
    if (x.mode < GEMM_SCALE_NONE || x.mode > GEMM_SCALE_BLOCK)
        return scaling_fail(c, GEMM_STATUS_INVALID_VALUE,
                            fmt::format("{} = {} is not a gemm_scale_mode_t (GEMM_SCALE_NONE 0, GEMM_SCALE_TENSOR 1, "
                                        "GEMM_SCALE_BLOCK 2)",
                                        mode_name, x.mode));
    const bool fp8 = is_fp8(dtype(c.a_type));
    if (!fp8 && (c.entry != api_entry_desc || x.mode != GEMM_SCALE_NONE))
        return fail(c, GEMM_STATUS_NOT_SUPPORTED, positions(c).a_type,
                    fmt::format("a_type = {}: scales take FP8 types (GEMM_F8_E4M3, GEMM_F8_E5M2)", type_name(c.a_type)));
    if (c.entry == api_entry_desc) return GEMM_STATUS_SUCCESS;
    if (x.mode == GEMM_SCALE_NONE) {
        if (x.a_scale || x.b_scale)
            return scaling_fail(
                c, GEMM_STATUS_INVALID_VALUE,
                fmt::format("{} is set but mode is GEMM_SCALE_NONE (scales of 1)", x.a_scale ? "a_scale" : "b_scale"));
        return GEMM_STATUS_SUCCESS;
    }
    const bool reads_ab = writes_c(c) && c.k > 0 && !scalar_value(c.alpha, c.compute).zero();
    const char *mode_constant = x.mode == GEMM_SCALE_TENSOR ? "GEMM_SCALE_TENSOR" : "GEMM_SCALE_BLOCK";
    if (reads_ab && !x.a_scale)
        return scaling_fail(c, GEMM_STATUS_INVALID_POINTER,
                            fmt::format("a_scale is NULL but mode is {}", mode_constant));
    if (reads_ab && !x.b_scale)
        return scaling_fail(c, GEMM_STATUS_INVALID_POINTER,
                            fmt::format("b_scale is NULL but mode is {}", mode_constant));
    if (x.mode != GEMM_SCALE_BLOCK) return GEMM_STATUS_SUCCESS;
    if (x.ld_a_scale < 0 || (x.ld_a_scale != 0 && x.ld_a_scale < least_ld_a_scale(c)))
        return scaling_fail(c, GEMM_STATUS_INVALID_LEADING_DIM,
                            fmt::format("ld_a_scale = {} must be 0 (the least) or >= max(1, m = {}): one scale per row "
                                        "of op(A) for each block of k, the row index fastest",
                                        x.ld_a_scale, c.m));
    if (x.ld_b_scale < 0 || (x.ld_b_scale != 0 && x.ld_b_scale < least_ld_b_scale(c)))
        return scaling_fail(c, GEMM_STATUS_INVALID_LEADING_DIM,
                            fmt::format("ld_b_scale = {} must be 0 (the least) or >= max(1, ceil(k / 128) = {}): one "
                                        "scale per block of k for each 128 columns of op(B), the block of k "
                                        "fastest",
                                        x.ld_b_scale, blocks_of(c.k)));
    return GEMM_STATUS_SUCCESS;
}

// aux spans what C spans, with its own leading dimension; no two of C, aux, bias and bias_grad
// may share a byte (the pass and cuBLASLt's fused epilogue read one while writing another).
// A desc's pointers are placeholders that stand for its alignment, so only its spans are
// judged: where the operands lie is a run's question (gemm_plan_run_epilogue checks it).
gemm_status_t check_epilogue_spans(const user_call &c, int64_t c_span) {
    if (!c.epilogue || !writes_c(c)) return GEMM_STATUS_SUCCESS;
    const api_epilogue &e = *c.epilogue;
    const int64_t size = int64_t(dtype_size(dtype(c.c_type)));
    std::vector<byte_range> ranges = {{"C", reinterpret_cast<std::uintptr_t>(c.c), c_span * size}};
    if (e.aux) {
        const named_parameter ld_aux = {c.entry == api_entry_desc ? "ld_aux" : "epilogue->ld_aux", epilogue_position(c),
                                        e.ld_aux};
        stored_operand as = stored(c, "epilogue->aux", c.m, c.n, "m", "n", ld_aux, {"", 0, 0}, std::size_t(size));
        int64_t aux_span = 0;
        if (gemm_status_t s = check_span(c, as, &aux_span); s != GEMM_STATUS_SUCCESS) return s;
        ranges.push_back({"epilogue->aux", reinterpret_cast<std::uintptr_t>(e.aux), aux_span * size});
    }
    if (c.entry == api_entry_desc) return GEMM_STATUS_SUCCESS;
    const int64_t length = e.bias_axis == GEMM_BIAS_ROWS ? c.m : c.n;
    if (e.bias) ranges.push_back({"epilogue->bias", reinterpret_cast<std::uintptr_t>(e.bias), length * size});
    if (e.bias_grad)
        ranges.push_back({"epilogue->bias_grad", reinterpret_cast<std::uintptr_t>(e.bias_grad), length * size});
    for (std::size_t i = 0; i < ranges.size(); ++i)
        for (std::size_t j = i + 1; j < ranges.size(); ++j)
            if (overlap(ranges[i], ranges[j]))
                return fail(c, GEMM_STATUS_INVALID_VALUE, epilogue_position(c),
                            fmt::format("{} and {} overlap: the epilogue reads one while writing the other",
                                        ranges[j].name, ranges[i].name));
    return GEMM_STATUS_SUCCESS;
}

// The values A's and B's scale arrays span (1 for a tensor scale): nullopt where one would span
// more than 2^63 - 1 bytes.
struct scale_values {
    std::optional<int64_t> a = 1, b = 1;
};

scale_values scale_spans(const user_call &c) {
    const api_scaling &x = *c.scaling;
    if (x.mode != GEMM_SCALE_BLOCK) return {};
    const int64_t kb = std::max<int64_t>(1, blocks_of(c.k));
    const int64_t lda_s = x.ld_a_scale ? x.ld_a_scale : least_ld_a_scale(c);
    const int64_t ldb_s = x.ld_b_scale ? x.ld_b_scale : least_ld_b_scale(c);
    auto bytes_fit = [](std::optional<int64_t> v) {
        return v && checked_mul(*v, int64_t(sizeof(float))) ? v : std::nullopt;
    };
    return {bytes_fit(span_elements(kb, lda_s, std::max<int64_t>(1, c.m))),
            bytes_fit(span_elements(std::max<int64_t>(1, blocks_of(c.n)), ldb_s, kb))};
}

// amax_d is written while C is written and the scales are read: it may share a byte with
// none of them, and C with no scale. Scale arrays only read may overlap one another. Block
// scale arrays must lie within the address range an int64_t reaches, as operands do.
gemm_status_t check_scaling_spans(const user_call &c, int64_t c_span) {
    if (!c.scaling || c.entry == api_entry_desc || !writes_c(c)) return GEMM_STATUS_SUCCESS;
    const api_scaling &x = *c.scaling;
    const scale_values spans = scale_spans(c);
    if (!spans.a)
        return scaling_fail(c, GEMM_STATUS_INVALID_SIZE,
                            fmt::format("ld_a_scale = {} makes a_scale span more than 2^63 - 1 bytes",
                                        x.ld_a_scale ? x.ld_a_scale : least_ld_a_scale(c)));
    if (!spans.b)
        return scaling_fail(c, GEMM_STATUS_INVALID_SIZE,
                            fmt::format("ld_b_scale = {} makes b_scale span more than 2^63 - 1 bytes",
                                        x.ld_b_scale ? x.ld_b_scale : least_ld_b_scale(c)));
    const scaling_ranges r = scaling_bytes(c);
    const int64_t c_bytes = c_span * int64_t(dtype_size(dtype(c.c_type)));
    const byte_range written[] = {{"C", reinterpret_cast<std::uintptr_t>(c.c), c_bytes}, r.amax};
    auto clash = [&](const byte_range &w, const byte_range &read) {
        return fail(c, GEMM_STATUS_INVALID_VALUE, scaling_position(c),
                    fmt::format("{} and {} overlap: one is written while the other is read", read.name, w.name));
    };
    if (written[1].bytes && overlap(written[0], written[1])) return clash(written[0], written[1]);
    for (const byte_range &w : written)
        for (const byte_range &read : r.read)
            if (w.bytes && read.bytes && overlap(w, read)) return clash(w, read);
    return GEMM_STATUS_SUCCESS;
}

}  // namespace

scalar scalar_value(const void *p, int compute) {
    switch (compute) {
    case GEMM_F64: return {*static_cast<const double *>(p), 0.0};
    case GEMM_C32: return {static_cast<const float *>(p)[0], static_cast<const float *>(p)[1]};
    case GEMM_C64: return {static_cast<const double *>(p)[0], static_cast<const double *>(p)[1]};
    default: return {*static_cast<const float *>(p), 0.0};
    }
}

transpose canonical_op(int op, int ab_type) {
    if (op == GEMM_OP_N) return transpose::n;
    return op == GEMM_OP_C && is_complex(dtype(ab_type)) ? transpose::c : transpose::t;
}

bool valid_op(int o) { return o == GEMM_OP_N || o == GEMM_OP_T || o == GEMM_OP_C; }

bool valid_dtype(int t) {
    return t == GEMM_F32 || t == GEMM_F64 || t == GEMM_F16 || t == GEMM_BF16 || t == GEMM_C32 || t == GEMM_C64 ||
           t == GEMM_F8_E4M3 || t == GEMM_F8_E5M2;
}

gemm_status_t check_arguments(const user_call &c) {
    gemm_status_t s = check_shape(c);
    if (s == GEMM_STATUS_SUCCESS) s = check_batch(c);
    if (s == GEMM_STATUS_SUCCESS) s = check_types(c);
    if (s == GEMM_STATUS_SUCCESS) s = check_scalars(c);
    if (s == GEMM_STATUS_SUCCESS) s = check_epilogue(c);
    if (s == GEMM_STATUS_SUCCESS) s = check_scaling(c);
    return s;
}

gemm_status_t check_shared_arguments(const user_call &c) {
    gemm_status_t s = check_layout(c);
    if (s == GEMM_STATUS_SUCCESS) s = check_types(c);
    return s;
}

gemm_status_t check_operands(const user_call &c) {
    gemm_status_t s = check_pointers(c);
    if (s == GEMM_STATUS_SUCCESS) s = check_spans(c);
    return s;
}

gemm_status_t check_call(const user_call &c) {
    gemm_status_t s = check_arguments(c);
    if (s == GEMM_STATUS_SUCCESS) s = check_operands(c);
    return s;
}

const param_positions &positions_of(const user_call &call) { return positions(call); }

gemm_status_t call_error(const user_call &call, gemm_status_t status, int position, const std::string &what) {
    return fail(call, status, position, what);
}

bool overlap(const byte_range &x, const byte_range &y) {
    return x.begin < y.begin + std::uintptr_t(y.bytes) && y.begin < x.begin + std::uintptr_t(x.bytes);
}

scaling_ranges scaling_bytes(const user_call &c) {
    const api_scaling &x = *c.scaling;
    const scale_values spans = scale_spans(c);
    const int64_t size = int64_t(sizeof(float));
    auto range = [&](const char *field, const void *p, int64_t values) {
        return byte_range{scaling_field(c, field), reinterpret_cast<std::uintptr_t>(p), p ? values * size : 0};
    };
    return {{range("a_scale", x.a_scale, spans.a.value_or(0)), range("b_scale", x.b_scale, spans.b.value_or(0)),
             range("d_scale", x.d_scale, 1)},
            range("amax_d", x.amax_d, 1)};
}

std::size_t scalar_bytes(int compute) {
    return compute == GEMM_F64 || compute == GEMM_C32 ? 8 : compute == GEMM_C64 ? 16 : 4;
}

namespace {

// The call's scaling as the canonical problem's: row-major swaps A and B, and with them their
// scales, kinds and leading dimensions (A's per-row vectors become the canonical B's
// per-column ones, B's 128 x 128 blocks the canonical A's).
scaling_spec canonical_scaling(const user_call &c, bool row) {
    const api_scaling &x = *c.scaling;
    scaling_spec s;
    operand_scale a, b;
    if (x.mode == GEMM_SCALE_TENSOR) {
        a = {scale_kind::tensor, x.a_scale, 0};
        b = {scale_kind::tensor, x.b_scale, 0};
    } else if (x.mode == GEMM_SCALE_BLOCK) {
        a = {scale_kind::vec128, x.a_scale, x.ld_a_scale ? x.ld_a_scale : least_ld_a_scale(c)};
        b = {scale_kind::blk128, x.b_scale, x.ld_b_scale ? x.ld_b_scale : least_ld_b_scale(c)};
    }
    s.a = row ? b : a;
    s.b = row ? a : b;
    s.d_scale = x.d_scale;
    s.amax_d = x.amax_d;
    return s;
}

}  // namespace

problem canonicalize(const user_call &c) {
    problem p;
    // Row-major storage read as column-major is the transpose, and (op(X))^T keeps the
    // conjugation of op C, so each operand keeps its op.
    transpose op_a = canonical_op(c.transa, c.a_type), op_b = canonical_op(c.transb, c.a_type);
    bool row = c.layout == GEMM_ROW_MAJOR;
    // Row-major C is column-major C^T = op(B)^T op(A)^T: swap the operands and m with n.
    p.m = row ? c.n : c.m;
    p.n = row ? c.m : c.n;
    p.k = c.k;
    p.op_a = row ? op_b : op_a;
    p.op_b = row ? op_a : op_b;
    p.a = row ? c.b : c.a;
    p.lda = row ? c.ldb : c.lda;
    p.stride_a = row ? c.stride_b : c.stride_a;
    p.b = row ? c.a : c.b;
    p.ldb = row ? c.lda : c.ldb;
    p.stride_b = row ? c.stride_a : c.stride_b;
    p.c = c.c;
    p.ldc = c.ldc;
    p.stride_c = c.stride_c;
    p.batch = c.batch;
    p.ab_type = static_cast<dtype>(c.a_type);
    p.c_type = static_cast<dtype>(c.c_type);
    p.compute_type = static_cast<dtype>(c.compute);
    scalar alpha = scalar_value(c.alpha, c.compute), beta = scalar_value(c.beta, c.compute);
    p.alpha = alpha.re;
    p.alpha_imag = alpha.im;
    p.beta = beta.re;
    p.beta_imag = beta.im;
    // k = 0 or alpha = 0: A and B are not read, so their strides were not checked against the
    // address range (check_spans) and may be anything; no backend may offset a pointer by them.
    if (p.scales_only()) p.stride_a = p.stride_b = 0;
    if (c.epilogue) {
        const api_epilogue &e = *c.epilogue;
        // Row-major C^T has C's rows as its columns: the bias axis turns with it.
        epilogue_axis axis = static_cast<epilogue_axis>(e.bias_axis);
        if (row && axis != epilogue_axis::none)
            axis = axis == epilogue_axis::rows ? epilogue_axis::columns : epilogue_axis::rows;
        // Without aux, ld_aux is neither checked nor meaningful: 0 then, so that no backend
        // indexes by it.
        p.epilogue = {static_cast<epilogue_act>(e.activation), axis, e.bias, e.bias_grad, e.aux, e.aux ? e.ld_aux : 0};
    }
    if (c.scaling) p.scaling = canonical_scaling(c, row);
    return p;
}

call_shape shape_of(const user_call &c) {
    return {static_cast<gemm_layout_t>(c.layout),
            static_cast<gemm_op_t>(c.transa),
            static_cast<gemm_op_t>(c.transb),
            c.m,
            c.n,
            c.k,
            c.lda,
            c.ldb,
            c.ldc};
}

gemm_status_t run_call(const user_call &call) {
    clear_error();
    gemm_status_t s = check_call(call);
    if (s != GEMM_STATUS_SUCCESS) return s;
    problem p = canonicalize(call);
    s = classify_memory(p);
    if (s != GEMM_STATUS_SUCCESS) return s;
    return dispatch(p, shape_of(call));
}

}  // namespace gemm

extern "C" gemm_status_t api_run(const api_call *call) {
    return gemm::guarded([call] { return gemm::run_call(*call); });
}
