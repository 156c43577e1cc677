// test_fp8.cpp: FP8 (GEMM_F8_E4M3, GEMM_F8_E5M2) rules on every backend that serves it: the
// values the formats hold (448, 57344, subnormals), NaN and Inf inputs, results past f16's
// range, a row-major call's block scales (swapped with A and B by canonicalization), plans
// with scales; and the argument errors, each refused with C untouched. The sweep over shapes,
// layouts and scalings is test_correctness's "correctness fp8".
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace gemm_test;

namespace {

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// The backends under test: every available one that serves an FP8 problem of this shape
// (gemm_backend_supports), cpu_ref and cpu_omp among them on every host.
std::vector<std::string> fp8_backends(gemm_dtype_t ab, gemm_dtype_t c) {
    std::vector<std::string> names;
    gemm_desc_t d;
    gemm_desc_init(&d, ab, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 4, 4, 4);
    d.c_type = c;
    for (const std::string &name : available_backends())
        if (gemm_backend_supports(name.c_str(), &d) == GEMM_STATUS_SUCCESS) names.push_back(name);
    return names;
}

// A column-major m x n x k product of FP8 bytes (A m x k, B k x n, tight) into C of type ct,
// C prefilled with NaN (beta = 0 must not read it), on backend `name`.
std::vector<double> product(const std::string &name, gemm_dtype_t ab, gemm_dtype_t ct, int64_t m, int64_t n, int64_t k,
                            const std::vector<uint8_t> &a, const std::vector<uint8_t> &b,
                            const gemm_scaling_t *scaling = nullptr) {
    REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
    bytes c(std::size_t(m * n) * dtype_size(ct));
    for (int64_t i = 0; i < m * n; ++i) store_poison(c.data(), i, ct);
    const float alpha = 1, beta = 0;
    const gemm_status_t s = gemm_ex_scaled(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k, &alpha, a.data(), ab, m,
                                           b.data(), ab, k, &beta, c.data(), ct, m, GEMM_F32, scaling);
    CHECK_MESSAGE(s == GEMM_STATUS_SUCCESS, name << ": " << gemm_last_error());
    std::vector<double> out(std::size_t(m * n));
    for (int64_t i = 0; i < m * n; ++i) out[std::size_t(i)] = load(c.data(), i, ct);
    REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
    return out;
}

}  // namespace

TEST_CASE("fp8 names: gemm_dtype_name and cpu_omp's variant ids say e4m3 and e5m2") {
    CHECK(std::string(gemm_dtype_name(GEMM_F8_E4M3)) == "e4m3");
    CHECK(std::string(gemm_dtype_name(GEMM_F8_E5M2)) == "e5m2");
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F8_E4M3, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_T, 8, 8, 8);
    // gemm_desc_init gives C the inputs' type, which FP8 never is.
    CHECK(gemm_backend_supports("cpu_ref", &d) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(contains(gemm_last_error(), "c_type = e4m3: FP8 is an input type only"));
    d.c_type = GEMM_BF16;
    CHECK(gemm_backend_supports("cpu_ref", &d) == GEMM_STATUS_SUCCESS);
    const char *const *ids = nullptr;
    int64_t count = 0;
    REQUIRE(gemm_backend_variants("cpu_omp", &d, &ids, &count) == GEMM_STATUS_SUCCESS);
    REQUIRE(count > 0);
    for (int64_t i = 0; i < count; ++i) CHECK(contains(ids[i], "_e4m3_"));
    // Backends without FP8 say why.
    for (const char *name : {"cblas", "cuda_naive", "cuda_tiled", "cublas", "cublasxt"}) {
        gemm_backend_traits_t t{};
        t.struct_size = sizeof t;
        if (gemm_backend_get_traits(name, &t) != GEMM_STATUS_SUCCESS) continue;  // not in this build
        const gemm_status_t s = gemm_backend_supports(name, &d);
        if (s == GEMM_STATUS_BACKEND_UNAVAILABLE) continue;
        CHECK_MESSAGE(s == GEMM_STATUS_NOT_SUPPORTED, name);
        CHECK_MESSAGE(contains(gemm_last_error(), "e4m3"), name << ": " << gemm_last_error());
    }
}

