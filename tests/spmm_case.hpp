// spmm_case.hpp: a gemm_spmm_csr / gemm_spmm_coo case and its name, a random sparse A (empty
// rows, unsorted rows or entries, COO duplicates) with random dense B and C whose padding is
// poisoned, the test's own oracle (a dense expansion of A, independent of the library's cpu_ref)
// and the comparison by the library's tolerance rule that also checks C outside its window.
// Doctest-free, for the host suite and the GPU one.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

namespace gemm_test {

struct spmm_case {
    bool coo = false;
    gemm_dtype_t type = GEMM_F32;
    gemm_layout_t layout = GEMM_COL_MAJOR;
    gemm_op_t op_a = GEMM_OP_N, op_b = GEMM_OP_N;
    int64_t m = 0, n = 0, k = 0;
    bool index64 = false;
    int index_base = 0;
    double density = 0.3;
    bool unsorted = false;    // CSR: each row's columns shuffled; COO: all entries shuffled
    bool duplicates = false;  // COO: some positions stored twice (their values add up)
    int64_t ldb = 0, ldc = 0;
    double alpha = 1.0, alpha_imag = 0.0, beta = 0.0, beta_imag = 0.0;  // imaginary parts: complex only

    // A as stored: op(A) is m x k.
    int64_t a_rows() const { return op_a == GEMM_OP_N ? m : k; }
    int64_t a_cols() const { return op_a == GEMM_OP_N ? k : m; }
    // B as stored: op(B) is k x n.
    int64_t b_rows() const { return op_b == GEMM_OP_N ? k : n; }
    int64_t b_cols() const { return op_b == GEMM_OP_N ? n : k; }
    bool col() const { return layout == GEMM_COL_MAJOR; }
    int64_t b_index(int64_t i, int64_t j) const { return col() ? i + j * ldb : i * ldb + j; }
    int64_t c_index(int64_t i, int64_t j) const { return col() ? i + j * ldc : i * ldc + j; }
    int64_t b_elements() const { return std::max<int64_t>(1, (col() ? b_cols() : b_rows()) * ldb); }
    int64_t c_elements() const { return std::max<int64_t>(1, (col() ? n : m) * ldc); }
    bool beta_zero() const { return beta == 0.0 && beta_imag == 0.0; }
    bool alpha_zero() const { return alpha == 0.0 && alpha_imag == 0.0; }

    std::string describe() const {
        std::ostringstream s;
        s << (coo ? "coo" : "csr") << " " << gemm_dtype_name(type) << " " << layout_name(layout) << " "
          << op_letter(op_a) << op_letter(op_b) << " m=" << m << " n=" << n << " k=" << k
          << " index=" << (index64 ? "i64" : "i32") << " base=" << index_base << " density=" << density
          << (unsorted ? " unsorted" : "") << (duplicates ? " duplicates" : "") << " ldb=" << ldb << " ldc=" << ldc
          << " alpha=" << alpha;
        if (is_complex(type)) s << (alpha_imag < 0 ? "" : "+") << alpha_imag << "i";
        s << " beta=" << beta;
        if (is_complex(type)) s << (beta_imag < 0 ? "" : "+") << beta_imag << "i";
        return s.str();
    }

    // A scalar as the entry points read it: a value of the call's dtype.
    bytes scalar_bytes(double re, double im) const {
        bytes out(16, 0);
        store_part(out.data(), 0, 0, type, re);
        if (is_complex(type)) store_part(out.data(), 0, 1, type, im);
        return out;
    }
};

// Leading dimensions the least valid plus pad.
inline void set_spmm_leading_dims(spmm_case &c, int64_t pad) {
    c.ldb = std::max<int64_t>(1, c.col() ? c.b_rows() : c.b_cols()) + pad;
    c.ldc = std::max<int64_t>(1, c.col() ? c.m : c.n) + pad;
}

// A's arrays as stored (indices with the base added, in the index type), B and C.
struct spmm_operands {
    std::vector<int64_t> rows, cols;  // per entry, base removed (COO; CSR's rows for the oracle)
    std::vector<int64_t> offsets;     // CSR: rows + 1, base removed
    bytes row_array, col_array;       // CSR: offsets; COO: row indices; then column indices
    bytes values;
    bytes b, c0;
    int64_t nnz() const { return int64_t(cols.size()); }
};

inline bytes index_bytes(const std::vector<int64_t> &v, bool index64, int base) {
    bytes out(std::max<std::size_t>(1, v.size()) * (index64 ? 8 : 4), 0);
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (index64) {
            const int64_t x = v[i] + base;
            std::memcpy(out.data() + 8 * i, &x, 8);
        } else {
            const int32_t x = int32_t(v[i] + base);
            std::memcpy(out.data() + 4 * i, &x, 4);
        }
    }
    return out;
}

