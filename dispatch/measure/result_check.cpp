// result_check.cpp: the reference values of a measured problem and the tolerance of each.
#include "result_check.hpp"

#include <cmath>
#include <limits>
#include <random>

#include <spdlog/fmt/fmt.h>

#include "dispatch/element.hpp"

namespace gemm {
namespace {

// The row sums of the vector check add n independent rounding errors; this margin on their
// root-sum-square keeps false alarms negligible. What it still sees grows with the shape: one
// element of row i off by e shows when |e·t_j| passes 4·sqrt(sum over j of (tol_ij·t_j)^2),
// for f32 at 4096^3 about 0.15. An element left unwritten or garbage is off by about its own
// size (sqrt(k)/3, 21 there), and a wrong block by that in many elements: both show, unless
// t_j of a single wrong element happens to be nearly 0.
constexpr double vector_check_margin = 4.0;

double unit_roundoff(dtype t) {
    switch (t) {
    case dtype::f64: return std::ldexp(1.0, -53);
    case dtype::f32: return std::ldexp(1.0, -24);
    case dtype::f16: return std::ldexp(1.0, -11);
    case dtype::bf16: return std::ldexp(1.0, -8);
    }
    return 1;
}

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

// The one rule. Operands lie in [-1, 1]; a sum of k products then drifts by about 0.1·u·k
// (measured: the largest difference over 10^5 elements of an f64 product reached 1.4·u·k),
// so 4·u·k leaves a margin yet stays far below the error of a wrong block (order 0.1).
// Independent input roundings (TF32) add up like a random walk: sqrt(k). The rounding of the
// result to C's type may differ between two correct computations: 2·u_out·|value|.
double result_check::element_tolerance(double value, double c0) const {
    double u = unit_roundoff(compute_type_for(p_.ab_type));
    double k = double(p_.k) + 16.0;
    double products = u * k + (tf32_ ? std::ldexp(1.0, -11) * std::sqrt(k) : 0.0);
    return 4.0 * std::fabs(p_.alpha) * products + 2.0 * unit_roundoff(p_.c_type) * std::fabs(value) +
           4.0 * u * std::fabs(p_.beta * c0) + 1e-300;
}

double result_check::a_at(int64_t batch, int64_t i, int64_t l) const {
    int64_t off = batch * p_.stride_a + (p_.op_a == transpose::n ? i + l * p_.lda : l + i * p_.lda);
    return load_element(a_, off, p_.ab_type);
}

double result_check::b_at(int64_t batch, int64_t l, int64_t j) const {
    int64_t off = batch * p_.stride_b + (p_.op_b == transpose::n ? l + j * p_.ldb : j + l * p_.ldb);
    return load_element(b_, off, p_.ab_type);
}

double result_check::c0_at(int64_t batch, int64_t i, int64_t j) const {
    return load_element(c0_, batch * p_.stride_c + i + j * p_.ldc, p_.c_type);
}

void result_check::prepare(const operand_sets &sets, bool tf32) {
    p_ = sets.base();
    tf32_ = tf32 && p_.ab_type == dtype::f32;
    full_ = double(p_.m) * double(p_.n) * double(p_.k) * double(p_.batch) <= full_check_limit;
    a_ = sets.host_a();
    b_ = sets.host_b();
    c0_ = sets.initial_c();
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    t_.assign(std::size_t(full_ ? 0 : p_.n), 0.0);
    for (double &v : t_) v = uniform(rng);
    expected_.clear();
    for (int64_t batch = 0; batch < p_.batch; ++batch) {
        if (full_) full_reference(batch);
        else projected_reference(batch);
    }
}

void result_check::full_reference(int64_t batch) {
    for (int64_t j = 0; j < p_.n; ++j)
        for (int64_t i = 0; i < p_.m; ++i) {
            double sum = 0;
            for (int64_t l = 0; l < p_.k && p_.alpha != 0.0; ++l) sum += a_at(batch, i, l) * b_at(batch, l, j);
            double c0 = p_.beta != 0.0 ? c0_at(batch, i, j) : 0.0;
            expected_.push_back(p_.alpha * sum + p_.beta * c0);
        }
}

// Row i of alpha A (B t) + beta C0 t.
void result_check::projected_reference(int64_t batch) {
    std::vector<double> bt(std::size_t(p_.k), 0.0);
    for (int64_t l = 0; l < p_.k; ++l)
        for (int64_t j = 0; j < p_.n; ++j) bt[std::size_t(l)] += b_at(batch, l, j) * t_[std::size_t(j)];
    for (int64_t i = 0; i < p_.m; ++i) {
        double sum = 0, c_sum = 0;
        for (int64_t l = 0; l < p_.k && p_.alpha != 0.0; ++l) sum += a_at(batch, i, l) * bt[std::size_t(l)];
        for (int64_t j = 0; p_.beta != 0.0 && j < p_.n; ++j) c_sum += c0_at(batch, i, j) * t_[std::size_t(j)];
        expected_.push_back(p_.alpha * sum + p_.beta * c_sum);
    }
}

check_outcome result_check::judge(const problem &r) const {
    worst_tracker worst;
    std::size_t index = 0;
    // A correct element is at most |alpha|·k + |beta·c0| in size; capping |C| there keeps a
    // garbage value from widening its own tolerance.
    const double largest_product = std::fabs(p_.alpha) * double(p_.k);
    for (int64_t batch = 0; batch < p_.batch; ++batch) {
        const char *c = static_cast<const char *>(r.c) + std::size_t(batch * p_.stride_c) * dtype_size(p_.c_type);
        if (full_) {
            for (int64_t j = 0; j < p_.n; ++j)
                for (int64_t i = 0; i < p_.m; ++i) {
                    double want = expected_[index++];
                    double c0 = p_.beta != 0.0 ? c0_at(batch, i, j) : 0.0;
                    double got = load_element(c, i + j * p_.ldc, p_.c_type);
                    worst.add(std::fabs(got - want), element_tolerance(want, c0), batch, i, j);
                }
            continue;
        }
        std::vector<double> ct(std::size_t(p_.m), 0.0), tol_squares(std::size_t(p_.m), 0.0);
        for (int64_t j = 0; j < p_.n; ++j)
            for (int64_t i = 0; i < p_.m; ++i) {
                double cij = load_element(c, i + j * p_.ldc, p_.c_type), tj = t_[std::size_t(j)];
                double c0 = p_.beta != 0.0 ? c0_at(batch, i, j) : 0.0;
                ct[std::size_t(i)] += cij * tj;
                double size = std::fmin(std::fabs(cij), largest_product + std::fabs(p_.beta * c0));
                double tol = element_tolerance(size, c0) * tj;
                tol_squares[std::size_t(i)] += tol * tol;
            }
        for (int64_t i = 0; i < p_.m; ++i)
            worst.add(std::fabs(ct[std::size_t(i)] - expected_[index++]),
                      vector_check_margin * std::sqrt(tol_squares[std::size_t(i)]) + 1e-300, batch, i, -1);
    }
    check_outcome out;
    out.method = full_ ? "reference" : "vector";
    out.worst_ratio = worst.ratio;
    out.result = worst.ratio <= 1.0 ? check_outcome::verdict::ok : check_outcome::verdict::wrong;
    if (out.result == check_outcome::verdict::wrong)
        out.detail = fmt::format("{} |error| {:.3g} > tolerance {:.3g} at batch {}, {}", full_ ? "element" : "C·t",
                                 worst.error, worst.tolerance, worst.batch,
                                 worst.j < 0 ? fmt::format("row {}", worst.i) : fmt::format("({}, {})", worst.i, worst.j));
    return out;
}

}  // namespace gemm
