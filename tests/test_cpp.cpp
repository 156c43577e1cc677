// test_cpp.cpp: the C++ façade gemm.hpp: gemm::gemm overloads per element type, strided
// batches, epilogues, matrix views and their errors, gemm::status, and the half/bfloat16 conversions
// (rounding, specials, subnormals, every 16-bit pattern).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gemm/gemm.hpp"
#include "harness.hpp"

using namespace gemm_test;

namespace {

float bits_to_float(uint32_t x) {
    float f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}

uint32_t float_to_bits(float f) {
    uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    return x;
}

// "0x1a2b": doctest's message streams do not take std::hex.
std::string hex(uint32_t v) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%x", unsigned(v));
    return text;
}

bool half_is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }
bool bf16_is_nan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0; }

// Fills a typed vector from the harness's random source.
template <class T> std::vector<T> random_values(std::size_t count, uint64_t seed) {
    random_source rng(seed);
    std::vector<T> v(count);
    for (T &x : v) x = T(float(rng.uniform()));
    return v;
}

template <class T> double as_double(T x) { return double(float(x)); }
double as_double(double x) { return x; }

// Checks C (m x n, row-major, ldc = n) against a double loop on the same stored inputs.
template <class T, class TC>
void check_row_major_nn(const std::vector<T> &a, const std::vector<T> &b, const std::vector<TC> &c0,
                        const std::vector<TC> &c, int64_t m, int64_t n, int64_t k, double alpha, double beta,
                        gemm_dtype_t ab_type, gemm_dtype_t c_type) {
    gemm::tolerance_rule rule;
    rule.ab_type = ab_type;
    rule.c_type = c_type;
    rule.k = k;
    rule.alpha_size = std::fabs(alpha);
    rule.beta_size = std::fabs(beta);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t l = 0; l < k; ++l)
                sum += as_double(a[std::size_t(i * k + l)]) * as_double(b[std::size_t(l * n + j)]);
            double c0v = as_double(c0[std::size_t(i * n + j)]);
            double want = alpha * sum + beta * c0v;
            double bound = rule.element(std::fabs(want), std::fabs(c0v));
            double got = as_double(c[std::size_t(i * n + j)]);
            INFO("C(" << i << ", " << j << ") = " << got << ", expected " << want);
            REQUIRE(std::fabs(got - want) <= bound);
        }
}

// gemm::gemm<T, TC> on a row-major m x k times k x n problem.
template <class T, class TC> void check_overload(gemm_dtype_t ab_type, gemm_dtype_t c_type) {
    const int64_t m = 13, n = 9, k = 17;
    std::vector<T> a = random_values<T>(std::size_t(m * k), 1), b = random_values<T>(std::size_t(k * n), 2);
    std::vector<TC> c0 = random_values<TC>(std::size_t(m * n), 3), c = c0;
    using S = typename gemm::type_of<T>::scalar;
    gemm::status s = gemm::gemm<T, TC>(gemm::layout::row_major, gemm::op::n, gemm::op::n, m, n, k, S(-1.5), a.data(), k,
                                       b.data(), n, S(0.5), c.data(), n);
    INFO(s.message);
    REQUIRE(s.ok());
    CHECK(bool(s));
    CHECK(s.message.empty());
    check_row_major_nn(a, b, c0, c, m, n, k, -1.5, 0.5, ab_type, c_type);
}

}  // namespace

TEST_CASE("cpp gemm overloads float, double, half, bfloat16, half->float, bfloat16->float") {
    // Under auto: whichever backend serves the type.
    REQUIRE(gemm_set_backend("auto") == GEMM_STATUS_SUCCESS);
    SUBCASE("float") { check_overload<float, float>(GEMM_F32, GEMM_F32); }
    SUBCASE("double") { check_overload<double, double>(GEMM_F64, GEMM_F64); }
    SUBCASE("half") { check_overload<gemm::half, gemm::half>(GEMM_F16, GEMM_F16); }
    SUBCASE("bfloat16") { check_overload<gemm::bfloat16, gemm::bfloat16>(GEMM_BF16, GEMM_BF16); }
    SUBCASE("half->float") { check_overload<gemm::half, float>(GEMM_F16, GEMM_F32); }
    SUBCASE("bfloat16->float") { check_overload<gemm::bfloat16, float>(GEMM_BF16, GEMM_F32); }
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
}

