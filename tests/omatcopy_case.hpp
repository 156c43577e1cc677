// omatcopy_case.hpp: a gemm_omatcopy case and its name, random operands with poisoned padding,
// the test's own oracle (independent of the library's cpu_ref) and the comparison that also
// checks B outside its window. Doctest-free, for the host suite and the GPU one.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

namespace gemm_test {

inline const char *type_name(gemm_dtype_t t) {
    const char *name = gemm_dtype_name(t);
    return name ? name : "?";
}

struct omatcopy_case {
    gemm_dtype_t type = GEMM_F32;
    gemm_layout_t layout = GEMM_COL_MAJOR;
    gemm_op_t trans = GEMM_OP_N;
    int64_t rows = 0, cols = 0, lda = 0, ldb = 0;
    double alpha = 1.0, alpha_imag = 0.0;  // alpha_imag only for complex types

    int64_t b_rows() const { return trans == GEMM_OP_N ? rows : cols; }
    int64_t b_cols() const { return trans == GEMM_OP_N ? cols : rows; }
    // Lines as stored: columns in column-major, rows in row-major; at least one, so that a
    // buffer exists to be poisoned and compared.
    int64_t a_lines() const { return std::max<int64_t>(1, layout == GEMM_COL_MAJOR ? cols : rows); }
    int64_t b_lines() const { return std::max<int64_t>(1, layout == GEMM_COL_MAJOR ? b_cols() : b_rows()); }
    int64_t a_elements() const { return a_lines() * lda; }
    int64_t b_elements() const { return b_lines() * ldb; }
    int64_t a_index(int64_t i, int64_t j) const { return layout == GEMM_COL_MAJOR ? i + j * lda : i * lda + j; }
    int64_t b_index(int64_t i, int64_t j) const { return layout == GEMM_COL_MAJOR ? i + j * ldb : i * ldb + j; }

    std::string describe() const {
        std::ostringstream s;
        s << type_name(type) << " " << layout_name(layout) << " " << op_letter(trans) << " " << rows << "x" << cols
          << " lda=" << lda << " ldb=" << ldb << " alpha=" << alpha;
        if (is_complex(type)) s << (alpha_imag < 0 ? "" : "+") << alpha_imag << "i";
        return s.str();
    }

