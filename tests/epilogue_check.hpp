// epilogue_check.hpp: gemm_ex_epilogue cases for the host and GPU suites: the operands (bias,
// a saved aux for backward activations, poisoned padding and guards), the call, and the
// check of C, aux and bias_grad against the harness's double reference put through the
// epilogue's definition, written here again so the oracle shares no code with the library.
#pragma once

#include <cmath>
#include <sstream>
#include <string>

#include "harness.hpp"

namespace gemm_test {

struct epilogue_case {
    gemm_case gemm;  // one matrix; called through gemm_ex_epilogue
    gemm_activation_t activation = GEMM_ACTIVATION_NONE;
    gemm_bias_t axis = GEMM_BIAS_NONE;
    bool aux = false;  // forward: save Z + bias (backward activations always read one)
    int64_t ld_aux = 1;

    bool backward() const {
        return activation == GEMM_ACTIVATION_RELU_BACKWARD || activation == GEMM_ACTIVATION_GELU_BACKWARD;
    }
    bool has_aux() const { return aux || backward(); }
    int64_t axis_length() const { return axis == GEMM_BIAS_ROWS ? gemm.m : axis == GEMM_BIAS_COLUMNS ? gemm.n : 0; }
    stored_matrix aux_matrix() const { return {gemm.m, gemm.n, ld_aux, gemm.layout}; }