TEST_CASE("cpp gemm overloads float8_e4m3 and float8_e5m2, and gemm_scaled") {
    // A = [2 2; 2 2] (e4m3 0x40 = 2), B = [1 1; 1 1] (0x38 = 1): C = 4 everywhere; e5m2 0x40
    // is 2 and 0x3c is 1.
    const gemm::float8_e4m3 a4[4] = {{0x40}, {0x40}, {0x40}, {0x40}}, b4[4] = {{0x38}, {0x38}, {0x38}, {0x38}};
    const gemm::float8_e5m2 a5[4] = {{0x40}, {0x40}, {0x40}, {0x40}}, b5[4] = {{0x3c}, {0x3c}, {0x3c}, {0x3c}};
    gemm::bfloat16 c[4] = {};
    REQUIRE(gemm::gemm(gemm::layout::col_major, gemm::op::n, gemm::op::t, 2, 2, 2, 1.0f, a4, 2, b4, 2, 0.0f, c, 2).ok());
    for (gemm::bfloat16 v : c) CHECK(gemm::bfloat16::to_float(v.bits) == 4.0f);
    float f[4] = {};
    const float a_scale = 0.5f, b_scale = 3.0f;
    float amax = 0;
    const gemm_scaling_t x = tensor_scaling(&a_scale, &b_scale, nullptr, &amax);
    REQUIRE(
        gemm::gemm_scaled(gemm::layout::row_major, gemm::op::n, gemm::op::t, 2, 2, 2, 1.0f, a5, 2, b5, 2, 0.0f, f, 2, x)
            .ok());
    for (float v : f) CHECK(v == 6.0f);
    CHECK(amax == 6.0f);
    // C of an FP8 type is refused, with the message in the status.
    gemm::float8_e4m3 c8[4] = {};
    const gemm::status s =
        gemm::gemm(gemm::layout::col_major, gemm::op::n, gemm::op::n, 2, 2, 2, 1.0f, a4, 2, b4, 2, 0.0f, c8, 2);
    CHECK(s.code == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(s.message.find("FP8 is an input type only") != std::string::npos);
}

TEST_CASE("cpp gemm_masked_scaled computes each matrix's rows and leaves the others") {
    // Two matrices of 3 x 2 x 2 (row-major, op(B) = B^T), A = 2 and B = 1 everywhere (e4m3 0x40,
    // 0x38), C = 4 a_scale b_scale where computed; rows 2 and 0 of the 3 each.
    gemm::float8_e4m3 a[12], b[4];
    for (gemm::float8_e4m3 &v : a) v = {0x40};
    for (gemm::float8_e4m3 &v : b) v = {0x38};
    float c[12];
    for (float &v : c) v = -7.0f;
    const int32_t rows[2] = {2, 0};
    const float a_scale = 0.5f, b_scale = 3.0f;
    float amax[2] = {-1.0f, -1.0f};
    gemm_scaling_t scalings[2];
    for (int i = 0; i < 2; ++i) {
        gemm_scaling_init(&scalings[i]);
        scalings[i].mode = GEMM_SCALE_TENSOR;
        scalings[i].a_scale = &a_scale;
        scalings[i].b_scale = &b_scale;
        scalings[i].amax_d = &amax[i];
    }
    REQUIRE(gemm::gemm_masked_scaled(gemm::layout::row_major, gemm::op::n, gemm::op::t, 3, 2, 2, 1.0f, a, 2, 6, b, 2, 0,
                                     0.0f, c, 2, 6, 2, rows, scalings)
                .ok());
    for (int i = 0; i < 12; ++i) {
        const bool computed = i < 4;  // matrix 0's first 2 rows
        CHECK_MESSAGE(c[i] == (computed ? 6.0f : -7.0f), "element " << i);
    }
    CHECK(amax[0] == 6.0f);
    CHECK(amax[1] == 0.0f);
    // A count past m is refused, with the message in the status, C untouched.
    const int32_t too_many[2] = {4, 0};
    const gemm::status s = gemm::gemm_masked_scaled(gemm::layout::row_major, gemm::op::n, gemm::op::t, 3, 2, 2, 1.0f, a,
                                                    2, 6, b, 2, 0, 0.0f, c, 2, 6, 2, too_many, scalings);
    CHECK(s.code == GEMM_STATUS_INVALID_VALUE);
    CHECK(s.message.find("rows[0]") != std::string::npos);
    CHECK(c[4] == -7.0f);
}

TEST_CASE("cpp gemm_strided_batched with a shared B") {
    const int64_t m = 4, n = 3, k = 5, batch = 3;
    std::vector<double> a = random_values<double>(std::size_t(batch * m * k), 4),
                        b = random_values<double>(std::size_t(k * n), 5);
    std::vector<double> c(std::size_t(batch * m * n), 0.0);
    gemm::status s =
        gemm::gemm_strided_batched<double, double>(gemm::layout::row_major, gemm::op::n, gemm::op::n, m, n, k, 1.0,
                                                   a.data(), k, m * k, b.data(), n, 0, 0.0, c.data(), n, m * n, batch);
    REQUIRE_MESSAGE(s.ok(), s.message);
    for (int64_t p = 0; p < batch; ++p) {
        std::vector<double> ap(a.begin() + p * m * k, a.begin() + (p + 1) * m * k);
        std::vector<double> cp(c.begin() + p * m * n, c.begin() + (p + 1) * m * n), zero(std::size_t(m * n), 0.0);
        check_row_major_nn(ap, b, zero, cp, m, n, k, 1.0, 0.0, GEMM_F64, GEMM_F64);
    }
}

TEST_CASE("cpp gemm overloads std::complex<float> and std::complex<double>, and complex plans") {
    // conj(A)^T B for 2x2 A (row-major) against the product written out, with alpha = i:
    // every complex path (conjugation, complex alpha and beta, the C32/C64 compute type).
    auto check = [](auto zero) {
        using Z = decltype(zero);
        const Z a[4] = {{1, 2}, {0, -1}, {3, 0}, {-2, 1}}, b[4] = {{1, 0}, {2, 1}, {0, 1}, {-1, -1}};
        const Z alpha(0, 1), beta(2, 0);
        Z c[4] = {{1, 1}, {0, 0}, {-1, 0}, {0, 2}}, want[4];
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) {
                Z sum = 0;
                for (int l = 0; l < 2; ++l) sum += std::conj(a[l * 2 + i]) * b[l * 2 + j];
                want[i * 2 + j] = alpha * sum + beta * c[i * 2 + j];
            }
        gemm::status s =
            gemm::gemm<Z, Z>(gemm::layout::row_major, gemm::op::c, gemm::op::n, 2, 2, 2, alpha, a, 2, b, 2, beta, c, 2);
        REQUIRE(s.ok());
        for (int e = 0; e < 4; ++e) {
            CHECK(c[e].real() == doctest::Approx(want[e].real()));
            CHECK(c[e].imag() == doctest::Approx(want[e].imag()));
        }
        gemm_desc_t d;
        gemm_desc_init(&d, gemm::type_of<Z>::value, GEMM_ROW_MAJOR, GEMM_OP_C, GEMM_OP_N, 2, 2, 2);
        d.alignment = 8;
        gemm::plan p;
        REQUIRE(p.create(d).ok());
        CHECK(p.run(alpha, a, b, Z(0), c).ok());
        CHECK(c[0].real() == doctest::Approx((want[0] - beta * Z(1, 1)).real()));
        CHECK_FALSE(p.run(1.0f, a, b, 0.0f, c).ok());  // a real scalar for a complex plan
    };
    SUBCASE("c32") { check(std::complex<float>()); }
    SUBCASE("c64") { check(std::complex<double>()); }
}