TEST_CASE("fp8 values: the largest, the subnormals and exact products, into each C type") {
    // e4m3: 0x7e = 448, 0x01 = 2^-9, 0x08 = 2^-6 (the least normal), 0xfe = -448.
    // e5m2: 0x7b = 57344, 0x01 = 2^-16, 0x7c = Inf.
    struct pair {
        gemm_dtype_t t;
        uint8_t a, b;
        double want;
    };
    const pair pairs[] = {{GEMM_F8_E4M3, 0x7e, 0x01, 448.0 * 0x1p-9},   {GEMM_F8_E4M3, 0xfe, 0x08, -448.0 * 0x1p-6},
                          {GEMM_F8_E4M3, 0x01, 0x01, 0x1p-18},          {GEMM_F8_E5M2, 0x7b, 0x01, 57344.0 * 0x1p-16},
                          {GEMM_F8_E5M2, 0x01, 0x01, 0x1p-32},          {GEMM_F8_E4M3, 0x7e, 0x7e, 448.0 * 448.0},
                          {GEMM_F8_E5M2, 0x7b, 0x7b, 57344.0 * 57344.0}};
    for (const pair &x : pairs)
        for (gemm_dtype_t ct : {GEMM_F32, GEMM_BF16, GEMM_F16})
            for (const std::string &name : fp8_backends(x.t, ct)) {
                INFO(name << " " << gemm_dtype_name(x.t) << "->" << gemm_dtype_name(ct) << " a=" << int(x.a)
                          << " b=" << int(x.b));
                const double got = product(name, x.t, ct, 1, 1, 1, {x.a}, {x.b})[0];
                // What any rounding of the exact product to C's type gives (the harness's own).
                bytes want(dtype_size(ct));
                store(want.data(), 0, ct, x.want);
                const double rounded = load(want.data(), 0, ct);
                // Beyond f16's range (65504) the result is Inf, as any f32 -> f16 conversion makes it.
                if (ct == GEMM_F16 && x.want > 65520.0) CHECK(got == HUGE_VAL);
                else CHECK(got == rounded);
            }
}

TEST_CASE("fp8 nan_inf: a NaN input reaches its row, an e5m2 Inf too, the rest stays finite") {
    const int64_t m = 5, n = 4, k = 3;
    for (gemm_dtype_t t : {GEMM_F8_E4M3, GEMM_F8_E5M2})
        for (const std::string &name : fp8_backends(t, GEMM_BF16)) {
            INFO(name << " " << gemm_dtype_name(t));
            std::vector<uint8_t> a(std::size_t(m * k), 0x38), b(std::size_t(k * n), 0x38);  // 1.0 in e4m3
            if (t == GEMM_F8_E5M2) {
                std::fill(a.begin(), a.end(), uint8_t(0x3c));  // 1.0 in e5m2
                std::fill(b.begin(), b.end(), uint8_t(0x3c));
            }
            a[std::size_t(2 + 1 * m)] = 0x7f;  // A(2, 1) NaN in both formats
            std::vector<double> c = product(name, t, GEMM_BF16, m, n, k, a, b);
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < m; ++i) {
                    const double v = c[std::size_t(i + j * m)];
                    if (i == 2) CHECK(std::isnan(v));
                    else CHECK(v == 3.0);
                }
            if (t != GEMM_F8_E5M2) continue;
            a[std::size_t(2 + 1 * m)] = 0x7c;  // +Inf: row 2 is +Inf, -Inf where B is negative
            b[std::size_t(1 + 0 * k)] = 0xbc;  // B(1, 0) = -1
            c = product(name, t, GEMM_BF16, m, n, k, a, b);
            CHECK(c[2] == -HUGE_VAL);
            CHECK(c[std::size_t(2 + 1 * m)] == HUGE_VAL);
            CHECK(c[0] == 1.0);
        }
}

