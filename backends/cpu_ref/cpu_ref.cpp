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