TEST_CASE("cpp status carries the message of a failed call") {
    std::vector<float> a(16), b(16), c(16, 3.0f);
    gemm::status s = gemm::gemm<float, float>(gemm::layout::col_major, gemm::op::n, gemm::op::n, 4, 4, 4, 1.0f,
                                              a.data(), 3, b.data(), 4, 0.0f, c.data(), 4);
    CHECK_FALSE(s.ok());
    CHECK_FALSE(bool(s));
    CHECK(s.code == GEMM_STATUS_INVALID_LEADING_DIM);
    // gemm::gemm goes through gemm_ex, where lda is parameter 10.
    CHECK(s.message.rfind("parameter 10: lda = 3", 0) == 0);
    CHECK(c == std::vector<float>(16, 3.0f));
}

TEST_CASE("cpp epilogue: forward with bias and saved input, backward with the bias gradient, plans") {
    // Y = relu(X W^T + b), row-major, X 2x3, W 2x3: Z = [[1+1, 2-1], [-3+1, 4-1]] by construction.
    const std::vector<float> x = {1, 0, 0, 0, 1, 0}, w = {1, 0, 0, 0, 2, 0}, bias = {1, -1};
    // X W^T = [[1, 0], [0, 2]]; with b: Z = [[2, -1], [1, 1]].
    std::vector<float> y(4, 7.0f), z(4, 7.0f);
    auto ep = gemm::epilogue::relu().with_bias(gemm::bias_axis::columns, bias.data()).saving(z.data(), 2);
    gemm::status s = gemm::gemm<float, float>(gemm::layout::row_major, gemm::op::n, gemm::op::t, 2, 2, 3, 1.0f,
                                              x.data(), 3, w.data(), 3, 0.0f, y.data(), 2, ep);
    REQUIRE(s.ok());
    CHECK(z == std::vector<float>{2, -1, 1, 1});
    CHECK(y == std::vector<float>{2, 0, 1, 1});
    // dZ = (dY I) * relu'(Z), db = column sums of dZ.
    const std::vector<float> dy = {1, 2, 3, 4}, eye = {1, 0, 0, 1};
    std::vector<float> dz(4, 7.0f), db(2, 7.0f);
    auto back = gemm::epilogue::backward(gemm::activation::relu_backward, z.data(), 2)
                    .with_bias_grad(gemm::bias_axis::columns, db.data());
    s = gemm::gemm<float, float>(gemm::layout::row_major, gemm::op::n, gemm::op::n, 2, 2, 2, 1.0f, dy.data(), 2,
                                 eye.data(), 2, 0.0f, dz.data(), 2, back);
    REQUIRE(s.ok());
    CHECK(dz == std::vector<float>{1, 0, 3, 4});
    CHECK(db == std::vector<float>{4, 4});
    // A plan made with the epilogue; a run without one is refused.
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F32, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 2, 2, 3);
    d.activation = GEMM_ACTIVATION_RELU;
    d.bias_axis = GEMM_BIAS_COLUMNS;
    d.aux = 1;
    gemm::plan p;
    REQUIRE(p.create(d).ok());
    std::fill(y.begin(), y.end(), 7.0f);
    REQUIRE(p.run(1.0f, x.data(), w.data(), 0.0f, y.data(), ep).ok());
    CHECK(y == std::vector<float>{2, 0, 1, 1});
    CHECK(p.run(1.0f, x.data(), w.data(), 0.0f, y.data()).code == GEMM_STATUS_INVALID_VALUE);
}

