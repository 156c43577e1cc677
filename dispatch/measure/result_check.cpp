// result_check.cpp: the reference values of a measured problem and the tolerance of each.
#include "result_check.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

#include <spdlog/fmt/fmt.h>

#include "dispatch/activation_math.hpp"
#include "dispatch/element.hpp"
#include "tolerance.hpp"

namespace gemm {
namespace {

// The row sums of the vector check add n independent rounding errors; this margin on their
// root-sum-square keeps false alarms negligible. What it still sees grows with the shape: one
// element of row i off by e shows when |e·t_j| passes 4·sqrt(sum over j of (tol_ij·t_j)^2),
// for f32 at 4096^3 about 0.15. An element left unwritten or garbage is off by about its own
// size (sqrt(k)/3, 21 there), and a wrong block by that in many elements: both show, unless
// t_j of a single wrong element happens to be nearly 0.
constexpr double vector_check_margin = 4.0;

// Keeps the worst error / tolerance ratio and where it happened; NaN counts as worst.
struct worst_tracker {
    double ratio = 0, error = 0, tolerance = 0;
    int64_t batch = 0, i = 0, j = 0;
    bool seen_nan = false;

    void add(double err, double tol, int64_t b, int64_t ii, int64_t jj) {
        double r = err / tol;
        bool is_nan = std::isnan(r);
        if (seen_nan || (!is_nan && r <= ratio)) return;
        seen_nan = is_nan;
        ratio = is_nan ? std::numeric_limits<double>::infinity() : r;
        error = err, tolerance = tol, batch = b, i = ii, j = jj;
    }
};

}  // namespace

const char *verdict_name(check_outcome::verdict v) {
    switch (v) {
    case check_outcome::verdict::ok: return "ok";
    case check_outcome::verdict::wrong: return "WRONG";
    case check_outcome::verdict::not_checked: return "not checked";
    }
    return "?";
}

// The rule (tolerance.hpp) for the problem's class and scalars. Sizes are magnitudes (|z| for
// complex values); an FP8 output scale multiplies alpha·AB and beta·C0 alike.
tolerance_rule result_check::rule() const {
    tolerance_rule r;
    r.ab_type = gemm_dtype_t(p_.ab_type);
    r.c_type = gemm_dtype_t(p_.c_type);
    r.k = p_.k;
    r.tf32 = tf32_;
    r.alpha_size = std::abs(value(p_.alpha, p_.alpha_imag)) * std::fabs(d_scale_);
    r.beta_size = std::abs(value(p_.beta, p_.beta_imag)) * std::fabs(d_scale_);
    r.product_size = product_size_;
    return r;
}

namespace {

template <class V> V load_as(const void *base, int64_t i, dtype t);
template <> double load_as<double>(const void *base, int64_t i, dtype t) { return load_element(base, i, t); }
template <> std::complex<double> load_as<std::complex<double>>(const void *base, int64_t i, dtype t) {
    return load_value(base, i, t);
}

template <class V> V conjugated(V v, transpose o) {
    if constexpr (std::is_same_v<V, double>) return v;
    else return o == transpose::c ? std::conj(v) : v;
}

// A stored expected value as V.
template <class V> V as_value(std::complex<double> v) {
    if constexpr (std::is_same_v<V, double>) return v.real();
    else return v;
}

template <class V> V scalar(double re, double im) {
    if constexpr (std::is_same_v<V, double>) return re;
    else return V(re, im);
}

}  // namespace

// FP8 values times their scales, as cpu_ref applies them (operand_scale::at, canonical: op(B)'s
// outer index is j).
template <class V> V result_check::a_at(int64_t batch, int64_t i, int64_t l) const {
    int64_t off = batch * p_.stride_a + (p_.op_a == transpose::n ? i + l * p_.lda : l + i * p_.lda);
    V v = conjugated(load_as<V>(a_, off, p_.ab_type), p_.op_a);
    if constexpr (std::is_same_v<V, double>)
        if (p_.scaling.a.kind != scale_kind::none) v *= double(p_.scaling.a.at(i, l));
    return v;
}

template <class V> V result_check::b_at(int64_t batch, int64_t l, int64_t j) const {
    int64_t off = batch * p_.stride_b + (p_.op_b == transpose::n ? l + j * p_.ldb : j + l * p_.ldb);
    V v = conjugated(load_as<V>(b_, off, p_.ab_type), p_.op_b);
    if constexpr (std::is_same_v<V, double>)
        if (p_.scaling.b.kind != scale_kind::none) v *= double(p_.scaling.b.at(j, l));
    return v;
}

template <class V> V result_check::c0_at(int64_t batch, int64_t i, int64_t j) const {
    return load_as<V>(c0_, batch * p_.stride_c + i + j * p_.ldc, p_.c_type);
}

void result_check::prepare(const problem &host, const void *initial_c, bool tf32) {
    p_ = host;
    tf32_ = tf32 && p_.ab_type == dtype::f32;
    full_ = double(p_.m) * double(p_.n) * double(p_.k) * double(p_.batch) <= full_check_limit;
    a_ = host.a;
    b_ = host.b;
    c0_ = initial_c;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    t_.assign(std::size_t(full_ ? 0 : p_.n), 0.0);
    for (double &v : t_) v = uniform(rng);
    expected_.clear();
    abs_products_.clear();
    d_scale_ = fp8() && p_.scaling.d_scale ? double(*p_.scaling.d_scale) : 1.0;
    product_size_ = 1.0;
    if (fp8() && !p_.scales_only()) {
        // The rule's product_size: the largest |scaled op(A)| times the largest |scaled op(B)|.
        double a_max = 0, b_max = 0;
        for (int64_t batch = 0; batch < p_.batch; ++batch) {
            for (int64_t l = 0; l < p_.k; ++l) {
                for (int64_t i = 0; i < p_.m; ++i) a_max = std::fmax(a_max, std::fabs(a_at<double>(batch, i, l)));
                for (int64_t j = 0; j < p_.n; ++j) b_max = std::fmax(b_max, std::fabs(b_at<double>(batch, l, j)));
            }
        }
        product_size_ = std::fmax(1.0, a_max * b_max);
    }
    if (p_.epilogue.any()) return epilogue_reference();
    const bool complex = is_complex(p_.ab_type);
    for (int64_t batch = 0; batch < p_.batch; ++batch) {
        if (full_) complex ? full_reference<value>(batch) : full_reference<double>(batch);
        else complex ? projected_reference<value>(batch) : projected_reference<double>(batch);
    }
}

// Every element of d_scale·(alpha A B + beta C0), and for FP8 its sum of |scaled products|.
template <class V> void result_check::full_reference(int64_t batch) {
    const V alpha = scalar<V>(p_.alpha, p_.alpha_imag), beta = scalar<V>(p_.beta, p_.beta_imag);
    const bool abs_sums = fp8();
    for (int64_t j = 0; j < p_.n; ++j)
        for (int64_t i = 0; i < p_.m; ++i) {
            V sum = 0;
            double abs_sum = 0;
            for (int64_t l = 0; l < p_.k && !p_.alpha_zero(); ++l) {
                const V product = a_at<V>(batch, i, l) * b_at<V>(batch, l, j);
                sum += product;
                if (abs_sums) abs_sum += std::abs(product);
            }
            V c0 = !p_.beta_zero() ? c0_at<V>(batch, i, j) : V(0);
            expected_.push_back(d_scale_ * (alpha * sum + beta * c0));
            if (abs_sums) abs_products_.push_back(abs_sum);
        }
}

// Row i of d_scale·(alpha A (B t) + beta C0 t), and for FP8 row i of |A| (|B| |t|): the sum
// over j of |t_j| times element (i, j)'s sum of |scaled products|, in O(k·(m + n)).
template <class V> void result_check::projected_reference(int64_t batch) {
    const V alpha = scalar<V>(p_.alpha, p_.alpha_imag), beta = scalar<V>(p_.beta, p_.beta_imag);
    const bool abs_sums = fp8();
    std::vector<V> bt(std::size_t(p_.k), V(0));
    std::vector<double> abs_bt(abs_sums ? std::size_t(p_.k) : 0, 0.0);
    for (int64_t l = 0; l < p_.k && !p_.alpha_zero(); ++l)
        for (int64_t j = 0; j < p_.n; ++j) {
            const V b = b_at<V>(batch, l, j);
            bt[std::size_t(l)] += b * t_[std::size_t(j)];
            if (abs_sums) abs_bt[std::size_t(l)] += std::abs(b) * std::fabs(t_[std::size_t(j)]);
        }
    for (int64_t i = 0; i < p_.m; ++i) {
        V sum = 0, c_sum = 0;
        double abs_sum = 0;
        for (int64_t l = 0; l < p_.k && !p_.alpha_zero(); ++l) {
            const V a = a_at<V>(batch, i, l);
            sum += a * bt[std::size_t(l)];
            if (abs_sums) abs_sum += std::abs(a) * abs_bt[std::size_t(l)];
        }
        for (int64_t j = 0; !p_.beta_zero() && j < p_.n; ++j) c_sum += c0_at<V>(batch, i, j) * t_[std::size_t(j)];
        expected_.push_back(d_scale_ * (alpha * sum + beta * c_sum));
        if (abs_sums) abs_products_.push_back(abs_sum);
    }
}

check_outcome result_check::judge(const problem &r) const {
    if (p_.epilogue.any()) return judge_epilogue(r);
    return is_complex(p_.ab_type) ? judge_as<value>(r) : judge_as<double>(r);
}

void result_check::epilogue_reference() {
    constexpr int samples = 512;
    checked_at_.clear();
    z_.clear();
    if (full_) {
        for (int64_t j = 0; j < p_.n; ++j)
            for (int64_t i = 0; i < p_.m; ++i) checked_at_.push_back({i, j});
    } else {
        std::mt19937_64 rng(11);
        for (int s = 0; s < samples; ++s)
            checked_at_.push_back({int64_t(rng() % uint64_t(p_.m)), int64_t(rng() % uint64_t(p_.n))});
    }
    for (auto [i, j] : checked_at_) {
        double sum = 0;
        for (int64_t l = 0; l < p_.k && !p_.alpha_zero(); ++l) sum += a_at<double>(0, i, l) * b_at<double>(0, l, j);
        z_.push_back(p_.alpha * sum + (!p_.beta_zero() ? p_.beta * c0_at<double>(0, i, j) : 0.0));
    }
}

// An epilogue's elements by the rule's epilogue_input, epilogue_output and bias_gradient.
check_outcome result_check::judge_epilogue(const problem &r) const {
    const epilogue_spec &e = p_.epilogue;
    const bool backward = e.backward(), per_row = e.axis == epilogue_axis::rows;
    const tolerance_rule limits = rule();
    worst_tracker worst;
    for (std::size_t s = 0; s < checked_at_.size(); ++s) {
        const auto [i, j] = checked_at_[s];
        const int64_t ci = i + j * p_.ldc, ai = i + j * e.ld_aux;
        const double c0 = !p_.beta_zero() ? std::abs(c0_at<double>(0, i, j)) : 0.0;
        double z = z_[s], slope = 1.0, want = 0.0;
        double size = std::abs(z);
        if (!backward && e.axis != epilogue_axis::none) {
            const double b = load_element(bias_, per_row ? i : j, p_.c_type);
            z += b;
            size += std::abs(b);
        }
        if (backward) {
            const double saved = load_element(saved_aux_, ai, p_.c_type);
            slope = e.act == epilogue_act::relu_backward ? (saved > 0 ? 1.0 : 0.0)
                                                         : activation_math::gelu_derivative(saved);
            want = z * slope;
        } else {
            if (saves_aux_)
                worst.add(std::abs(load_element(r.epilogue.aux, ai, p_.c_type) - z), limits.epilogue_input(size, c0), 0,
                          i, j);
            want = activation_math::apply(e.act, z, 0.0);
            slope = e.act == epilogue_act::gelu ? 1.13 : 1.0;
        }
        worst.add(std::abs(load_element(r.c, ci, p_.c_type) - want),
                  limits.epilogue_output(size, c0, slope, std::abs(want)), 0, i, j);
    }
    if (backward && e.axis != epilogue_axis::none) {
        // The bias gradient: the sums of C as written along the axis, in the compute type.
        const int64_t length = per_row ? p_.m : p_.n, terms = per_row ? p_.n : p_.m;
        for (int64_t v = 0; v < length; ++v) {
            double sum = 0, size = 0;
            for (int64_t w = 0; w < terms; ++w) {
                const double c = load_element(r.c, per_row ? v + w * p_.ldc : w + v * p_.ldc, p_.c_type);
                sum += c;
                size += std::abs(c);
            }
            worst.add(std::abs(load_element(r.epilogue.bias_grad, v, p_.c_type) - sum),
                      limits.bias_gradient(terms, size, std::abs(sum)), 0, per_row ? v : -1, per_row ? -1 : v);
        }
    }
    check_outcome out;
    out.method = full_ ? "reference" : "sampled";
    out.worst_ratio = worst.ratio;
    out.result = worst.ratio <= 1.0 ? check_outcome::verdict::ok : check_outcome::verdict::wrong;
    if (out.result == check_outcome::verdict::wrong)
        out.detail = fmt::format("element |error| {:.3g} > tolerance {:.3g} at ({}, {}) (the epilogue's C, aux or bias "
                                 "gradient)",
                                 worst.error, worst.tolerance, worst.i, worst.j);
    return out;
}

template <class V> check_outcome result_check::judge_as(const problem &r) const {
    worst_tracker worst;
    std::size_t index = 0;
    // A correct element is at most |alpha|·k + |beta·c0| in size (times 2 for complex
    // operands, whose parts lie in [-1, 1]; FP8 products up to product_size, and an output
    // scale times both); capping |C| there keeps a garbage value from widening its own
    // tolerance.
    const tolerance_rule limits = rule();
    const double beta = limits.beta_size;
    const double largest_product =
        limits.alpha_size * limits.product_size * double(p_.k) * double(parts_per_element(p_.ab_type));
    const bool abs_sums = !abs_products_.empty();
    for (int64_t batch = 0; batch < p_.batch; ++batch) {
        const char *c = static_cast<const char *>(r.c) + std::size_t(batch * p_.stride_c) * dtype_size(p_.c_type);
        if (full_) {
            for (int64_t j = 0; j < p_.n; ++j)
                for (int64_t i = 0; i < p_.m; ++i) {
                    const double abs_products = abs_sums ? abs_products_[index] : 0.0;
                    V want = as_value<V>(expected_[index++]);
                    double c0 = !p_.beta_zero() ? std::abs(c0_at<V>(batch, i, j)) : 0.0;
                    V got = load_as<V>(c, i + j * p_.ldc, p_.c_type);
                    worst.add(std::abs(got - want), limits.element(std::abs(want), c0, abs_products), batch, i, j);
                }
            continue;
        }
        std::vector<V> ct(std::size_t(p_.m), V(0));
        std::vector<double> tol_squares(std::size_t(p_.m), 0.0);
        for (int64_t j = 0; j < p_.n; ++j)
            for (int64_t i = 0; i < p_.m; ++i) {
                V cij = load_as<V>(c, i + j * p_.ldc, p_.c_type);
                double tj = t_[std::size_t(j)];
                double c0 = !p_.beta_zero() ? std::abs(c0_at<V>(batch, i, j)) : 0.0;
                ct[std::size_t(i)] += cij * tj;
                double size = std::fmin(std::abs(cij), largest_product + beta * c0);
                double tol = limits.element(size, c0) * tj;
                tol_squares[std::size_t(i)] += tol * tol;
            }
        // The tensor cores' allowance bounds errors that may share a sign (a sum that truncates),
        // so it adds up over j, where the f32 rule's roundings add as a root-sum-square.
        for (int64_t i = 0; i < p_.m; ++i) {
            const double tensor_cores = abs_sums ? limits.tensor_cores(abs_products_[index]) : 0.0;
            V want = as_value<V>(expected_[index++]);
            worst.add(std::abs(ct[std::size_t(i)] - want),
                      vector_check_margin * std::sqrt(tol_squares[std::size_t(i)]) + tensor_cores + 1e-300, batch, i,
                      -1);
        }
    }
    check_outcome out;
    out.method = full_ ? "reference" : "vector";
    out.worst_ratio = worst.ratio;
    out.result = worst.ratio <= 1.0 ? check_outcome::verdict::ok : check_outcome::verdict::wrong;
    if (out.result == check_outcome::verdict::wrong)
        out.detail =
            fmt::format("{} |error| {:.3g} > tolerance {:.3g} at batch {}, {}", full_ ? "element" : "C·t", worst.error,
                        worst.tolerance, worst.batch,
                        worst.j < 0 ? fmt::format("row {}", worst.i) : fmt::format("({}, {})", worst.i, worst.j));
    return out;
}

}  // namespace gemm