// A's entries at random positions, about density of them, every third row (of at least three)
// left empty, never all zero where A has room; B random in its window, poison in its padding;
// C random (poison where beta = 0, so that a read of it shows), poison in its padding.
inline spmm_operands make_spmm_operands(const spmm_case &c) {
    random_source rng(hash_text(c.describe()));
    spmm_operands o;
    const int64_t rows = c.a_rows(), cols = c.a_cols();
    std::vector<std::vector<int64_t>> by_row(std::size_t(std::max<int64_t>(rows, 0)));
    for (int64_t r = 0; r < rows; ++r) {
        if (rows >= 3 && r % 3 == 1) continue;  // empty rows
        for (int64_t j = 0; j < cols; ++j)
            if ((rng.uniform() + 1.0) * 0.5 < c.density) by_row[std::size_t(r)].push_back(j);
    }
    if (rows > 0 && cols > 0 && c.density > 0) by_row[0].push_back(cols - 1);  // never all zero
    for (auto &row : by_row) {
        std::sort(row.begin(), row.end());
        row.erase(std::unique(row.begin(), row.end()), row.end());
    }
    // Stored order: rows in order, each row's columns shuffled when unsorted (CSR); COO adds
    // duplicates and then shuffles all of its entries.
    o.offsets.push_back(0);
    for (int64_t r = 0; r < rows; ++r) {
        std::vector<int64_t> &row = by_row[std::size_t(r)];
        if (c.unsorted && !c.coo)
            for (std::size_t i = row.size(); i > 1; --i) std::swap(row[i - 1], row[rng.next() % i]);
        for (int64_t j : row) {
            o.rows.push_back(r);
            o.cols.push_back(j);
            if (c.coo && c.duplicates && rng.next() % 4 == 0) {
                o.rows.push_back(r);
                o.cols.push_back(j);
            }
        }
        o.offsets.push_back(int64_t(o.cols.size()));
    }
    if (c.coo && c.unsorted)
        for (std::size_t i = o.rows.size(); i > 1; --i) {
            const std::size_t s = rng.next() % i;
            std::swap(o.rows[i - 1], o.rows[s]);
            std::swap(o.cols[i - 1], o.cols[s]);
        }
    o.row_array = index_bytes(c.coo ? o.rows : o.offsets, c.index64, c.index_base);
    o.col_array = index_bytes(o.cols, c.index64, c.index_base);
    const std::size_t size = dtype_size(c.type);
    o.values.assign(std::max<std::size_t>(1, o.cols.size()) * size, 0);
    for (int64_t p = 0; p < o.nnz(); ++p)
        for (int64_t part = 0; part < parts(c.type); ++part)
            store_part(o.values.data(), p, part, c.type, rng.uniform());
    o.b.assign(std::size_t(c.b_elements()) * size, 0);
    for (int64_t e = 0; e < c.b_elements(); ++e) store_poison(o.b.data(), e, c.type);
    for (int64_t i = 0; i < c.b_rows(); ++i)
        for (int64_t j = 0; j < c.b_cols(); ++j)
            for (int64_t part = 0; part < parts(c.type); ++part)
                store_part(o.b.data(), c.b_index(i, j), part, c.type, rng.uniform());
    o.c0.assign(std::size_t(c.c_elements()) * size, 0);
    for (int64_t e = 0; e < c.c_elements(); ++e) store_poison(o.c0.data(), e, c.type);
    if (!c.beta_zero())
        for (int64_t i = 0; i < c.m; ++i)
            for (int64_t j = 0; j < c.n; ++j)
                for (int64_t part = 0; part < parts(c.type); ++part)
                    store_part(o.c0.data(), c.c_index(i, j), part, c.type, rng.uniform());
    return o;
}

// The descriptors of o's arrays (or of arrays elsewhere, a device copy, at the same offsets).
inline gemm_csr_t csr_of(const spmm_case &c, const spmm_operands &o, const void *row_array, const void *col_array,
                         const void *values) {
    gemm_csr_t a;
    gemm_csr_init(&a, c.a_rows(), c.a_cols(), o.nnz(), c.index64 ? GEMM_INDEX_I64 : GEMM_INDEX_I32, row_array,
                  col_array, values);
    a.index_base = c.index_base;
    return a;
}
inline gemm_coo_t coo_of(const spmm_case &c, const spmm_operands &o, const void *row_array, const void *col_array,
                         const void *values) {
    gemm_coo_t a;
    gemm_coo_init(&a, c.a_rows(), c.a_cols(), o.nnz(), c.index64 ? GEMM_INDEX_I64 : GEMM_INDEX_I32, row_array,
                  col_array, values);
    a.index_base = c.index_base;
    return a;
}

// The call on arrays at the given addresses (host copies or device ones), validate as asked.
inline gemm_status_t call_spmm(const spmm_case &c, const spmm_operands &o, const void *row_array, const void *col_array,
                               const void *values, const void *b, void *out, int validate = 0) {
    const bytes alpha = c.scalar_bytes(c.alpha, c.alpha_imag), beta = c.scalar_bytes(c.beta, c.beta_imag);
    if (c.coo) {
        gemm_coo_t a = coo_of(c, o, row_array, col_array, values);
        a.validate = validate;
        return gemm_spmm_coo(c.layout, c.op_a, c.op_b, c.m, c.n, c.k, alpha.data(), &a, b, c.ldb, beta.data(), out,
                             c.ldc, c.type);
    }
    gemm_csr_t a = csr_of(c, o, row_array, col_array, values);
    a.validate = validate;
    return gemm_spmm_csr(c.layout, c.op_a, c.op_b, c.m, c.n, c.k, alpha.data(), &a, b, c.ldb, beta.data(), out, c.ldc,
                         c.type);
}