TEST_CASE("cpp matrix_view overload: results, transposes and mismatch errors") {
    // C (5 x 4) = A^T (A stored 6 x 5) * B (6 x 4), both layouts, with padded leading dims.
    const int64_t m = 5, n = 4, k = 6;
    for (gemm::layout order : {gemm::layout::row_major, gemm::layout::col_major}) {
        bool row = order == gemm::layout::row_major;
        int64_t lda = (row ? m : k) + 2, ldb = (row ? n : k) + 1, ldc = (row ? n : m) + 3;
        std::vector<float> a = random_values<float>(std::size_t(lda * (row ? k : m)), 6);
        std::vector<float> b = random_values<float>(std::size_t(ldb * (row ? k : n)), 7);
        std::vector<float> c(std::size_t(ldc * (row ? m : n)), 0.0f);
        gemm::matrix_view<const float> av{a.data(), k, m, lda, order};
        gemm::matrix_view<const float> bv{b.data(), k, n, ldb, order};
        gemm::matrix_view<float> cv{c.data(), m, n, ldc, order};
        gemm::status s = gemm::gemm<float, float>(2.0f, av, gemm::op::t, bv, gemm::op::n, 0.0f, cv);
        REQUIRE_MESSAGE(s.ok(), s.message);
        auto at = [&](const std::vector<float> &v, int64_t ld, int64_t r, int64_t col) {
            return double(v[std::size_t(row ? r * ld + col : r + col * ld)]);
        };
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double want = 0, mag = 0;
                for (int64_t l = 0; l < k; ++l) {
                    want += 2.0 * at(a, lda, l, i) * at(b, ldb, l, j);
                    mag += 2.0 * std::fabs(at(a, lda, l, i) * at(b, ldb, l, j));
                }
                CHECK(std::fabs(at(c, ldc, i, j) - want) <= 1e-5 * mag + 1e-30);
            }

        // op(A) is 5 x 6 but B has 5 rows: the inner dimensions disagree.
        gemm::matrix_view<const float> short_b{b.data(), k - 1, n, ldb, order};
        gemm::status e1 = gemm::gemm<float, float>(1.0f, av, gemm::op::t, short_b, gemm::op::n, 0.0f, cv);
        CHECK(e1.code == GEMM_STATUS_INVALID_SIZE);
        CHECK(e1.message.find("matrix views") != std::string::npos);
        // C is 4 x 4 but op(A) op(B) is 5 x 4.
        gemm::matrix_view<float> small_c{c.data(), m - 1, n, ldc, order};
        gemm::status e2 = gemm::gemm<float, float>(1.0f, av, gemm::op::t, bv, gemm::op::n, 0.0f, small_c);
        CHECK(e2.code == GEMM_STATUS_INVALID_SIZE);
        // A in the other layout.
        gemm::matrix_view<const float> other_a = av;
        other_a.order = row ? gemm::layout::col_major : gemm::layout::row_major;
        gemm::status e3 = gemm::gemm<float, float>(1.0f, other_a, gemm::op::t, bv, gemm::op::n, 0.0f, cv);
        CHECK(e3.code == GEMM_STATUS_INVALID_LAYOUT);
        CHECK_FALSE(e3.message.empty());
        // A view whose ld is too small reaches the library's check.
        gemm::matrix_view<const float> bad_ld = av;
        bad_ld.ld = row ? m - 1 : k - 1;
        gemm::status e4 = gemm::gemm<float, float>(1.0f, bad_ld, gemm::op::t, bv, gemm::op::n, 0.0f, cv);
        CHECK(e4.code == GEMM_STATUS_INVALID_LEADING_DIM);
        CHECK(e4.message.find("lda") != std::string::npos);
    }
}

