// result_check.cpp: element-wise comparison with cpu_ref, and the random-vector check.
#include "result_check.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace gemm_cli {
namespace {

// Above this, the triple loop of cpu_ref takes seconds; the vector check is used instead.
constexpr double reference_volume_limit = double(int64_t(1) << 27);
// The row sums of the vector check add n independent rounding errors; this margin on their
// root-sum-square keeps the false-alarm rate negligible while one wrong element of ordinary
// size (~0.1) still shows.
constexpr double vector_check_margin = 4.0;

// Unit roundoff of the accumulation: f16/bf16 products accumulate in f32.
double accumulation_unit_roundoff(const gemm_case &c) {
    return dtype_unit_roundoff(c.dtype == GEMM_F64 ? GEMM_F64 : GEMM_F32);
}

// TF32, when the user allowed it, rounds f32 inputs to 10 bits of mantissa before multiplying.
double product_unit_roundoff(const gemm_case &c) {
    const char *tf32 = std::getenv("GEMM_ALLOW_TF32");
    return c.dtype == GEMM_F32 && tf32 && std::strcmp(tf32, "1") == 0 ? 0x1p-11 : 0.0;
}

// What a correct element may differ by from cpu_ref's. Entries lie in [-1, 1]; a sum of k
// products drifts by about 0.1·u·k (measured: the largest difference over 10^5 elements of
// an f64 product, where cpu_ref's own drift adds, reached 1.4·u·k), so 4·u·k leaves a margin yet
// stays far below the error of a wrong block (order 0.1). Independent input roundings
// (TF32) add up like a random walk: sqrt(k). One rounding of the result to C's type may
// differ between two correct backends: 2·u_out·|value|.
double element_tolerance(const gemm_case &c, double value, double c0) {
    double u = accumulation_unit_roundoff(c);
    double k = double(c.shape.k + 16);
    double products = u * k + product_unit_roundoff(c) * std::sqrt(k);
    return 4.0 * std::fabs(c.alpha) * products + 2.0 * dtype_unit_roundoff(c.dtype) * std::fabs(value) +
           4.0 * u * std::fabs(c.beta * c0) + 1e-300;
}

// Element (i, j) of op(X) for batch item b, X stored as the case says.
struct matrix_reader {
    const unsigned char *base;
    gemm_dtype_t type;
    int64_t ld, elements;
    bool row_major, transposed;

    double at(int64_t b, int64_t i, int64_t j) const {
        int64_t r = transposed ? j : i, col = transposed ? i : j;
        int64_t offset = row_major ? r * ld + col : r + col * ld;
        return element_load(base, b * elements + offset, type);
    }
};

matrix_reader reader_of(const gemm_case &c, const unsigned char *base, const stored_matrix &x, gemm_op_t op) {
    return {base, c.dtype, gemm_case_ld(c, x), x.elements(), c.layout == GEMM_ROW_MAJOR, op != GEMM_OP_N};
}

std::string format_location(const char *what, double error, double tolerance, int64_t b, int64_t i, int64_t j) {
    char where[64];
    if (j < 0) std::snprintf(where, sizeof where, "row %lld", static_cast<long long>(i));
    else std::snprintf(where, sizeof where, "(%lld, %lld)", static_cast<long long>(i), static_cast<long long>(j));
    char text[200];
    std::snprintf(text, sizeof text, "%s |error| %.3g > tolerance %.3g at batch %lld, %s", what, error,
                  tolerance, static_cast<long long>(b), where);
    return text;
}

// Keeps the worst error / tolerance ratio and where it happened. NaN counts as worst.
struct worst_tracker {
    double ratio = 0, error = 0, tolerance = 0;
    int64_t b = 0, i = 0, j = 0;
    bool seen_nan = false;

    void add(double err, double tol, int64_t bb, int64_t ii, int64_t jj) {
        double r = err / tol;
        bool is_nan = std::isnan(r);
        if (seen_nan || (!is_nan && r <= ratio)) return;
        seen_nan = is_nan;
        ratio = is_nan ? INFINITY : r;
        error = err, tolerance = tol, b = bb, i = ii, j = jj;
    }
};

check_result finish(const char *method, const char *what, const worst_tracker &worst) {
    check_result r;
    r.method = method;
    r.worst_ratio = worst.ratio;
    r.verdict = worst.ratio <= 1.0 ? check_verdict::ok : check_verdict::wrong;
    if (r.verdict == check_verdict::wrong)
        r.detail = format_location(what, worst.error, worst.tolerance, worst.b, worst.i, worst.j);
    return r;
}

std::vector<double> random_vector(int64_t n) {
    std::vector<double> t(static_cast<std::size_t>(n));
    uint64_t state = 0x2545f4914f6cdd1dull;
    for (double &v : t) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        v = double(state >> 11) * 0x1p-52 - 1.0;
    }
    return t;
}