inline gemm_status_t call_spmm(const spmm_case &c, const spmm_operands &o, void *out, int validate = 0) {
    return call_spmm(c, o, o.row_array.data(), o.col_array.data(), o.values.data(), o.b.data(), out, validate);
}

// The oracle: A expanded dense (entries at one position added), then alpha * op(A) * op(B) +
// beta * C0 in complex double; also the sum of the terms' sizes for the tolerance.
struct spmm_expected {
    std::vector<std::complex<double>> value;  // m x n, column-major
    std::vector<double> size;                 // |alpha| * sum |terms| + |beta| |C0|, per element
};

inline spmm_expected expected_spmm(const spmm_case &c, const spmm_operands &o) {
    using cd = std::complex<double>;
    auto value_at = [&](const bytes &buf, int64_t e) {
        return cd(load_part(buf.data(), e, 0, c.type), is_complex(c.type) ? load_part(buf.data(), e, 1, c.type) : 0.0);
    };
    const int64_t rows = c.a_rows(), cols = c.a_cols();
    std::vector<cd> a(std::size_t(rows * cols), 0.0);
    for (int64_t p = 0; p < o.nnz(); ++p) a[std::size_t(o.rows[p] + o.cols[p] * rows)] += value_at(o.values, p);
    auto op_a = [&](int64_t i, int64_t l) {
        if (c.op_a == GEMM_OP_N) return a[std::size_t(i + l * rows)];
        const cd x = a[std::size_t(l + i * rows)];
        return c.op_a == GEMM_OP_C ? std::conj(x) : x;
    };
    auto op_b = [&](int64_t l, int64_t j) {
        if (c.op_b == GEMM_OP_N) return value_at(o.b, c.b_index(l, j));
        const cd x = value_at(o.b, c.b_index(j, l));
        return c.op_b == GEMM_OP_C ? std::conj(x) : x;
    };
    const cd alpha(c.alpha, c.alpha_imag), beta(c.beta, c.beta_imag);
    spmm_expected out;
    out.value.assign(std::size_t(c.m * c.n), 0.0);
    out.size.assign(std::size_t(c.m * c.n), 0.0);
    for (int64_t j = 0; j < c.n; ++j)
        for (int64_t i = 0; i < c.m; ++i) {
            cd sum = 0;
            double size = 0;
            if (!c.alpha_zero())
                for (int64_t l = 0; l < c.k; ++l) {
                    const cd t = op_a(i, l) * op_b(l, j);
                    sum += t;
                    size += std::abs(t);
                }
            cd v = alpha * sum;
            size *= std::abs(alpha);
            if (!c.beta_zero()) {
                const cd c0 = value_at(o.c0, c.c_index(i, j));
                v += beta * c0;
                size += std::abs(beta) * std::abs(c0);
            }
            out.value[std::size_t(i + j * c.m)] = v;
            out.size[std::size_t(i + j * c.m)] = size;
        }
    return out;
}

// "" when got holds the expected values within the library's tolerance (tolerance.hpp; the
// terms of an element are at most twice k with COO duplicates) and every element outside C's
// window is as it was, bit for bit; else what differs first.
inline std::string compare_spmm(const spmm_case &c, const spmm_operands &o, const bytes &got,
                                const spmm_expected &want) {
    gemm::tolerance_rule rule;
    rule.ab_type = c.type;
    rule.c_type = c.type;
    rule.k = 2 * c.k + 2;
    rule.alpha_size = std::abs(std::complex<double>(c.alpha, c.alpha_imag));
    rule.beta_size = std::abs(std::complex<double>(c.beta, c.beta_imag));
    std::vector<bool> inside(std::size_t(c.c_elements()), false);
    for (int64_t j = 0; j < c.n; ++j)
        for (int64_t i = 0; i < c.m; ++i) {
            const int64_t e = c.c_index(i, j);
            inside[std::size_t(e)] = true;
            const std::complex<double> w = want.value[std::size_t(i + j * c.m)];
            const double tol = rule.element(want.size[std::size_t(i + j * c.m)], 1.0);
            for (int64_t part = 0; part < parts(c.type); ++part) {
                const double g = load_part(got.data(), e, part, c.type), x = part ? w.imag() : w.real();
                if (!(std::fabs(g - x) <= tol)) {
                    std::ostringstream s;
                    s << "C(" << i << ", " << j << ")" << (part ? ".imag" : "") << " = " << g << ", expected " << x
                      << " (tolerance " << tol << ")";
                    return s.str();
                }
            }
        }
    const std::size_t size = dtype_size(c.type);
    for (int64_t e = 0; e < c.c_elements(); ++e)
        if (!inside[std::size_t(e)] && std::memcmp(got.data() + e * size, o.c0.data() + e * size, size) != 0)
            return "C's element " + std::to_string(e) + " outside the m x n window was written";
    return "";
}

}  // namespace gemm_test