    std::string describe() const {
        static const char *const acts[] = {"none", "relu", "gelu", "relu_backward", "gelu_backward"};
        static const char *const axes[] = {"none", "rows", "columns"};
        std::ostringstream s;
        s << gemm.describe() << " activation=" << acts[activation] << " bias=" << axes[axis]
          << " aux=" << (has_aux() ? std::to_string(ld_aux) : std::string("none"));
        return s.str();
    }
};

// A case with ld_aux = the least plus pad.
inline epilogue_case make_epilogue_case(const gemm_case &g, gemm_activation_t act, gemm_bias_t axis, bool aux,
                                        int64_t pad) {
    epilogue_case e{g, act, axis, aux, 1};
    e.ld_aux = std::max<int64_t>(1, g.layout == GEMM_COL_MAJOR ? g.m : g.n) + pad;
    return e;
}

struct epilogue_operands {
    operands gemm;
    bytes bias;        // forward with an axis: the values, then a poisoned guard
    bytes aux0;        // backward: saved values in the window; everywhere else (and forward) poison
    bytes bias_grad0;  // backward with an axis: poison, written by the call
    static constexpr int64_t guard = 4;
};

inline epilogue_operands make_epilogue_operands(const epilogue_case &e) {
    epilogue_operands o;
    const gemm_case &g = e.gemm;
    o.gemm = make_operands(g, hash_text(e.describe()));
    random_source rng(hash_text(e.describe()) ^ 0x5eedu);
    const gemm_dtype_t t = g.c_type;
    const int64_t length = e.axis_length();
    if (!e.backward() && e.axis != GEMM_BIAS_NONE) {
        o.bias.assign(std::size_t(length + epilogue_operands::guard) * dtype_size(t), 0);
        for (int64_t i = 0; i < length + epilogue_operands::guard; ++i)
            if (i < length) store(o.bias.data(), i, t, rng.uniform());
            else store_poison(o.bias.data(), i, t);
    }
    if (e.has_aux()) {
        const stored_matrix s = e.aux_matrix();
        const int64_t span = (g.m > 0 && g.n > 0 ? s.footprint() : 0) + epilogue_operands::guard;
        o.aux0.assign(std::size_t(span) * dtype_size(t), 0);
        for (int64_t i = 0; i < span; ++i) store_poison(o.aux0.data(), i, t);
        if (e.backward())
            for (int64_t j = 0; j < g.n; ++j)
                for (int64_t i = 0; i < g.m; ++i) store(o.aux0.data(), s.index(i, j), t, 2.0 * rng.uniform());
    }
    if (e.backward() && e.axis != GEMM_BIAS_NONE) {
        o.bias_grad0.assign(std::size_t(length + epilogue_operands::guard) * dtype_size(t), 0);
        for (int64_t i = 0; i < length + epilogue_operands::guard; ++i) store_poison(o.bias_grad0.data(), i, t);
    }
    return o;
}

inline void *data_or_null(bytes &b) { return b.empty() ? nullptr : b.data(); }
inline const void *data_or_null(const bytes &b) { return b.empty() ? nullptr : b.data(); }

// The case's epilogue on the given vectors and aux.
inline gemm_epilogue_t epilogue_of(const epilogue_case &e, const void *bias, void *bias_grad, void *aux) {
    gemm_epilogue_t ep;
    gemm_epilogue_init(&ep);
    ep.activation = e.activation;
    ep.bias_axis = e.axis;
    ep.bias = bias;
    ep.bias_grad = bias_grad;
    ep.aux = aux;
    ep.ld_aux = e.ld_aux;
    return ep;
}

// The call on the given pointers (host or device memory alike).
inline gemm_status_t call_epilogue(const epilogue_case &e, const void *A, const void *B, void *C, const void *bias,
                                   void *bias_grad, void *aux) {
    const gemm_case &g = e.gemm;
    const float alpha_f = float(g.alpha), beta_f = float(g.beta);
    const double alpha_d = g.alpha, beta_d = g.beta;
    const bool doubles = g.compute_type() == GEMM_F64;
    const gemm_epilogue_t ep = epilogue_of(e, bias, bias_grad, aux);
    return gemm_ex_epilogue(g.layout, g.transa, g.transb, g.m, g.n, g.k,
                            doubles ? static_cast<const void *>(&alpha_d) : &alpha_f, A, g.ab_type, g.lda, B, g.ab_type,
                            g.ldb, doubles ? static_cast<const void *>(&beta_d) : &beta_f, C, g.c_type, g.ldc,
                            g.compute_type(), &ep);
}

// The same through a plan made for the case (its desc carries the epilogue), run once with
// gemm_plan_run_epilogue. device: -1 for host memory.
inline gemm_status_t call_epilogue_plan(const epilogue_case &e, const void *A, const void *B, void *C, const void *bias,
                                        void *bias_grad, void *aux, int device = -1) {
    const gemm_case &g = e.gemm;
    gemm_desc_t d;
    gemm_desc_init(&d, g.ab_type, g.layout, g.transa, g.transb, g.m, g.n, g.k);
    d.c_type = g.c_type;
    d.lda = g.lda;
    d.ldb = g.ldb;
    d.ldc = g.ldc;
    d.device = device;
    d.alignment = common_alignment(A, B, C);
    d.beta_zero = g.beta_zero();
    d.activation = e.activation;
    d.bias_axis = e.axis;
    d.aux = e.aux;
    d.ld_aux = e.ld_aux;
    gemm_plan_t plan = nullptr;
    gemm_status_t s = gemm_plan_create(&d, &plan);
    if (s != GEMM_STATUS_SUCCESS) return s;
    const float alpha_f = float(g.alpha), beta_f = float(g.beta);
    const bool doubles = g.compute_type() == GEMM_F64;
    const gemm_epilogue_t ep = epilogue_of(e, bias, bias_grad, aux);
    s = gemm_plan_run_epilogue(plan, doubles ? static_cast<const void *>(&g.alpha) : &alpha_f, A, B,
                               doubles ? static_cast<const void *>(&g.beta) : &beta_f, C, &ep);
    gemm_plan_destroy(plan);  // leaves the run's error message in place
    return s;
}

struct epilogue_result {
    gemm_status_t status = GEMM_STATUS_SUCCESS;
    std::string error;
    bytes c, aux, bias_grad;
};

// The case on host operands with the backend selection in force, by a call or a plan.
inline epilogue_result run_epilogue_host(const epilogue_case &e, const epilogue_operands &o, bool plan = false) {
    epilogue_result r;
    r.c = o.gemm.c0;
    r.aux = o.aux0;
    r.bias_grad = o.bias_grad0;
    void *c = data_or_null(r.c), *grad = data_or_null(r.bias_grad), *aux = data_or_null(r.aux);
    r.status = plan ? call_epilogue_plan(e, o.gemm.a_ptr(), o.gemm.b_ptr(), c, data_or_null(o.bias), grad, aux)
                    : call_epilogue(e, o.gemm.a_ptr(), o.gemm.b_ptr(), c, data_or_null(o.bias), grad, aux);
    r.error = gemm_last_error();
    return r;
}

namespace detail {
inline double gelu(double z) { return 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z))); }
// Where tanh has saturated the slope is (1 + t)/2, 1 or 0, also for a z whose cube overflows.
inline double gelu_slope(double z) {
    const double s = std::sqrt(2.0 / M_PI), t = std::tanh(s * (z + 0.044715 * z * z * z));
    if (t * t == 1.0) return 0.5 * (1.0 + t);
    return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * s * (1.0 + 3.0 * 0.044715 * z * z);
}
}  // namespace detail