TEST_CASE("fp8 amax_nan: amax_d is NaN when an element of D is, and D is scaled after it") {
    const int64_t m = 3, n = 2, k = 2;
    for (const std::string &name : fp8_backends(GEMM_F8_E4M3, GEMM_F32)) {
        INFO(name);
        std::vector<uint8_t> a(std::size_t(m * k), 0x40), b(std::size_t(k * n), 0x38);  // 2.0 and 1.0
        const float d_scale = 0.25f, a_scale = 3.0f, b_scale = 0.5f;
        float amax = -1;
        const gemm_scaling_t x = tensor_scaling(&a_scale, &b_scale, &d_scale, &amax);
        std::vector<double> c = product(name, GEMM_F8_E4M3, GEMM_F32, m, n, k, a, b, &x);
        for (double v : c) CHECK(v == 0.25 * (2 * 2.0 * 3.0 * 1.0 * 0.5));
        CHECK(amax == 6.0f);  // before d_scale
        a[1] = 0x7f;
        c = product(name, GEMM_F8_E4M3, GEMM_F32, m, n, k, a, b, &x);
        CHECK(std::isnan(amax));
        CHECK(std::isnan(c[1]));
        CHECK(c[0] == 1.5);
    }
}

TEST_CASE("fp8 row_major_block: A's per-row and B's per-128-column scales follow the swap to C^T") {
    // Row-major C = op(A) op(B) is computed as the column-major C^T = op(B)^T op(A)^T: A's
    // 1 x 128 vectors become the canonical B's, B's 128 x 128 blocks the canonical A's. n and k
    // past 128 make every scale distinct in both directions; the harness's reference indexes
    // the scales by op(A)'s rows and op(B)'s columns, as gemm.h states them.
    for (gemm_op_t ta : {GEMM_OP_N, GEMM_OP_T})
        for (gemm_op_t tb : {GEMM_OP_N, GEMM_OP_T}) {
            gemm_case c = make_case(GEMM_F8_E4M3, GEMM_F32, entry::ex, GEMM_ROW_MAJOR, ta, tb, 3, 260, 300, 2, 1.0, 0.0);
            c.scaling_mode = GEMM_SCALE_BLOCK;
            c.ld_a_scale = 5;  // one past the least (m = 3)
            c.ld_b_scale = 4;  // one past the least (3 blocks of k)
            const operands o = make_operands(c);
            const reference ref = compute_reference(c, o);
            for (const std::string &name : fp8_backends(GEMM_F8_E4M3, GEMM_F32)) {
                REQUIRE(gemm_set_backend(name.c_str()) == GEMM_STATUS_SUCCESS);
                const run_result r = run_host(c, o);
                REQUIRE(gemm_set_backend(nullptr) == GEMM_STATUS_SUCCESS);
                REQUIRE_MESSAGE(r.status == GEMM_STATUS_SUCCESS, name << ": " << r.error);
                const comparison cmp = compare_result(c, o, r.c, ref.value);
                CHECK_MESSAGE(cmp.ok, name << " " << c.describe() << ": " << cmp.first);
            }
        }
}

// ---- argument errors ----------------------------------------------------------------------

namespace {

// One gemm_ex_scaled call on a 4 x 3 x 5 FP8 problem whose C must stay as it was.
struct scaled_call {
    gemm_layout_t layout = GEMM_COL_MAJOR;
    gemm_op_t transa = GEMM_OP_N, transb = GEMM_OP_N;
    int64_t m = 4, n = 3, k = 5;
    gemm_dtype_t ab = GEMM_F8_E4M3, ct = GEMM_BF16, compute = GEMM_F32;
    float alpha = 1, beta = 0;
    std::vector<uint8_t> a = std::vector<uint8_t>(64, 0x38), b = std::vector<uint8_t>(64, 0x38);
    std::vector<float> c = std::vector<float>(64, 7.0f);  // room for any C type
    std::vector<float> scales = std::vector<float>(16, 1.0f);
    float amax = 0;
    gemm_scaling_t x = tensor_scaling(&scales[0], &scales[1]);
    gemm_status_t call(const gemm_scaling_t *scaling) {
        return gemm_ex_scaled(layout, transa, transb, m, n, k, &alpha, a.data(), ab, 16, b.data(), ab, 16, &beta,
                              c.data(), ct, 16, compute, scaling);
    }
};

void expect_refused(scaled_call &s, const gemm_scaling_t *scaling, gemm_status_t want, int position,
                    const std::string &message) {
    INFO(message);
    const std::vector<float> before = s.c;
    CHECK(s.call(scaling) == want);
    CHECK_MESSAGE(contains(gemm_last_error(), message), gemm_last_error());
    CHECK(gemm_last_error_parameter() == position);
    CHECK(std::memcmp(before.data(), s.c.data(), before.size() * sizeof(float)) == 0);  // C untouched
}

}  // namespace

