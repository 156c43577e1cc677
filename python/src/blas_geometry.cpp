// blas_geometry.cpp: strided arrays as BLAS operands and batches (see blas_geometry.hpp).
#include "blas_geometry.hpp"

#include <algorithm>

namespace gemm_python {
namespace {

// One way of reading a matrix: unit_* is the dimension whose elements must be adjacent,
// ld_* the one stepped by the leading dimension, which must be at least min_ld (BLAS's
// rule, and what keeps the matrix's elements apart). A dimension of one element never
// steps, so its stride is free and the least valid leading dimension stands in.
std::optional<int64_t> leading_dimension(int64_t unit_count, int64_t unit_stride, int64_t ld_count, int64_t ld_stride,
                                         int64_t min_ld) {
    if (unit_count > 1 && unit_stride != 1) return std::nullopt;
    const int64_t least = std::max<int64_t>(1, min_ld);
    if (ld_count <= 1) return least;
    if (ld_stride < least) return std::nullopt;
    return ld_stride;
}

struct batch_dim {
    int64_t size, a, b, c;
};

std::vector<batch_dim> merged_batch_dims(const std::vector<int64_t> &shape, const std::vector<int64_t> &a,
                                         const std::vector<int64_t> &b, const std::vector<int64_t> &c) {
    std::vector<batch_dim> dims;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 1) continue;
        const batch_dim inner{shape[d], a[d], b[d], c[d]};
        if (!dims.empty()) {
            batch_dim &outer = dims.back();
            if (outer.a == inner.a * inner.size && outer.b == inner.b * inner.size && outer.c == inner.c * inner.size) {
                outer = {outer.size * inner.size, inner.a, inner.b, inner.c};
                continue;
            }
        }
        dims.push_back(inner);
    }
    return dims;
}

batch_offsets offsets_of(const std::vector<batch_dim> &dims, int64_t count) {
    batch_offsets offsets;
    offsets.a.reserve(count);
    offsets.b.reserve(count);
    offsets.c.reserve(count);
    std::vector<int64_t> index(dims.size(), 0);
    for (int64_t i = 0; i < count; ++i) {
        int64_t a = 0, b = 0, c = 0;
        for (size_t d = 0; d < dims.size(); ++d) {
            a += index[d] * dims[d].a;
            b += index[d] * dims[d].b;
            c += index[d] * dims[d].c;
        }
        offsets.a.push_back(a);
        offsets.b.push_back(b);
        offsets.c.push_back(c);
        for (size_t d = dims.size(); d-- > 0;) {
            if (++index[d] < dims[d].size) break;
            index[d] = 0;
        }
    }
    return offsets;
}

// The operand's matrix: its last two dimensions, or a vector as numpy.matmul takes it (a
// row for a, a column for b).
matrix_shape matrix_of(const strided_shape &x, bool is_left) {
    const size_t nd = x.shape.size();
    if (nd == 1) {
        if (is_left) return {1, x.shape[0], 0, x.strides[0]};
        return {x.shape[0], 1, x.strides[0], 0};
    }
    return {x.shape[nd - 2], x.shape[nd - 1], x.strides[nd - 2], x.strides[nd - 1]};
}

}  // namespace

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string text = "(";
    for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + (shape.size() == 1 ? ",)" : ")");
}

std::optional<blas_operand> blas_operand_of(const matrix_shape &x, gemm_layout_t layout) {
    const bool row = layout == GEMM_ROW_MAJOR;
    // An empty matrix has no element to place: its strides (often 0) say nothing.
    if (x.rows == 0 || x.cols == 0) return blas_operand{GEMM_OP_N, std::max<int64_t>(1, row ? x.cols : x.rows)};
    // op N: in row-major the columns are adjacent, in column-major the rows.
    std::optional<int64_t> ld = row ? leading_dimension(x.cols, x.col_stride, x.rows, x.row_stride, x.cols)
                                    : leading_dimension(x.rows, x.row_stride, x.cols, x.col_stride, x.rows);
    if (ld) return blas_operand{GEMM_OP_N, *ld};
    // op T: X is the transpose of a matrix stored in the layout.
    ld = row ? leading_dimension(x.rows, x.row_stride, x.cols, x.col_stride, x.rows)
             : leading_dimension(x.cols, x.col_stride, x.rows, x.row_stride, x.cols);
    if (ld) return blas_operand{GEMM_OP_T, *ld};
    return std::nullopt;
}

std::optional<gemm_layout_t> layout_of_result(const matrix_shape &c) {
    for (gemm_layout_t layout : {GEMM_ROW_MAJOR, GEMM_COL_MAJOR}) {
        std::optional<blas_operand> view = blas_operand_of(c, layout);
        if (view && view->op == GEMM_OP_N) return layout;
    }
    return std::nullopt;
}

