// cpu_ref.cpp: the plain triple loop for every dtype, layout and op; accumulates in double
// (std::complex<double> for the complex types). FP8 values are decoded exactly and multiplied
// by their scales in double.
#include "cpu_ref.hpp"

#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

#include "dispatch/activation_math.hpp"
#include "dispatch/element.hpp"

namespace gemm {
namespace {

int64_t offset(transpose o, int64_t row, int64_t col, int64_t ld) {
    return o == transpose::n ? row + col * ld : col + row * ld;
}

// An element of op(X): real types as double, complex ones as std::complex<double>, conjugated
// for op C.
template <class V> V element_of(const char *x, transpose o, int64_t row, int64_t col, int64_t ld, dtype t) {
    if constexpr (std::is_same_v<V, double>) {
        return load_element(x, offset(o, row, col, ld), t);
    } else {
        V v = load_value(x, offset(o, row, col, ld), t);
        return o == transpose::c ? std::conj(v) : v;
    }
}

template <class V> V scalar(double re, double im) {
    if constexpr (std::is_same_v<V, double>) return re;
    else return V(re, im);
}

template <class V> V c_at(const char *c, int64_t i, dtype t) {
    if constexpr (std::is_same_v<V, double>) return load_element(c, i, t);
    else return load_value(c, i, t);
}

// Z (real, in double) through the epilogue, rounded once when stored: the forward's bias
// added and Z + bias saved in aux, then the activation.
double epilogue_value(const problem &p, int64_t i, int64_t j, double z) {
    const epilogue_spec &e = p.epilogue;
    const int64_t ai = i + j * e.ld_aux;
    if (e.backward()) return activation_math::apply(e.act, z, load_element(e.aux, ai, p.c_type));
    if (e.axis != epilogue_axis::none) z += load_element(e.bias, e.axis == epilogue_axis::rows ? i : j, p.c_type);
    if (e.aux) store_element(e.aux, ai, p.c_type, z);
    return activation_math::apply(e.act, z, 0.0);
}

// The bias's gradient: the sums of C as stored, along the axis.
void store_bias_grad(const problem &p, const char *c) {
    const bool rows = p.epilogue.axis == epilogue_axis::rows;
    for (int64_t v = 0; v < (rows ? p.m : p.n); ++v) {
        double sum = 0;
        for (int64_t w = 0; w < (rows ? p.n : p.m); ++w)
            sum += load_element(c, rows ? v + w * p.ldc : w + v * p.ldc, p.c_type);
        store_element(p.epilogue.bias_grad, v, p.c_type, sum);
    }
}

// An FP8 problem's scale of op(A)(i, l) or op(B)(l, j): 1 without scaling.
double a_scale(const problem &p, int64_t i, int64_t l) { return p.scaling.a.at(i, l); }
double b_scale(const problem &p, int64_t l, int64_t j) { return p.scaling.b.at(j, l); }

// max |v| so far, NaN once any v is NaN (a comparison with NaN is false, so it stays).
double amax_with(double amax, double v) { return !std::isnan(amax) && !(std::fabs(v) <= amax) ? std::fabs(v) : amax; }

// One matrix of the batch. The column of sums is walked along l so that A is read down its
// stored columns when not transposed.
template <class V> void multiply_one(const problem &p, const char *a, const char *b, char *c, std::vector<V> &sums) {
    const bool reads_ab = !p.scales_only();
    const bool scaled = p.scaling.a.kind != scale_kind::none || p.scaling.b.kind != scale_kind::none;
    const V alpha = scalar<V>(p.alpha, p.alpha_imag), beta = scalar<V>(p.beta, p.beta_imag);
    const double d_scale = p.scaling.d_scale ? double(*p.scaling.d_scale) : 1.0;
    double amax = 0.0;
    for (int64_t j = 0; j < p.n; ++j) {
        sums.assign(std::size_t(p.m), V(0));
        for (int64_t l = 0; reads_ab && l < p.k; ++l) {
            V blj = element_of<V>(b, p.op_b, l, j, p.ldb, p.ab_type);
            if constexpr (std::is_same_v<V, double>)
                if (scaled) blj *= b_scale(p, l, j);
            for (int64_t i = 0; i < p.m; ++i) {
                V ail = element_of<V>(a, p.op_a, i, l, p.lda, p.ab_type);
                if constexpr (std::is_same_v<V, double>)
                    if (scaled) ail *= a_scale(p, i, l);
                sums[std::size_t(i)] += ail * blj;
            }
        }
        for (int64_t i = 0; i < p.m; ++i) {
            int64_t ci = i + j * p.ldc;
            V v = reads_ab ? alpha * sums[std::size_t(i)] : V(0);
            if (!p.beta_zero()) v += beta * c_at<V>(c, ci, p.c_type);  // beta = 0: C is not read
            if constexpr (std::is_same_v<V, double>) {
                if (p.epilogue.any()) v = epilogue_value(p, i, j, v);
                amax = amax_with(amax, v);
                v *= d_scale;
            }
            store_value(c, ci, p.c_type, v);
        }
    }
    if constexpr (std::is_same_v<V, double>)
        if (p.scaling.amax_d) *p.scaling.amax_d = float(amax);
    if constexpr (std::is_same_v<V, double>)
        if (p.epilogue.backward() && p.epilogue.axis != epilogue_axis::none) store_bias_grad(p, c);
}

// A and B may be NULL when they are not referenced (alpha = 0 or k = 0).
const char *element(const void *base, int64_t index, std::size_t size) {
    return base ? static_cast<const char *>(base) + std::size_t(index) * size : nullptr;
}

// B(i, j) = alpha * op(A)(i, j), an element at a time in std::complex<double> (exact products
// for every type but complex alpha times complex A, then one rounding into B's type). A real
// alpha scales each part of a complex element, so an infinite part stays in its own part.
void transpose_elements(const transpose_problem &t) {
    const std::complex<double> alpha(t.alpha, t.alpha_imag);
    for (int64_t j = 0; j < t.b_cols(); ++j)
        for (int64_t i = 0; i < t.b_rows(); ++i) {
            std::complex<double> v = 0;
            if (!t.alpha_zero()) {  // alpha = 0: A is not read
                v = load_value(t.a, t.op == transpose::n ? i + j * t.lda : j + i * t.lda, t.type);
                if (t.op == transpose::c) v = std::conj(v);
                v = t.alpha_imag == 0.0 ? std::complex<double>(t.alpha * v.real(), t.alpha * v.imag()) : alpha * v;
            }
            store_value(t.b, i + j * t.ldb, t.type, v);
        }
}

// An index of a sparse matrix's array, base removed.
int64_t sparse_index(const sparse_problem &s, const void *array, int64_t p) {
    return (s.index64 ? static_cast<const int64_t *>(array)[p] : int64_t(static_cast<const int32_t *>(array)[p])) -
           s.index_base;
}

// C = alpha * op(A) * op(B) + beta * C, one row of C at a time, its sums in double (complex
// double): for every row i of C, every stored entry that lands in it (row i of A for op N,
// column i for T and C) adds its value times a row of op(B). Entries are scanned in storage
// order, so duplicates and unsorted rows are summed as they come; a row of C scans every entry
// except for CSR with op N (m times nnz: an oracle, never fast).
template <class V> void sparse_rows(const sparse_problem &s) {
    const bool reads = !s.scales_only();
    const V alpha = scalar<V>(s.alpha, s.alpha_imag), beta = scalar<V>(s.beta, s.beta_imag);
    const bool conj_a = s.op_a == transpose::c;
    std::vector<V> sums(std::size_t(s.n));
    auto add_entry = [&](int64_t p, int64_t l) {
        V a = c_at<V>(static_cast<const char *>(s.values), p, s.type);
        if constexpr (!std::is_same_v<V, double>)
            if (conj_a) a = std::conj(a);
        for (int64_t j = 0; j < s.n; ++j) {
            V b = c_at<V>(static_cast<const char *>(s.b), l * s.b_row_step + j * s.b_col_step, s.type);
            if constexpr (!std::is_same_v<V, double>)
                if (s.b_conj) b = std::conj(b);
            sums[std::size_t(j)] += a * b;
        }
    };
    for (int64_t i = 0; i < s.m; ++i) {
        sums.assign(std::size_t(s.n), V(0));
        if (reads && s.format == sparse_format::csr && s.op_a == transpose::n) {
            for (int64_t p = sparse_index(s, s.row_offsets, i); p < sparse_index(s, s.row_offsets, i + 1); ++p)
                add_entry(p, sparse_index(s, s.col_indices, p));
        } else if (reads) {
            for (int64_t r = 0, p = 0; p < s.nnz; ++p) {
                if (s.format == sparse_format::csr)
                    while (p >= sparse_index(s, s.row_offsets, r + 1)) ++r;  // the row entry p lies in
                const int64_t row = s.format == sparse_format::csr ? r : sparse_index(s, s.row_indices, p);
                const int64_t col = sparse_index(s, s.col_indices, p);
                if ((s.op_a == transpose::n ? row : col) == i) add_entry(p, s.op_a == transpose::n ? col : row);
            }
        }
        for (int64_t j = 0; j < s.n; ++j) {
            const int64_t ci = i * s.c_row_step + j * s.c_col_step;
            V v = reads ? alpha * sums[std::size_t(j)] : V(0);
            if (!s.beta_zero()) v += beta * c_at<V>(static_cast<const char *>(s.c), ci, s.type);  // else not read
            store_value(s.c, ci, s.type, v);
        }
    }
}

class cpu_ref final : public backend {
public:
    std::string_view name() const override { return "cpu_ref"; }
    backend_kind kind() const override { return backend_kind::host; }
    bool reference() const override { return true; }
    verdict probe() const override { return verdict::yes(); }