TEST_CASE("fp8 errors: gemm_ex_scaled refuses bad scalings and types, C untouched") {
    {
        scaled_call s;
        s.x.struct_size = 8;
        expect_refused(s, &s.x, GEMM_STATUS_INVALID_VALUE, 19, "parameter 19: scaling->struct_size = 8");
    }
    {
        scaled_call s;
        s.x.mode = gemm_scale_mode_t(2);
        s.x.a_scale = nullptr;
        expect_refused(s, &s.x, GEMM_STATUS_INVALID_POINTER, 19,
                       "parameter 19: scaling->a_scale is NULL but mode is GEMM_SCALE_BLOCK");
    }
    {
        scaled_call s;
        s.x.b_scale = nullptr;
        expect_refused(s, &s.x, GEMM_STATUS_INVALID_POINTER, 19,
                       "scaling->b_scale is NULL but mode is GEMM_SCALE_TENSOR");
    }
    {
        scaled_call s;
        s.x.mode = GEMM_SCALE_NONE;
        expect_refused(s, &s.x, GEMM_STATUS_INVALID_VALUE, 19, "scaling->a_scale is set but mode is GEMM_SCALE_NONE");
    }
    {
        scaled_call s;
        s.x.mode = GEMM_SCALE_BLOCK;
        s.x.ld_a_scale = 3;  // m = 4
        expect_refused(s, &s.x, GEMM_STATUS_INVALID_LEADING_DIM, 19, "scaling->ld_a_scale = 3 must be 0 (the least)");
    }
    {
        scaled_call s;
        s.x.mode = GEMM_SCALE_BLOCK;
        s.x.ld_b_scale = -1;
        expect_refused(s, &s.x, GEMM_STATUS_INVALID_LEADING_DIM, 19, "scaling->ld_b_scale = -1");
    }
    {
        scaled_call s;  // B's block scales run along k: 300 makes 3 blocks, the least ld_b_scale
        s.transb = GEMM_OP_T;
        s.k = 300;
        s.a.assign(16 * 300, 0x38);
        s.b.assign(16 * 300, 0x38);
        s.x.mode = GEMM_SCALE_BLOCK;
        s.x.ld_b_scale = 2;
        expect_refused(s, &s.x, GEMM_STATUS_INVALID_LEADING_DIM, 19,
                       "scaling->ld_b_scale = 2 must be 0 (the least) or >= max(1, ceil(k / 128) = 3): one scale per "
                       "block of k for each 128 columns of op(B), the block of k fastest");
    }
    {
        scaled_call s;
        s.x.amax_d = reinterpret_cast<float *>(s.c.data()) + 1;  // inside C
        expect_refused(s, &s.x, GEMM_STATUS_INVALID_VALUE, 19, "overlap");
    }
    {
        scaled_call s;  // a scale array that is C
        s.x.a_scale = s.c.data();
        expect_refused(s, &s.x, GEMM_STATUS_INVALID_VALUE, 19, "scaling->a_scale and C overlap");
    }
    {
        scaled_call s;  // block scaling (any scaling) with a type that has none
        s.ab = GEMM_F32;
        s.ct = GEMM_F32;
        s.x.mode = GEMM_SCALE_BLOCK;
        expect_refused(s, &s.x, GEMM_STATUS_NOT_SUPPORTED, 9, "a_type = f32: scales take FP8 types");
    }
    {
        scaled_call s;
        s.ct = GEMM_F8_E5M2;
        expect_refused(s, &s.x, GEMM_STATUS_NOT_SUPPORTED, 16, "c_type = e5m2: FP8 is an input type only");
    }
    {
        scaled_call s;
        s.ct = GEMM_F8_E4M3;
        expect_refused(s, nullptr, GEMM_STATUS_NOT_SUPPORTED, 16, "FP8 is an input type only");
    }
    {
        scaled_call s;
        s.compute = GEMM_F16;
        expect_refused(s, &s.x, GEMM_STATUS_NOT_SUPPORTED, 18, "compute_type = f16 is not supported for a_type = e4m3");
    }
    {
        scaled_call s;
        s.x.mode = gemm_scale_mode_t(1);
        int raw = 3;  // not a gemm_scale_mode_t, as a C caller may pass it
        std::memcpy(&s.x.mode, &raw, sizeof raw);
        expect_refused(s, &s.x, GEMM_STATUS_INVALID_VALUE, 19, "scaling->mode = 3 is not a gemm_scale_mode_t");
    }
    {
        // k = 0: the scales are not read (NULL is fine); C = beta * C.
        scaled_call s;
        s.k = 0;
        s.x.a_scale = s.x.b_scale = nullptr;
        CHECK(s.call(&s.x) == GEMM_STATUS_SUCCESS);
    }
}