// ---- half ---------------------------------------------------------------------------------

TEST_CASE("cpp half every 16-bit pattern: exact decode and round trip through float") {
    int nans = 0;
    for (uint32_t p = 0; p < 65536; ++p) {
        uint16_t h = uint16_t(p);
        float f = gemm::half::to_float(h);
        double want = half_to_double(h);
        if (half_is_nan(h)) {
            ++nans;
            CHECK(std::isnan(f));
            CHECK(half_is_nan(gemm::half::from_float(f)));  // NaN stays NaN
            continue;
        }
        if (double(f) != want) FAIL_CHECK("half " << hex(p) << " decodes to " << f << ", not " << want);
        if (gemm::half::from_float(f) != h)
            FAIL_CHECK("half " << hex(p) << " does not round-trip: " << hex(gemm::half::from_float(f)));
        CHECK(std::signbit(f) == bool(h & 0x8000));
    }
    CHECK(nans == 2 * 1023);
}

TEST_CASE("cpp half rounds to nearest even at every midpoint") {
    // Between consecutive finite halves lo < hi the midpoint is exact in float: it must go
    // to the one with an even last bit; one float ulp below goes to lo, above to hi.
    for (uint16_t lo = 0; lo < 0x7bff; ++lo) {
        uint16_t hi = uint16_t(lo + 1);
        float mid = float((half_to_double(lo) + half_to_double(hi)) / 2);
        REQUIRE(double(mid) == (half_to_double(lo) + half_to_double(hi)) / 2);
        uint16_t even = lo & 1 ? hi : lo;
        uint16_t got = gemm::half::from_float(mid);
        if (got != even) FAIL_CHECK("midpoint above " << hex(lo) << " rounds to " << hex(got));
        if (gemm::half::from_float(std::nextafter(mid, 0.0f)) != lo) FAIL_CHECK("below midpoint above " << hex(lo));
        if (gemm::half::from_float(std::nextafter(mid, 1e9f)) != hi) FAIL_CHECK("above midpoint above " << hex(lo));
        uint16_t neg = gemm::half::from_float(-mid);
        if (neg != (even | 0x8000)) FAIL_CHECK("negative midpoint above " << hex(lo));
    }
}