    verdict supports(const problem &p) const override {
        if (p.space != memory_space::host) return verdict::no("needs host pointers");
        return verdict::yes();
    }

    bool fuses_epilogue(const problem &) const override { return true; }

    verdict supports_omatcopy(const transpose_problem &t) const override {
        if (t.space != memory_space::host) return verdict::no("needs host pointers");
        return verdict::yes();
    }

    gemm_status_t run_omatcopy(const transpose_problem &t, run_report &ctx) override {
        ctx.variant_used = "element_loop_f64";
        transpose_elements(t);
        return GEMM_STATUS_SUCCESS;
    }

    verdict supports_spmm(const sparse_problem &s) const override {
        if (s.space != memory_space::host) return verdict::no("needs host pointers");
        return verdict::yes();
    }

    gemm_status_t run_spmm(const sparse_problem &s, run_report &ctx) override {
        ctx.variant_used = "row_sums_f64";
        if (is_complex(s.type)) sparse_rows<std::complex<double>>(s);
        else sparse_rows<double>(s);
        return GEMM_STATUS_SUCCESS;
    }

    gemm_status_t run(const problem &p, std::string_view, run_report &ctx) override {
        ctx.variant_used = "triple_loop_f64_accumulate";
        std::size_t ab = dtype_size(p.ab_type), cs = dtype_size(p.c_type);
        if (is_complex(p.ab_type)) run_as<std::complex<double>>(p, ab, cs);
        else run_as<double>(p, ab, cs);
        return GEMM_STATUS_SUCCESS;
    }

private:
    template <class V> static void run_as(const problem &p, std::size_t ab, std::size_t cs) {
        thread_local std::vector<V> sums;
        for (int64_t i = 0; i < p.batch; ++i)
            multiply_one<V>(p, element(p.a, i * p.stride_a, ab), element(p.b, i * p.stride_b, ab),
                            const_cast<char *>(element(p.c, i * p.stride_c, cs)), sums);
    }
};

}  // namespace

backend_ptr make_cpu_ref_backend() { return std::make_unique<cpu_ref>(); }

}  // namespace gemm