batch_form batch_form_of(const std::vector<int64_t> &batch_shape, const std::vector<int64_t> &a_strides,
                         const std::vector<int64_t> &b_strides, const std::vector<int64_t> &c_strides) {
    batch_form form;
    for (int64_t size : batch_shape) form.count *= size;
    if (form.count == 0) return form;
    const std::vector<batch_dim> dims = merged_batch_dims(batch_shape, a_strides, b_strides, c_strides);
    if (dims.empty()) return form;
    const batch_dim &d = dims.front();
    if (dims.size() == 1 && d.a >= 0 && d.b >= 0 && d.c >= 0) {
        form.stride_a = d.a;
        form.stride_b = d.b;
        form.stride_c = d.c;
        return form;
    }
    form.uniform = false;
    form.offsets = offsets_of(dims, form.count);
    return form;
}

matmul_shape_result matmul_shape_of(const strided_shape &a, const strided_shape &b) {
    matmul_shape_result result;
    if (a.shape.empty() || b.shape.empty()) {
        result.argument = a.shape.empty() ? "a" : "b";
        result.error = std::string(result.argument) + " is 0-d: matmul needs at least one dimension";
        return result;
    }
    matmul_shape s;
    s.a = matrix_of(a, true);
    s.b = matrix_of(b, false);
    s.m = s.a.rows;
    s.k = s.a.cols;
    s.n = s.b.cols;
    if (s.b.rows != s.k) {
        result.error = "a " + shape_text(a.shape) + " and b " + shape_text(b.shape) +
                       " do not match: a has k = " + std::to_string(s.k) + " columns, b has " +
                       std::to_string(s.b.rows) + " rows";
        return result;
    }
    const size_t a_batch = a.shape.size() > 2 ? a.shape.size() - 2 : 0;
    const size_t b_batch = b.shape.size() > 2 ? b.shape.size() - 2 : 0;
    const size_t nd = std::max(a_batch, b_batch);
    for (size_t d = 0; d < nd; ++d) {
        // Right-aligned as numpy broadcasts; a missing or 1-element dimension repeats.
        const bool in_a = d + a_batch >= nd, in_b = d + b_batch >= nd;
        const int64_t size_a = in_a ? a.shape[d + a_batch - nd] : 1;
        const int64_t size_b = in_b ? b.shape[d + b_batch - nd] : 1;
        if (size_a != size_b && size_a != 1 && size_b != 1) {
            result.error = "the batch dimensions of a " + shape_text(a.shape) + " and b " + shape_text(b.shape) +
                           " do not broadcast";
            return result;
        }
        s.batch_shape.push_back(size_a == 1 ? size_b : size_a);
        s.a_batch_strides.push_back(in_a && size_a != 1 ? a.strides[d + a_batch - nd] : 0);
        s.b_batch_strides.push_back(in_b && size_b != 1 ? b.strides[d + b_batch - nd] : 0);
    }
    s.a_vector = a.shape.size() == 1;
    s.b_vector = b.shape.size() == 1;
    s.result_shape = s.batch_shape;
    if (!s.a_vector) s.result_shape.push_back(s.m);
    if (!s.b_vector) s.result_shape.push_back(s.n);
    result.shape = s;
    return result;
}

result_strides result_strides_of(const matmul_shape &shape, const strided_shape &out) {
    result_strides r;
    size_t d = shape.batch_shape.size();
    r.batch_strides.assign(out.strides.begin(), out.strides.begin() + static_cast<std::ptrdiff_t>(d));
    r.c = {shape.m, shape.n, 0, 0};
    if (!shape.a_vector) r.c.row_stride = out.strides[d++];
    if (!shape.b_vector) r.c.col_stride = out.strides[d];
    return r;
}

bool extents_overlap(const strided_shape &x, uintptr_t x_data, const strided_shape &y, uintptr_t y_data,
                     int64_t itemsize) {
    auto extent = [itemsize](const strided_shape &s, uintptr_t data, uintptr_t &first, uintptr_t &last) {
        int64_t low = 0, high = 0;
        for (size_t d = 0; d < s.shape.size(); ++d) {
            if (s.shape[d] == 0) return false;
            const int64_t span = (s.shape[d] - 1) * s.strides[d] * itemsize;
            (span < 0 ? low : high) += span;
        }
        first = data + static_cast<uintptr_t>(low);
        last = data + static_cast<uintptr_t>(high) + static_cast<uintptr_t>(itemsize) - 1;
        return true;
    };
    uintptr_t x_first = 0, x_last = 0, y_first = 0, y_last = 0;
    if (!extent(x, x_data, x_first, x_last) || !extent(y, y_data, y_first, y_last)) return false;
    return x_first <= y_last && y_first <= x_last;
}

}  // namespace gemm_python