TEST_CASE("cpp half specials: overflow, infinity, NaN, zeros, subnormals") {
    using gemm::half;
    CHECK(half::from_float(65504.0f) == 0x7bff);                        // largest finite
    CHECK(half::from_float(std::nextafter(65520.0f, 0.0f)) == 0x7bff);  // below the midpoint to 2^16
    CHECK(half::from_float(65520.0f) == 0x7c00);                        // midpoint: ties to even = inf
    CHECK(half::from_float(1e10f) == 0x7c00);
    CHECK(half::from_float(-1e10f) == 0xfc00);
    CHECK(half::from_float(HUGE_VALF) == 0x7c00);
    CHECK(half::from_float(-HUGE_VALF) == 0xfc00);
    CHECK(half::from_float(FLT_MAX) == 0x7c00);
    CHECK(half_is_nan(half::from_float(std::nanf(""))));
    CHECK(half_is_nan(half::from_float(bits_to_float(0x7f800001u))));  // signalling NaN stays NaN
    CHECK(half_is_nan(half::from_float(bits_to_float(0xffc00000u))));
    CHECK(half::from_float(0.0f) == 0x0000);
    CHECK(half::from_float(-0.0f) == 0x8000);
    CHECK(half::from_float(0x1p-14f) == 0x0400);  // smallest normal
    CHECK(half::from_float(0x1p-24f) == 0x0001);  // smallest subnormal
    CHECK(half::from_float(0x1p-25f) == 0x0000);  // half of it: ties to even = 0
    CHECK(half::from_float(std::nextafter(0x1p-25f, 1.0f)) == 0x0001);
    CHECK(half::from_float(0x1.8p-24f) == 0x0002);  // 1.5 ulp: ties to even = 2
    CHECK(half::from_float(-0x1p-24f) == 0x8001);
    CHECK(half::from_float(0x1p-30f) == 0x0000);
    CHECK(half::from_float(FLT_MIN) == 0x0000);
    CHECK(half::from_float(bits_to_float(1u)) == 0x0000);  // float subnormal
    CHECK(half::from_float(1.0f + 0x1p-11f) == 0x3c00);    // tie: to even (1.0)
    CHECK(half::from_float(1.0f + 0x1.8p-10f) == 0x3c02);  // tie: to even (1 + 2^-9)
    CHECK(std::isinf(half::to_float(0x7c00)));
    CHECK(half::to_float(0x0001) == 0x1p-24f);
    CHECK(half::to_float(0x03ff) == 0x1.ff8p-15f);  // largest subnormal
    CHECK(float(half(3.0f)) == 3.0f);
}

#if defined(__FLT16_MAX__)
TEST_CASE("cpp half matches the compiler's _Float16 conversion on random floats") {
    // An independent oracle: GCC/Clang's own float -> _Float16 conversion (round to nearest even).
    random_source rng(99);
    int mismatches = 0, harness_mismatches = 0;
    for (int i = 0; i < 200000; ++i) {
        // Random bit patterns over the interesting exponents (about 2^-30 .. 2^17), both signs.
        uint32_t bits = uint32_t(rng.next());
        uint32_t exp = 97u + uint32_t(rng.next() % 48u);
        bits = (bits & 0x807fffffu) | (exp << 23);
        float f = bits_to_float(bits);
        _Float16 ref = static_cast<_Float16>(f);
        uint16_t want;
        std::memcpy(&want, &ref, sizeof want);
        if (gemm::half::from_float(f) != want && mismatches++ < 5)
            FAIL_CHECK("float " << hex(bits) << " (" << f << "): " << hex(gemm::half::from_float(f))
                                << ", _Float16 gives " << hex(want));
        // The harness's own conversion (the tests' oracle side) must agree too.
        if (half_from_double(f) != want && harness_mismatches++ < 5)
            FAIL_CHECK("harness: float " << hex(bits) << ": " << hex(half_from_double(f)) << ", _Float16 gives "
                                         << hex(want));
    }
    CHECK(mismatches == 0);
    CHECK(harness_mismatches == 0);
}
#endif