// B·t for batch item b: k values.
std::vector<double> b_times(const gemm_case &c, const matrix_reader &B, const std::vector<double> &t, int64_t b) {
    std::vector<double> bt(std::size_t(c.shape.k), 0.0);
    for (int64_t p = 0; p < c.shape.k; ++p)
        for (int64_t j = 0; j < c.shape.n; ++j) bt[std::size_t(p)] += B.at(b, p, j) * t[std::size_t(j)];
    return bt;
}

}  // namespace

const char *check_verdict_name(check_verdict v) {
    switch (v) {
    case check_verdict::ok: return "ok";
    case check_verdict::wrong: return "WRONG";
    case check_verdict::skipped: return "skipped";
    }
    return "?";
}

bool reference_affordable(const gemm_case &c) { return gemm_case_volume(c) <= reference_volume_limit; }

void check_prepare_c(const gemm_case &c, const operand_pool &pool, aligned_buffer &c_before) {
    if (c.beta == 0.0) buffer_fill_nan(c_before, c.dtype);
    else buffer_copy(c_before, pool.c_initial());
}

reference_result reference_compute(const gemm_case &c, operand_pool &pool) {
    reference_result ref;
    ref.c = aligned_buffer(pool.c_initial().bytes());
    check_prepare_c(c, pool, ref.c);
    gemm_status_t s = gemm_set_backend("cpu_ref");
    if (s == GEMM_STATUS_SUCCESS) s = gemm_case_call(c, pool.at(0).a.data(), pool.at(0).b.data(), ref.c.data());
    if (s != GEMM_STATUS_SUCCESS) ref.error = std::string("cpu_ref: ") + gemm_status_string(s) + ": " + gemm_last_error();
    gemm_set_backend(nullptr);
    ref.valid = s == GEMM_STATUS_SUCCESS;
    return ref;
}

check_result check_against_reference(const gemm_case &c, const aligned_buffer &result,
                                      const reference_result &reference, const aligned_buffer &c_before) {
    if (!reference.valid) return {check_verdict::skipped, "reference", 0, reference.error};
    stored_matrix cs = gemm_case_stored_c(c);
    matrix_reader got = reader_of(c, result.data(), cs, GEMM_OP_N);
    matrix_reader want = reader_of(c, reference.c.data(), cs, GEMM_OP_N);
    matrix_reader before = reader_of(c, c_before.data(), cs, GEMM_OP_N);
    worst_tracker worst;
    for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t i = 0; i < c.shape.m; ++i)
            for (int64_t j = 0; j < c.shape.n; ++j) {
                double w = want.at(b, i, j);
                double c0 = c.beta != 0.0 ? before.at(b, i, j) : 0.0;
                worst.add(std::fabs(got.at(b, i, j) - w), element_tolerance(c, w, c0), b, i, j);
            }
    return finish("reference", "element", worst);
}

check_result check_with_vector(const gemm_case &c, operand_pool &pool, const aligned_buffer &result,
                               const aligned_buffer &c_before) {
    matrix_reader A = reader_of(c, pool.at(0).a.data(), gemm_case_stored_a(c), c.op_a);
    matrix_reader B = reader_of(c, pool.at(0).b.data(), gemm_case_stored_b(c), c.op_b);
    matrix_reader C = reader_of(c, result.data(), gemm_case_stored_c(c), GEMM_OP_N);
    matrix_reader C0 = reader_of(c, c_before.data(), gemm_case_stored_c(c), GEMM_OP_N);
    std::vector<double> t = random_vector(c.shape.n);
    // A correct element is at most |alpha|·k + |beta·c0| in size; capping |C| there keeps a
    // garbage value from widening its own tolerance.
    double largest_product = std::fabs(c.alpha) * double(c.shape.k);
    worst_tracker worst;
    for (int64_t b = 0; b < c.batch; ++b) {
        std::vector<double> bt = b_times(c, B, t, b);
        for (int64_t i = 0; i < c.shape.m; ++i) {
            double ct = 0, expected = 0, tol_squares = 0;
            for (int64_t p = 0; p < c.shape.k; ++p) expected += A.at(b, i, p) * bt[std::size_t(p)];
            expected *= c.alpha;
            for (int64_t j = 0; j < c.shape.n; ++j) {
                double tj = t[std::size_t(j)], cij = C.at(b, i, j);
                double c0 = c.beta != 0.0 ? C0.at(b, i, j) : 0.0;
                ct += cij * tj;
                expected += c.beta * c0 * tj;
                double size = std::fmin(std::fabs(cij), largest_product + std::fabs(c.beta * c0));
                double tol = element_tolerance(c, size, c0) * tj;
                tol_squares += tol * tol;
            }
            worst.add(std::fabs(ct - expected), vector_check_margin * std::sqrt(tol_squares) + 1e-300, b, i, -1);
        }
    }
    return finish("vector", "C·t", worst);
}

}  // namespace gemm_cli