TEST_CASE("fp8 batches and epilogues: FP8 takes one matrix and no epilogue") {
    std::vector<uint8_t> a(64, 0x38), b(64, 0x38);
    std::vector<float> c(64, 7.0f);
    const float alpha = 1, beta = 0;
    CHECK(gemm_ex_strided_batched(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, &alpha, a.data(), GEMM_F8_E4M3, 2, 4,
                                  b.data(), GEMM_F8_E4M3, 2, 4, &beta, c.data(), GEMM_F32, 2, 4, 2,
                                  GEMM_F32) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(contains(gemm_last_error(), "FP8 takes one matrix"));
    CHECK(c[0] == 7.0f);
    gemm_epilogue_t e;
    gemm_epilogue_init(&e);
    CHECK(gemm_ex_epilogue(GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 2, 2, 2, &alpha, a.data(), GEMM_F8_E4M3, 2, b.data(),
                           GEMM_F8_E4M3, 2, &beta, c.data(), GEMM_F32, 2, GEMM_F32, &e) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(contains(gemm_last_error(), "epilogues take f32, f64, f16 and bf16, not FP8"));
    CHECK(c[0] == 7.0f);
    gemm_tune_request_t r{};
    r.ab_type = GEMM_F8_E4M3;
    r.c_type = GEMM_BF16;
    r.layout = GEMM_COL_MAJOR;
    r.transa = r.transb = GEMM_OP_N;
    r.m = r.n = r.k = 8;
    r.batch_count = 2;
    r.device = -1;
    gemm_tune_report_t report{};
    CHECK(gemm_tune(&r, 0, &report) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(contains(gemm_last_error(), "FP8 takes one matrix"));
}

TEST_CASE("fp8 plans: the desc's scale_mode, runs with their scales, mismatches refused") {
    const int64_t m = 4, n = 3, k = 5;
    std::vector<uint8_t> a(std::size_t(m * k), 0x40), b(std::size_t(k * n), 0x38);  // 2.0 and 1.0
    std::vector<float> c(std::size_t(m * n), std::nanf(""));
    const float alpha = 1, beta = 0, a_scale = 0.5f, b_scale = 3.0f;
    gemm_desc_t d;
    gemm_desc_init(&d, GEMM_F8_E4M3, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k);
    d.c_type = GEMM_F32;
    d.beta_zero = 1;
    d.scale_mode = GEMM_SCALE_TENSOR;
    gemm_plan_t plan = nullptr;
    REQUIRE(gemm_plan_create(&d, &plan) == GEMM_STATUS_SUCCESS);
    gemm_scaling_t x = tensor_scaling(&a_scale, &b_scale);
    REQUIRE(gemm_plan_run_scaled(plan, &alpha, a.data(), b.data(), &beta, c.data(), &x) == GEMM_STATUS_SUCCESS);
    for (float v : c) CHECK(v == 5 * 2.0f * 0.5f * 3.0f);
    // gemm_plan_run has no scales to give it.
    std::fill(c.begin(), c.end(), 7.0f);
    CHECK(gemm_plan_run(plan, &alpha, a.data(), b.data(), &beta, c.data()) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "desc->scale_mode = GEMM_SCALE_TENSOR: run it with gemm_plan_run_scaled"));
    // Another mode, or none, than the desc's.
    x.mode = GEMM_SCALE_BLOCK;
    CHECK(gemm_plan_run_scaled(plan, &alpha, a.data(), b.data(), &beta, c.data(), &x) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "parameter 7: scaling->mode = 2 but the plan was made for GEMM_SCALE_TENSOR"));
    CHECK(gemm_plan_run_scaled(plan, &alpha, a.data(), b.data(), &beta, c.data(), nullptr) == GEMM_STATUS_INVALID_VALUE);
    // The run's scales are checked as gemm_ex_scaled checks them.
    x.mode = GEMM_SCALE_TENSOR;
    x.b_scale = nullptr;
    CHECK(gemm_plan_run_scaled(plan, &alpha, a.data(), b.data(), &beta, c.data(), &x) == GEMM_STATUS_INVALID_POINTER);
    CHECK(contains(gemm_last_error(), "parameter 7: scaling->b_scale is NULL"));
    for (float v : c) CHECK(v == 7.0f);
    gemm_plan_destroy(plan);

    // A desc of another type with a scale mode, and a mode no gemm_scale_mode_t has.
    gemm_desc_t f;
    gemm_desc_init(&f, GEMM_F32, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, m, n, k);
    f.scale_mode = GEMM_SCALE_BLOCK;
    CHECK(gemm_plan_create(&f, &plan) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(contains(gemm_last_error(), "a_type = f32: scales take FP8 types"));
    int raw = 9;
    std::memcpy(&d.scale_mode, &raw, sizeof raw);
    CHECK(gemm_plan_create(&d, &plan) == GEMM_STATUS_INVALID_VALUE);
    CHECK(contains(gemm_last_error(), "gemm_desc_t: scale_mode = 9 is not a gemm_scale_mode_t"));

    // A plan of f32 takes no scaling.
    f.scale_mode = GEMM_SCALE_NONE;
    REQUIRE(gemm_plan_create(&f, &plan) == GEMM_STATUS_SUCCESS);
    std::vector<float> fa(std::size_t(m * k), 1.0f), fb(std::size_t(k * n), 1.0f);
    gemm_scaling_init(&x);
    CHECK(gemm_plan_run_scaled(plan, &alpha, fa.data(), fb.data(), &beta, c.data(), &x) == GEMM_STATUS_NOT_SUPPORTED);
    CHECK(contains(gemm_last_error(), "scales take FP8 types"));
    gemm_plan_destroy(plan);
}

// Tuned by its key, stored and read back: an FP8 class is a tune-cache class like any other.
// Per-tensor scales only multiply alpha and are keyed as none; block scales are keyed by their
// canonical kinds (scales=), since their calls run other code, and are measured with them.
// GEMM_TUNE_CACHE names a file of this test's own (tests/CMakeLists.txt: fp8.env_tuned).
TEST_SUITE("env_tuned" * doctest::skip()) {
    TEST_CASE("fp8 tuned: an e4m3 key is tuned, stored and read back; keys no call has are refused") {
        const char *cache = std::getenv("GEMM_TUNE_CACHE");
        REQUIRE(cache);
        std::remove(cache);
        const char *key = "e4m3 bf16 TN 24 20 64 batch=1 ld=tight align=16 space=host beta=0";
        gemm_tune_report_t report;
        const std::string tuned = tune_key_as_only_entry(key, "cpu_omp", report);
        REQUIRE_MESSAGE(tuned.empty(), tuned);
        CHECK(std::string(report.backend) == "cpu_omp");
        // A key no call has: FP8 C, an FP8 batch, and an FP8 epilogue.
        CHECK(gemm_tune_key("e4m3 e4m3 TN 24 20 64 batch=1 ld=tight align=16 space=host beta=0", -1, 20, "cpu_omp", 0,
                            &report) == GEMM_STATUS_INVALID_VALUE);
        CHECK(gemm_tune_key("e4m3 f32 TN 24 20 64 batch=2 ld=tight align=16 space=host beta=0", -1, 20, "cpu_omp", 0,
                            &report) == GEMM_STATUS_INVALID_VALUE);
        CHECK(contains(gemm_last_error(), "FP8 takes one matrix"));
        // A group of a grouped FP8 call has a pointer batch's key, and is tuned as one.
        CHECK_MESSAGE(gemm_tune_key("e4m3 f32 TN 24 20 64 batch=2 ld=tight align=16 space=host beta=0 form=pointers",
                                    -1, 20, "cpu_omp", 0, &report) == GEMM_STATUS_SUCCESS,
                      gemm_last_error());
        CHECK(std::string(report.backend) == "cpu_omp");
        CHECK(gemm_tune_key("e4m3 bf16 TN 24 20 64 batch=1 ld=tight align=16 space=host beta=0 epilogue=relu", -1, 20,
                            "cpu_omp", 0, &report) == GEMM_STATUS_INVALID_VALUE);
        CHECK(contains(gemm_last_error(), "FP8 takes no epilogue"));
    }

    // Why auto chose what a plan of d runs.
    const auto plan_why = [](const gemm_desc_t &d) {
        gemm_plan_t plan = nullptr;
        if (gemm_plan_create(&d, &plan) != GEMM_STATUS_SUCCESS)
            return std::string("gemm_plan_create: ") + gemm_last_error();
        const char *why = nullptr;
        gemm_plan_get_backend(plan, nullptr, nullptr, &why);
        std::string text = why ? why : "";
        gemm_plan_destroy(plan);
        return text;
    };

    TEST_CASE("fp8 tuned_blocks: block-scaled classes are keyed by their scales and hit only as such") {
        // k = 320: three blocks of k, the last partial, so a candidate that ignored a block's
        // scales would fail the check.
        const char *key = "e4m3 bf16 NN 32 20 320 batch=1 ld=tight align=16 space=host beta=0 scales=1x128,128x128";
        gemm_tune_report_t report;
        for (int attempt = 0; attempt < 5; ++attempt) {
            REQUIRE_MESSAGE(gemm_tune_key(key, -1, 20, "cpu_ref,cpu_omp", 1, &report) == GEMM_STATUS_SUCCESS,
                            gemm_last_error());
            if (report.stored == 1 || !report.disturbed) break;
        }
        REQUIRE(report.stored == 1);
        for (int64_t i = 0; i < report.candidate_count; ++i)
            CHECK_MESSAGE(report.candidates[i].correct == 1, report.candidates[i].backend, ": ",
                          report.candidates[i].note);

        gemm_desc_t d;
        gemm_desc_init(&d, GEMM_F8_E4M3, GEMM_COL_MAJOR, GEMM_OP_N, GEMM_OP_N, 32, 20, 320);
        d.c_type = GEMM_BF16;
        d.beta_zero = 1;
        d.scale_mode = GEMM_SCALE_BLOCK;
        CHECK_MESSAGE(contains(plan_why(d), "tune cache hit"), plan_why(d));
        // Per-tensor scales and none are another class; so is the row-major call, whose
        // canonical A is B's 128x128 blocks (its key says scales=128x128,1x128).
        for (gemm_scale_mode_t mode : {GEMM_SCALE_TENSOR, GEMM_SCALE_NONE}) {
            d.scale_mode = mode;
            CHECK(!contains(plan_why(d), "tune cache"));
        }
        gemm_desc_t r;
        gemm_desc_init(&r, GEMM_F8_E4M3, GEMM_ROW_MAJOR, GEMM_OP_N, GEMM_OP_N, 20, 32, 320);
        r.c_type = GEMM_BF16;
        r.beta_zero = 1;
        r.scale_mode = GEMM_SCALE_BLOCK;
        CHECK(!contains(plan_why(r), "tune cache"));
        const char *swapped = "e4m3 bf16 NN 32 20 320 batch=1 ld=tight align=16 space=host beta=0 scales=128x128,1x128";
        for (int attempt = 0; attempt < 5; ++attempt) {
            REQUIRE_MESSAGE(gemm_tune_key(swapped, -1, 20, "cpu_omp", 1, &report) == GEMM_STATUS_SUCCESS,
                            gemm_last_error());
            if (report.stored == 1 || !report.disturbed) break;
        }
        REQUIRE(report.stored == 1);
        CHECK(contains(plan_why(r), "tune cache hit"));

        // Scales no call has: of another dtype, two of one kind, a word misspelt.
        for (const char *bad :
             {"bf16 bf16 NN 32 20 320 batch=1 ld=tight align=16 space=host beta=0 scales=1x128,128x128",
              "e4m3 bf16 NN 32 20 320 batch=1 ld=tight align=16 space=host beta=0 scales=1x128,1x128",
              "e4m3 bf16 NN 32 20 320 batch=1 ld=tight align=16 space=host beta=0 scales=block"}) {
            CHECK_MESSAGE(gemm_tune_key(bad, -1, 20, "cpu_omp", 0, &report) == GEMM_STATUS_INVALID_VALUE, bad);
            CHECK(contains(gemm_last_error(), "parameter 1"));
        }
    }
}