// "" when C, aux and bias_grad are right and nothing outside them changed; else the first
// problem. Tolerances: the measurement engine's rule for an epilogue (tolerance.hpp:
// epilogue_input for aux, epilogue_output for C, bias_gradient for the sums of C as written).
inline std::string check_epilogue_result(const epilogue_case &e, const epilogue_operands &o, const epilogue_result &r) {
    const gemm_case &g = e.gemm;
    const gemm_dtype_t t = g.c_type;
    const gemm::tolerance_rule rule = tolerance_of(g);
    const reference ref = compute_reference(g, o.gemm);
    const stored_matrix cm = g.c(), am = e.aux_matrix();
    std::ostringstream first;
    first.precision(10);
    int64_t wrong = 0;
    auto report = [&](const std::string &what, double got, double want, double bound) {
        if (std::fabs(got - want) <= bound) return;  // false for NaN
        if (wrong++ == 0) first << what << " = " << got << ", expected " << want << " (tolerance " << bound << ")";
    };
    const int64_t length = e.axis_length();
    std::vector<double> sums(std::size_t(length), 0.0), size_sums(std::size_t(length), 0.0);
    for (int64_t j = 0; j < g.n; ++j)
        for (int64_t i = 0; i < g.m; ++i) {
            const std::size_t w = std::size_t(window_index(g, 0, i, j));
            const double c0 = g.beta_zero() ? 0.0 : std::fabs(load(o.gemm.c0.data(), cm.index(i, j), t));
            double z = ref.value[w], size = std::fabs(z), slope = 1.0, want = 0.0;
            const int64_t along = e.axis == GEMM_BIAS_ROWS ? i : j;
            if (!e.backward()) {
                if (e.axis != GEMM_BIAS_NONE) {
                    const double b = load(o.bias.data(), along, t);
                    z += b;
                    size += std::fabs(b);
                }
                if (e.aux)
                    report("aux(" + std::to_string(i) + "," + std::to_string(j) + ")",
                           load(r.aux.data(), am.index(i, j), t), z, rule.epilogue_input(size, c0));
                want = e.activation == GEMM_ACTIVATION_RELU   ? std::max(z, 0.0)
                       : e.activation == GEMM_ACTIVATION_GELU ? detail::gelu(z)
                                                              : z;
                slope = e.activation == GEMM_ACTIVATION_GELU ? 1.13 : 1.0;
            } else {
                const double a = load(o.aux0.data(), am.index(i, j), t);
                slope = e.activation == GEMM_ACTIVATION_RELU_BACKWARD ? (a > 0 ? 1.0 : 0.0) : detail::gelu_slope(a);
                want = z * slope;
            }
            const double got = load(r.c.data(), cm.index(i, j), t);
            report("C(" + std::to_string(i) + "," + std::to_string(j) + ")", got, want,
                   rule.epilogue_output(size, c0, slope, std::fabs(want)));
            if (e.backward() && length > 0) {
                sums[std::size_t(along)] += got;
                size_sums[std::size_t(along)] += std::fabs(got);
            }
        }
    // The bias gradient against the sums of C as written (C itself is checked above).
    if (e.backward() && length > 0 && g.m > 0 && g.n > 0) {
        const int64_t terms = e.axis == GEMM_BIAS_ROWS ? g.n : g.m;
        for (int64_t v = 0; v < length; ++v) {
            const double sum = sums[std::size_t(v)];
            report("bias_grad[" + std::to_string(v) + "]", load(r.bias_grad.data(), v, t), sum,
                   rule.bias_gradient(terms, size_sums[std::size_t(v)], std::fabs(sum)));
        }
    }
    // Bytes outside what the call may write keep their values: C's padding and guard, aux's
    // (all of it for a backward activation), bias_grad's guard.
    auto untouched = [&](const char *name, const bytes &before, const bytes &after, auto written) {
        const std::size_t es = dtype_size(t);
        for (std::size_t e2 = 0; e2 * es < before.size(); ++e2)
            if (!written(int64_t(e2)) && std::memcmp(before.data() + e2 * es, after.data() + e2 * es, es) != 0) {
                if (wrong++ == 0)
                    first << "element " << e2 << " of " << name << ", outside what the call writes, changed";
                return;
            }
    };
    auto in_window = [&](const stored_matrix &s, int64_t el) {
        if (g.m == 0 || g.n == 0) return false;
        const int64_t line = el / s.ld, pos = el % s.ld;
        const bool col = s.layout == GEMM_COL_MAJOR;
        return line < (col ? g.n : g.m) && pos < (col ? g.m : g.n);
    };
    untouched("C", o.gemm.c0, r.c, [&](int64_t el) { return in_window(cm, el); });
    untouched("aux", o.aux0, r.aux, [&](int64_t el) { return !e.backward() && e.aux && in_window(am, el); });
    // m or n 0 is BLAS's quick return: nothing is written, bias_grad included.
    untouched("bias_grad", o.bias_grad0, r.bias_grad, [&](int64_t el) { return el < length && g.m > 0 && g.n > 0; });
    if (wrong == 0) return "";
    first << " (" << wrong << " problems)";
    return first.str();
}

}  // namespace gemm_test