    // The scalar as gemm_omatcopy reads it: the compute type's value (float for f16 and bf16).
    bytes alpha_bytes() const {
        bytes out(16, 0);
        if (type == GEMM_F64 || type == GEMM_C64) {
            const double v[2] = {alpha, alpha_imag};
            std::memcpy(out.data(), v, sizeof v);
        } else {
            const float v[2] = {float(alpha), float(alpha_imag)};
            std::memcpy(out.data(), v, sizeof v);
        }
        return out;
    }
};

// Leading dimensions the least valid plus pad.
inline void set_leading_dims(omatcopy_case &c, int64_t pad) {
    const bool col = c.layout == GEMM_COL_MAJOR;
    c.lda = std::max<int64_t>(1, col ? c.rows : c.cols) + pad;
    c.ldb = std::max<int64_t>(1, col ? c.b_rows() : c.b_cols()) + pad;
}

inline omatcopy_case make_omatcopy_case(gemm_dtype_t t, gemm_layout_t l, gemm_op_t op, int64_t rows, int64_t cols,
                                        int64_t pad, double alpha, double alpha_imag = 0.0) {
    omatcopy_case c;
    c.type = t;
    c.layout = l;
    c.trans = op;
    c.rows = rows;
    c.cols = cols;
    c.alpha = alpha;
    c.alpha_imag = is_complex(t) ? alpha_imag : 0.0;
    set_leading_dims(c, pad);
    return c;
}

// A: random values in [-1, 1] in its window (never all zero), poison (NaN) in its padding.
// B: poison everywhere, so that an element written where it must not be, or left unwritten,
// shows. nan_in_a: every element of A's window NaN instead (for alpha = 0).
struct omatcopy_operands {
    bytes a, b0;
};

inline omatcopy_operands make_omatcopy_operands(const omatcopy_case &c, bool nan_in_a = false) {
    omatcopy_operands o;
    const std::size_t size = dtype_size(c.type);
    o.a.assign(std::size_t(c.a_elements()) * size, 0);
    o.b0.assign(std::size_t(c.b_elements()) * size, 0);
    for (int64_t e = 0; e < c.a_elements(); ++e) store_poison(o.a.data(), e, c.type);
    for (int64_t e = 0; e < c.b_elements(); ++e) store_poison(o.b0.data(), e, c.type);
    random_source r(hash_text(c.describe()));
    for (int64_t i = 0; i < c.rows; ++i)
        for (int64_t j = 0; j < c.cols; ++j)
            for (int64_t p = 0; p < parts(c.type); ++p) {
                double v = r.uniform();
                if (v == 0.0) v = 0.5;
                store_part(o.a.data(), c.a_index(i, j), p, c.type, nan_in_a ? std::nan("") : v);
            }
    return o;
}

// B as the test computes it: B0 with its window replaced by alpha * op(A), each element rounded
// once from double (exact products for every case but a complex alpha with a nonzero imaginary
// part times a complex element; a real alpha scales each part).
inline bytes expected_b(const omatcopy_case &c, const omatcopy_operands &o) {
    bytes b = o.b0;
    const bool conj = c.trans == GEMM_OP_C && is_complex(c.type);
    for (int64_t i = 0; i < c.b_rows(); ++i)
        for (int64_t j = 0; j < c.b_cols(); ++j) {
            double re = 0, im = 0;
            if (c.alpha != 0.0 || c.alpha_imag != 0.0) {
                const int64_t src = c.trans == GEMM_OP_N ? c.a_index(i, j) : c.a_index(j, i);
                const double xr = load_part(o.a.data(), src, 0, c.type);
                const double xi = is_complex(c.type) ? (conj ? -1.0 : 1.0) * load_part(o.a.data(), src, 1, c.type) : 0;
                re = c.alpha_imag == 0.0 ? c.alpha * xr : c.alpha * xr - c.alpha_imag * xi;
                im = c.alpha_imag == 0.0 ? c.alpha * xi : c.alpha * xi + c.alpha_imag * xr;
            }
            store_part(b.data(), c.b_index(i, j), 0, c.type, re);
            if (is_complex(c.type)) store_part(b.data(), c.b_index(i, j), 1, c.type, im);
        }
    return b;
}

// "" when got matches want: exactly (every bit, the poison outside the window included), or
// for a complex alpha with a nonzero imaginary part within a few roundings of the type in the
// window (products and a sum computed in the type itself); else the first element that differs.
inline std::string compare_b(const omatcopy_case &c, const bytes &got, const bytes &want) {
    if (got.size() != want.size()) return "B's size differs";
    const std::size_t size = dtype_size(c.type);
    const bool inexact = is_complex(c.type) && c.alpha_imag != 0.0;
    const double u = gemm::unit_roundoff(c.type);
    const double scale = std::fabs(c.alpha) + std::fabs(c.alpha_imag);
    for (int64_t e = 0; e < c.b_elements(); ++e) {
        const unsigned char *g = got.data() + std::size_t(e) * size, *w = want.data() + std::size_t(e) * size;
        if (std::memcmp(g, w, size) == 0) continue;
        const int64_t line = e / c.ldb, along = e % c.ldb;
        const bool col = c.layout == GEMM_COL_MAJOR;
        const int64_t i = col ? along : line, j = col ? line : along;
        const bool in_window = i < c.b_rows() && j < c.b_cols();
        if (inexact && in_window) {
            bool close = true;
            for (int64_t p = 0; p < 2; ++p) {
                const double gv = load_part(got.data(), e, p, c.type), wv = load_part(want.data(), e, p, c.type);
                close &= std::fabs(gv - wv) <= 8.0 * u * scale * 2.0;  // |x| parts <= 1
            }
            if (close) continue;
        }
        std::ostringstream s;
        s << c.describe() << ": B(" << i << ", " << j << ") " << (in_window ? "in" : "outside") << " the window: got ";
        for (int64_t p = 0; p < parts(c.type); ++p) s << (p ? ", " : "") << load_part(got.data(), e, p, c.type);
        s << ", want ";
        for (int64_t p = 0; p < parts(c.type); ++p) s << (p ? ", " : "") << load_part(want.data(), e, p, c.type);
        return s.str();
    }
    return "";
}

inline gemm_status_t call_omatcopy(const omatcopy_case &c, const void *a, void *b) {
    const bytes alpha = c.alpha_bytes();
    return gemm_omatcopy(c.layout, c.trans, c.rows, c.cols, alpha.data(), a, c.lda, b, c.ldb, c.type);
}

}  // namespace gemm_test