// ---- bfloat16 -----------------------------------------------------------------------------

TEST_CASE("cpp bfloat16 every 16-bit pattern: exact decode and round trip through float") {
    int nans = 0;
    for (uint32_t p = 0; p < 65536; ++p) {
        uint16_t b = uint16_t(p);
        float f = gemm::bfloat16::to_float(b);
        CHECK(float_to_bits(f) == uint32_t(b) << 16);  // bfloat16 is the top half of a float
        if (bf16_is_nan(b)) {
            ++nans;
            CHECK(bf16_is_nan(gemm::bfloat16::from_float(f)));
            continue;
        }
        if (gemm::bfloat16::from_float(f) != b) FAIL_CHECK("bfloat16 " << hex(p) << " does not round-trip");
    }
    CHECK(nans == 2 * 127);
}

TEST_CASE("cpp bfloat16 rounds to nearest even at every midpoint") {
    for (uint32_t lo = 0; lo < 0x7f7f; ++lo) {
        float mid = bits_to_float((lo << 16) | 0x8000u);  // exactly halfway to lo + 1
        uint16_t even = lo & 1 ? uint16_t(lo + 1) : uint16_t(lo);
        if (gemm::bfloat16::from_float(mid) != even) FAIL_CHECK("midpoint above " << hex(lo));
        if (gemm::bfloat16::from_float(bits_to_float((lo << 16) | 0x7fffu)) != lo)
            FAIL_CHECK("below midpoint above " << hex(lo));
        if (gemm::bfloat16::from_float(bits_to_float((lo << 16) | 0x8001u)) != lo + 1)
            FAIL_CHECK("above midpoint above " << hex(lo));
    }
}

TEST_CASE("cpp bfloat16 specials: overflow, infinity, NaN, zeros, subnormals") {
    using gemm::bfloat16;
    CHECK(bfloat16::from_float(FLT_MAX) == 0x7f80);  // above the last midpoint: inf
    CHECK(bfloat16::from_float(bits_to_float(0x7f7f7fffu)) == 0x7f7f);
    CHECK(bfloat16::from_float(bits_to_float(0x7f7f8000u)) == 0x7f80);  // tie to even: inf
    CHECK(bfloat16::from_float(HUGE_VALF) == 0x7f80);
    CHECK(bfloat16::from_float(-HUGE_VALF) == 0xff80);
    CHECK(bf16_is_nan(bfloat16::from_float(std::nanf(""))));
    CHECK(bf16_is_nan(bfloat16::from_float(bits_to_float(0x7f800001u))));  // payload only in the low bits
    CHECK(bf16_is_nan(bfloat16::from_float(bits_to_float(0xff800001u))));
    CHECK(bfloat16::from_float(0.0f) == 0x0000);
    CHECK(bfloat16::from_float(-0.0f) == 0x8000);
    CHECK(bfloat16::from_float(bits_to_float(0x00010000u)) == 0x0001);  // subnormal, exact
    CHECK(bfloat16::from_float(bits_to_float(0x00008000u)) == 0x0000);  // tie to even: 0
    CHECK(bfloat16::from_float(bits_to_float(0x00018000u)) == 0x0002);  // tie to even: 2
    CHECK(bfloat16::from_float(1.0f + 0x1p-8f) == 0x3f80);
    CHECK(bfloat16::from_float(1.0f + 0x1.8p-7f) == 0x3f82);
    CHECK(float(gemm::bfloat16(3.0f)) == 3.0f);
}
