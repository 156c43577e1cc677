// gemm_case.cpp: sizes, names and cost of a benchmarked problem.
#include "gemm_case.hpp"

namespace gemm_cli {

stored_matrix gemm_case_stored_a(const gemm_case &c) {
    return c.op_a == GEMM_OP_N ? stored_matrix{c.shape.m, c.shape.k} : stored_matrix{c.shape.k, c.shape.m};
}

stored_matrix gemm_case_stored_b(const gemm_case &c) {
    return c.op_b == GEMM_OP_N ? stored_matrix{c.shape.k, c.shape.n} : stored_matrix{c.shape.n, c.shape.k};
}

stored_matrix gemm_case_stored_c(const gemm_case &c) { return stored_matrix{c.shape.m, c.shape.n}; }

int64_t gemm_case_ld(const gemm_case &c, const stored_matrix &x) {
    int64_t ld = c.layout == GEMM_ROW_MAJOR ? x.cols : x.rows;
    return ld > 0 ? ld : 1;
}

std::size_t dtype_size(gemm_dtype_t t) {
    switch (t) {
    case GEMM_F32: return 4;
    case GEMM_F64: return 8;
    case GEMM_F16:
    case GEMM_BF16: return 2;
    case GEMM_C32: return 8;
    case GEMM_C64: return 16;
    case GEMM_F8_E4M3:
    case GEMM_F8_E5M2: return 1;
    }
    return 1;
}

std::string dtype_pair_name(dtype_pair t) {
    return t.c == t.ab ? gemm_dtype_name(t.ab) : std::string(gemm_dtype_name(t.ab)) + ">" + gemm_dtype_name(t.c);
}

const char *layout_name(gemm_layout_t l) { return l == GEMM_ROW_MAJOR ? "row" : "col"; }

const char *op_letter(gemm_op_t o) { return o == GEMM_OP_N ? "N" : o == GEMM_OP_T ? "T" : "C"; }

std::string ops_name(const gemm_case &c) { return std::string(op_letter(c.op_a)) + op_letter(c.op_b); }

const char *scale_name(gemm_scale_mode_t s) {
    return s == GEMM_SCALE_TENSOR ? "tensor" : s == GEMM_SCALE_BLOCK ? "block" : "none";
}

std::string gemm_case_text(const gemm_case &c) {
    std::string text = dtype_pair_name(c.dtype) + " " + layout_name(c.layout) + " " + ops_name(c) + " " +
                       std::to_string(c.shape.m) + "x" + std::to_string(c.shape.n) + "x" + std::to_string(c.shape.k);
    if (c.batch > 1) text += " x" + std::to_string(c.batch);
    return c.scale != GEMM_SCALE_NONE ? text + " scale=" + scale_name(c.scale) : text;
}

// A complex multiply-add counts as 8 flops, as BLAS benchmarks count it.
double gemm_case_flops(const gemm_case &c) {
    double per_product = c.dtype.ab == GEMM_C32 || c.dtype.ab == GEMM_C64 ? 8.0 : 2.0;
    return per_product * double(c.shape.m) * double(c.shape.n) * double(c.shape.k) * double(c.batch);
}

// The f32 scales of one matrix's A and B: one each, or per block (op(A): m rows, op(B): n
// columns; blocks of 128 along k, and of 128 columns for B).
double scale_bytes(const gemm_case &c) {
    if (c.scale == GEMM_SCALE_TENSOR) return 2.0 * sizeof(float);
    if (c.scale != GEMM_SCALE_BLOCK) return 0.0;
    const int64_t k_blocks = (c.shape.k + 127) / 128, n_blocks = (c.shape.n + 127) / 128;
    return double(c.shape.m + n_blocks) * double(k_blocks) * double(sizeof(float));
}

double gemm_case_bytes(const gemm_case &c) {
    double c_passes = c.beta != 0.0 ? 2.0 : 1.0;
    double ab = double(gemm_case_stored_a(c).elements()) + double(gemm_case_stored_b(c).elements());
    double bytes = ab * double(dtype_size(c.dtype.ab)) +
                   c_passes * double(gemm_case_stored_c(c).elements()) * double(dtype_size(c.dtype.c)) + scale_bytes(c);
    return bytes * double(c.batch);
}

}  // namespace gemm_cli
